package component

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/entity"
)

func TestWithBackingUnits(t *testing.T) {
	for _, c := range []struct {
		with     bool
		space    string
		wantItem string // the parameter a refusal names; "" when accepted
		carried  bool
	}{
		{with: false, space: ""},
		{with: true, space: "dev", carried: true},
		{with: true, space: "", wantItem: "backing_unit_space"},
		{with: false, space: "dev", wantItem: "with_backing_units"},
	} {
		ctx, err := WithBackingUnits(context.Background(), c.with, c.space)
		if c.wantItem != "" {
			require.True(t, apierr.Is(err, apierr.TypeUserInput), "%+v", c)
			require.Equal(t, c.wantItem, apierr.From(err).Items[0].Item)
			continue
		}
		require.NoError(t, err)
		got, ok := ctx.Value(backingKey{}).(string)
		require.Equal(t, c.carried, ok)
		require.Equal(t, map[bool]string{true: c.space}[c.carried], got)
	}
}

func TestNormalize(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	f, err := strategy{}.Normalize(Fields{Common: entity.Common{Slug: "web"}, AllowedChangeWorkflowIDs: []uuid.UUID{b, a, b}})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{b, a}, f.AllowedChangeWorkflowIDs, "repeats dropped, order kept")
	many := make([]uuid.UUID, MaxWorkflows+1)
	for i := range many {
		many[i] = uuid.New()
	}
	_, err = strategy{}.Normalize(Fields{Common: entity.Common{Slug: "web"}, AllowedChangeWorkflowIDs: many})
	require.True(t, apierr.Is(err, apierr.TypeValidation))
	require.Equal(t, "AllowedChangeWorkflowIDs", apierr.From(err).Items[0].Item)
}
