package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/hubd/hubd/internal/httpapi"
)

var (
	docOnce sync.Once
	doc     *openapi3.T
	docErr  error

	coverageMu sync.Mutex
	covered    = map[string]bool{}
)

func init() {
	// The reference page (GET /api/docs for a browser) is HTML: its schema is a string, checked as text.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// Document is the served OpenAPI document, loaded once.
func Document() (*openapi3.T, error) {
	docOnce.Do(func() { doc, docErr = httpapi.LoadDocument() })
	return doc, docErr
}

// validate checks a response against the document: the status must be declared for the operation
// (not only covered by `default`), headers and body must match, and every response carries
// X-Request-Id and Hubd-Version. Paths and methods the document lacks must answer its error body with
// 404 or 405. It returns the operationId.
func validate(req *http.Request, reqBody []byte, resp *http.Response, body []byte) (string, error) {
	for _, h := range []string{"X-Request-Id", "Hubd-Version"} {
		if resp.Header.Get(h) == "" {
			return "", fmt.Errorf("header %s is missing", h)
		}
	}
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
		// A CORS preflight is answered before any operation, outside the document.
		if resp.StatusCode != http.StatusNoContent || len(body) > 0 {
			return "", fmt.Errorf("a CORS preflight must answer 204 with no body, not %d", resp.StatusCode)
		}
		return "", nil
	}
	if req.URL.Path == "/v2" || strings.HasPrefix(req.URL.Path, "/v2/") {
		return "", validateRegistry(req, resp, body)
	}
	if !strings.HasPrefix(req.URL.Path, httpapi.BasePath+"/") {
		return "", nil
	}
	d, err := Document()
	if err != nil {
		return "", err
	}
	path, item, params := matchPath(d, strings.TrimPrefix(req.URL.Path, httpapi.BasePath))
	var op *openapi3.Operation
	if item != nil {
		op = item.GetOperation(req.Method)
	}
	if op == nil {
		return "", validateUnroutable(item != nil, resp, body)
	}
	record(op.OperationID)
	if op.Responses.Status(resp.StatusCode) == nil {
		return op.OperationID, fmt.Errorf("status %d is not declared for %s", resp.StatusCode, op.OperationID)
	}
	req = req.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params,
			Route: &routers.Route{Spec: d, Path: path, PathItem: item, Method: req.Method, Operation: op},
		},
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		if !req.URL.Query().Has("select") {
			return op.OperationID, err
		}
		if err := withoutMissingProperties(err); err != nil {
			return op.OperationID, err
		}
	}
	return op.OperationID, validateDeclaredHeaders(op, resp)
}

// withoutMissingProperties drops from a response validation error the properties reported missing: a
// select answers only the fields it names, so the properties responses otherwise always carry (required
// in the document) may be absent. Nil when nothing else is wrong.
func withoutMissingProperties(err error) error {
	var rerr *openapi3filter.ResponseError
	if !errors.As(err, &rerr) {
		return err
	}
	var all openapi3.MultiError
	if !errors.As(rerr.Err, &all) {
		all = openapi3.MultiError{rerr.Err}
	}
	var rest openapi3.MultiError
	for _, e := range all {
		if !onlyMissing(e) {
			rest = append(rest, e)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return &openapi3filter.ResponseError{Input: rerr.Input, Reason: rerr.Reason, Err: rest}
}

// onlyMissing reports whether a schema error is made of missing properties only, also inside the
// composite schemas (allOf, a nullable reference) of included entities whose fields select names.
func onlyMissing(err error) bool {
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		for _, e := range multi {
			if !onlyMissing(e) {
				return false
			}
		}
		return len(multi) > 0
	}
	var serr *openapi3.SchemaError
	if !errors.As(err, &serr) {
		return false
	}
	if serr.SchemaField == "required" {
		return true
	}
	return serr.Origin != nil && onlyMissing(serr.Origin)
}

// validateDeclaredHeaders requires the response headers the document marks required.
func validateDeclaredHeaders(op *openapi3.Operation, resp *http.Response) error {
	r := op.Responses.Status(resp.StatusCode)
	for name, h := range r.Value.Headers {
		if h.Value != nil && h.Value.Required && resp.Header.Get(name) == "" {
			return fmt.Errorf("required header %s is missing", name)
		}
	}
	return nil
}

func validateUnroutable(pathExists bool, resp *http.Response, body []byte) error {
	want := http.StatusNotFound
	if pathExists {
		want = http.StatusMethodNotAllowed
	}
	if resp.StatusCode != want {
		return fmt.Errorf("the document has no such operation, so the answer must be %d, not %d", want, resp.StatusCode)
	}
	if want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
		return errors.New("a 405 must carry an Allow header")
	}
	return ValidateErrorBody(body)
}

