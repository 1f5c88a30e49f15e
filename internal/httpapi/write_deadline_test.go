package httpapi_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/listquery"
)

// TestSlowReaderIsCutOff: a client that sends a list request with a large answer and never reads it holds
// the answer and its in-flight slot only until a write of the answer stalls for --write-timeout: then the
// server closes the connection and the caller's next request (with --max-in-flight 1) is served.
func TestSlowReaderIsCutOff(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{
		WriteTimeout: 300 * time.Millisecond, MaxInFlightPerCaller: 1, BodyLimit: 4 << 20,
		ViewLimits: listquery.ViewLimits{CellValues: 2000, CellBytes: 2 << 20, PageBytes: 64 << 20}}})
	token := env.Token("acme", "alice", auth.RoleAdmin)
	c := env.Client(token)
	f := &unitFixture{env: env, c: c, space: createSpace(t, c, map[string]any{"Slug": "dev"})}
	u := f.create(t, "big", configdata.KubernetesYAML)
	var doc strings.Builder
	doc.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\nitems:\n")
	for range 1000 {
		doc.WriteString("  - " + strings.Repeat("x", 1000) + "\n")
	}
	f.put(t, u, "application/yaml", doc.String()).Expect(http.StatusOK)
	cols := []map[string]any{}
	for i := range 16 {
		cols = append(cols, dataColumn(fmt.Sprintf("Items%d", i), "items.*", ""))
	}
	var v api.View
	c.Post("/api/space/"+f.space.SpaceID.String()+"/view", map[string]any{"Slug": "wide", "Of": "Unit", "Columns": cols}).Expect(http.StatusOK).JSON(&v)
	const answer = 16 << 20 // 16 columns of a megabyte: far more than the sockets buffer

	// The list request, sent until it is taken (the caller's last request may still hold its one slot for a
	// moment after its answer): the status line is all of the answer the client reads.
	var conn net.Conn
	require.Eventually(t, func() bool {
		var err error
		conn, err = net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
		require.NoError(t, err)
		// A fixed receive buffer: the kernel does not grow it to take the answer in, and it is wider than
		// a loopback segment, so what the server sent before giving up is read at once afterwards.
		require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(256<<10))
		_, err = fmt.Fprintf(conn, "GET %s?%s HTTP/1.1\r\nHost: hubd\r\nAuthorization: Bearer %s\r\n\r\n",
			f.unitsPath(), url.Values{"view": {v.ViewID.String()}}.Encode(), token)
		require.NoError(t, err)
		line := make([]byte, len("HTTP/1.1 200"))
		_, err = io.ReadFull(conn, line)
		require.NoError(t, err)
		if string(line) == "HTTP/1.1 200" {
			return true
		}
		conn.Close()
		return false
	}, 10*time.Second, 20*time.Millisecond)
	defer conn.Close()

	status := func() int { return c.Get("/api/space/" + f.space.SpaceID.String()).Status }
	require.Eventually(t, func() bool { return status() == http.StatusTooManyRequests }, 10*time.Second, 5*time.Millisecond,
		"the unread answer holds the caller's one slot")
	require.Eventually(t, func() bool { return status() == http.StatusOK }, 10*time.Second, 20*time.Millisecond,
		"the stalled write gives the slot back")

	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := io.Copy(io.Discard, conn)
	var ne net.Error
	require.False(t, err != nil && errors.As(err, &ne) && ne.Timeout(), "the server closed the connection: %v", err)
	require.Less(t, n, int64(answer), "the answer was cut off")
}

// TestWriteTimeoutStartsWithTheWrite: a long poll waits longer than --write-timeout before it answers,
// and a connection whose last answer's deadline has passed serves its next request.
func TestWriteTimeoutStartsWithTheWrite(t *testing.T) {
	inEachLongPollMode(t, func(t *testing.T, opts apitest.Options) {
		opts.HTTP.WriteTimeout = 200 * time.Millisecond
		env := apitest.New(t, opts)
		c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
		sp := createSpace(t, c, map[string]any{"Slug": "dev"})
		var ch api.Channel
		c.Post("/api/space/"+sp.SpaceID.String()+"/channel", map[string]any{"Slug": "bot"}).Expect(http.StatusOK).JSON(&ch)
		base := "/api/space/" + sp.SpaceID.String() + "/channel/" + ch.ChannelID.String()
		var lease api.ChannelLease
		c.Post(base+"/lease", nil).Expect(http.StatusOK).JSON(&lease)
		c.Post(base+"/poll", map[string]any{"ClaimToken": lease.ClaimToken, "TimeoutSeconds": 1}).Expect(http.StatusNoContent)
		time.Sleep(300 * time.Millisecond)
		c.Post(base+"/poll", map[string]any{"ClaimToken": lease.ClaimToken, "TimeoutSeconds": 1},
			apitest.WithHeader("Expect", "100-continue")).Expect(http.StatusNoContent)
		c.Get("/api/space/" + sp.SpaceID.String()).Expect(http.StatusOK)
	})
}
