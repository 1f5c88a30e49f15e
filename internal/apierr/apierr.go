// Package apierr defines the errors the service reports to clients. Domain code returns them through
// the constructors below; the HTTP layer turns them into the StandardErrorResponse body in one place.
// Any other error reaching a client is reported as Unexpected, so no database message or Go error string
// leaks unfiltered.
package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// Type is the category code clients branch on (Error.Type).
type Type string

// The error Type codes of the API, each with one HTTP status.
const (
	TypeUserInput          Type = "UserInput"
	TypeValidation         Type = "Validation"
	TypeData               Type = "Data"
	TypeAuthentication     Type = "Authentication"
	TypePermission         Type = "Permission"
	TypeNotFound           Type = "NotFound"
	TypeConflict           Type = "Conflict"
	TypeAlreadyExists      Type = "AlreadyExists"
	TypePreconditionFailed Type = "PreconditionFailed"
	TypeUnprocessable      Type = "Unprocessable"
	TypeLocked             Type = "Locked"
	TypeTooManyRequests    Type = "TooManyRequests"
	TypeUnexpected         Type = "Unexpected"
	TypeServiceUnavailable Type = "ServiceUnavailable"
	TypeGatewayTimeout     Type = "GatewayTimeout"
)

var statusOf = map[Type]int{
	TypeUserInput:          http.StatusBadRequest,
	TypeValidation:         http.StatusBadRequest,
	TypeData:               http.StatusBadRequest,
	TypeAuthentication:     http.StatusUnauthorized,
	TypePermission:         http.StatusForbidden,
	TypeNotFound:           http.StatusNotFound,
	TypeConflict:           http.StatusConflict,
	TypeAlreadyExists:      http.StatusConflict,
	TypePreconditionFailed: http.StatusPreconditionFailed,
	TypeUnprocessable:      http.StatusUnprocessableEntity,
	TypeLocked:             http.StatusLocked,
	TypeTooManyRequests:    http.StatusTooManyRequests,
	TypeUnexpected:         http.StatusInternalServerError,
	TypeServiceUnavailable: http.StatusServiceUnavailable,
	TypeGatewayTimeout:     http.StatusGatewayTimeout,
}

// Item names one problem: a field by its dot path (Permissions.View.Bogus) or an entity.
type Item struct {
	Item        string
	Description string
}

// Error is an error as the client sees it.
type Error struct {
	Type       Type
	Message    string
	Details    []string
	EntityType string
	EntityID   string
	EntitySlug string
	Items      []Item
	// Status overrides the Type's status where the API gives the Type another one (405 and 413 are UserInput).
	Status int
	cause  error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

// MessageOf is the message a person reads of err: an Error's Message (without its internal cause), else
// the error's text.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// Unwrap exposes the internal cause to logs and errors.Is; it is never sent to clients.
func (e *Error) Unwrap() error { return e.cause }

// HTTPStatus is the status of the response that carries the error.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return statusOf[e.Type]
}

// Summary is the lowercase `message` of the body: the message, then details and items, as one string.
func (e *Error) Summary() string {
	var b strings.Builder
	b.WriteString(e.Message)
	for _, d := range e.Details {
		b.WriteString("; ")
		b.WriteString(d)
	}
	for _, it := range e.Items {
		item := it.Item + ": " + it.Description
		if strings.Contains(e.Message, item) {
			continue // the message already says it
		}
		b.WriteString("; " + item)
	}
	return b.String()
}

// WithDetail adds context from a layer the error passed through.
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Details = append(append([]string(nil), e.Details...), fmt.Sprintf(format, args...))
	return &c
}

// WithEntity names the entity the error is about.
func (e *Error) WithEntity(entityType, id, slug string) *Error {
	c := *e
	c.EntityType, c.EntityID, c.EntitySlug = entityType, id, slug
	return &c
}

// WithCause keeps an internal error for logs.
func (e *Error) WithCause(err error) *Error {
	c := *e
	c.cause = err
	return &c
}

