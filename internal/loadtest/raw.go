package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubd/hubd/internal/configdata"
)

// rawDB is the baseline: the same rows hubd reads and writes, over pgx, with no service in between.
type rawDB struct {
	pool *pgxpool.Pool
	url  string
}

func openRaw(ctx context.Context, url string, conns int) (*rawDB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(conns + 2)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &rawDB{pool: pool, url: url}, nil
}

func (r *rawDB) close() { r.pool.Close() }

// putData writes a new Revision of a Unit as hubd does (content by hash, Revision, Mutation, head, event)
// in one transaction of three round trips: begin, one batch, commit. The document is parsed and
// projected here too, as the service must.
func (r *rawDB) putData(ctx context.Context, unitID uuid.UUID, name string, replicas int) error {
	data := deployment(name, replicas)
	doc, err := configdata.Parse("Kubernetes/YAML", data)
	if err != nil {
		return err
	}
	projection, err := doc.Projection()
	if err != nil {
		return err
	}
	hash := configdata.Hash(data)
	revisionID := uuid.New()
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT 1 FROM unit WHERE unit_id = $1 FOR UPDATE`, unitID)
		b.Queue(`INSERT INTO config_data (data_hash, data, data_size) VALUES ($1, $2, $3) ON CONFLICT (data_hash) DO NOTHING`, hash, data, len(data))
		b.Queue(`INSERT INTO revision (revision_id, organization_id, space_id, unit_id, revision_num, description, source, user_id, user_agent, data_hash, data_size, mutation_sources)
			SELECT $2, organization_id, space_id, unit_id, head_revision_num + 1, '', 'DataPut', $3, 'loadtest', $4, $5, '[]' FROM unit WHERE unit_id = $1`,
			unitID, revisionID, uuid.Nil, hash, len(data))
		b.Queue(`INSERT INTO mutation (mutation_id, organization_id, space_id, unit_id, revision_id, revision_num, mutation_num, restored_revision_num)
			SELECT $2, organization_id, space_id, unit_id, $3, head_revision_num + 1, head_mutation_num + 1, 0 FROM unit WHERE unit_id = $1`,
			unitID, uuid.New(), revisionID)
		b.Queue(`UPDATE unit SET data_hash = $2, data_size = $3, head_doc = $4, head_revision_id = $5, head_revision_num = head_revision_num + 1,
			head_mutation_num = head_mutation_num + 1, version = version + 1, updated_at = now() WHERE unit_id = $1`,
			unitID, hash, len(data), projection, revisionID)
		b.Queue(`INSERT INTO event_log (organization_id, event_type, space_id, subject_entity_type, subject_entity_id, payload)
			SELECT organization_id, 'unit.updated', space_id, 'Unit', unit_id, jsonb_build_object('EntityType', 'Unit', 'EntityID', unit_id, 'RevisionNum', head_revision_num)
			FROM unit WHERE unit_id = $1`, unitID)
		return tx.SendBatch(ctx, b).Close()
	})
}

// getData reads a Unit's data by its ID.
func (r *rawDB) getData(ctx context.Context, orgID, unitID uuid.UUID) error {
	var data []byte
	return r.pool.QueryRow(ctx, `SELECT c.data FROM unit u JOIN config_data c ON c.data_hash = u.data_hash
		WHERE u.organization_id = $1 AND u.unit_id = $2`, orgID, unitID).Scan(&data)
}

// unitColumns are the columns behind a Unit of a list page: every one the API answers with (all but
// the data projection and the search text, which hubd's lists do not read either). The baseline receives
// the rows; it does not decode them or write JSON.
const unitColumns = `unit_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates, destroy_gates,
	permissions, toolchain_type, provider_type, target_id, change_set_id, last_change_description, data_hash, data_size,
	head_revision_id, head_revision_num, head_mutation_num, head_unit_action_num, head_unit_event_num,
	last_released_revision_num, upstream_unit_id, upstream_space_id, upstream_revision_num, hidden_reason, version,
	created_at, updated_at`

// page reads one keyset page of Units of a Space matching cond (after the row (slug, id) when slug is set).
func (r *rawDB) page(ctx context.Context, cond string, arg any, org, space uuid.UUID, slug string, id uuid.UUID) error {
	q := `SELECT ` + unitColumns + ` FROM unit WHERE organization_id = $1 AND space_id = $2 AND ` + cond +
		` AND ($4 = '' OR (slug, unit_id) > ($4, $5)) ORDER BY slug, unit_id LIMIT 100`
	rows, err := r.pool.Query(ctx, q, org, space, arg, slug, id)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n != listPageLength {
		return fmt.Errorf("page of %d rows, want %d", n, listPageLength)
	}
	return nil
}

const (
	rawWhereTier     = `labels @> $3`
	rawWhereDataRepl = `head_doc @? $3::jsonpath`
)

var (
	tierGold    = map[string]string{"tier": "gold"}
	replicas7   = `$[*].Value.spec.replicas ? (@ == 7)`
	rawKeysHead = `SELECT slug, unit_id FROM unit WHERE organization_id = $1 AND space_id = $2 AND `
)

func (r *rawDB) whereList(ctx context.Context, org, space uuid.UUID, slug string, id uuid.UUID) error {
	return r.page(ctx, rawWhereTier, tierGold, org, space, slug, id)
}

func (r *rawDB) whereDataList(ctx context.Context, org, space uuid.UUID, slug string, id uuid.UUID) error {
	return r.page(ctx, rawWhereDataRepl, replicas7, org, space, slug, id)
}

func (r *rawDB) keysAt(ctx context.Context, cond string, arg any, org, space uuid.UUID, offset int) (string, uuid.UUID, error) {
	var slug string
	var id uuid.UUID
	err := r.pool.QueryRow(ctx, rawKeysHead+cond+` ORDER BY slug, unit_id OFFSET $4 LIMIT 1`, org, space, arg, offset).Scan(&slug, &id)
	return slug, id, err
}

func (r *rawDB) whereKeys(ctx context.Context, org, space uuid.UUID, offset int) (string, uuid.UUID, error) {
	return r.keysAt(ctx, rawWhereTier, tierGold, org, space, offset)
}

func (r *rawDB) whereDataKeys(ctx context.Context, org, space uuid.UUID, offset int) (string, uuid.UUID, error) {
	return r.keysAt(ctx, rawWhereDataRepl, replicas7, org, space, offset)
}

// seedList inserts n Kubernetes Units into a Space directly (one Unit in ten has Labels.tier gold and one
// in ten has 7 replicas), with the rows and projections the API would have stored, and analyzes them.
func (r *rawDB) seedList(ctx context.Context, org, space uuid.UUID, n int) error {
	_, err := r.pool.Exec(ctx, `
		WITH src AS (
			SELECT i, format(E'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: l-%s\nspec:\n  replicas: %s\n', lpad(i::text, 6, '0'), i % 10) AS data
			FROM generate_series(1, $3::int) AS i
		), stored AS (
			INSERT INTO config_data (data_hash, data, data_size)
			SELECT encode(sha256(convert_to(data, 'UTF8')), 'hex'), convert_to(data, 'UTF8'), octet_length(data) FROM src
			ON CONFLICT DO NOTHING
		)
		INSERT INTO unit (unit_id, organization_id, space_id, slug, toolchain_type, data_hash, data_size, labels, head_doc)
		SELECT gen_random_uuid(), $1, $2, 'l-' || lpad(i::text, 6, '0'), 'Kubernetes/YAML', encode(sha256(convert_to(data, 'UTF8')), 'hex'), octet_length(data),
		       jsonb_build_object('tier', (ARRAY['gold','silver','bronze','iron','tin','lead','zinc','nickel','copper','steel'])[i % 10 + 1]),
		       jsonb_build_array(jsonb_build_object('ResourceType', 'apps/v1/Deployment', 'ResourceName', 'l-' || i,
		           'Value', jsonb_build_object('apiVersion', 'apps/v1', 'kind', 'Deployment',
		               'metadata', jsonb_build_object('name', 'l-' || i), 'spec', jsonb_build_object('replicas', i % 10))))
		FROM src`, org, space, n)
	if err != nil {
		return fmt.Errorf("inserting the list's Units: %w", err)
	}
	for _, stmt := range []string{"VACUUM ANALYZE unit", "ANALYZE config_data"} {
		if _, err := r.pool.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// createSpace inserts a Space and its event, as hubd's Space create stores them.
func (r *rawDB) createSpace(ctx context.Context, org uuid.UUID, slug string) error {
	id := uuid.New()
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO space (space_id, organization_id, slug, display_name) VALUES ($1, $2, $3, $3)`, id, org, slug)
		b.Queue(`INSERT INTO event_log (organization_id, event_type, space_id, subject_entity_type, subject_entity_id, payload)
			VALUES ($2, 'space.created', $1, 'Space', $1, jsonb_build_object('EntityType', 'Space', 'EntityID', $1::uuid, 'Slug', $3::text))`, id, org, slug)
		return tx.SendBatch(ctx, b).Close()
	})
}

// notifyRoundTrip times a committed NOTIFY reaching a listening connection: the floor under any
// write-to-delivery latency built on LISTEN/NOTIFY.
func (r *rawDB) notifyRoundTrip(ctx context.Context, org uuid.UUID) (time.Duration, error) {
	listener, err := r.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, "LISTEN loadtest_round_trip"); err != nil {
		return 0, err
	}
	defer func() { _, _ = listener.Exec(context.WithoutCancel(ctx), "UNLISTEN loadtest_round_trip") }()
	payload, _ := json.Marshal(map[string]any{"org": org})
	start := time.Now()
	if _, err := r.pool.Exec(ctx, "SELECT pg_notify('loadtest_round_trip', $1)", string(payload)); err != nil {
		return 0, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := listener.Conn().WaitForNotification(waitCtx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
