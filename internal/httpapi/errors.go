package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/longpoll"
)

// handleError is Echo's HTTPErrorHandler: every error of every request is rendered here, as the API's
// StandardErrorResponse.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if errors.Is(err, longpoll.ErrClientGone) {
		c.Response().Status = longpoll.StatusClientGone // recorded; no one is there to read an answer
		return
	}
	status, body := s.errorBody(c.Request().Context(), requestID(c), err, s.toAPIError(err, c.Request()), c.Response().Header())
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if werr := c.JSON(status, body); werr != nil {
		s.log.Error("writing error response", "err", werr)
	}
}

// errorBody logs a request's error and returns its status and StandardErrorResponse, setting the headers
// that go with it in h.
func (s *Server) errorBody(ctx context.Context, requestID string, err error, e *apierr.Error, h http.Header) (int, api.StandardErrorResponse) {
	status := e.HTTPStatus()
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	s.log.Log(ctx, level, "request failed", "request_id", requestID, "status", status, "type", e.Type, "err", err.Error())
	if e.Type == apierr.TypeTooManyRequests {
		h.Set("Retry-After", "1")
	}
	return status, api.StandardErrorResponse{Error: responseError(e), Message: e.Summary()}
}

// toAPIError maps whatever a request produced to an apierr.Error. A request past its deadline failed
// because of it, whatever its work reported (a connection closed under it, say): 504, never 500.
func (s *Server) toAPIError(err error, req *http.Request) *apierr.Error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return fromEchoError(he, req)
	}
	e := apierr.From(err)
	if e.HTTPStatus() >= 500 && e.Type != apierr.TypeGatewayTimeout && errors.Is(req.Context().Err(), context.DeadlineExceeded) {
		return apierr.Timeout("the request did not complete in time").WithCause(err)
	}
	return e
}

// fromEchoError covers what Echo and the generated wrappers report themselves: unknown routes, methods a
// path lacks, and parameters they could not bind.
func fromEchoError(he *echo.HTTPError, req *http.Request) *apierr.Error {
	var inner *apierr.Error
	if errors.As(he.Internal, &inner) {
		return inner
	}
	msg, _ := he.Message.(string)
	switch he.Code {
	case http.StatusNotFound:
		return &apierr.Error{Type: apierr.TypeNotFound, Message: fmt.Sprintf("no operation is served at %s %s; the API document is at %s/docs", req.Method, req.URL.Path, BasePath)}
	case http.StatusMethodNotAllowed:
		e := apierr.UserInput(fmt.Sprintf("method %s is not allowed on %s; the Allow header lists the ones that are", req.Method, req.URL.Path))
		e.Status = http.StatusMethodNotAllowed
		return e
	case http.StatusUnsupportedMediaType:
		e := apierr.UserInput("unsupported Content-Type")
		e.Status = http.StatusUnsupportedMediaType
		return e
	case http.StatusRequestEntityTooLarge:
		return bodyTooLarge()
	case http.StatusBadRequest:
		if msg == "" {
			msg = "invalid request"
		}
		return apierr.UserInput(msg)
	case http.StatusServiceUnavailable:
		return apierr.Unavailable("the server cannot take requests now")
	}
	if he.Code >= 500 {
		return apierr.Unexpected(he)
	}
	return apierr.UserInput(http.StatusText(he.Code))
}

// responseError is the wire form of an error (StandardErrorResponse.Error, Extended*.Error, bulk items).
func responseError(e *apierr.Error) api.ResponseError {
	items := make([]api.ErrorItem, len(e.Items))
	for i, it := range e.Items {
		items[i] = api.ErrorItem{Item: it.Item, Description: it.Description}
	}
	details := e.Details
	if details == nil {
		details = []string{}
	}
	return api.ResponseError{
		Message: e.Message,
		Type:    api.ErrorType(e.Type),
		Status:  e.HTTPStatus(),
		Details: details,
		ErrorMetadata: api.ErrorMetadata{
			EntityType: e.EntityType, EntityID: e.EntityID, EntitySlug: e.EntitySlug, Items: items,
		},
	}
}
