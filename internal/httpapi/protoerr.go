package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
)

// MaxHeaderBytes bounds a request's line and headers (net/http's default, stated so both the server and
// its tests use it). Above it the answer is 431 with the error body.
const MaxHeaderBytes = 1 << 20

// Listener wraps ln so that the errors net/http answers by itself, before any handler runs, carry the
// same error body and headers as every other response: 431 for headers over MaxHeaderBytes, 400 for a
// malformed request line or header, 501 for an unknown transfer encoding. net/http writes those as one
// plain-text write straight to the connection; the wrapper recognizes that exact form and writes the
// StandardErrorResponse instead.
//
// In the parked long-poll mode it also takes back the connections of answered parked polls, to serve
// their next requests (longpoll.Parker.Listener); without it no poll is parked.
func (s *Server) Listener(ln net.Listener) net.Listener {
	var l net.Listener = protocolErrorListener{Listener: ln, version: s.cfg.Version}
	if s.parker != nil {
		l = s.parker.Listener(l)
	}
	return l
}

type protocolErrorListener struct {
	net.Listener
	version string
}

func (l protocolErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &protocolErrorConn{Conn: c, version: l.version}, nil
}

type protocolErrorConn struct {
	net.Conn
	version string
}

// NetConn is the connection under the wrapper: a parked poll writes its answer (never a plain error) to
// the socket itself.
func (c *protocolErrorConn) NetConn() net.Conn { return c.Conn }

// plainErrorHeaders follows the status line of every error net/http writes by itself (net/http
// server.go). Responses of handlers always carry Hubd-Version and X-Request-Id instead, so they never
// start this way. (A body write that happened to start with a status line and exactly these headers
// would be rewritten: only a client's own response could be affected, by data it wrote itself.)
var plainErrorHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

func (c *protocolErrorConn) Write(p []byte) (int, error) {
	status, reason, ok := plainError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(c.errorResponse(status, reason)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// plainError parses "HTTP/1.1 <code> <text><plainErrorHeaders>...".
func plainError(p []byte) (status int, reason string, ok bool) {
	const prefix = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return 0, "", false
	}
	line, rest, found := bytes.Cut(p[len(prefix):], []byte("\r\n"))
	if !found || !bytes.HasPrefix(rest, plainErrorHeaders[len("\r\n"):]) {
		return 0, "", false
	}
	code, text, _ := bytes.Cut(line, []byte(" "))
	status, err := strconv.Atoi(string(code))
	if err != nil || status < 400 {
		return 0, "", false
	}
	return status, string(text), true
}

func (c *protocolErrorConn) errorResponse(status int, reason string) []byte {
	var message string
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		message = fmt.Sprintf("the request line and headers are larger than the server accepts (%d bytes)", MaxHeaderBytes)
	default:
		message = "the request is not valid HTTP/1.1: " + reason
	}
	e := apierr.UserInput(message)
	e.Status = status
	body, _ := json.Marshal(api.StandardErrorResponse{Error: responseError(e), Message: e.Summary()})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", len(body))
	fmt.Fprintf(&b, "%s: %s\r\n%s: %s\r\n\r\n", headerRequestID, uuid.NewString(), headerVersion, c.version)
	b.Write(body)
	return b.Bytes()
}
