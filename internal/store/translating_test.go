package store_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/store"
)

// TestQueriesTranslateErrors: the generated queries' errors arrive translated (a query nobody
// translates by hand is a NotFound or an AlreadyExists, not a 500), with the database error kept as the
// cause for the code that needs it.
func TestQueriesTranslateErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, apitest.NewDatabase(t), 0, slog.Default())
	require.NoError(t, err)
	defer st.Close()

	_, err = st.Q().OrganizationGetByID(ctx, uuid.New())
	require.True(t, apierr.Is(err, apierr.TypeNotFound), "no rows: %v", err)
	require.True(t, errors.Is(err, pgx.ErrNoRows), "the cause is kept")

	insert := func(q *db.Queries) error {
		_, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{OrganizationID: uuid.New(), Slug: "acme",
			Labels: []byte("{}"), Annotations: []byte("{}"), DeleteGates: []byte("{}")})
		return err
	}
	require.NoError(t, insert(st.Q()))
	err = st.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		err := insert(tx.Q)
		require.True(t, apierr.Is(err, apierr.TypeAlreadyExists), "unique violation: %v", err)
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr), "the cause is kept")
		require.Equal(t, "23505", pgErr.Code)
		return err
	})
	require.True(t, apierr.Is(err, apierr.TypeAlreadyExists))
}
