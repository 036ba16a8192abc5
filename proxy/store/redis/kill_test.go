package redis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/clustertest"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// replica is a `compact proxy` process.
type replica struct {
	cmd *exec.Cmd
	url string
}

// startReplica runs the compact binary as a proxy on Redis and reads the
// address it listens on. extra flags come after the defaults (a 12,000
// token window, the offline summarizer) and override them.
func startReplica(t *testing.T, redisURL, upstream string, extra ...string) *replica {
	t.Helper()
	args := append([]string{"proxy", "--listen", "127.0.0.1:0", "--redis", redisURL, "--openai-upstream", upstream,
		"--window", "12000", "--summarizer", "extractive"}, extra...)
	cmd := exec.Command(compactBinary(t), args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("COMPACT_CLUSTERTEST_LOG") != "" {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("replica did not start: %v", err)
	}
	go io.Copy(io.Discard, out)
	return &replica{cmd: cmd, url: strings.TrimSpace(strings.TrimPrefix(line, "compact proxy listening on "))}
}

// binary is the compact command built once for the package's tests.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// compactBinary builds ../cmd/compact on first use and returns its path;
// TestMain removes it.
func compactBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		binary.dir, binary.err = os.MkdirTemp("", "compact-redis-test-")
		if binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "compact")
		if out, err := exec.Command("go", "build", "-o", binary.path, "../../../cmd/compact").CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// TestReplicaKilledMidStream runs three `compact proxy` processes on one
// Redis. Half way, a replica is killed with SIGKILL while it relays a
// stream: that stream is lost, and the conversation goes on through the
// other replicas with its stored compaction intact (the same summary
// bytes), as do all the others.
func TestReplicaKilledMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	fake := fakeupstream.New(fakeupstream.Config{Window: 12000, Steps: 20})
	arrived := make(chan struct{}, 1)
	upstream := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Stall") != "" {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n")
			w.(http.Flusher).Flush()
			arrived <- struct{}{}
			<-r.Context().Done() // until the replica dies
			return
		}
		fake.ServeHTTP(w, r)
	}))
	var reps []*replica
	for i := 0; i < 3; i++ {
		reps = append(reps, startReplica(t, srv.url(), upstream, "--lock-ttl", "2s"))
	}
	client := &http.Client{Timeout: 30 * time.Second}
	convs := make([]*clustertest.Conversation, 6)
	for i := range convs {
		convs[i] = clustertest.NewConversation(client, i)
	}
	live := []string{reps[0].url, reps[1].url, reps[2].url}
	summaryOf := func(body []byte) string {
		var doc struct {
			Messages []json.RawMessage `json:"messages"`
		}
		json.Unmarshal(body, &doc)
		for _, m := range doc.Messages {
			if bytes.Contains(m, []byte("condensed into the summary below")) {
				return string(m)
			}
		}
		return ""
	}
	done := make([]bool, len(convs))
	var before string
	for turn := 0; turn < 30; turn++ {
		if turn == 12 {
			// Conversation 0 has compacted by now; remember its summary.
			reqs := fake.Requests()
			for i := len(reqs) - 1; i >= 0 && before == ""; i-- {
				if reqs[i].Header.Get("X-Session-Id") == "conv-0" {
					before = summaryOf(reqs[i].Body)
				}
			}
			if before == "" {
				t.Fatal("conversation 0 has no compaction before the kill: the test proves nothing")
			}
			// Its next request, streamed, goes to replica 2, which dies
			// while relaying it.
			c := convs[0]
			req, _ := http.NewRequest("POST", reps[2].url+"/v1/chat/completions", bytes.NewReader(c.Body(true)))
			req.Header = c.Header()
			req.Header.Set("X-Test-Stall", "1")
			errc := make(chan error, 1)
			go func() {
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errc <- err
			}()
			select {
			case <-arrived:
			case <-time.After(20 * time.Second):
				t.Fatal("the stalled stream never reached the upstream")
			}
			reps[2].cmd.Process.Kill()
			if err := <-errc; err == nil {
				t.Error("the stream relayed by the killed replica ended cleanly")
			}
			live = live[:2]
		}
		for i, c := range convs {
			if done[i] {
				continue
			}
			d, err := c.Step(live[(i+turn)%len(live)])
			if err != nil {
				t.Fatalf("conversation %d, turn %d: %v", i, turn, err)
			}
			done[i] = d
			if i == 0 && turn == 12 {
				reqs := fake.Requests()
				after := summaryOf(reqs[len(reqs)-1].Body)
				if after != before {
					t.Error("after the kill, conversation 0 went upstream without the compaction stored before it")
				}
			}
		}
	}
	for i, d := range done {
		if !d {
			t.Errorf("conversation %d did not finish", i)
		}
	}
	for _, r := range fake.Requests() {
		for _, p := range fake.Check(r) {
			t.Errorf("request %d: %s", r.Seq, p)
		}
	}
	checkAfterFault(t, srv, nil)
}
