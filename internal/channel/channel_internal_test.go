package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apierr/apierrtest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
)

// fields reads Fields from their wire form, as a write's body gives them.
func fields(t *testing.T, body string) Fields {
	t.Helper()
	var f Fields
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	return f.normalized()
}

func TestFieldsRules(t *testing.T) {
	t.Parallel()
	f := fields(t, `{"Slug": "bot", "Commands": {"deploy": {}, "roll.back_2": {"Options": [{"Name": "unit"}]}}, "Subscriptions": [{}]}`)
	require.NoError(t, f.validate())
	require.Equal(t, []Option{}, f.Commands["deploy"].Options, "a command's Options are a list, never null")
	require.Equal(t, []string{}, f.Subscriptions[0].EventTypes)
	empty := fields(t, `{"Slug": "bot"}`)
	require.Equal(t, map[string]Command{}, empty.Commands)
	require.Equal(t, []Subscription{}, empty.Subscriptions)

	tail := fields(t, `{"Slug": "bot"}`)
	tail.EventBookmark = tailBookmark
	require.NoError(t, tail.validate(), "the log's tail is asked for with the one negative bookmark")

	refusals := []struct {
		body  string
		typ   apierr.Type
		items []string
	}{
		{`{"Slug": "b ot"}`, apierr.TypeUserInput, []string{"Slug"}},
		{`{"Slug": "bot", "Commands": {"-deploy": {}, "ok": {}, "sp ace": {}}}`, apierr.TypeValidation, []string{"Commands.-deploy", "Commands.sp ace"}},
		{`{"Slug": "bot", "Commands": {"deploy": {"Options": [{"Name": "u"}, {"Name": ""}, {"Name": "u"}]}}}`, apierr.TypeValidation,
			[]string{"Commands.deploy.Options.1.Name", "Commands.deploy.Options.2.Name"}},
		{`{"Slug": "bot", "EventBookmark": -1}`, apierr.TypeValidation, []string{"EventBookmark"}},
		{`{"Slug": "bot", "Labels": {"": "x"}}`, apierr.TypeValidation, []string{"Labels"}},
	}
	for _, r := range refusals {
		apierrtest.Require(t, fields(t, r.body).validate(), r.typ, r.items...)
	}
	long := fmt.Sprintf(`{"Slug": "bot", "Commands": {"a%0128d": {}}}`, 0)
	apierrtest.Require(t, fields(t, long).validate(), apierr.TypeValidation, fmt.Sprintf("Commands.a%0128d", 0))
}

// TestBookmarkWrites: polls move the bookmark without a new Version, so a PUT keeps the stored one; a
// PATCH moves it, and a null bookmark in a patch means the log's tail.
func TestBookmarkWrites(t *testing.T) {
	t.Parallel()
	cur := Channel{Fields: Fields{EventBookmark: 40}}
	require.Equal(t, int64(40), strategy{}.OnPut(cur, Fields{EventBookmark: 7}).EventBookmark)
	tests := []struct {
		patch string
		want  int64
	}{
		{`{"EventBookmark": null}`, tailBookmark},
		{`{"EventBookmark": 12}`, 12},
		{`{"DisplayName": "x"}`, 12},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, strategy{}.OnPatch(cur, json.RawMessage(tt.patch), Fields{EventBookmark: 12}).EventBookmark, tt.patch)
	}
}

// TestLeaseRenewal: a poll renews the lease for what is left of its wait and LeaseSeconds more, so a bot
// polling without pause keeps it even when its next poll comes right after one that waited its whole
// timeout.
func TestLeaseRenewal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wait time.Duration
		want int32
	}{
		{0, LeaseSeconds},
		{-time.Second, LeaseSeconds},
		{time.Millisecond, LeaseSeconds + 1},
		{30 * time.Second, LeaseSeconds + 30},
		{29*time.Second + 100*time.Millisecond, LeaseSeconds + 30},
		{MaxPollSeconds * time.Second, LeaseSeconds + MaxPollSeconds},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, renewal(tt.wait), tt.wait)
		require.GreaterOrEqual(t, time.Duration(renewal(tt.wait))*time.Second, max(tt.wait, 0)+LeaseSeconds*time.Second,
			"the lease outlasts the poll by LeaseSeconds")
	}
}

