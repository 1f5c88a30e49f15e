package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// pollConns are the fan-out's HTTP/1.1 connections to hubd, kept alive between polls. A poll writes its
// request on a connection of its own and reads the response with http.ReadResponse: no Transport, whose
// reading and writing goroutines and idle pool would cost this process several times the CPU of the
// read itself for every answer. The client shares the machine's CPUs with hubd, and 10,000 real pollers
// would run on machines of their own, so the less of the CPUs it takes, the more the benchmark measures
// hubd. Answers are decoded and checked after the last has arrived, for the same reason.
type pollConns struct {
	addr string // host:port
	mu   sync.Mutex
	idle []*pollConn
}

type pollConn struct {
	net.Conn
	r *bufio.Reader
}

func newPollConns(base string) *pollConns {
	return &pollConns{addr: strings.TrimPrefix(base, "http://")}
}

// polled is one response: its status, its body, and when its last byte was read.
type polled struct {
	status int
	body   []byte
	at     time.Time
}

// post sends a JSON body to path with the bearer token and reads the response, waiting at most wait. A
// kept-alive connection the server has closed meanwhile (its idle timeout) is replaced by a new one.
func (p *pollConns) post(token, path string, body []byte, wait time.Duration) (polled, error) {
	req := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, p.addr, token, len(body))
	req = append(req, body...)
	for {
		c, reused, err := p.get()
		if err != nil {
			return polled{}, err
		}
		resp, err := c.send(req, wait)
		if err != nil {
			_ = c.Close()
			if reused {
				continue
			}
			return polled{}, err
		}
		data, err := io.ReadAll(resp.Body)
		out := polled{status: resp.StatusCode, body: data, at: time.Now()}
		if err != nil || resp.Close {
			_ = c.Close()
			return out, err
		}
		p.put(c)
		return out, nil
	}
}

// send writes req and reads the response's head.
func (c *pollConn) send(req []byte, wait time.Duration) (*http.Response, error) {
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return nil, err
	}
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	return http.ReadResponse(c.r, nil)
}

// get takes an idle connection (reused) or dials a new one.
func (p *pollConns) get() (c *pollConn, reused bool, err error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c = p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		return nil, false, err
	}
	return &pollConn{Conn: conn, r: bufio.NewReader(conn)}, false, nil
}

func (p *pollConns) put(c *pollConn) {
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// close closes the idle connections.
func (p *pollConns) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		_ = c.Close()
	}
	p.idle = nil
}