func newError(t Type, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

// UserInput is a malformed request: bad JSON, a wrong type, an invalid parameter or value.
func UserInput(message string, items ...Item) *Error {
	return &Error{Type: TypeUserInput, Message: message, Items: items}
}

// Validation is a violated constraint on data, such as a reference to an entity that does not exist.
func Validation(message string, items ...Item) *Error {
	return &Error{Type: TypeValidation, Message: message, Items: items}
}

// NoSuchReference is fields (dot paths: BridgeWorkerID, Subscriptions.0.TargetID, change_set_id) naming
// no entityType where they require one (scope: "of your organization", "in the Unit's Space"). It
// deliberately says nothing about the IDs: a random one, a deleted one and one of another organization
// get the same status, message and items, so the answer reveals nothing about other organizations.
func NoSuchReference(entityType, scope string, fields ...string) *Error {
	verb := "names"
	if len(fields) > 1 {
		verb = "name"
	}
	items := make([]Item, len(fields))
	for i, f := range fields {
		items[i] = Item{Item: f, Description: "no such " + entityType}
	}
	return Validation(fmt.Sprintf("%s %s no %s %s; give the ID of one that exists there", strings.Join(fields, ", "), verb, entityType, scope), items...)
}

// Data is a value out of range or in the wrong format for its storage.
func Data(message string, items ...Item) *Error {
	return &Error{Type: TypeData, Message: message, Items: items}
}

// Unauthenticated is a request without a valid token.
func Unauthenticated(format string, args ...any) *Error {
	return newError(TypeAuthentication, format, args...)
}

// Forbidden is a caller that may not perform the operation.
func Forbidden(format string, args ...any) *Error {
	return newError(TypePermission, format, args...)
}

// NotFound is an entity (or what it is listed under) that does not exist in the caller's organization.
func NotFound(entityType, id string) *Error {
	e := newError(TypeNotFound, "%s %s not found", entityType, id)
	e.EntityType = entityType
	// Paths take IDs or Slugs; report what was given in the field it belongs to.
	if _, err := uuid.Parse(id); err == nil {
		e.EntityID = id
	} else {
		e.EntitySlug = id
	}
	return e
}

// NotFoundAs names the entity a lookup was for: the anonymous NotFound of a query that matched no row
// becomes NotFound(entityType, id), keeping its cause; any other error (or nil) is returned unchanged.
func NotFoundAs(err error, entityType, id string) error {
	var e *Error
	if errors.As(err, &e) && e.Type == TypeNotFound && e.EntityType == "" {
		return NotFound(entityType, id).WithCause(e.cause)
	}
	return err
}

// Conflict is a state conflict: a stale Version, or a delete blocked by use, DeleteGates or references.
func Conflict(format string, args ...any) *Error {
	return newError(TypeConflict, format, args...)
}

// StaleVersion is a write prepared against a Version that is no longer the stored one.
func StaleVersion(entityType, id string, sent, stored int64) *Error {
	e := newError(TypeConflict, "%s %s was changed by another write: Version %d was sent but %d is stored; read it again and reapply the change",
		entityType, id, sent, stored)
	e.EntityType, e.EntityID = entityType, id
	return e
}

// AlreadyExists is an entity with the same identity, such as the same Slug in its scope.
func AlreadyExists(entityType, slug string) *Error {
	e := newError(TypeAlreadyExists, "a %s with Slug %q already exists; choose another Slug", entityType, slug)
	e.EntityType, e.EntitySlug = entityType, slug
	e.Items = []Item{{Item: "Slug", Description: "already in use"}}
	return e
}

// PreconditionFailed is a request prepared against something that has changed since.
func PreconditionFailed(format string, args ...any) *Error {
	return newError(TypePreconditionFailed, format, args...)
}

// Unprocessable is a well-formed request that cannot be carried out.
func Unprocessable(format string, args ...any) *Error {
	return newError(TypeUnprocessable, format, args...)
}

// Locked is an entity held by an operation that cannot be interrupted.
func Locked(format string, args ...any) *Error {
	return newError(TypeLocked, format, args...)
}

// TooManyRequests is a caller with too many outstanding requests.
func TooManyRequests(format string, args ...any) *Error {
	return newError(TypeTooManyRequests, format, args...)
}

// Unexpected is a server failure; cause is logged, never sent.
func Unexpected(cause error) *Error {
	return &Error{Type: TypeUnexpected, Message: "internal server error; retrying may work, else report it with the X-Request-Id of this response", cause: cause}
}

// Unavailable is a server that cannot take requests now.
func Unavailable(format string, args ...any) *Error {
	return newError(TypeServiceUnavailable, format, args...)
}

// Timeout is a dependency that did not answer in time.
func Timeout(format string, args ...any) *Error {
	return newError(TypeGatewayTimeout, format, args...)
}

// From returns err as an *Error: itself if it is one, GatewayTimeout for a deadline, else Unexpected.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout("the request did not complete in time").WithCause(err)
	}
	return Unexpected(err)
}

// Is reports whether err is an *Error of type t.
func Is(err error, t Type) bool {
	var e *Error
	return errors.As(err, &e) && e.Type == t
}
