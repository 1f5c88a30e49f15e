package unit

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apierr/apierrtest"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
)

// fields reads Fields from their wire form, as a write's body gives them.
func fields(t *testing.T, body string) Fields {
	t.Helper()
	var f Fields
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	return f
}

func TestFieldsRules(t *testing.T) {
	t.Parallel()
	f := fields(t, `{"Slug": "web", "ToolchainType": "Kubernetes/YAML"}`).normalized()
	require.NoError(t, f.validate())
	require.NotNil(t, f.Labels)
	require.NotNil(t, f.DestroyGates)
	require.NotNil(t, f.Permissions)

	refusals := []struct {
		body string
		typ  apierr.Type
		item string
	}{
		{`{"Slug": "", "ToolchainType": "Kubernetes/YAML"}`, apierr.TypeUserInput, "Slug"},
		{`{"Slug": "-web", "ToolchainType": "Kubernetes/YAML"}`, apierr.TypeUserInput, "Slug"},
		{`{"Slug": "web", "ToolchainType": "Helm"}`, apierr.TypeValidation, "ToolchainType"},
		{`{"Slug": "web", "ToolchainType": ""}`, apierr.TypeValidation, "ToolchainType"},
		{`{"Slug": "web", "ToolchainType": "AppConfig/Env", "Labels": {"": "x"}}`, apierr.TypeValidation, "Labels"},
		{`{"Slug": "web", "ToolchainType": "AppConfig/Env", "Permissions": {"Fly": {}}}`, apierr.TypeValidation, "Permissions.Fly"},
	}
	for _, r := range refusals {
		apierrtest.Require(t, fields(t, r.body).normalized().validate(), r.typ, r.item)
	}

	// A write that leaves ToolchainType out keeps the Unit's.
	cur := Unit{ToolchainType: configdata.AppConfigEnv, Fields: Fields{ToolchainType: configdata.AppConfigEnv}}
	require.Equal(t, configdata.AppConfigEnv, keepToolchain(cur, Fields{}).ToolchainType)
	require.Equal(t, configdata.AppConfigYAML, keepToolchain(cur, Fields{ToolchainType: configdata.AppConfigYAML}).ToolchainType,
		"a different one is left for the check to refuse")
}

// TestCloneFields: a clone is its source's fields with the prefixed Slug, without the source's Target and
// ChangeSet, and with the clone's patch applied; it keeps the source's ToolchainType.
func TestCloneFields(t *testing.T) {
	t.Parallel()
	target, changeSet := uuid.New(), uuid.New()
	src := Unit{ToolchainType: configdata.KubernetesYAML, Fields: Fields{Common: entity.Common{Slug: "web", DisplayName: "Web",
		Meta: entity.Meta{Labels: map[string]string{"tier": "prod", "team": "a"}}}, ToolchainType: configdata.KubernetesYAML,
		TargetID: &target, ChangeSetID: &changeSet}}

	f, err := cloneFields(src, "dev-", nil)
	require.NoError(t, err)
	require.Equal(t, "dev-web", f.Slug)
	require.Equal(t, "Web", f.DisplayName)
	require.Nil(t, f.TargetID, "Targets belong to a Space")
	require.Nil(t, f.ChangeSetID)
	require.Equal(t, map[string]string{"tier": "prod", "team": "a"}, f.Labels)
	require.Equal(t, &target, src.TargetID, "the source is left as it is")

	f, err = cloneFields(src, "", json.RawMessage(`null`))
	require.NoError(t, err)
	require.Equal(t, "web", f.Slug, "an empty prefix keeps the Slug")

	otherTarget := uuid.New()
	f, err = cloneFields(src, "dev-", json.RawMessage(`{"Labels": {"tier": "dev", "team": null}, "TargetID": "`+otherTarget.String()+`"}`))
	require.NoError(t, err)
	require.Equal(t, "dev-web", f.Slug, "the patch applies to the prefixed copy")
	require.Equal(t, map[string]string{"tier": "dev"}, f.Labels)
	require.Equal(t, &otherTarget, f.TargetID, "the patch may name a Target of the destination")

	f, err = cloneFields(src, "dev-", json.RawMessage(`{"Slug": "renamed"}`))
	require.NoError(t, err)
	require.Equal(t, "renamed", f.Slug)

	_, err = cloneFields(src, "", json.RawMessage(`{"ToolchainType": "AppConfig/YAML"}`))
	apierrtest.Require(t, err, apierr.TypeValidation, "ToolchainType")
	_, err = cloneFields(src, "", json.RawMessage(`{"Labels": "x"}`))
	apierrtest.Require(t, err, apierr.TypeUserInput)
	_, err = cloneFields(src, "", json.RawMessage(`{"Labels": `))
	apierrtest.Require(t, err, apierr.TypeUserInput)
}

