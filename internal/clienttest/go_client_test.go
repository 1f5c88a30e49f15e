// Package clienttest drives hubd through clients generated from its served document by stock generators,
// as their users would: a Go client (oapi-codegen, gen/client) and a TypeScript one (openapi-typescript
// and openapi-fetch, ts/). Each runs one scenario with only what a person would set, no casts and no
// hand-written serializers; every answer is checked against the document.
package clienttest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/client"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func ptr[T any](v T) *T { return &v }

// newGoClient is a generated client of env acting with token.
func newGoClient(t *testing.T, env *apitest.Env, token string) *client.ClientWithResponses {
	t.Helper()
	c, err := client.NewClientWithResponses(env.URL+"/api", client.WithHTTPClient(env.HTTPClient()),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	require.NoError(t, err)
	return c
}

func TestGoClientScenario(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apitest.New(t)
	c := newGoClient(t, env, env.Token("acme", "alice", auth.RoleAdmin))

	// A Space and Units with only what a person sets.
	sp, err := c.CreateSpaceWithResponse(ctx, nil, client.SpaceInput{Slug: "dev", DisplayName: ptr("Development")})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, sp.StatusCode(), string(sp.Body))
	space := sp.JSON200.SpaceID
	require.Equal(t, "Development", sp.JSON200.DisplayName)
	require.Empty(t, sp.JSON200.Labels, "maps are present and empty, not null")

	created, err := c.CreateUnitWithResponse(ctx, space, nil, client.UnitInput{Slug: "web", ToolchainType: client.KubernetesYAML})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, created.StatusCode(), string(created.Body))
	web := created.JSON200.Unit
	require.Equal(t, int64(0), web.HeadRevisionNum)

	// YAML up and down: as text, or as the JSON string a JSON-only client sends.
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  LOG_LEVEL: info\n"
	up, err := c.UploadUnitDataWithTextBodyWithResponse(ctx, space, web.UnitID, nil, manifest)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, up.StatusCode(), string(up.Body))
	require.Equal(t, int64(1), up.JSON200.Unit.HeadRevisionNum)
	down, err := c.DownloadUnitDataWithResponse(ctx, space, web.UnitID, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, down.StatusCode())
	require.Equal(t, manifest, string(down.Body))
	require.NotNil(t, down.YAML200, "the YAML is parsed for the caller too")
	edited := manifest + "  PORT: \"8080\"\n"
	up, err = c.UploadUnitDataWithResponse(ctx, space, web.UnitID, nil, edited)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, up.StatusCode(), string(up.Body))
	require.Equal(t, int64(2), up.JSON200.Unit.HeadRevisionNum)

	// JSON up and down.
	created, err = c.CreateUnitWithResponse(ctx, space, nil, client.UnitInput{Slug: "settings", ToolchainType: client.AppConfigJSON})
	require.NoError(t, err)
	settings := created.JSON200.Unit
	up, err = c.UploadUnitDataWithResponse(ctx, space, settings.UnitID, nil, map[string]any{"port": 8080, "debug": false})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, up.StatusCode(), string(up.Body))
	down, err = c.DownloadUnitDataWithResponse(ctx, space, settings.UnitID, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, down.StatusCode())
	require.NotNil(t, down.JSON200)
	require.Equal(t, map[string]any{"port": float64(8080), "debug": false}, *down.JSON200)

	// A list with where.
	list, err := c.ListUnitsWithResponse(ctx, space, &client.ListUnitsParams{Where: ptr("ToolchainType = 'Kubernetes/YAML'")})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, list.StatusCode(), string(list.Body))
	require.Len(t, *list.JSON200, 1)
	require.Equal(t, "web", (*list.JSON200)[0].Unit.Slug)

	// A diff of the two Revisions, and of two texts.
	diff, err := c.GetUnitDiffWithResponse(ctx, space, web.UnitID, &client.GetUnitDiffParams{From: ptr(int64(1)), To: ptr(int64(2))})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, diff.StatusCode(), string(diff.Body))
	require.NotEmpty(t, diff.JSON200.Changes)
	texts, err := c.DiffConfigDataWithResponse(ctx, client.DiffRequest{ToolchainType: client.AppConfigEnv, From: "A=1\n", To: "A=2\n"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, texts.StatusCode(), string(texts.Body))
	require.Equal(t, "A", texts.JSON200.Changes[0].Path)

	// A ServiceAccount signs in with a registered key (RFC 7523) and acts with its own role.
	var bot client.ServiceAccount
	token := serviceAccountToken(t, env, c, "ci", client.Member, &bot)
	me, err := newGoClient(t, env, token).GetMeWithResponse(ctx)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, me.StatusCode(), string(me.Body))
	require.Equal(t, bot.UserID, me.JSON200.UserID)
	require.Equal(t, client.Member, me.JSON200.OrgRole)

	// A Channel: lease it, run a command, poll, narrow the message to its CommandRun, answer it.
	ch, err := c.CreateChannelWithResponse(ctx, space, nil, client.ChannelInput{Slug: "ops", Commands: &map[string]client.ChannelCommandInput{
		"restart": {Description: ptr("Restart a Unit"), Options: &[]client.ChannelCommandOptionInput{{Name: "unit", DataType: client.ChannelCommandOptionInputDataTypeUnit, Required: ptr(true)}}},
	}, Subscriptions: &[]client.ChannelSubscriptionInput{{EventTypes: []string{"unit.created"}}}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, ch.StatusCode(), string(ch.Body))
	channelID := ch.JSON200.ChannelID.String() // Channel paths take its ID or Slug
	lease, err := c.AcquireChannelLeaseWithResponse(ctx, space.String(), channelID, client.ChannelLeaseRequest{})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, lease.StatusCode(), string(lease.Body))
	run, err := c.CreateCommandRunWithResponse(ctx, client.CreateCommandRunRequest{Command: "restart", SpaceID: &space, Options: &map[string]string{"unit": "web"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, run.StatusCode(), string(run.Body))
	poll, err := c.PollChannelWithResponse(ctx, space.String(), channelID, client.ChannelPollRequest{ClaimToken: lease.JSON200.ClaimToken, TimeoutSeconds: ptr(5)})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, poll.StatusCode(), string(poll.Body))
	require.Len(t, *poll.JSON200, 1)
	msg, err := (*poll.JSON200)[0].ValueByDiscriminator()
	require.NoError(t, err)
	delivered, ok := msg.(client.ChannelCommandRunMessage)
	require.True(t, ok, "a %T", msg)
	require.Equal(t, run.JSON200.CommandRunID, delivered.CommandRun.CommandRunID)
	unitParam, err := delivered.CommandRun.Parameters["unit"].AsCommandParameterValue2()
	require.NoError(t, err)
	require.Equal(t, web.UnitID.String(), unitParam, "an entity option arrives as the entity's ID")
	done, err := c.ReportCommandRunResultWithResponse(ctx, space.String(), channelID, delivered.CommandRun.CommandRunID,
		client.CommandRunResult{Status: client.CommandRunResultStatusCompleted, Result: map[string]any{"restarted": true}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, done.StatusCode(), string(done.Body))
	require.Equal(t, client.CommandRunStatusCompleted, done.JSON200.Status)

	// An event the Channel subscribes to arrives with a typed payload.
	created, err = c.CreateUnitWithResponse(ctx, space, nil, client.UnitInput{Slug: "worker", ToolchainType: client.AppConfigEnv})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, created.StatusCode(), string(created.Body))
	events, err := c.PollChannelWithResponse(ctx, space.String(), channelID, client.ChannelPollRequest{ClaimToken: lease.JSON200.ClaimToken, TimeoutSeconds: ptr(5), MaxRuns: ptr(0)})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, events.StatusCode(), string(events.Body))
	require.NotEmpty(t, *events.JSON200)
	msg, err = (*events.JSON200)[len(*events.JSON200)-1].ValueByDiscriminator()
	require.NoError(t, err)
	ev, ok := msg.(client.ChannelEventMessage)
	require.True(t, ok, "a %T", msg)
	require.Equal(t, "unit.created", ev.Event.EventType)
	require.Equal(t, "Unit", ev.Event.Payload.EntityType)
	require.Equal(t, created.JSON200.Unit.UnitID, ev.Event.Payload.EntityID)
	require.Equal(t, ptr("worker"), ev.Event.Payload.Slug)
}

