package store

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubd/hubd/internal/apierr"
)

// Translate turns database errors into apierr errors. It is the one place that reads PostgreSQL error
// codes; apierr errors and nil pass through. Messages name the constraint's meaning, never the database's
// own text.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return (&apierr.Error{Type: apierr.TypeNotFound, Message: "the entity does not exist"}).WithCause(err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return apierr.Timeout("the database did not answer in time").WithCause(err)
	}
	if errors.Is(err, context.Canceled) {
		return apierr.Unavailable("the request was cancelled").WithCause(err)
	}
	// A failed connect wraps the server's refusal (a PgError such as 3D000 when the database is gone), so
	// it is checked first: the database is unreachable, whatever the reason.
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return apierr.Unavailable("the database cannot be reached; retry shortly").WithCause(err)
	}
	var netErr net.Error
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) {
		return apierr.Unavailable("the connection to the database was lost; retry shortly").WithCause(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return (&apierr.Error{Type: apierr.TypeAlreadyExists, Message: "an entity with the same identity already exists"}).WithCause(err)
		case "23503": // foreign_key_violation on insert or update
			return apierr.Validation("a referenced entity does not exist").WithCause(err)
		// check, not null, bad text representation, out of range, too long, bad datetime, bad byte (NUL), untranslatable
		case "23514", "23502", "22P02", "22003", "22001", "22007", "22008", "22021", "22P05":
			return apierr.Data("a value is out of range or in the wrong format for its storage").WithCause(err)
		case "40001", "40P01":
			return apierr.Conflict("the entity was changed by a concurrent write; retry").WithCause(err)
		case "57014": // query_canceled (statement timeout)
			return apierr.Timeout("the database did not answer in time").WithCause(err)
		case "53300", "57P01", "57P02", "57P03", "3D000": // too many connections, shutdown, database gone
			return apierr.Unavailable("the database cannot take requests now; retry shortly").WithCause(err)
		}
		return apierr.Unexpected(err)
	}
	return apierr.Unexpected(err)
}

// TranslateIn is Translate for the failure of work done under ctx. Once ctx has ended, a failure the
// database connection reports (a statement cut short, the connection closed under a savepoint) is the
// context's, whatever it says: 504 for a deadline, 503 for a cancellation. Refusals (4xx) pass through.
func TranslateIn(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.HTTPStatus() < 500 {
		return err
	}
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return apierr.Timeout("the database did not answer in time").WithCause(err)
	case context.Canceled:
		return apierr.Unavailable("the request was cancelled").WithCause(err)
	}
	return Translate(err)
}

// TranslateDelete is Translate for deletes: there a foreign-key violation means rows still reference
// the entity (every child table references its parent with ON DELETE RESTRICT), which is a Conflict.
func TranslateDelete(err error, entityType, id string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return apierr.Conflict("the %s still holds or is referenced by other entities; delete or move them first", entityType).
			WithEntity(entityType, id, "").WithCause(err)
	}
	return Translate(err)
}

// ViolatesConstraint reports whether err is the database's refusal of a write by the named constraint.
func ViolatesConstraint(err error, name string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == name
}
