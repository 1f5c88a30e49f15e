package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/group"
	"github.com/hubd/hubd/internal/longpoll"
	"github.com/hubd/hubd/internal/space"
)

// contract checks each API request against its operation in the document before the handler runs:
// body size, Content-Type, the bearer token, unknown body fields (stripped, with a Warning each), then
// kin-openapi's validation of parameters and body. A request that passes is what the handler expects.
func (s *Server) contract(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		rt := s.routeOf(c)
		if rt == nil {
			// Echo matched no operation of the document: 404 and 405 are Echo's to report.
			return next(c)
		}
		c.Set(ctxOperation, rt.operation.OperationID)
		if _, resumed := longpoll.Resumed(req.Context()); resumed {
			return next(c) // a parked poll's answer: its request was checked when it came
		}

		// The caller is established before anything else of the request is looked at.
		holder := &authResult{}
		if s.needsToken(rt.operation) {
			p, err := s.authenticate(req.Context(), req.Header.Get(echo.HeaderAuthorization))
			if err != nil {
				return err
			}
			holder.principal = &p
		}

		warnUnknownQuery(c, rt)
		stripUnknownSelect(c, rt)
		for name, values := range req.URL.Query() {
			for _, v := range values {
				if !utf8.ValidString(v) {
					return apierr.UserInput(fmt.Sprintf("query parameter %q is not UTF-8 text", name), apierr.Item{Item: name, Description: "not UTF-8"})
				}
			}
		}
		body, err := s.readBody(c, rt)
		if err != nil {
			return err
		}
		binary := isBinaryBody(rt)
		if body != nil {
			normalizeContentType(req)
			if !binary {
				body = stripUnknownFields(c, rt, body)
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}

		params := map[string]string{}
		for i, name := range c.ParamNames() {
			params[name] = c.ParamValues()[i]
		}
		ctx := context.WithValue(req.Context(), requestPathKey{}, req.URL.Path)
		ctx = context.WithValue(ctx, userAgentKey{}, req.UserAgent())
		if mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)); err == nil {
			ctx = context.WithValue(ctx, mediaTypeKey{}, mt)
		}
		input := &openapi3filter.RequestValidationInput{
			Request:    req.WithContext(ctx),
			PathParams: params,
			Route:      &routers.Route{Spec: s.doc, Path: rt.path, PathItem: rt.pathItem, Method: rt.method, Operation: rt.operation},
			Options: &openapi3filter.Options{
				// The token was verified above; here kin-openapi only learns that it was.
				AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error {
					if holder.principal == nil {
						return apierr.Unauthenticated("a bearer token is required")
					}
					return nil
				},
				ExcludeReadOnlyValidations: true,
				// Configuration data is raw bytes, checked by its ToolchainType's parser, not the document.
				ExcludeRequestBody: binary,
			},
		}
		if err := openapi3filter.ValidateRequest(ctx, input); err != nil {
			return validationError(err)
		}
		req = req.WithContext(ctx)
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		c.SetRequest(req)
		if holder.principal != nil {
			release, ok := s.limiter.acquire(holder.principal.OrganizationID.String() + "/" + holder.principal.UserID.String())
			if !ok {
				return apierr.TooManyRequests("too many outstanding requests from this caller; retry shortly")
			}
			ctx := auth.WithPrincipal(req.Context(), *holder.principal)
			if rt.class == classLongPoll {
				var done func()
				ctx, done = s.holdLongPoll(ctx, c, release)
				defer done()
			} else {
				defer release()
			}
			c.SetRequest(req.WithContext(ctx))
		}
		if rt.class == classLongPoll {
			started, err := s.waitPollTurn(c)
			if err != nil {
				return err
			}
			defer started()
		}
		return next(c)
	}
}

