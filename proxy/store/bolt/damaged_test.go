package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/compactkit/compact/proxy"
)

// corrupt overwrites every page of the file at path after the two meta
// pages with random bytes (a fixed seed), as a failing disk or a torn
// copy would leave them.
func corrupt(t *testing.T, path string, seed uint64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	r := rand.New(rand.NewPCG(seed, seed))
	buf := make([]byte, page)
	for off := 2 * page; off < fi.Size(); off += page {
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		if _, err := f.WriteAt(buf, off); err != nil {
			t.Fatal(err)
		}
	}
}

// fill writes n records of a few KB each.
func fill(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		rec := record(i + 1)
		rec.Checkpoints[0].Summary = strings.Repeat(fmt.Sprintf("summary %d ", i), 200)
		mustPut(t, s, fmt.Sprintf("c:%d", i), rec)
	}
}

// TestOpenDamagedFile: a file with damaged data pages is refused at Open
// with an error that names the file and says how to get out.
func TestOpenDamagedFile(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "proxy.db")
			s, err := Open(path, Options{SweepEvery: -1})
			if err != nil {
				t.Fatal(err)
			}
			fill(t, s, 50)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			corrupt(t, path, seed)
			s, err = Open(path, Options{SweepEvery: -1})
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a damaged file")
			}
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("Open: %v, want ErrDamaged", err)
			}
			for _, want := range []string{path, "mv " + path + " " + path + ".bad", "--store"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestDamagedWhileOpen: pages damaged under an open store make its calls
// fail with ErrDamaged instead of panicking, and Ping reports it.
func TestDamagedWhileOpen(t *testing.T) {
	s := open(t, Options{})
	fill(t, s, 50)
	corrupt(t, s.Path(), 7)
	ctx := context.Background()
	failed := false
	for i := 0; i < 50; i++ {
		_, gerr := s.Get(ctx, fmt.Sprintf("c:%d", i))
		perr := s.Put(ctx, fmt.Sprintf("c:%d", i), record(1))
		if errors.Is(gerr, ErrDamaged) || errors.Is(perr, ErrDamaged) {
			failed = true
		}
	}
	if !failed {
		t.Fatal("no call reported the damage")
	}
	err := s.Ping(ctx)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), s.Path()) {
		t.Fatalf("Ping: %v, want ErrDamaged naming %s", err, s.Path())
	}
	if _, err := s.Get(ctx, "c:1"); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Get after the damage: %v, want ErrDamaged", err)
	}
}

// TestProxyOnDamagedStore: a proxy whose state file is damaged under it
// answers every request (forwarded uncompacted), and /readyz says the
// store is not ready, naming the file.
func TestProxyOnDamagedStore(t *testing.T) {
	var upstream atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		upstream.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":1}}`)
	}))
	defer up.Close()
	s := open(t, Options{})
	srv, err := proxy.New(proxy.Config{AnthropicUpstream: up.URL, Window: 200000, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(srv)
	defer ps.Close()
	send := func(session string, turns int) (*http.Response, error) {
		var msgs []string
		for i := 0; i < turns; i++ {
			msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"question %d"},{"role":"assistant","content":"answer %d"}`, i, i))
		}
		body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[` + strings.Join(msgs, ",") + `,{"role":"user","content":"next"}]}`
		req, _ := http.NewRequest(http.MethodPost, ps.URL+"/v1/messages", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", "sk-test")
		req.Header.Set("X-Session-Id", session)
		return http.DefaultClient.Do(req)
	}
	// Conversations the store knows, then the damage.
	for i := 0; i < 20; i++ {
		resp, err := send(fmt.Sprint("s", i), 1)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fill(t, s, 50)
	corrupt(t, s.Path(), 11)
	before := upstream.Load()
	for i := 0; i < 20; i++ {
		resp, err := send(fmt.Sprint("s", i), 2)
		if err != nil {
			t.Fatalf("request %d got no response: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"ok"`)) {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if n := upstream.Load() - before; n != 20 {
		t.Errorf("%d requests reached the upstream, want 20", n)
	}
	resp, err := http.Get(ps.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(b, []byte(s.Path())) {
		t.Fatalf("/readyz: %d %q, want 503 naming %s", resp.StatusCode, b, s.Path())
	}
}
