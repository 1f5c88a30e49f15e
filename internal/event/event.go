// Package event is the event log: the events a change causes, collected by the transaction that makes the
// change (store.Tx.Emit) and appended to the log by that same transaction just before it commits (a
// transactional outbox), the reading of the log by cursor, its retention, and the notifications that wake
// consumers on any replica.
package event

import (
	"github.com/google/uuid"
)

// Event is one entry-to-be of the event log (the API's EventLogEntry, less CursorID and CreatedAt,
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

// EntityPayload is the payload of <family>.created/updated/deleted events.
type EntityPayload struct {
	EntityType string
	EntityID   uuid.UUID
	Slug       string
	SpaceSlug  string `json:",omitempty"`
	Version    int64
}
