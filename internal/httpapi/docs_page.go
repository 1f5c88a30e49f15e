package httpapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"html/template"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/gen/docsui"
)

// The browsable reference: an HTML page that renders the document with an embedded script (Redoc), served
// at /docs and, to a client that prefers HTML (a browser), at /api/docs. Nothing is fetched from another
// origin at run time; the page's Content-Security-Policy forbids it.

// docsPath is the page's canonical address; its script is served beneath it.
const docsPath = "/docs"

//go:embed docs_page.html
var docsPageSource string

var docsPage = template.Must(template.New("docs").Parse(docsPageSource))

// docsPolicy confines the page to its own origin: the script and the document come from it, the renderer
// injects styles and runs its search index in a worker made from a blob.
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsAssets are the page's script and its licence notices, addressed by version: a page names them with
// ?v=<hash of the script>, so a browser may keep them as long as it likes.
var docsAssets = map[string]struct {
	body        []byte
	contentType string
}{
	"redoc.standalone.js":             {docsui.Script, "text/javascript; charset=utf-8"},
	"redoc.standalone.js.LICENSE.txt": {docsui.ScriptLicenses, "text/plain; charset=utf-8"},
}

var docsScriptVersion = func() string {
	sum := sha256.Sum256(docsui.Script)
	return hex.EncodeToString(sum[:8])
}()

// registerDocsPage adds the page's routes (/docs, /docs/ and its assets) and returns the middleware that
// answers GET /api/docs with the page when the client prefers HTML.
func (s *Server) registerDocsPage(e *echo.Echo) echo.MiddlewareFunc {
	e.GET(docsPath, s.docsPage)
	e.GET(docsPath+"/", s.docsPage)
	e.GET(docsPath+"/assets/:name", docsAsset)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Method != http.MethodGet || req.URL.Path != BasePath+"/docs" {
				return next(c)
			}
			// Both answers depend on Accept, so a cache must not give one for the other.
			c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
			if prefersHTML(req.Header.Get(echo.HeaderAccept)) {
				return s.docsPage(c)
			}
			return next(c)
		}
	}
}

// docsPage renders the page. Its links are relative to the request path, so the page works wherever it is
// served from, behind a proxy that mounts hubd under a prefix too.
func (s *Server) docsPage(c echo.Context) error {
	toRoot := strings.Repeat("../", strings.Count(c.Request().URL.Path, "/")-1)
	var page bytes.Buffer
	err := docsPage.Execute(&page, struct{ Document, Script string }{
		Document: toRoot + strings.TrimPrefix(BasePath, "/") + "/docs",
		Script:   toRoot + strings.TrimPrefix(docsPath, "/") + "/assets/redoc.standalone.js?v=" + docsScriptVersion,
	})
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set(echo.HeaderCacheControl, "no-cache")
	return c.HTMLBlob(http.StatusOK, page.Bytes())
}

func docsAsset(c echo.Context) error {
	asset, ok := docsAssets[c.Param("name")]
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if c.QueryParam("v") == docsScriptVersion {
		h.Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		h.Set(echo.HeaderCacheControl, "no-cache")
	}
	return c.Blob(http.StatusOK, asset.contentType, asset.body)
}

// prefersHTML reports whether an Accept header ranks text/html above JSON, as a browser's navigation does
// ("text/html,...,*/*;q=0.8"); a client that names no type, or JSON first, gets the document as JSON. A
// type named exactly outranks the ranges that cover it.
func prefersHTML(accept string) bool {
	html := acceptance{}
	json := acceptance{}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		switch mt {
		case "text/html":
			html.offer(2, q)
		case "text/*":
			html.offer(1, q)
		case echo.MIMEApplicationJSON:
			json.offer(2, q)
		case "application/*":
			json.offer(1, q)
		case "*/*":
			html.offer(0, q)
			json.offer(0, q)
		}
	}
	return html.q > 0 && html.q > json.q
}

// acceptance is the quality an Accept header gives a type: that of its most specific matching range.
type acceptance struct {
	specificity int
	q           float64
	set         bool
}

func (a *acceptance) offer(specificity int, q float64) {
	if !a.set || specificity > a.specificity {
		*a = acceptance{specificity: specificity, q: q, set: true}
	}
}