// serviceAccountToken creates a ServiceAccount with role, registers a key for it and signs in with the key
// (RFC 7523), as a bot would: it answers the service token (and the ServiceAccount, when out is not nil).
func serviceAccountToken(t *testing.T, env *apitest.Env, c *client.ClientWithResponses, slug string, role client.OrgRole, out ...*client.ServiceAccount) string {
	t.Helper()
	ctx := context.Background()
	sa, err := c.CreateServiceAccountWithResponse(ctx, nil, client.ServiceAccountInput{Slug: slug, OrgRole: ptr(role)})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, sa.StatusCode(), string(sa.Body))
	bot := sa.JSON200
	for _, o := range out {
		*o = *bot
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	coord := func(b []byte) *string { return ptr(base64.RawURLEncoding.EncodeToString(b)) }
	pub, err := priv.PublicKey.ECDH()
	require.NoError(t, err)
	raw := pub.Bytes() // 0x04 || X || Y
	key, err := c.CreateUserKeyWithResponse(ctx, bot.UserID, nil, client.CreateUserKeyRequest{
		PublicJWK: client.PublicJWK{Kty: client.EC, Crv: ptr("P-256"), X: coord(raw[1:33]), Y: coord(raw[33:])},
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, key.StatusCode(), string(key.Body))

	info, err := c.ApiInfoWithResponse(ctx)
	require.NoError(t, err)
	assertion := signAssertion(t, priv, key.JSON200.Kid, bot.UserID.String(), info.JSON200.TokenExchangeAudience)
	anonymous, err := client.NewClientWithResponses(env.URL+"/api", client.WithHTTPClient(env.HTTPClient()))
	require.NoError(t, err)
	tok, err := anonymous.IssueTokenWithFormdataBodyWithResponse(ctx, client.TokenRequest{
		GrantType: client.UrnIetfParamsOauthGrantTypeJwtBearer, Assertion: &assertion})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, tok.StatusCode(), string(tok.Body))
	return tok.JSON200.AccessToken
}

// signAssertion is an RFC 7523 assertion of subject for audience, signed by key kid.
func signAssertion(t *testing.T, priv *ecdsa.PrivateKey, kid, subject, audience string) string {
	t.Helper()
	key, err := jwk.FromRaw(priv)
	require.NoError(t, err)
	require.NoError(t, key.Set(jwk.KeyIDKey, kid))
	now := time.Now()
	tok, err := jwt.NewBuilder().Issuer(subject).Subject(subject).Audience([]string{audience}).IssuedAt(now).
		Expiration(now.Add(time.Minute)).JwtID(uuid.NewString()).Build()
	require.NoError(t, err)
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	require.NoError(t, err)
	return string(signed)
}