// readBody reads the request body of an operation that takes one, enforcing the size limit and the
// declared media types. It returns nil when the operation takes no body.
func (s *Server) readBody(c echo.Context, rt *route) ([]byte, error) {
	req := c.Request()
	if rt.operation.RequestBody == nil || rt.operation.RequestBody.Value == nil {
		return nil, nil
	}
	if req.ContentLength > s.cfg.BodyLimit {
		return nil, bodyTooLarge()
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, s.cfg.BodyLimit+1))
	if err != nil {
		return nil, apierr.UserInput("the request body could not be read")
	}
	if int64(len(data)) > s.cfg.BodyLimit {
		return nil, bodyTooLarge()
	}
	content := rt.operation.RequestBody.Value.Content
	ct := req.Header.Get(echo.HeaderContentType)
	mediaType, _, perr := mime.ParseMediaType(ct)
	if len(data) == 0 && (ct == "" || isBinaryBody(rt)) {
		if rt.operation.RequestBody.Value.Required {
			return nil, apierr.UserInput("a request body is required")
		}
		return data, nil
	}
	if isBinaryBody(rt) {
		// Raw bytes take any Content-Type, or none: their ToolchainType's parser checks them.
		return data, nil
	}
	if perr != nil || content.Get(mediaType) == nil {
		e := apierr.UserInput(fmt.Sprintf("Content-Type %q is not accepted here; send one of: %s", ct, strings.Join(mediaTypes(content), ", ")))
		e.Status = http.StatusUnsupportedMediaType
		return nil, e
	}
	if !isBinaryBody(rt) && (mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")) {
		if err := singleJSONValue(data); err != nil {
			return nil, err
		}
		if err := checkJSONText(data, s.cfg.MaxJSONDepth, s.cfg.MaxJSONValues); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// normalizeContentType lowercases the media type of the Content-Type header (its parameters are left as
// sent). Media types are case-insensitive (RFC 9110) and readBody accepts them so, but the generated
// handlers match them case-sensitively: unnormalized, Application/JSON would bind no body at all.
func normalizeContentType(req *http.Request) {
	ct := req.Header.Get(echo.HeaderContentType)
	if ct == "" {
		return
	}
	mt, params, hasParams := strings.Cut(ct, ";")
	norm := strings.ToLower(strings.TrimSpace(mt))
	if hasParams {
		norm += ";" + params
	}
	req.Header.Set(echo.HeaderContentType, norm)
}

func mediaTypes(content openapi3.Content) []string {
	out := make([]string, 0, len(content))
	for mt := range content {
		out = append(out, mt)
	}
	return out
}

func bodyTooLarge() *apierr.Error {
	e := apierr.UserInput("the request body is larger than the server accepts")
	e.Status = http.StatusRequestEntityTooLarge
	return e
}

type authResult struct{ principal *auth.Principal }

// needsToken reports whether an operation requires bearerAuth (the document's default).
func (s *Server) needsToken(op *openapi3.Operation) bool {
	if op.Security != nil {
		return len(*op.Security) > 0
	}
	return len(s.doc.Security) > 0
}

// authenticate verifies a bearer token with the key ring and confirms the membership still exists: a
// token never outlives it, nor grants more than it holds now. The caller's Groups and the grants Spaces
// give it are read with it (but for admins). What is read is remembered until a change in the
// organization that may alter it is signalled (members).
func (s *Server) authenticate(ctx context.Context, header string) (auth.Principal, error) {
	scheme, token, found := strings.Cut(header, " ")
	if header == "" {
		return auth.Principal{}, apierr.Unauthenticated("a bearer token is required: send Authorization: Bearer <token>")
	}
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return auth.Principal{}, apierr.Unauthenticated("the Authorization header must be 'Bearer <token>'")
	}
	p, err := s.deps.Issuer.Verify(ctx, strings.TrimSpace(token))
	if err != nil {
		return p, err
	}
	key := memberKey{org: p.OrganizationID, user: p.UserID, tokenRole: p.Role}
	m, ok := s.members.get(key)
	if !ok {
		if m, err = s.readMembership(ctx, p); err != nil {
			return p, err
		}
	}
	if !m.member {
		return p, apierr.Unauthenticated("the token's user is no longer a member of its organization")
	}
	p.Role, p.GroupIDs, p.SpacePermissions = m.role, m.groups, m.spaces
	return p, nil
}

// readMembership reads the membership behind a verified token and remembers it while changes in the
// organization are signalled (until one that may alter it).
func (s *Server) readMembership(ctx context.Context, p auth.Principal) (memberEntry, error) {
	var changed <-chan struct{}
	watching := false
	if s.deps.Notifier != nil {
		changed, watching = s.deps.Notifier.WatchAccess(p.OrganizationID) // before reading: a change after it closes it
	}
	key := memberKey{org: p.OrganizationID, user: p.UserID, tokenRole: p.Role}
	role, ok, err := s.deps.Orgs.RoleOf(ctx, p.OrganizationID, p.UserID)
	if err != nil {
		return memberEntry{}, err
	}
	m := memberEntry{changed: changed, member: ok}
	if ok {
		p.Role = auth.Weaker(p.Role, role)
		m.role = p.Role
		// Admins hold every permission: no grant can matter.
		if p.Role != auth.RoleAdmin {
			q := s.deps.Store.Q()
			if p.GroupIDs, err = group.IDsOf(ctx, q, p.OrganizationID, p.UserID); err != nil {
				return memberEntry{}, err
			}
			if p.SpacePermissions, err = space.PermissionsHeld(ctx, q, p); err != nil {
				return memberEntry{}, err
			}
			m.groups, m.spaces = p.GroupIDs, p.SpacePermissions
		}
	}
	if watching {
		s.members.put(key, m)
	}
	return m, nil
}

