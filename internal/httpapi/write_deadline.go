package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// DefaultWriteTimeout is the default of Config.WriteTimeout.
const DefaultWriteTimeout = time.Minute

// limitWrites gives every write of an answer to the connection a deadline of Config.WriteTimeout from
// when it starts, so a client that stops reading a large answer holds its handler, the answer's buffers
// and the caller's in-flight slot for that long at most: the write fails, the handler returns and the
// connection is closed. The deadline is set when writing starts, not when the request does, so a long
// poll may wait its TimeoutSeconds first. (A parked poll's answer is written to its connection by
// longpoll, with a deadline of its own.)
func (s *Server) limitWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := c.Response()
		w := &deadlineWriter{ResponseWriter: res.Writer, rc: http.NewResponseController(res.Writer), timeout: s.cfg.WriteTimeout}
		// A deadline an earlier request on the connection left must not cut this one's first write short.
		_ = w.rc.SetWriteDeadline(time.Time{})
		res.Writer = w
		err := next(c)
		w.arm() // net/http sends what remains buffered once the handler returns
		return err
	}
}

// deadlineWriter sets the connection's write deadline before each write (an answer that is not an
// HTTP/1.1 or HTTP/2 connection's, as a parked poll's resumed pass writes, takes none).
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *deadlineWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

func (w *deadlineWriter) WriteHeader(status int) {
	w.arm()
	w.ResponseWriter.WriteHeader(status)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(b)
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

// FlushError is the Flush http.ResponseController calls: it reports the write's failure.
func (w *deadlineWriter) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer (Hijack, deadlines).
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
