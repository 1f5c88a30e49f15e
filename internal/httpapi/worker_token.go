package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/bridgeworker"
)

// workerCredentials is the body of POST {base}/auth/worker (JSON, or the same names form-encoded). The
// reference client's names worker_id and worker_secret are accepted too.
type workerCredentials struct {
	WorkerID    string `json:"WorkerID"`
	Secret      string `json:"Secret"`
	WorkerIDAlt string `json:"worker_id"`
	SecretAlt   string `json:"worker_secret"`
}

// merged takes the reference client's names where the hubd ones are absent.
func (c workerCredentials) merged() workerCredentials {
	if c.WorkerID == "" {
		c.WorkerID = c.WorkerIDAlt
	}
	if c.Secret == "" {
		c.Secret = c.SecretAlt
	}
	return c
}

// workerToken serves POST {base}/auth/worker: a BridgeWorker's ID and Secret become a short-lived
// (bridgeworker.TokenTTL) service token of its bot User. Answers and errors are those of /auth/token.
func (s *Server) workerToken(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	fail := func(status int, code, description string) error { return oauthFail(c, status, code, description) }
	creds, err := readWorkerCredentials(c.Request())
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_request", err.Error())
	}
	if creds.WorkerID == "" || creds.Secret == "" {
		return fail(http.StatusBadRequest, "invalid_request", "WorkerID and Secret (or worker_id and worker_secret) are required")
	}
	id, err := uuid.Parse(creds.WorkerID)
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_request", "WorkerID must be the BridgeWorker's ID (a UUID)")
	}
	credential := "worker:" + id.String()
	if wait := s.signIns.check(c.Request(), credential); wait > 0 {
		return s.signInsRefused(c, wait)
	}
	p, err := s.deps.BridgeWorkers.Authenticate(c.Request().Context(), id, creds.Secret)
	if errors.Is(err, bridgeworker.ErrBadCredentials) {
		s.signIns.failed(c.Request(), credential)
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="hubd worker"`)
		return fail(http.StatusUnauthorized, "invalid_client", "unknown WorkerID or wrong Secret")
	}
	if err != nil {
		return s.oauthInternal(c, err)
	}
	short := *s.deps.Issuer
	if short.TTL <= 0 || short.TTL > bridgeworker.TokenTTL {
		short.TTL = bridgeworker.TokenTTL
	}
	return s.issueWith(c, &short, p)
}

// readWorkerCredentials reads a JSON body, or a form-encoded one, of at most 64 KiB.
func readWorkerCredentials(r *http.Request) (workerCredentials, error) {
	var creds workerCredentials
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return creds, errors.New("the body cannot be read")
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mediaType == "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(data))
		if err != nil {
			return creds, errors.New("the form body is malformed")
		}
		creds = workerCredentials{WorkerID: form.Get("WorkerID"), Secret: form.Get("Secret"),
			WorkerIDAlt: form.Get("worker_id"), SecretAlt: form.Get("worker_secret")}
	case mediaType == "application/json" || mediaType == "" || strings.HasSuffix(mediaType, "+json"):
		if err := json.Unmarshal(data, &creds); err != nil {
			return creds, errors.New("the body must be a JSON object {WorkerID, Secret}")
		}
	default:
		return creds, errors.New("the body must be application/json or application/x-www-form-urlencoded")
	}
	return creds.merged(), nil
}
