package httpapi

import (
	"bytes"
	"encoding/json"
	"mime"
	"sort"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/listquery"
)

// warnUnknownQuery names each query parameter the operation does not declare in a Warning header: a
// client sending a parameter hubd does not have must not believe it took effect.
func warnUnknownQuery(c echo.Context, rt *route) {
	var unknown []string
	for name := range c.Request().URL.Query() {
		if rt.pathItem.Parameters.GetByInAndName(openapi3.ParameterInQuery, name) == nil &&
			rt.operation.Parameters.GetByInAndName(openapi3.ParameterInQuery, name) == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		addWarnings(c, "query parameter", unknown)
	}
}

// stripUnknownSelect removes from select the names the operation's entity does not know and names each
// in a Warning header, as unknown body fields are: a client written for an older or a newer version of
// the API keeps working. It rewrites the request's query before anything reads its parameters (Echo keeps
// the first parse).
func stripUnknownSelect(c echo.Context, rt *route) {
	e := operationEntity(rt.operation)
	req := c.Request()
	query := req.URL.Query()
	if e == nil || !query.Has("select") {
		return
	}
	var unknown []string
	for i, sel := range query["select"] {
		known, names := listquery.SplitSelect(e, sel)
		query["select"][i] = known
		unknown = append(unknown, names...)
	}
	if len(unknown) > 0 {
		req.URL.RawQuery = query.Encode()
		addWarnings(c, "select field", unknown)
	}
}

// operationEntity is the entity an operation's list and selection parameters apply to (its
// x-hubd-entity), nil when it takes none.
func operationEntity(op *openapi3.Operation) *listquery.Entity {
	var name string
	switch raw := op.Extensions["x-hubd-entity"].(type) {
	case string:
		name = raw
	case json.RawMessage:
		if json.Unmarshal(raw, &name) != nil {
			return nil
		}
	}
	return listquery.Lookup(name)
}

// stripUnknownFields removes body fields the operation's schema does not know and names each in a
// Warning header (unknown fields are ignored, and warned about). Keys of map-typed fields are
// data (Permissions.View); keys under a known object that its schema lacks are unknown
// (Permissions.View.Bogus). A read-only (server-assigned) field sent as null is absent: clients that
// send every field of a form send null for those they do not set. A body that is not JSON is left for
// validation to report.
func stripUnknownFields(c echo.Context, rt *route, body []byte) []byte {
	mediaType, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	mt := rt.operation.RequestBody.Value.Content.Get(mediaType)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return body
	}
	var pr pruning
	pr.prune(mt.Schema.Value, doc, "")
	if !pr.changed {
		return body
	}
	if len(pr.unknown) > 0 {
		sort.Strings(pr.unknown)
		addWarnings(c, "field", pr.unknown)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// pruning is a walk of a request body against its schema: the paths of the unknown fields it deleted, and
// whether it deleted anything.
type pruning struct {
	unknown []string
	changed bool
}

// prune walks value against schema, deleting unknown object keys (collecting their paths) and read-only
// keys whose value is null.
func (pr *pruning) prune(schema *openapi3.Schema, value any, path string) {
	switch v := value.(type) {
	case map[string]any:
		props, extra, open := objectShape(schema)
		if len(props) == 0 && extra == nil {
			return // a free-form object
		}
		for key, val := range v {
			p := join(path, key)
			switch {
			case props[key] != nil && props[key].ReadOnly && val == nil:
				delete(v, key)
				pr.changed = true
			case props[key] != nil:
				pr.prune(props[key], val, p)
			case extra != nil:
				pr.prune(extra, val, p)
			case open:
			default:
				pr.unknown = append(pr.unknown, p)
				pr.changed = true
				delete(v, key)
			}
		}
	case []any:
		items := itemsOf(schema)
		if items == nil {
			return
		}
		for i, val := range v {
			pr.prune(items, val, join(path, strconv.Itoa(i)))
		}
	}
}

// objectShape returns the declared properties (allOf members included), the schema of map values
// (additionalProperties given as a schema), and whether other keys are explicitly allowed.
func objectShape(s *openapi3.Schema) (props map[string]*openapi3.Schema, extra *openapi3.Schema, open bool) {
	props = map[string]*openapi3.Schema{}
	var visit func(*openapi3.Schema)
	visit = func(s *openapi3.Schema) {
		if s == nil {
			return
		}
		for name, ref := range s.Properties {
			if ref != nil && ref.Value != nil {
				props[name] = ref.Value
			}
		}
		if ap := s.AdditionalProperties; ap.Schema != nil && ap.Schema.Value != nil {
			extra = ap.Schema.Value
		} else if ap.Has != nil && *ap.Has {
			open = true
		}
		for _, member := range s.AllOf {
			if member != nil {
				visit(member.Value)
			}
		}
	}
	visit(s)
	return props, extra, open
}

func itemsOf(s *openapi3.Schema) *openapi3.Schema {
	if s.Items != nil && s.Items.Value != nil {
		return s.Items.Value
	}
	for _, member := range s.AllOf {
		if member != nil && member.Value != nil {
			if it := itemsOf(member.Value); it != nil {
				return it
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
