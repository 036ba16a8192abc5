package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store"
)

// TestOneTriggerAcrossDoors: `compact inspect`, the library's Guard and
// the proxy, each at its defaults, trigger the same model at the same
// size, compact.DefaultPolicy's: GPT-5 under its 272,000-token input
// limit (not under its 400,000-token window), and small windows with a
// fifth of the window kept free rather than 16,384 tokens.
//
// It runs without the e2e tag: it needs only the go tool (or
// COMPACT_E2E_BIN) to build the command line, and loopback.
func TestOneTriggerAcrossDoors(t *testing.T) {
	bin := compactBinary(t)
	for _, tc := range []struct {
		model string
		want  int
	}{
		{"gpt-5", 272000 - 16384},             // the input limit, not the window
		{"claude-sonnet-4-5", 200000 - 16384}, // a large window
		{"qwen-max", 32768 - 32768/5},         // window/5 < 16,384
		{"llama-3-8b", 8192 - 8192/5},         // pi's reserve would leave nothing
	} {
		t.Run(tc.model, func(t *testing.T) {
			doors := map[string]int{
				"inspect": inspectTrigger(t, bin, tc.model),
				"guard":   guardTrigger(t, tc.model, tc.want),
				"proxy":   proxyTrigger(t, tc.model),
			}
			for door, got := range doors {
				if got != tc.want {
					t.Errorf("%s triggers %s at %d, want %d (all doors: %v)", door, tc.model, got, tc.want, doors)
				}
			}
			if tc.model == "gpt-5" && tc.want >= 272000 {
				t.Errorf("gpt-5 triggers at %d, at or above its input limit", tc.want)
			}
		})
	}
}

// compactBinary returns COMPACT_E2E_BIN, or the command line built into
// a temporary folder.
func compactBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("COMPACT_E2E_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "compact")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/compactkit/compact/cmd/compact").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/compact: %v\n%s", err, out)
	}
	return bin
}

// inspectTrigger is the threshold `compact inspect --json` reports for a
// small pi session of model.
func inspectTrigger(t *testing.T, bin, model string) int {
	t.Helper()
	file := filepath.Join(t.TempDir(), "session.jsonl")
	session := `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1735689601000}}
` + fmt.Sprintf(`{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"test","model":%q,"usage":{"input":900,"output":100,"cacheRead":0,"cacheWrite":0,"totalTokens":1000},"stopReason":"stop","timestamp":1735689602000}}`, model) + "\n"
	if err := os.WriteFile(file, []byte(session), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "inspect", "--json", file)
	// No user configuration: the defaults are what is compared.
	cmd.Env = append(os.Environ(), "COMPACT_CONFIG=", "XDG_CONFIG_HOME="+t.TempDir(), "HOME="+t.TempDir(), compact.EnvDisableAuto+"=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("compact inspect: %v\n%s", err, out)
	}
	var rep struct {
		Trigger struct {
			Threshold   int  `json:"threshold"`
			WindowKnown bool `json:"windowKnown"`
		} `json:"trigger"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("compact inspect --json: %v\n%s", err, out)
	}
	if !rep.Trigger.WindowKnown {
		t.Fatalf("compact inspect: the window of %s is unknown", model)
	}
	return rep.Trigger.Threshold
}

// guardTrigger finds the Guard's trigger by behaviour: a context the
// provider reported at want tokens is left alone, one at want+1 is
// compacted. It returns want when both hold, else the size that
// misbehaved.
func guardTrigger(t *testing.T, model string, want int) int {
	t.Helper()
	reg, err := compact.LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	info, ok := reg.Lookup(model)
	if !ok {
		t.Fatalf("%s is not in the registry", model)
	}
	compacts := func(tokens int) bool {
		ctx := context.Background()
		log := &compact.SliceLog{}
		reply := compact.TextMessage(compact.RoleAssistant, "hi")
		reply.Model, reply.StopReason, reply.Usage = model, compact.StopEnd, &compact.Usage{Total: tokens}
		for _, m := range []*compact.Message{compact.TextMessage(compact.RoleUser, "hello"), reply} {
			if _, err := log.AppendMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		asked := false
		g := &compact.Guard{
			Engine: &compact.Engine{},
			Log:    log,
			Model:  info,
			BeforeCompaction: func(context.Context, compact.Reason, compact.ContextUsage) (compact.HookDecision, error) {
				asked = true
				return compact.HookDecision{Skip: true}, nil
			},
		}
		_, err := g.Call(ctx, func(context.Context, []*compact.Message) (*compact.Message, error) {
			return compact.TextMessage(compact.RoleAssistant, "ok"), nil
		})
		if err != nil {
			t.Fatalf("guard at %d tokens: %v", tokens, err)
		}
		return asked
	}
	switch {
	case compacts(want):
		return want - 1 // triggers at or below want
	case !compacts(want + 1):
		return want + 1 // does not trigger just above want
	}
	return want
}

// recordingStore is the proxy's memory store, keeping the last response's
// accounting the proxy wrote.
type recordingStore struct {
	store.Store
	mu   sync.Mutex
	last *store.LastCall
}

func (s *recordingStore) Put(ctx context.Context, key string, rec *store.Record) error {
	s.mu.Lock()
	if rec.Last != nil {
		l := *rec.Last
		s.last = &l
	}
	s.mu.Unlock()
	return s.Store.Put(ctx, key, rec)
}

// proxyTrigger is the trigger the proxy records for model (LastCall's
// Threshold, from the policy it decides with) after one Chat Completions
// request through it to a loopback upstream.
func proxyTrigger(t *testing.T, model string) int {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22}}`)
	}))
	defer up.Close()
	st := &recordingStore{Store: store.NewMemory(store.MemoryOptions{})}
	srv, err := proxy.New(proxy.Config{OpenAIUpstream: up.URL, Store: st, Summarizer: proxy.SummarizerExtractive})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	front := httptest.NewServer(srv)
	defer front.Close()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}]}`, model)
	req, err := http.NewRequest(http.MethodPost, front.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-trigger-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("proxy answered %s", resp.Status)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st.mu.Lock()
		last := st.last
		st.mu.Unlock()
		if last != nil {
			return last.Threshold
		}
	}
	t.Fatalf("the proxy recorded nothing for %s", model)
	return 0
}
