// Package event defines the events a change causes. Writes collect them in their transaction
// (store.Tx.Emit) and the transaction hands them to a Sink just before it commits, so the event log is
// written atomically with the change it records (a transactional outbox).
package event

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Event is one entry-to-be of the event log (SPEC.md's EventLogEntry, less CursorID and CreatedAt,
// which the log assigns).
type Event struct {
	OrganizationID    uuid.UUID
	EventType         string
	SpaceID           *uuid.UUID
	TargetID          *uuid.UUID
	SubjectEntityType string
	SubjectEntityID   uuid.UUID
	Payload           any
}

// EntityPayload is the payload of <family>.created/updated/deleted events (DESIGN.md).
type EntityPayload struct {
	EntityType string
	EntityID   uuid.UUID
	Slug       string
	SpaceSlug  string `json:",omitempty"`
	Version    int64
}

// Sink receives a transaction's events inside that transaction, before it commits.
type Sink interface {
	Append(ctx context.Context, tx pgx.Tx, events []Event) error
}

// LogSink only logs events. It stands in until the event log table exists.
type LogSink struct{ Logger *slog.Logger }

// Append logs each event at debug level.
func (s LogSink) Append(ctx context.Context, _ pgx.Tx, events []Event) error {
	for _, e := range events {
		s.Logger.DebugContext(ctx, "event", "type", e.EventType, "entity", e.SubjectEntityType, "id", e.SubjectEntityID)
	}
	return nil
}