// isBinaryBody reports an operation whose body is raw bytes (configuration data).
func isBinaryBody(rt *route) bool {
	rb := rt.operation.RequestBody
	if rb == nil || rb.Value == nil {
		return false
	}
	for _, mt := range rb.Value.Content {
		if mt.Schema != nil && mt.Schema.Value != nil && mt.Schema.Value.Format == "binary" {
			return true
		}
	}
	return false
}

// singleJSONValue refuses a JSON body with anything after its one value.
func singleJSONValue(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil // validation reports malformed JSON with its own message
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierr.UserInput("the request body holds more than one JSON value; send exactly one")
	}
	return nil
}

// validationError turns kin-openapi's findings into the API's error bodies: security failures keep their own
// (Authentication, or ServiceUnavailable when the database is down); the rest are 400 UserInput naming
// the parameter or the body field by its dot path.
func validationError(err error) error {
	var secErr *openapi3filter.SecurityRequirementsError
	if errors.As(err, &secErr) {
		for _, e := range secErr.Errors {
			var ae *apierr.Error
			if errors.As(e, &ae) {
				return ae
			}
		}
		return apierr.Unauthenticated("a valid bearer token is required")
	}
	var reqErr *openapi3filter.RequestError
	if !errors.As(err, &reqErr) {
		return apierr.UserInput("invalid request: " + err.Error())
	}
	if reqErr.Parameter != nil {
		p := reqErr.Parameter
		return apierr.UserInput(fmt.Sprintf("invalid %s parameter %q: %s", p.In, p.Name, reasonOf(reqErr)),
			apierr.Item{Item: p.Name, Description: reasonOf(reqErr)})
	}
	var schemaErr *openapi3.SchemaError
	if errors.As(err, &schemaErr) {
		path := strings.Join(schemaErr.JSONPointer(), ".")
		if path == "" {
			path = "(body)"
		}
		return apierr.UserInput(fmt.Sprintf("invalid request body: %s: %s", path, schemaErr.Reason),
			apierr.Item{Item: path, Description: schemaErr.Reason})
	}
	var parseErr *openapi3filter.ParseError
	if errors.As(err, &parseErr) {
		return apierr.UserInput("the request body is not valid JSON: " + parseErr.Error())
	}
	return apierr.UserInput("invalid request: " + reasonOf(reqErr))
}

func reasonOf(e *openapi3filter.RequestError) string {
	var schemaErr *openapi3.SchemaError
	if errors.As(e.Err, &schemaErr) {
		return schemaErr.Reason
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Reason
}

// jsonBinder decodes JSON request bodies of any +json media type (Echo's default takes only
// application/json, which would refuse merge patches). Unknown fields were stripped by contract.
type jsonBinder struct{}

func (jsonBinder) Bind(i any, c echo.Context) error {
	req := c.Request()
	if req.Body == nil || req.ContentLength == 0 && req.Header.Get(echo.HeaderContentType) == "" {
		return nil
	}
	dec := json.NewDecoder(req.Body)
	if err := dec.Decode(i); err != nil {
		if errors.Is(err, io.EOF) {
			return apierr.UserInput("a request body is required")
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return apierr.UserInput(fmt.Sprintf("field %s has the wrong type: %s given", typeErr.Field, typeErr.Value),
				apierr.Item{Item: typeErr.Field, Description: "expected " + typeErr.Type.String()})
		}
		return apierr.UserInput("the request body is not valid JSON: " + err.Error())
	}
	return nil
}

// scopeOf is the Scope a handler passes to the services: the caller the contract middleware
// authenticated and put in the request's context. It is the one place a request becomes a Scope; only
// operations that require a token call it, so its absence is a bug.
func scopeOf(ctx context.Context) authz.Scope {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		panic("httpapi: no principal in an authenticated request")
	}
	return authz.RequestScope(p)
}
