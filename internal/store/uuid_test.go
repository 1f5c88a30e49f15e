package store_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/store"
)

// TestUUIDScan: the store's connections read uuid values into uuid.UUID, *uuid.UUID (NULL: nil) and
// []uuid.UUID as their text form says, in the binary and the text result formats; NULL into a
// uuid.UUID is an error.
func TestUUIDScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, apitest.NewDatabase(t), 1, slog.Default())
	require.NoError(t, err)
	defer st.Close()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var (
			id, second uuid.UUID
			text       string
			null       *uuid.UUID
			some       *uuid.UUID
			list       []uuid.UUID
		)
		require.NoError(t, st.Pool.QueryRow(ctx, `SELECT u, u::text, NULL::uuid, u, ARRAY[u, v], v
			FROM (SELECT gen_random_uuid() AS u, gen_random_uuid() AS v) x`, mode).Scan(&id, &text, &null, &some, &list, &second))
		require.Equal(t, uuid.MustParse(text), id, "mode %v", mode)
		require.Nil(t, null)
		require.NotNil(t, some)
		require.Equal(t, id, *some)
		require.Equal(t, []uuid.UUID{id, second}, list)
		require.Error(t, st.Pool.QueryRow(ctx, "SELECT NULL::uuid", mode).Scan(&id), "NULL into a uuid.UUID")
	}
}

// BenchmarkUUIDScan reads 1,000 uuid values per query into uuid.UUID through the store's connections
// (store) and through a connection with only pgxuuid registered (baseline), in the same run.
func BenchmarkUUIDScan(b *testing.B) {
	ctx := context.Background()
	url := apitest.NewDatabase(b)
	st, err := store.Open(ctx, url, 1, slog.Default())
	require.NoError(b, err)
	defer st.Close()
	baseline, err := pgx.Connect(ctx, url)
	require.NoError(b, err)
	defer baseline.Close(ctx)
	pgxuuid.Register(baseline.TypeMap())
	const query = "SELECT gen_random_uuid() FROM generate_series(1, 1000)"
	read := func(b *testing.B, rows pgx.Rows, err error) {
		require.NoError(b, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(b, err)
		require.Len(b, ids, 1000)
	}
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows, err := st.Pool.Query(ctx, query)
			read(b, rows, err)
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows, err := baseline.Query(ctx, query)
			read(b, rows, err)
		}
	})
}
