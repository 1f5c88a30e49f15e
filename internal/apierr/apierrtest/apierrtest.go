// Package apierrtest checks, in unit tests, the errors domain code returns for the HTTP layer to answer.
package apierrtest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
)

// Require fails t unless err is an *apierr.Error of type typ whose Items name exactly items, in order
// (none when items is empty). It returns the error for further checks.
func Require(t testing.TB, err error, typ apierr.Type, items ...string) *apierr.Error {
	t.Helper()
	var e *apierr.Error
	require.True(t, errors.As(err, &e), "not an *apierr.Error: %v", err)
	require.Equal(t, typ, e.Type, e.Message)
	named := []string{}
	for _, it := range e.Items {
		named = append(named, it.Item)
	}
	if items == nil {
		items = []string{}
	}
	require.Equal(t, items, named, e.Message)
	return e
}