// ValidateErrorBody checks body against the document's StandardErrorResponse, for responses no operation
// of the document describes (errors the HTTP server answers before routing).
func ValidateErrorBody(body []byte) error {
	d, err := Document()
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	return d.Components.Schemas["StandardErrorResponse"].Value.VisitJSON(v)
}

// matchPath finds the document path matching a concrete path (literal segments win over parameters).
func matchPath(d *openapi3.T, concrete string) (string, *openapi3.PathItem, map[string]string) {
	segs := strings.Split(strings.Trim(concrete, "/"), "/")
	bestScore := -1
	var bestPath string
	var bestItem *openapi3.PathItem
	var bestParams map[string]string
	for tmpl, item := range d.Paths.Map() {
		tsegs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params := map[string]string{}
		score := 0
		ok := true
		for i, ts := range tsegs {
			switch {
			case strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}"):
				params[ts[1:len(ts)-1]] = segs[i]
			case ts == segs[i]:
				score++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && score > bestScore {
			bestScore, bestPath, bestItem, bestParams = score, tmpl, item, params
		}
	}
	return bestPath, bestItem, bestParams
}

func record(op string) {
	coverageMu.Lock()
	covered[op] = true
	coverageMu.Unlock()
}

// Uncovered lists the document's operations no test of this process called.
func Uncovered() []string {
	d, err := Document()
	if err != nil {
		return []string{err.Error()}
	}
	coverageMu.Lock()
	defer coverageMu.Unlock()
	var out []string
	for path, item := range d.Paths.Map() {
		for method, op := range item.Operations() {
			if !covered[op.OperationID] {
				out = append(out, op.OperationID+" ("+method+" "+path+")")
			}
		}
	}
	sort.Strings(out)
	return out
}

// Main runs a package's tests and, when the whole package ran and passed, fails if any operation of
// the document was never called: every operation needs a test through the HTTP API.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 && fullRun() {
		if missing := Uncovered(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "operations of the document that no test calls:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

func fullRun() bool {
	f := flag.Lookup("test.run")
	short := flag.Lookup("test.short")
	isShort, _ := strconv.ParseBool(short.Value.String())
	return f != nil && f.Value.String() == "" && !isShort
}

// registryErrorCodes are the error codes of the OCI distribution API, with the status each is answered
// with by hubd's read-only registry (UNKNOWN: the service itself failed).
var registryErrorCodes = map[string][]int{
	"UNAUTHORIZED": {http.StatusUnauthorized}, "NAME_UNKNOWN": {http.StatusNotFound}, "MANIFEST_UNKNOWN": {http.StatusNotFound},
	"BLOB_UNKNOWN": {http.StatusNotFound}, "DIGEST_INVALID": {http.StatusBadRequest},
	"UNSUPPORTED": {http.StatusMethodNotAllowed, http.StatusBadRequest},
	"UNKNOWN":     {http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout},
}

// validateRegistry checks an answer of the OCI registry (/v2/) against the distribution API: errors are
// {"errors":[{code, message}]} with a code of the API, a 401 carries the Bearer challenge, and content
// is named by Docker-Content-Digest.
func validateRegistry(req *http.Request, resp *http.Response, body []byte) error {
	if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer realm=") {
		return fmt.Errorf("a 401 of the registry must carry a Bearer challenge, not %q", resp.Header.Get("WWW-Authenticate"))
	}
	if resp.StatusCode < 400 {
		if (strings.Contains(req.URL.Path, "/manifests/") || strings.Contains(req.URL.Path, "/blobs/")) &&
			!strings.HasPrefix(resp.Header.Get("Docker-Content-Digest"), "sha256:") {
			return fmt.Errorf("content of the registry must be named by Docker-Content-Digest")
		}
		return nil
	}
	if req.Method == http.MethodHead {
		return nil
	}
	var e struct {
		Errors []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) == 0 {
		return fmt.Errorf("a registry error must be {\"errors\":[{code, message}]}: %v", err)
	}
	for _, item := range e.Errors {
		statuses, ok := registryErrorCodes[item.Code]
		if !ok || !slices.Contains(statuses, resp.StatusCode) || item.Message == "" {
			return fmt.Errorf("registry error %q with status %d and message %q is not one the API allows", item.Code, resp.StatusCode, item.Message)
		}
	}
	return nil
}