// TestChangeSetReferences: no ChangeSetID needs no lookup, and a change_set_id that is not the Unit's own is
// refused before any (the lookups are tested through the API).
func TestChangeSetReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	id, other := uuid.New(), uuid.New()
	require.NoError(t, checkChangeSet(ctx, nil, authz.Scope{}, uuid.Nil, "ChangeSetID", nil))
	require.NoError(t, checkRevisionChangeSet(ctx, nil, authz.Scope{}, Unit{Fields: Fields{ChangeSetID: &id}}, nil))
	apierrtest.Require(t, checkRevisionChangeSet(ctx, nil, authz.Scope{}, Unit{Fields: Fields{ChangeSetID: &other}}, &id), apierr.TypeValidation, "change_set_id")
}

// TestUnitEvents: a Unit's events carry its Target, so subscribers to the Target see them, and a data
// change's event carries the new RevisionNum.
func TestUnitEvents(t *testing.T) {
	t.Parallel()
	target := uuid.New()
	u := Unit{Object: entity.Object{ID: uuid.New(), OrganizationID: uuid.New(), SpaceID: uuid.New(), Version: 9}, HeadRevisionNum: 4,
		Fields: Fields{Common: entity.Common{Slug: "web"}, TargetID: &target}}
	e := u.dataEvent("dev")
	require.Equal(t, "unit.updated", e.EventType)
	require.Equal(t, &target, e.TargetID)
	require.Equal(t, u.SpaceID, *e.SpaceID)
	payload, err := json.Marshal(e.Payload)
	require.NoError(t, err)
	require.JSONEq(t, `{"EntityType": "Unit", "EntityID": "`+u.ID.String()+`", "Slug": "web", "SpaceSlug": "dev", "Version": 9, "RevisionNum": 4}`, string(payload))

	created := u.changeEvent(entity.Created, "dev")
	require.Equal(t, "unit.created", created.EventType)
	require.Equal(t, &target, created.TargetID)
	require.IsType(t, event.EntityPayload{}, created.Payload)

	// The kit's events of a Unit (field writes, deletes) carry it too.
	adjusted := strategy{}.AdjustEvent(u, event.Event{EventType: "unit.deleted"})
	require.Equal(t, &target, adjusted.TargetID)
}

// TestFindingsRoundTrip: findings are stored as the Revision records them and read back the same; a
// Unit's row has no ValidationPassed column, read as empty.
func TestFindingsRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFindings()
	a, b := uuid.New(), uuid.New()
	f.ValidationErrors[a.String()] = true
	f.ValidationPassed[b.String()] = true
	f.ValidationTriggerIDs = []uuid.UUID{a, b}
	f.ValueTriggerIDs = []uuid.UUID{b}
	errs, warnings, passed, validationIDs, valueIDs := f.params()
	got, err := decodeFindings(errs, warnings, passed, validationIDs, valueIDs)
	require.NoError(t, err)
	require.Equal(t, f, got)

	unit, err := decodeFindings(errs, warnings, nil, validationIDs, valueIDs)
	require.NoError(t, err)
	require.Equal(t, map[string]bool{}, unit.ValidationPassed)
	_, err = decodeFindings(json.RawMessage(`[1]`), nil, nil, nil, nil)
	require.Error(t, err)

	require.JSONEq(t, `{}`, string(Origin{}.params()))
	require.JSONEq(t, `{"n": 3}`, string(Origin{Params: map[string]any{"n": 3}}.params()))
}
