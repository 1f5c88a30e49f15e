package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/entity"
)

// TestQuietEvents pins the event families whose events leave what replicas remember of members in place
// (each family's declaration says Quiet). A family joins this list only if none of its changes can alter a
// membership, a role, a Group or a grant on a Space: a wrong entry keeps stale permissions on other replicas.
func TestQuietEvents(t *testing.T) {
	require.Equal(t, []string{"apply", "attestation", "change_set", "change_workflow", "channel", "command_run", "component", "filter", "invocation", "link", "queued_operation", "release", "review_comment", "tag", "target", "trigger", "unit", "view"},
		entity.QuietEvents())
}
