package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestSignInLimitsDoNotLockOutTheOwner: failed sign-ins count per client address and per credential
// together with that address, never per credential alone, so whoever knows a worker's ID cannot keep the
// worker out by failing from elsewhere. The guard reads the TCP peer's address: the owner signs in over a
// connection from another loopback address (127.0.0.2).
func TestSignInLimitsDoNotLockOutTheOwner(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	var w api.BridgeWorker
	admin.Post("/api/space/"+sp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "w"}).Expect(http.StatusOK).JSON(&w)

	// The attacker's address runs out, for the right Secret too.
	wrong := map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": "guess"}
	limited := false
	for i := 0; i < 40 && !limited; i++ {
		status, _ := workerSignIn(t, env, wrong)
		limited = status == http.StatusTooManyRequests
	}
	require.True(t, limited, "failures from one address were never limited")
	status, _ := workerSignIn(t, env, map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": w.Secret})
	require.Equal(t, http.StatusTooManyRequests, status)

	// The owner, from another address, is not held up.
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	owner := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	body, err := json.Marshal(map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": w.Secret})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, env.URL+"/auth/worker", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := owner.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
