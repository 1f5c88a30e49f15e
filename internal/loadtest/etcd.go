package loadtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdServer is a single-member etcd started for the run, in a temporary directory, with its client.
type etcdServer struct {
	cmd *exec.Cmd
	dir string
	kv  *clientv3.Client
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startEtcd starts etcd (fsync on, as PostgreSQL's is) and connects conns clients' worth of requests.
func startEtcd(ctx context.Context, bin string, conns int) (*etcdServer, error) {
	dir, err := os.MkdirTemp("", "hubd-loadtest-etcd-")
	if err != nil {
		return nil, err
	}
	clientAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	peerAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--data-dir", dir, "--name", "loadtest",
		"--listen-client-urls", "http://"+clientAddr, "--advertise-client-urls", "http://"+clientAddr,
		"--listen-peer-urls", "http://"+peerAddr, "--initial-advertise-peer-urls", "http://"+peerAddr,
		"--initial-cluster", "loadtest=http://"+peerAddr, "--log-level", "error")
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting etcd: %w", err)
	}
	e := &etcdServer{cmd: cmd, dir: dir}
	if e.kv, err = clientv3.New(clientv3.Config{Endpoints: []string{clientAddr}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()}); err != nil {
		e.stop()
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, cancel := context.WithTimeout(ctx, time.Second)
		_, err := e.kv.Put(c, "/ready", "1")
		cancel()
		if err == nil {
			return e, nil
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("etcd did not answer within 30s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *etcdServer) stop() {
	if e.kv != nil {
		e.kv.Close()
	}
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
	os.RemoveAll(e.dir)
}

func etcdKey(i int) string { return fmt.Sprintf("/units/%05d", i) }

func (e *etcdServer) put(ctx context.Context, i int, value []byte) error {
	_, err := e.kv.Put(ctx, etcdKey(i), string(value))
	return err
}

// get reads a key linearizably (etcd's default, a quorum read), as a client of a configuration store expects.
func (e *etcdServer) get(ctx context.Context, i int) error {
	r, err := e.kv.Get(ctx, etcdKey(i))
	if err == nil && len(r.Kvs) != 1 {
		err = fmt.Errorf("etcd has no %s", etcdKey(i))
	}
	return err
}