// TestSubscriptionsMatch: a subscription selects the events of its types (all without any) and, with a
// TargetID, only that Target's.
func TestSubscriptionsMatch(t *testing.T) {
	t.Parallel()
	target, other := uuid.New(), uuid.New()
	unitOfTarget := &db.EventLog{EventType: "unit.updated", TargetID: &target}
	unitElsewhere := &db.EventLog{EventType: "unit.updated", TargetID: &other}
	spaceEvent := &db.EventLog{EventType: "space.created"}
	tests := []struct {
		name string
		subs []Subscription
		want [3]bool // unitOfTarget, unitElsewhere, spaceEvent
	}{
		{"none", nil, [3]bool{false, false, false}},
		{"everything", []Subscription{{EventTypes: []string{}}}, [3]bool{true, true, true}},
		{"by type", []Subscription{{EventTypes: []string{"space.created", "space.deleted"}}}, [3]bool{false, false, true}},
		{"by Target", []Subscription{{TargetID: &target}}, [3]bool{true, false, false}},
		{"by Target and type", []Subscription{{TargetID: &target, EventTypes: []string{"unit.deleted"}}}, [3]bool{false, false, false}},
		{"any of several", []Subscription{{TargetID: &other}, {EventTypes: []string{"space.created"}}}, [3]bool{false, true, true}},
	}
	for _, tt := range tests {
		got := [3]bool{matches(tt.subs, unitOfTarget), matches(tt.subs, unitElsewhere), matches(tt.subs, spaceEvent)}
		require.Equal(t, tt.want, got, tt.name)
	}
}

// TestRunsOf: a woken poll goes back to its transaction when what it read holds an event of a run of its
// Channel (one may be due to it), or one it cannot read.
func TestRunsOf(t *testing.T) {
	t.Parallel()
	mine, theirs := uuid.New(), uuid.New()
	runEvent := func(payload string) *db.EventLog {
		return &db.EventLog{SubjectEntityType: RunEntityType, Payload: json.RawMessage(payload)}
	}
	unitEvent := &db.EventLog{SubjectEntityType: "Unit", Payload: json.RawMessage(`{"ChannelID": "` + mine.String() + `"}`)}
	require.False(t, runsOf(mine, nil))
	require.False(t, runsOf(mine, []*db.EventLog{unitEvent}), "only runs' events count")
	require.False(t, runsOf(mine, []*db.EventLog{runEvent(`{"ChannelID": "` + theirs.String() + `"}`)}))
	require.True(t, runsOf(mine, []*db.EventLog{unitEvent, runEvent(`{"ChannelID": "` + mine.String() + `"}`)}))
	require.True(t, runsOf(mine, []*db.EventLog{runEvent(`{"ChannelID": 3}`)}), "an unreadable run event is taken as one of the Channel's")
}

// TestParseParameters: a run's Options (strings) or Parameters (JSON) become the parameters the bot
// receives, by each option's DataType; every problem is reported at once.
func TestParseParameters(t *testing.T) {
	t.Parallel()
	unitID := uuid.New()
	ch := Channel{Fields: Fields{Commands: map[string]Command{"deploy": {Options: []Option{
		{Name: "count", DataType: "int"}, {Name: "dry", DataType: "bool"}, {Name: "note", DataType: "string"},
		{Name: "raw"}, {Name: "unit", DataType: "Unit"}, {Name: "env", DataType: "string", Required: true},
	}}}}}
	var resolved []string
	resolve := func(entityType, ref string) (uuid.UUID, error) {
		resolved = append(resolved, entityType+":"+ref)
		if ref == "web" {
			return unitID, nil
		}
		if ref == "broken" {
			return uuid.Nil, apierr.Unexpected(errors.New("the database is gone"))
		}
		return uuid.Nil, fmt.Errorf("no Unit %q in the Channel's Space", ref)
	}

	got, err := parseParameters(ch, RunRequest{Command: "deploy", Options: map[string]string{
		"count": "-3", "dry": "true", "note": "x", "raw": "y", "unit": "web", "env": "prod"}}, resolve)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"count": int64(-3), "dry": true, "note": "x", "raw": "y", "unit": unitID.String(), "env": "prod"}, got)
	require.Equal(t, []string{"Unit:web"}, resolved)

	got, err = parseParameters(ch, RunRequest{Command: "deploy", Parameters: map[string]any{"count": float64(4), "dry": false, "env": "prod"}}, resolve)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"count": int64(4), "dry": false, "env": "prod"}, got)

	_, err = parseParameters(ch, RunRequest{Command: "deploy", Options: map[string]string{
		"count": "many", "dry": "perhaps", "unit": "nope", "bogus": "1"}}, resolve)
	e := apierrtest.Require(t, err, apierr.TypeValidation, "Options.bogus", "Options.count", "Options.dry", "Options.unit", "Options.env")
	require.Equal(t, "not an option of command deploy", e.Items[0].Description)
	require.Equal(t, `"many" is not an integer`, e.Items[1].Description)
	require.Equal(t, `"perhaps" is not true or false`, e.Items[2].Description)
	require.Equal(t, `no Unit "nope" in the Channel's Space`, e.Items[3].Description)
	require.Equal(t, "required", e.Items[4].Description)

	_, err = parseParameters(ch, RunRequest{Command: "deploy", Parameters: map[string]any{
		"count": 1.5, "dry": "yes", "note": 3, "unit": 7, "env": "prod"}}, resolve)
	e = apierrtest.Require(t, err, apierr.TypeValidation, "Parameters.count", "Parameters.dry", "Parameters.note", "Parameters.unit")
	require.Equal(t, "not an integer", e.Items[0].Description)
	require.Equal(t, `"yes" is not true or false`, e.Items[1].Description, "a string parameter is parsed as an option would be")
	require.Equal(t, "not a string", e.Items[2].Description)
	require.Equal(t, "a Unit is given by its Slug or ID", e.Items[3].Description)

	_, err = parseParameters(ch, RunRequest{Command: "deploy", Parameters: map[string]any{"count": math.Pow(2, 53), "env": "prod"}}, resolve)
	apierrtest.Require(t, err, apierr.TypeValidation, "Parameters.count")

	// A failure while resolving is the service's, not the option's: it is returned as it is.
	_, err = parseParameters(ch, RunRequest{Command: "deploy", Options: map[string]string{"unit": "broken", "env": "prod"}}, resolve)
	apierrtest.Require(t, err, apierr.TypeUnexpected)
}

