package longpoll

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// answerWriteTimeout bounds writing a parked poll's answer to a client that stopped reading.
const answerWriteTimeout = 10 * time.Second

// answerWriter is the ResponseWriter of a resumed pass: the answer is kept in memory, then sent whole on
// the poll's connection (wire) as net/http would have sent it. A fan-out writes thousands of answers at
// once, so writers and their buffers are pooled (answerWriters).
type answerWriter struct {
	header http.Header
	status int // 0 until the header is written
	body   bytes.Buffer
	// wire is the answer on the wire, status line to body.
	wire bytes.Buffer
}

// maxPooledAnswer is the largest buffer kept for reuse: one grown by a large answer is left to the
// collector.
const maxPooledAnswer = 64 << 10

var answerWriters = sync.Pool{New: func() any { return &answerWriter{header: make(http.Header, 8)} }}

func newAnswerWriter() *answerWriter { return answerWriters.Get().(*answerWriter) }

func (w *answerWriter) free() {
	if w.body.Cap() > maxPooledAnswer || w.wire.Cap() > maxPooledAnswer {
		return
	}
	clear(w.header)
	w.status = 0
	w.body.Reset()
	w.wire.Reset()
	answerWriters.Put(w)
}

func (w *answerWriter) Header() http.Header { return w.header }

func (w *answerWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *answerWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush does nothing: the answer is sent whole once written.
func (w *answerWriter) Flush() {}

// toWire lays the answer out as an HTTP/1.1 response: the status line, the headers the pass set, then
// what net/http adds itself (Date, Content-Length, and Connection: close when the connection is not
// kept).
func (w *answerWriter) toWire(keepAlive bool) []byte {
	out := &w.wire
	w.header.Del("Content-Length")
	w.header.Del("Connection")
	out.Grow(512 + w.body.Len())
	out.WriteString("HTTP/1.1 ")
	out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(w.status), 10))
	out.WriteByte(' ')
	out.WriteString(http.StatusText(w.status))
	out.WriteString("\r\n")
	_ = w.header.Write(out)
	out.WriteString("Date: ")
	out.Write(time.Now().UTC().AppendFormat(out.AvailableBuffer(), http.TimeFormat))
	if w.status != http.StatusNoContent && w.status != http.StatusNotModified {
		out.WriteString("\r\nContent-Length: ")
		out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(w.body.Len()), 10))
	}
	if !keepAlive {
		out.WriteString("\r\nConnection: close")
	}
	out.WriteString("\r\n\r\n")
	out.Write(w.body.Bytes())
	return out.Bytes()
}

// writeAnswer writes b to c: at once when the socket takes it all, else with a deadline that bounds a
// client that stopped reading; reusable reports the connection fit to serve the next request (no
// deadline left on it).
func writeAnswer(c net.Conn, b []byte) (reusable bool, err error) {
	n := writeNow(c, b)
	if n == len(b) {
		return true, nil
	}
	if err := c.SetWriteDeadline(time.Now().Add(answerWriteTimeout)); err != nil {
		return false, err
	}
	if _, err := c.Write(b[n:]); err != nil {
		return false, err
	}
	return c.SetDeadline(time.Time{}) == nil, nil
}
