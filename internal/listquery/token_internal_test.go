package listquery

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
)

// issue is the continue token a page of q would carry after the row whose keyset is keyset (a JSON
// array, as the statement's hubd_keyset column reads it).
func issue(t *testing.T, codec *TokenCodec, q Query, keyset string) string {
	t.Helper()
	p, _, err := q.plan(codec)
	require.NoError(t, err)
	return codec.encode(p.signature, json.RawMessage(keyset))
}

func widgetQuery(params Params) Query {
	return Query{Entity: widget, Caller: widgetAdmin, Path: "/widget", Params: params}
}

// TestContinueRoundTrip: a token resumes the list after the row it was issued for, with the keyset
// bound by type; only limit may change between pages.
func TestContinueRoundTrip(t *testing.T) {
	t.Parallel()
	last := uuid.New()
	first := widgetQuery(Params{Where: "Enabled = true", OrderBy: "DESC:Size", Limit: intp(2)})
	token := issue(t, widgetCodec, first, `[7, "`+last.String()+`"]`)

	next := first
	next.Params.Continue, next.Params.Limit = token, intp(50)
	sql, args, err := statement(t, next)
	require.NoError(t, err)
	require.Contains(t, sql, " AND (widget.size, widget.widget_id) < ($3::bigint, $4::uuid) ORDER BY widget.size DESC, widget.widget_id DESC LIMIT $5")
	require.Equal(t, []any{widgetOrg, true, int64(7), last, 51}, args)

	ascending := widgetQuery(Params{OrderBy: "Slug"})
	ascending.Params.Continue = issue(t, widgetCodec, ascending, `["b", "`+last.String()+`"]`)
	sql, args, err = statement(t, ascending)
	require.NoError(t, err)
	require.Contains(t, sql, " AND (widget.slug, widget.widget_id) > ($2::text, $3::uuid) ORDER BY widget.slug ASC, widget.widget_id ASC")
	require.Equal(t, []any{widgetOrg, "b", last}, args)

	// Mixed directions expand to the equivalent OR chain, each value bound once.
	mixed := widgetQuery(Params{OrderBy: "Size, DESC:Slug"})
	mixed.Params.Continue = issue(t, widgetCodec, mixed, `[7, "b", "`+last.String()+`"]`)
	sql, args, err = statement(t, mixed)
	require.NoError(t, err)
	require.Contains(t, sql, " AND ((widget.size > $2::bigint) OR (widget.size = $2::bigint AND widget.slug < $3::text)"+
		" OR (widget.size = $2::bigint AND widget.slug = $3::text AND widget.widget_id < $4::uuid)) ORDER BY")
	require.Equal(t, []any{widgetOrg, int64(7), "b", last}, args)

	created := widgetQuery(Params{OrderBy: "CreatedAt, Enabled"})
	created.Params.Continue = issue(t, widgetCodec, created, `["2026-01-02T03:04:05.123456Z", false, "`+last.String()+`"]`)
	_, args, err = statement(t, created)
	require.NoError(t, err)
	ts, ok := args[1].(time.Time)
	require.True(t, ok, "a time keyset is bound as a time: %T", args[1])
	require.True(t, ts.Equal(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)), ts)
	require.Equal(t, false, args[2])
}

// TestContinueRefusals: a token is refused, as 400 naming continue, when it was not issued by this
// service, was altered, or belongs to another query.
func TestContinueRefusals(t *testing.T) {
	t.Parallel()
	id := uuid.NewString()
	base := widgetQuery(Params{Where: "Size > 1", OrderBy: "Size"})
	token := issue(t, widgetCodec, base, `[3, "`+id+`"]`)
	payload, mac, _ := strings.Cut(token, ".")

	// signed re-signs a payload with the service's key: a token the service could have issued.
	signed := func(body string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(body)) + "." + base64.RawURLEncoding.EncodeToString(widgetCodec.mac([]byte(body)))
	}
	p, _, err := base.plan(widgetCodec)
	require.NoError(t, err)
	sum := querySum(p.signature)

	withParams := func(change func(*Query)) Query {
		q := base
		change(&q)
		return q
	}
	tests := []struct {
		name  string
		q     Query
		token string
		why   string
	}{
		{"not a token", base, "abc", "not one this service issued"},
		{"another service's key", base, issue(t, NewTokenCodec([]byte("other key")), base, `[3, "`+id+`"]`), "not one this service issued"},
		{"an altered payload", base, flipFirst(payload) + "." + mac, "not one this service issued"},
		{"an altered signature", base, payload + "." + flipFirst(mac), "not one this service issued"},
		{"another version", base, signed(`{"v":2,"q":"` + sum + `","k":[3,"` + id + `"]}`), "version is not supported"},
		{"a keyset that is not a list", base, signed(`{"v":1,"q":"` + sum + `","k":{"a":1}}`), "malformed"},
		{"a keyset of another order", base, signed(`{"v":1,"q":"` + sum + `","k":[3]}`), "does not match the order"},
		{"a keyset of other types", base, signed(`{"v":1,"q":"` + sum + `","k":["3","` + id + `"]}`), "malformed"},
		{"a keyset ID that is not a UUID", base, signed(`{"v":1,"q":"` + sum + `","k":[3,"x"]}`), "malformed"},
		{"another where", withParams(func(q *Query) { q.Params.Where = "Size > 2" }), token, "other parameters"},
		{"another order", withParams(func(q *Query) { q.Params.OrderBy = "DESC:Size" }), token, "other parameters"},
		{"another select", withParams(func(q *Query) { q.Params.Select = "Size" }), token, "other parameters"},
		{"another collection", withParams(func(q *Query) { q.Path = "/space/x/widget" }), token, "other parameters"},
		{"another organization", withParams(func(q *Query) {
			q.Caller = authz.RequestScope(auth.Principal{UserID: uuid.New(), OrganizationID: uuid.New(), Role: auth.RoleAdmin})
		}), token, "other parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Params.Continue = tt.token
			_, _, err := statement(t, q)
			e := apierr.From(err)
			require.Equal(t, apierr.TypeUserInput, e.Type, e.Message)
			require.Equal(t, []apierr.Item{{Item: "continue", Description: e.Items[0].Description}}, e.Items)
			require.Contains(t, e.Message, tt.why)
			require.Contains(t, e.Message, "start the list again without continue")
		})
	}
	ok := base
	ok.Params.Continue, ok.Params.Limit = token, intp(3)
	_, _, err = statement(t, ok)
	require.NoError(t, err, "limit may change between pages")
}

// flipFirst changes the first character of a base64 text (six bits of its first byte) to another.
func flipFirst(s string) string {
	swap := "A"
	if s[0] == 'A' {
		swap = "B"
	}
	return swap + s[1:]
}
