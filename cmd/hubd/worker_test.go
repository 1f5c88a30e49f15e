package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkerSecret: --secret wins, then --secret-file (trimmed), then HUBD_WORKER_SECRET; none is an error
// that says where to put it.
func TestWorkerSecret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte("bws_file\n"), 0o600))
	t.Setenv("HUBD_WORKER_SECRET", "bws_env")

	s, err := workerSecret("bws_flag", file)
	require.NoError(t, err)
	require.Equal(t, "bws_flag", s)
	s, err = workerSecret("", file)
	require.NoError(t, err)
	require.Equal(t, "bws_file", s)
	s, err = workerSecret("", "")
	require.NoError(t, err)
	require.Equal(t, "bws_env", s)

	_, err = workerSecret("", filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, "--secret-file")
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, err = workerSecret("", empty)
	require.ErrorContains(t, err, "is empty")
	t.Setenv("HUBD_WORKER_SECRET", "")
	_, err = workerSecret("", "")
	require.ErrorContains(t, err, "HUBD_WORKER_SECRET")
}
