package httpapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/event"
)

// TestEncodedEvents: each event's wire forms are what encoding it gives, whichever events shared its
// slot before, and a slot never answers for another event with the same cursor.
func TestEncodedEvents(t *testing.T) {
	var c encodedEvents
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	mk := func(cursor int64) *event.Entry {
		return &event.Entry{CursorID: cursor, EventType: "tag.created", SubjectEntityType: "tag", SubjectEntityID: uuid.New(),
			Payload: json.RawMessage(`{"Slug":"v1"}`), CreatedAt: at}
	}
	want := func(e *event.Entry) ([]byte, []byte) {
		entry, err := json.Marshal(eventToAPI(*e))
		require.NoError(t, err)
		msg, err := json.Marshal(api.ChannelEventMessage{Type: api.Event, Event: eventToAPI(*e)})
		require.NoError(t, err)
		return entry, msg
	}
	slots := int64(len(c.entries.slots))
	events := []*event.Entry{mk(7), mk(7 + slots), mk(7), mk(8)} // the second shares the first's slot; the third its cursor
	for range 2 {
		for _, e := range events {
			wantEntry, wantMsg := want(e)
			entry, err := c.entry(e)
			require.NoError(t, err)
			require.Equal(t, wantEntry, entry)
			msg, err := c.message(e)
			require.NoError(t, err)
			require.Equal(t, wantMsg, msg)
		}
	}
	require.Equal(t, "[]\n", string(newJSONArray(nil)))
	require.Equal(t, "[1,{\"a\":2}]\n", string(newJSONArray([][]byte{[]byte("1"), []byte(`{"a":2}`)})))
}
