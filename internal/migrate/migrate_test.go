package migrate_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/migrate"
)

// TestUpDownUpWithData migrates a blank database up, stores rows in every table, reverts everything
// and migrates up again: the down migrations undo the up ones even with data present.
func TestUpDownUpWithData(t *testing.T) {
	t.Parallel()
	url := apitest.NewBlankDatabase(t)
	ctx := context.Background()

	require.NoError(t, migrate.Up(url))
	v, dirty, err := migrate.Version(url)
	require.NoError(t, err)
	require.False(t, dirty)
	require.Positive(t, v)
	require.NoError(t, migrate.Up(url), "a second up is a no-op")

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	seed := []string{
		`INSERT INTO organization (organization_id, slug) VALUES ('00000000-0000-4000-8000-000000000001', 'acme')`,
		`INSERT INTO app_user (user_id, username, slug) VALUES ('00000000-0000-4000-8000-000000000002', 'alice', 'alice')`,
		`INSERT INTO organization_member (organization_id, user_id, org_role) VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'admin')`,
		`INSERT INTO space (space_id, organization_id, slug) VALUES ('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000001', 'dev')`,
		`INSERT INTO signing_key (kid, private_jwk) VALUES ('k1', '{}')`,
	}
	for _, q := range seed {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	// The schema's constraints hold: a role outside the four, a Slug clash.
	_, err = conn.Exec(ctx, `INSERT INTO organization_member (organization_id, user_id, org_role) VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'owner')`)
	require.Error(t, err)
	_, err = conn.Exec(ctx, `INSERT INTO space (space_id, organization_id, slug) VALUES ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000001', 'dev')`)
	require.Error(t, err)

	require.NoError(t, migrate.Down(url, 0))
	var tables int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`).Scan(&tables))
	require.Zero(t, tables)

	require.NoError(t, migrate.Up(url))
	v2, dirty, err := migrate.Version(url)
	require.NoError(t, err)
	require.False(t, dirty)
	require.Equal(t, v, v2)
}

// TestConcurrentUp: replicas starting at once migrate safely.
func TestConcurrentUp(t *testing.T) {
	t.Parallel()
	url := apitest.NewBlankDatabase(t)
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() { errs <- migrate.Up(url) }()
	}
	for i := 0; i < 4; i++ {
		require.NoError(t, <-errs)
	}
	_, dirty, err := migrate.Version(url)
	require.NoError(t, err)
	require.False(t, dirty)
}

// TestForeignKeyIndexes: migration 000012 indexes mutation.revision_id and unit.target_id (partial: only
// Units naming a Target), and its down migration drops them.
func TestForeignKeyIndexes(t *testing.T) {
	t.Parallel()
	url := apitest.NewBlankDatabase(t)
	ctx := context.Background()
	require.NoError(t, migrate.Up(url))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	indexes := func() map[string]string {
		rows, err := conn.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
			WHERE schemaname = 'public' AND indexname IN ('mutation_revision_idx', 'unit_target_id_idx')`)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
			var name, def string
			err := r.Scan(&name, &def)
			return [2]string{name, def}, err
		})
		require.NoError(t, err)
		m := map[string]string{}
		for _, r := range out {
			m[r[0]] = r[1]
		}
		return m
	}
	got := indexes()
	require.Contains(t, got["mutation_revision_idx"], "ON public.mutation USING btree (revision_id)")
	require.Contains(t, got["unit_target_id_idx"], "ON public.unit USING btree (target_id) WHERE (target_id IS NOT NULL)")

	v, _, err := migrate.Version(url)
	require.NoError(t, err)
	require.NoError(t, migrate.Down(url, int(v)-8))
	require.Empty(t, indexes())
	require.NoError(t, migrate.Up(url))
	require.Len(t, indexes(), 2)
}

