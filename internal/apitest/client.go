package apitest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/hubd/hubd/gen/api"
)

// Client calls the server as one caller (token may be empty) and validates every response.
type Client struct {
	env   *Env
	token string
}

// Client returns a client that sends token as its bearer token.
func (e *Env) Client(token string) *Client { return &Client{env: e, token: token} }

// Anonymous returns a client without a token.
func (e *Env) Anonymous() *Client { return &Client{env: e} }

// Response is a validated response.
type Response struct {
	T         testing.TB
	Status    int
	Header    http.Header
	Body      []byte
	Operation string
}

// RequestOption adjusts a request.
type RequestOption func(*http.Request)

// WithHeader sets a request header.
func WithHeader(name, value string) RequestOption {
	return func(r *http.Request) { r.Header.Set(name, value) }
}

// Raw marks a body to be sent as is, with the given Content-Type.
type Raw struct {
	ContentType string
	Data        []byte
}

// Do sends a request to path (relative to the base address, e.g. /api/space). body is nil, Raw, or
// a value sent as JSON.
func (c *Client) Do(method, path string, body any, opts ...RequestOption) *Response {
	t := c.env.T
	t.Helper()
	var data []byte
	contentType := ""
	switch b := body.(type) {
	case nil:
	case Raw:
		data, contentType = b.Data, b.ContentType
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			t.Fatalf("encoding request body: %v", err)
		}
		contentType = "application/json"
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.env.URL+path, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("building request: %v", err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := (&http.Client{Transport: c.env.transport}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response of %s %s: %v", method, path, err)
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		// Asked for explicitly (WithHeader Accept-Encoding), so the transport left it compressed.
		if respBody, err = gunzip(respBody); err != nil {
			t.Fatalf("%s %s: the gzip body does not decompress: %v", method, path, err)
		}
	}
	op, verr := validate(req, data, resp, respBody)
	if verr != nil {
		t.Fatalf("%s %s answered %d, which breaks the contract: %v\nbody: %s", method, path, resp.StatusCode, verr, truncate(respBody))
	}
	return &Response{T: t, Status: resp.StatusCode, Header: resp.Header, Body: respBody, Operation: op}
}

// Get, Post, Put, Patch and Delete are Do with a method.
func (c *Client) Get(path string, opts ...RequestOption) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodGet, path, nil, opts...)
}

func (c *Client) Post(path string, body any, opts ...RequestOption) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPost, path, body, opts...)
}

func (c *Client) Put(path string, body any, opts ...RequestOption) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPut, path, body, opts...)
}

// Patch sends body as an RFC 7386 merge patch.
func (c *Client) Patch(path string, body any, opts ...RequestOption) *Response {
	c.env.T.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		c.env.T.Fatalf("encoding patch: %v", err)
	}
	return c.Do(http.MethodPatch, path, Raw{ContentType: "application/merge-patch+json", Data: data}, opts...)
}

func (c *Client) Delete(path string, opts ...RequestOption) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodDelete, path, nil, opts...)
}

// Expect fails the test unless the response has status.
func (r *Response) Expect(status int) *Response {
	r.T.Helper()
	if r.Status != status {
		r.T.Fatalf("status %d, want %d; body: %s", r.Status, status, truncate(r.Body))
	}
	return r
}

// JSON decodes the body into v.
func (r *Response) JSON(v any) {
	r.T.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		r.T.Fatalf("decoding %s: %v", truncate(r.Body), err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map() map[string]any {
	r.T.Helper()
	var m map[string]any
	r.JSON(&m)
	return m
}

// ExpectError fails the test unless the response is the error body with status and Type; it returns it.
func (r *Response) ExpectError(status int, typ api.ErrorType) api.StandardErrorResponse {
	r.T.Helper()
	r.Expect(status)
	var e api.StandardErrorResponse
	r.JSON(&e)
	if e.Error.Type != typ || e.Error.Status != status {
		r.T.Fatalf("error Type %s Status %d, want %s %d: %s", e.Error.Type, e.Error.Status, typ, status, truncate(r.Body))
	}
	if e.Message == "" || !strings.HasPrefix(e.Message, e.Error.Message) {
		r.T.Fatalf("the lowercase message must start with Error.Message: %s", truncate(r.Body))
	}
	return e
}

// Warnings returns the Warning header values.
func (r *Response) Warnings() []string { return r.Header.Values("Warning") }

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

// Transport is an http.RoundTripper for clients under test that are not Clients (a bot, an SDK): every
// answer it carries is checked against the served document like a Client's, and a contract break fails
// the test.
func (e *Env) Transport() http.RoundTripper { return checkingTransport{t: e.T, base: e.transport} }

// HTTPClient is an http.Client over Transport, for clients that make their own requests (generated ones).
func (e *Env) HTTPClient() *http.Client { return &http.Client{Transport: e.Transport()} }

// HTTP1Transport is Transport speaking HTTP/1.1 only, also where the server offers HTTP/2 (Options.TLS).
func (e *Env) HTTP1Transport() http.RoundTripper {
	t := e.transport.Clone()
	t.ForceAttemptHTTP2 = false
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // not nil: no HTTP/2
	if t.TLSClientConfig != nil {
		t.TLSClientConfig.NextProtos = nil // what an HTTP/2 transport offered before
	}
	return checkingTransport{t: e.T, base: t}
}

func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

type checkingTransport struct {
	t    testing.TB
	base http.RoundTripper
}

func (c checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := check(c.t, req, reqBody, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// check reads resp's body, checks the answer against the served document (a break fails the test) and
// leaves the body readable again.
func check(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	checked := body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if checked, err = gunzip(body); err != nil {
			t.Errorf("%s %s: the gzip body does not decompress: %v", req.Method, req.URL.Path, err)
		}
	}
	if _, verr := validate(req, reqBody, resp, checked); verr != nil {
		// Errorf, not Fatalf: the client may run on its own goroutine.
		t.Errorf("%s %s answered %d, which breaks the contract: %v\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, verr, truncate(checked))
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// CheckResponse checks an answer that a client of the test's own read (from a raw connection: pipelined
// requests) against the served document like Transport does; resp's body stays readable.
func (e *Env) CheckResponse(req *http.Request, reqBody []byte, resp *http.Response) error {
	return check(e.T, req, reqBody, resp)
}

// CheckedURL is the address of a proxy to the server that checks every answer against the document like
// HTTPClient does, for clients in other processes (the TypeScript scenario).
func (e *Env) CheckedURL() string {
	target, err := url.Parse(e.URL)
	if err != nil {
		e.T.Fatalf("parsing the server URL: %v", err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: e.Transport(),
	}
	srv := httptest.NewServer(proxy)
	e.T.Cleanup(srv.Close)
	return srv.URL
}