// TestRunRequestRefusals: what CreateRun and ReportResult refuse before they read anything.
func TestRunRequestRefusals(t *testing.T) {
	t.Parallel()
	s := &Service{}
	ctx := context.Background()
	sc := authz.RequestScope(auth.Principal{OrganizationID: uuid.New(), UserID: uuid.New(), Role: auth.RoleAdmin})
	for _, d := range []int{-1, MaxDeadlineSeconds + 1} {
		_, err := s.CreateRun(ctx, sc, RunRequest{Command: "deploy", DeadlineSeconds: d})
		apierrtest.Require(t, err, apierr.TypeValidation, "DeadlineSeconds")
	}
	_, err := s.CreateRun(ctx, sc, RunRequest{Command: "deploy", Options: map[string]string{"a": "1"}, Parameters: map[string]any{"a": 1}})
	apierrtest.Require(t, err, apierr.TypeValidation)

	for _, status := range []string{"", "Waiting", "Delivered", "completed"} {
		_, err := s.ReportResult(ctx, sc, "space", "bot", uuid.New(), status, nil, "")
		apierrtest.Require(t, err, apierr.TypeValidation, "Status")
	}
}

// TestRunRows: a run read from its row has empty Options and Parameters rather than null, and its events
// carry what a bot's subscription needs.
func TestRunRows(t *testing.T) {
	t.Parallel()
	row := &db.CommandRun{CommandRunID: uuid.New(), OrganizationID: uuid.New(), SpaceID: uuid.New(), ChannelID: uuid.New(),
		Command: "deploy", Status: "Waiting"}
	r, err := runFromRow(row)
	require.NoError(t, err)
	require.Equal(t, map[string]string{}, r.Options)
	require.Equal(t, map[string]any{}, r.Parameters)
	require.Nil(t, r.Result)

	row.Options, row.Parameters = json.RawMessage(`{"a": "1"}`), json.RawMessage(`{"n": 2}`)
	r, err = runFromRow(row)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "1"}, r.Options)
	require.Equal(t, map[string]any{"n": float64(2)}, r.Parameters)
	row.Parameters = json.RawMessage(`[1]`)
	_, err = runFromRow(row)
	require.Error(t, err)

	e := r.changeEvent("command_run.created", "dev")
	require.Equal(t, "command_run.created", e.EventType)
	require.Equal(t, RunEntityType, e.SubjectEntityType)
	require.Equal(t, r.SpaceID, *e.SpaceID)
	require.Equal(t, RunPayload{EntityType: RunEntityType, EntityID: r.ID, ChannelID: r.ChannelID, Command: "deploy", Status: "Waiting", SpaceSlug: "dev"}, e.Payload)
	// runsOf reads the ChannelID of the events it makes.
	payload, err := json.Marshal(e.Payload)
	require.NoError(t, err)
	require.True(t, runsOf(r.ChannelID, []*db.EventLog{{SubjectEntityType: e.SubjectEntityType, Payload: payload}}))

	require.JSONEq(t, `[]`, string(jsonArray([]Subscription(nil))))
	require.JSONEq(t, `[{"EventTypes": ["a"], "TargetID": null}]`, string(jsonArray([]Subscription{{EventTypes: []string{"a"}}})))
}
