package redis

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// server is a redis-server started by a test on a free loopback port,
// without persistence, in a temporary folder.
type server struct {
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
	// args are extra redis-server arguments ("--maxmemory", "1mb").
	args []string
}

// startServer starts redis-server, or skips the test when it is not
// installed (fails instead under COMPACT_REQUIRE_REDIS=1, as in .ci/run).
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("COMPACT_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed (apt-get install redis-server); COMPACT_REQUIRE_REDIS is set")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server); .ci/run installs it")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &server{t: t, port: port, dir: t.TempDir(), args: args}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// url is the server's redis:// URL.
func (s *server) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// start runs the server and waits until it answers.
func (s *server) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", s.dir)
	s.cmd.Args = append(s.cmd.Args, s.args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on port %d did not answer: %v", s.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the server (a crash, for the fault tests) and waits for it.
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// store opens a Store on the server for a replica (clustertest.Run's
// newStore); the replica closes it.
func (s *server) store(t *testing.T) store.Store {
	t.Helper()
	st, err := Open(context.Background(), s.url(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// open opens a Store on the server with short test timeouts.
func (s *server) open(t *testing.T, opts Options) *Store {
	t.Helper()
	st, err := Open(context.Background(), s.url(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestMain keeps go-redis's own connection errors out of the test output;
// the fault tests provoke many on purpose.
func TestMain(m *testing.M) {
	QuietClientLogs()
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// newServer serves h on loopback for the test and returns its URL.
func newServer(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}