// TestCredentialLimits: migration 000014 scopes the keys registered before it to one organization (a bot
// User's to its account's, a person's to their only membership; a key of a person in two organizations
// cannot be attributed and is removed) and caps them at the manager role; BridgeWorker Secrets are capped
// at the worker's role.
func TestCredentialLimits(t *testing.T) {
	t.Parallel()
	url := apitest.NewBlankDatabase(t)
	ctx := context.Background()
	require.NoError(t, migrate.To(url, 12))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	const (
		orgA, orgB      = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
		solo, both, bot = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000003"
		wbot            = "00000000-0000-4000-8000-000000000004"
		spaceA          = "00000000-0000-4000-8000-0000000000c1"
	)
	for _, q := range []string{
		`INSERT INTO organization (organization_id, slug) VALUES ('` + orgA + `', 'a'), ('` + orgB + `', 'b')`,
		`INSERT INTO app_user (user_id, username, slug) VALUES ('` + solo + `', 'solo', 'solo'), ('` + both + `', 'both', 'both'),
			('` + bot + `', 'sa-x', 'sa-x'), ('` + wbot + `', 'bw-x', 'bw-x')`,
		`INSERT INTO organization_member (organization_id, user_id, org_role) VALUES ('` + orgA + `', '` + solo + `', 'admin'),
			('` + orgA + `', '` + both + `', 'member'), ('` + orgB + `', '` + both + `', 'member'), ('` + orgB + `', '` + bot + `', 'admin'),
			('` + orgA + `', '` + wbot + `', 'member')`,
		`INSERT INTO service_account (service_account_id, organization_id, user_id, slug) VALUES (gen_random_uuid(), '` + orgB + `', '` + bot + `', 'sa')`,
		`INSERT INTO space (space_id, organization_id, slug) VALUES ('` + spaceA + `', '` + orgA + `', 'dev')`,
		`INSERT INTO bridge_worker (bridge_worker_id, organization_id, space_id, user_id, slug, secret_hash)
			VALUES (gen_random_uuid(), '` + orgA + `', '` + spaceA + `', '` + wbot + `', 'w', '\x00')`,
		`INSERT INTO user_key (user_key_id, user_id, kid, public_jwk) VALUES (gen_random_uuid(), '` + solo + `', 'k-solo', '{}'),
			(gen_random_uuid(), '` + both + `', 'k-both', '{}'), (gen_random_uuid(), '` + bot + `', 'k-bot', '{}')`,
	} {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, migrate.Up(url))

	rows, err := conn.Query(ctx, `SELECT kid, organization_id::text, max_org_role FROM user_key ORDER BY kid`)
	require.NoError(t, err)
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([3]string, error) {
		var k [3]string
		err := r.Scan(&k[0], &k[1], &k[2])
		return k, err
	})
	require.NoError(t, err)
	require.Equal(t, [][3]string{{"k-bot", orgB, "manager"}, {"k-solo", orgA, "manager"}}, keys)
	var cap string
	require.NoError(t, conn.QueryRow(ctx, `SELECT secret_max_org_role FROM bridge_worker`).Scan(&cap))
	require.Equal(t, "member", cap)

	// A key follows its membership.
	_, err = conn.Exec(ctx, `DELETE FROM organization_member WHERE user_id = '`+solo+`'`)
	require.NoError(t, err)
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM user_key WHERE kid = 'k-solo'`).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, migrate.To(url, 12))
	require.NoError(t, migrate.Up(url))
}

// TestTargetBridgeWorkerReference: migration 000013 clears the BridgeWorkerIDs of Targets that name no
// BridgeWorker of their organization (a new Version each), keeps the others, and from then on a
// BridgeWorker named by a Target cannot be deleted; its down migration drops the key and its index.
func TestTargetBridgeWorkerReference(t *testing.T) {
	t.Parallel()
	url := apitest.NewBlankDatabase(t)
	ctx := context.Background()
	require.NoError(t, migrate.To(url, 12))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)

	const (
		acme, other          = "00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000b1"
		acmeSpace, otherSp   = "00000000-0000-4000-8000-0000000000a2", "00000000-0000-4000-8000-0000000000b2"
		acmeBot, otherBot    = "00000000-0000-4000-8000-0000000000a3", "00000000-0000-4000-8000-0000000000b3"
		acmeWorker, otherWkr = "00000000-0000-4000-8000-0000000000a4", "00000000-0000-4000-8000-0000000000b4"
	)
	seed := []string{
		`INSERT INTO organization (organization_id, slug) VALUES ('` + acme + `', 'acme'), ('` + other + `', 'other')`,
		`INSERT INTO app_user (user_id, username, slug) VALUES ('` + acmeBot + `', 'bot-a', 'bot-a'), ('` + otherBot + `', 'bot-b', 'bot-b')`,
		`INSERT INTO organization_member (organization_id, user_id, org_role) VALUES ('` + acme + `', '` + acmeBot + `', 'viewer'), ('` + other + `', '` + otherBot + `', 'viewer')`,
		`INSERT INTO space (space_id, organization_id, slug) VALUES ('` + acmeSpace + `', '` + acme + `', 'dev'), ('` + otherSp + `', '` + other + `', 'dev')`,
		`INSERT INTO bridge_worker (bridge_worker_id, organization_id, space_id, user_id, slug, secret_hash) VALUES
			('` + acmeWorker + `', '` + acme + `', '` + acmeSpace + `', '` + acmeBot + `', 'w', '\x00'),
			('` + otherWkr + `', '` + other + `', '` + otherSp + `', '` + otherBot + `', 'w', '\x00')`,
		`INSERT INTO target (target_id, organization_id, space_id, slug, toolchain_type, provider_type, bridge_worker_id) VALUES
			('00000000-0000-4000-8000-0000000000c1', '` + acme + `', '` + acmeSpace + `', 'own', 'Kubernetes/YAML', 'Kubernetes', '` + acmeWorker + `'),
			('00000000-0000-4000-8000-0000000000c2', '` + acme + `', '` + acmeSpace + `', 'foreign', 'Kubernetes/YAML', 'Kubernetes', '` + otherWkr + `'),
			('00000000-0000-4000-8000-0000000000c3', '` + acme + `', '` + acmeSpace + `', 'random', 'Kubernetes/YAML', 'Kubernetes', gen_random_uuid()),
			('00000000-0000-4000-8000-0000000000c4', '` + acme + `', '` + acmeSpace + `', 'none', 'Kubernetes/YAML', 'Kubernetes', NULL)`,
	}
	for _, q := range seed {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, migrate.Up(url))

	rows, err := conn.Query(ctx, `SELECT slug, bridge_worker_id::text, version FROM target ORDER BY slug`)
	require.NoError(t, err)
	type row struct {
		Slug    string
		Worker  *string
		Version int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	worker := acmeWorker
	require.Equal(t, []row{{"foreign", nil, 2}, {"none", nil, 1}, {"own", &worker, 1}, {"random", nil, 2}}, got)

	_, err = conn.Exec(ctx, `DELETE FROM app_user WHERE user_id = '`+acmeBot+`'`)
	require.Error(t, err, "a BridgeWorker named by a Target is not deleted")
	_, err = conn.Exec(ctx, `UPDATE target SET bridge_worker_id = '`+otherWkr+`' WHERE slug = 'none'`)
	require.NoError(t, err, "the key does not check organizations: the service does")
	_, err = conn.Exec(ctx, `UPDATE target SET bridge_worker_id = gen_random_uuid() WHERE slug = 'none'`)
	require.Error(t, err)

	require.NoError(t, migrate.To(url, 12))
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = 'target_bridge_worker_id_idx'`).Scan(&n))
	require.Zero(t, n)
	_, err = conn.Exec(ctx, `DELETE FROM app_user WHERE user_id = '`+acmeBot+`'`)
	require.NoError(t, err)
}
