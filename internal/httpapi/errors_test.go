package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
)

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	e := c.Get("/api/no/such/path").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	require.Contains(t, e.Error.Message, "/api/no/such/path")
	env.Anonymous().Get("/api/nope").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get("/nope").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	resp := c.Put("/api/space", map[string]any{})
	resp.ExpectError(http.StatusMethodNotAllowed, api.ErrorTypeUserInput)
	require.Contains(t, resp.Header.Get("Allow"), "GET")
	require.Contains(t, resp.Header.Get("Allow"), "POST")
	c.Delete("/api/info").ExpectError(http.StatusMethodNotAllowed, api.ErrorTypeUserInput)
}

func TestBodyErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{BodyLimit: 64 << 10}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	// 415 for a media type the operation does not take.
	c.Post("/api/space", apitest.Raw{ContentType: "text/plain", Data: []byte("Slug: dev")}).ExpectError(http.StatusUnsupportedMediaType, api.ErrorTypeUserInput)
	c.Post("/api/space", apitest.Raw{ContentType: "application/xml", Data: []byte("<Space/>")}).ExpectError(http.StatusUnsupportedMediaType, api.ErrorTypeUserInput)

	// Malformed JSON, a JSON value of the wrong shape, wrong field types (named by dot path), no body.
	c.Post("/api/space", apitest.Raw{ContentType: "application/json", Data: []byte(`{"Slug": "dev"`)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post("/api/space", apitest.Raw{ContentType: "application/json", Data: []byte(`[1,2]`)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	e := c.Post("/api/space", map[string]any{"Slug": 42}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "Slug", e.Error.ErrorMetadata.Items[0].Item)
	e = c.Post("/api/space", map[string]any{"Slug": "dev", "Permissions": map[string]any{"View": map[string]any{"UserIDs": map[string]any{"x": "yes"}}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "Permissions.View.UserIDs.x", e.Error.ErrorMetadata.Items[0].Item)
	c.Post("/api/space", apitest.Raw{ContentType: "application/json"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post("/api/space", apitest.Raw{}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// 413 above the body limit, before anything is parsed.
	huge := `{"Slug":"dev","DisplayName":"` + strings.Repeat("x", 100<<10) + `"}`
	e = c.Post("/api/space", apitest.Raw{ContentType: "application/json", Data: []byte(huge)}).ExpectError(http.StatusRequestEntityTooLarge, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "larger")
	// A value over its storage limit is refused as input.
	c.Post("/api/space", map[string]any{"Slug": "dev", "DisplayName": strings.Repeat("x", 300)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// A value the storage cannot hold (a NUL character in text) is 400 Data.
	c.Post("/api/space", map[string]any{"Slug": "dev", "DisplayName": "nul\u0000byte"}).ExpectError(http.StatusBadRequest, api.ErrorTypeData)

	// Text that is not valid Unicode (bytes that are not UTF-8, lone surrogate escapes) is refused, never
	// stored altered (Go's decoder would turn it into U+FFFD).
	for body, item := range map[string]string{
		"{\"Slug\": \"dev\", \"DisplayName\": \"caf\xe9\"}":        "DisplayName",
		`{"Slug": "dev", "DisplayName": "x\udc00"}`:                "DisplayName",
		"{\"Slug\": \"dev\", \"Labels\": {\"team\xff\": \"ops\"}}": "Labels",
		`{"Slug": "dev", "Annotations": {"note": "a\ud800b"}}`:     "Annotations.note",
	} {
		e = c.Post("/api/space", apitest.Raw{ContentType: "application/json", Data: []byte(body)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Equal(t, item, e.Error.ErrorMetadata.Items[0].Item, body)
	}

	// Parameters: a path ID that is not a UUID, a query value of the wrong type.
	e = c.Get("/api/space/not-a-uuid").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "space_id", e.Error.ErrorMetadata.Items[0].Item)
	e = c.Post("/api/space?dry_run=perhaps", map[string]any{"Slug": "dev"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "dry_run", e.Error.ErrorMetadata.Items[0].Item)

	// Nothing was written by any of it.
	var list []api.ExtendedSpace
	c.Get("/api/space").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
}

func TestUnknownFieldsWarn(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	resp := c.Post("/api/space", map[string]any{
		"Slug": "dev", "slug": "other", "Bogus": 1,
		"Permissions": map[string]any{"View": map[string]any{"UserIDs": map[string]bool{}, "Bogus": true}},
	}).Expect(http.StatusOK)
	require.Equal(t, []string{
		`299 hubd "Unknown field: Bogus"`,
		`299 hubd "Unknown field: Permissions.View.Bogus"`,
		`299 hubd "Unknown field: slug"`,
	}, resp.Warnings())
	var sp api.Space
	resp.JSON(&sp)
	require.Equal(t, "dev", sp.Slug) // the lowercase key did not reach Slug

	// Unknown fields of a merge patch are warned about and ignored too.
	resp = c.Patch("/api/space/"+sp.SpaceID.String(), map[string]any{"DisplayName": "x", "Nope": map[string]any{"a": 1}}).Expect(http.StatusOK)
	require.Equal(t, []string{`299 hubd "Unknown field: Nope"`}, resp.Warnings())
	// Server-assigned fields sent as null are absent (a client that sends every field of a form), with no
	// Warning; a non-null one is ignored like the unknown fields above.
	var units api.UnitCreateOrUpdateResponse
	resp = c.Post("/api/space/"+sp.SpaceID.String()+"/unit", map[string]any{"Slug": "web", "ToolchainType": "AppConfig/Env",
		"UnitID": nil, "CreatedAt": nil, "DataHash": nil, "HeadRevisionNum": nil, "EntityType": nil}).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())
	resp.JSON(&units)
	require.Equal(t, "web", units.Unit.Slug)
	require.NotEqual(t, uuid.Nil, units.Unit.UnitID)
	resp = c.Post("/api/space", map[string]any{"Slug": "nulls", "SpaceID": nil, "CreatedAt": nil, "HiddenReason": nil}).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())

	// Responses without unknown fields carry no Warning.
	require.Empty(t, c.Get("/api/space").Expect(http.StatusOK).Warnings())

	// Query parameters the operation does not have are named too (declared ones are not), with the body's.
	resp = c.Post("/api/space?dry_run=true&upstream_unit_id=x&Dry_Run=1", map[string]any{"Slug": "qa", "Bogus": 1}).Expect(http.StatusOK)
	require.Equal(t, []string{
		`299 hubd "Unknown query parameter: Dry_Run"`,
		`299 hubd "Unknown query parameter: upstream_unit_id"`,
		`299 hubd "Unknown field: Bogus"`,
	}, resp.Warnings())
	resp = c.Get("/api/space/" + sp.SpaceID.String() + "?revision_id=1&select=Slug").Expect(http.StatusOK)
	require.Equal(t, []string{`299 hubd "Unknown query parameter: revision_id"`}, resp.Warnings())
	// Also on errors: the client learns what was ignored while it fixes the rest.
	resp = c.Post("/api/space?bogus=1", map[string]any{"Slug": 42})
	resp.ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, []string{`299 hubd "Unknown query parameter: bogus"`}, resp.Warnings())
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Anonymous()
	resp := c.Get("/api/info", apitest.WithHeader("X-Request-Id", "trace-42.a:b")).Expect(http.StatusOK)
	require.Equal(t, "trace-42.a:b", resp.Header.Get("X-Request-Id"))
	resp = c.Get("/api/info", apitest.WithHeader("X-Request-Id", "bad id with spaces")).Expect(http.StatusOK)
	require.NotEqual(t, "bad id with spaces", resp.Header.Get("X-Request-Id"))
	require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
	// Errors carry it as well.
	resp = c.Get("/api/me", apitest.WithHeader("X-Request-Id", "err-1"))
	resp.ExpectError(http.StatusUnauthorized, api.ErrorTypeAuthentication)
	require.Equal(t, "err-1", resp.Header.Get("X-Request-Id"))
}

// failingOps injects failures into chosen operations through the generated strict middleware chain.
func failingOps(fail map[string]func(echo.Context) error) []api.StrictMiddlewareFunc {
	return []api.StrictMiddlewareFunc{func(next api.StrictHandlerFunc, op string) api.StrictHandlerFunc {
		return func(c echo.Context, req any) (any, error) {
			if f := fail[op]; f != nil && c.Request().Header.Get("X-Test-Fail") != "" {
				if err := f(c); err != nil {
					return nil, err
				}
			}
			return next(c, req)
		}
	}}
}

func TestServerFailures(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	env := apitest.New(t, apitest.Options{
		HTTP: httpapi.Config{MaxInFlightPerCaller: 1},
		Deps: httpapi.Deps{StrictMiddlewares: failingOps(map[string]func(echo.Context) error{
			"GetSpace": func(echo.Context) error { panic("injected failure") },
			"ListUsers": func(echo.Context) error {
				entered <- struct{}{}
				<-release
				return nil
			},
			"DeleteSpace": func(echo.Context) error { return apierr.Unprocessable("the delete cannot be carried out now") },
		})},
	})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "dev"})
	fail := apitest.WithHeader("X-Test-Fail", "1")

	// A panic is a 500 Unexpected that names the request ID; the server keeps serving.
	resp := c.Get("/api/space/"+sp.SpaceID.String(), fail)
	e := resp.ExpectError(http.StatusInternalServerError, api.ErrorTypeUnexpected)
	require.Contains(t, e.Error.Message, "X-Request-Id")
	require.NotContains(t, string(resp.Body), "injected failure")
	c.Get("/api/space/" + sp.SpaceID.String()).Expect(http.StatusOK)

	// 422 Unprocessable as the operation declares it.
	c.Delete("/api/space/"+sp.SpaceID.String(), fail).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)

	// 429 when the caller already has its maximum in flight; other callers are unaffected.
	done := make(chan *apitest.Response)
	go func() { done <- c.Get("/api/user", fail) }()
	<-entered
	resp = c.Get("/api/space")
	resp.ExpectError(http.StatusTooManyRequests, api.ErrorTypeTooManyRequests)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	env.Client(env.Token("acme", "bob", auth.RoleMember)).Get("/api/space").Expect(http.StatusOK)
	close(release)
	(<-done).Expect(http.StatusOK)
	c.Get("/api/space").Expect(http.StatusOK)
}

func TestGatewayTimeout(t *testing.T) { inEachLongPollMode(t, testGatewayTimeout) }

func testGatewayTimeout(t *testing.T, opts apitest.Options) {
	t.Parallel()
	opts.HTTP.RequestTimeout = 500 * time.Millisecond
	env := apitest.New(t, opts)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	// Hold a lock the list needs for longer than the request may take.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DBURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = tx.Exec(ctx, "LOCK TABLE space IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	c.Get("/api/space").ExpectError(http.StatusGatewayTimeout, api.ErrorTypeGatewayTimeout)
	require.NoError(t, tx.Rollback(ctx))
	c.Get("/api/space").Expect(http.StatusOK)

	// A long poll (x-hubd-class: long-poll) may wait past the request timeout: its own timeout bounds it.
	sp := createSpace(t, c, map[string]any{"Slug": "ops"})
	channel := "/api/space/" + sp.SpaceID.String() + "/channel/bot"
	c.Post("/api/space/"+sp.SpaceID.String()+"/channel", map[string]any{"Slug": "bot"}).Expect(http.StatusOK)
	var lease api.ChannelLease
	c.Post(channel+"/lease", map[string]any{}).Expect(http.StatusOK).JSON(&lease)
	start := time.Now()
	c.Post(channel+"/poll", map[string]any{"ClaimToken": lease.ClaimToken, "TimeoutSeconds": 1}).Expect(http.StatusNoContent)
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "the poll waited its own timeout")
}

func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	c.Get("/readyz").Expect(http.StatusOK)
	// Take the database away under the running server.
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, apitest.AdminURL(t))
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := env.DBURL[strings.LastIndex(env.DBURL, "/")+1:]
	if i := strings.Index(name, "?"); i >= 0 {
		name = name[:i]
	}
	_, err = admin.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	require.NoError(t, err)
	c.Get("/api/space").ExpectError(http.StatusServiceUnavailable, api.ErrorTypeServiceUnavailable)
	// The token endpoints answer in their own (RFC 6749) error shape.
	r := env.Anonymous().Post("/auth/worker", map[string]any{"WorkerID": uuid.NewString(), "Secret": "s"})
	require.Equal(t, http.StatusServiceUnavailable, r.Status)
	require.Equal(t, "temporarily_unavailable", r.Map()["error"])
	c.Get("/readyz").Expect(http.StatusServiceUnavailable)
	c.Get("/healthz").Expect(http.StatusOK)
	// With no pooled connection left, the next request connects anew and is refused by the server
	// (the database does not exist): that too is 503, whatever PostgreSQL says when refusing.
	env.App.Store.Pool.Reset()
	c.Get("/api/space").ExpectError(http.StatusServiceUnavailable, api.ErrorTypeServiceUnavailable)
}

// TestEveryErrorType renders each Type through the server's one error handler: status, Type, Status,
// the lowercase message, X-Request-Id.
func TestEveryErrorType(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	cases := map[string]*apierr.Error{
		"UserInput": apierr.UserInput("bad", apierr.Item{Item: "A.B", Description: "wrong"}), "Validation": apierr.Validation("v"),
		"Data": apierr.Data("d"), "Authentication": apierr.Unauthenticated("a"), "Permission": apierr.Forbidden("p"),
		"NotFound": apierr.NotFound("Space", "x"), "Conflict": apierr.Conflict("c"), "AlreadyExists": apierr.AlreadyExists("Space", "s"),
		"PreconditionFailed": apierr.PreconditionFailed("pf"), "Unprocessable": apierr.Unprocessable("u"), "Locked": apierr.Locked("l"),
		"TooManyRequests": apierr.TooManyRequests("t"), "Unexpected": apierr.Unexpected(nil), "ServiceUnavailable": apierr.Unavailable("s"),
		"GatewayTimeout": apierr.Timeout("g"),
	}
	want := map[string]int{"UserInput": 400, "Validation": 400, "Data": 400, "Authentication": 401, "Permission": 403, "NotFound": 404,
		"Conflict": 409, "AlreadyExists": 409, "PreconditionFailed": 412, "Unprocessable": 422, "Locked": 423, "TooManyRequests": 429,
		"Unexpected": 500, "ServiceUnavailable": 503, "GatewayTimeout": 504}
	env.Server.Echo().GET("/test-error/:type", func(c echo.Context) error {
		return cases[c.Param("type")].WithDetail("while testing")
	})
	c := env.Anonymous()
	for typ, status := range want {
		e := c.Get("/test-error/"+typ).ExpectError(status, api.ErrorType(typ))
		require.Equal(t, []string{"while testing"}, e.Error.Details, typ)
		require.Contains(t, e.Message, "while testing", typ)
	}
	e := c.Get("/test-error/UserInput").ExpectError(400, api.ErrorTypeUserInput)
	require.Equal(t, []api.ErrorItem{{Item: "A.B", Description: "wrong"}}, e.Error.ErrorMetadata.Items)
	require.Equal(t, "bad; while testing; A.B: wrong", e.Message)
}

// TestProtocolErrorsHaveTheErrorBody: what net/http refuses before any handler runs (headers over the
// limit, a request that is not HTTP) is answered with the error body and the headers every response has.
func TestProtocolErrorsHaveTheErrorBody(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for name, tc := range map[string]struct {
		request string
		status  int
	}{
		"2 MB header":  {"GET /api/info HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		"no request":   {"GARBAGE\r\n\r\n", http.StatusBadRequest},
		"bad header":   {"GET /api/info HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", http.StatusBadRequest},
		"no host":      {"GET /api/info HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		"odd encoding": {"POST /api/space HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", http.StatusNotImplemented},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
		require.NoError(t, err, name)
		go func() { _, _ = conn.Write([]byte(tc.request)) }()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, name)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err, name)
		conn.Close()
		require.Equal(t, tc.status, resp.StatusCode, name)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"), name)
		require.NotEmpty(t, resp.Header.Get("X-Request-Id"), name)
		require.NotEmpty(t, resp.Header.Get("Hubd-Version"), name)
		require.NoError(t, apitest.ValidateErrorBody(body), name)
		var e api.StandardErrorResponse
		require.NoError(t, json.Unmarshal(body, &e), name)
		require.Equal(t, api.ErrorTypeUserInput, e.Error.Type, name)
		require.Equal(t, tc.status, e.Error.Status, name)
	}
	// The connection-level wrapper leaves ordinary responses alone.
	env.Anonymous().Get("/api/info").Expect(http.StatusOK)
}
