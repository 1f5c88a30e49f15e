package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/event"
)

// Poll answers: one event reaches every waiting poll of its organization, thousands of them on a busy
// replica, and each answer carries it in the same wire form. So the forms are encoded once per event
// (encodedEvents) and each answer is the JSON array of its elements (jsonArray), written as the
// generated response would write it.

// encodedEvents keeps the wire forms of the events answers carried last: as an EventLogEntry (worker
// polls) and as a ChannelMessage of Type Event (Channel polls). Slots are direct-mapped by cursor, so an
// event replaces the one whose cursor maps to the same slot; an event's form never changes once it has a
// cursor, and the entity and time are compared too, so a slot never answers for another event.
type encodedEvents struct {
	entries, messages encodedTable
}

type encodedTable struct {
	slots [512]atomic.Pointer[encodedEvent]
}

type encodedEvent struct {
	cursor  int64
	entity  uuid.UUID
	created time.Time
	json    []byte
}

// entry is e as an EventLogEntry.
func (c *encodedEvents) entry(e *event.Entry) ([]byte, error) {
	return c.entries.get(e, func() any { return eventToAPI(*e) })
}

// message is e as a Channel poll's event message.
func (c *encodedEvents) message(e *event.Entry) ([]byte, error) {
	return c.messages.get(e, func() any { return api.ChannelEventMessage{Type: api.Event, Event: eventToAPI(*e)} })
}

func (t *encodedTable) get(e *event.Entry, wire func() any) ([]byte, error) {
	slot := &t.slots[uint64(e.CursorID)%uint64(len(t.slots))]
	if c := slot.Load(); c != nil && c.cursor == e.CursorID && c.entity == e.SubjectEntityID && c.created.Equal(e.CreatedAt) {
		return c.json, nil
	}
	b, err := json.Marshal(wire())
	if err != nil {
		return nil, err
	}
	slot.Store(&encodedEvent{cursor: e.CursorID, entity: e.SubjectEntityID, created: e.CreatedAt, json: b})
	return b, nil
}

// jsonArray is a 200 answer whose body is the JSON array of encoded elements, followed by a newline as
// the generated responses' encoder writes it.
type jsonArray []byte

func newJSONArray(elems [][]byte) jsonArray {
	n := 3
	for _, e := range elems {
		n += len(e) + 1
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func (a jsonArray) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(a)
	return err
}

func (a jsonArray) VisitPollBridgeWorkerEventsResponse(w http.ResponseWriter) error {
	return a.write(w)
}
func (a jsonArray) VisitPollChannelResponse(w http.ResponseWriter) error { return a.write(w) }

var (
	_ api.PollBridgeWorkerEventsResponseObject = jsonArray(nil)
	_ api.PollChannelResponseObject            = jsonArray(nil)
)
