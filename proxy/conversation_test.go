package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// newTestProxy starts a proxy in front of up with cfg (upstreams filled in).
func newTestProxy(t *testing.T, up *fakeUpstream, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	return proxyIn(t, up.srv.URL, cfg)
}

// proxyIn starts a proxy with cfg in front of the upstream at upURL (both
// APIs' upstreams set to it; logs discarded unless cfg has a Logger),
// closed when the test ends.
func proxyIn(t testing.TB, upURL string, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	cfg.AnthropicUpstream = upURL
	cfg.OpenAIUpstream = upURL
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return srv, ts
}

// client plays an agent of one API: it keeps the whole history and resends
// it on every request, as Claude Code, Codex and opencode do.
type client struct {
	t      *testing.T
	api    API
	base   string
	header http.Header
	// query, when set, is appended to every request's path ("?key=…").
	query  string
	items  []string
	stream bool
	// outBytes is the size of each tool result; 0 means about 6 KB.
	outBytes int
	// encoding, when set, compresses each request body ("gzip", "zstd").
	encoding string
	// marker opens each tool result with "STEP-n", as the output of the
	// command fakeupstream.Fake's script asks for (it reads where it is
	// from the last one).
	marker bool
	// members, when set, is added to every request body's top level
	// (`"thinking":{...},` say: a comma-terminated member list).
	members string
}

func newClient(t *testing.T, api API, base string) *client {
	c := &client{t: t, api: api, base: base, header: http.Header{}}
	switch api {
	case Anthropic:
		c.items = []string{`{"role":"user","content":"Count the lines of every file, one step at a time."}`}
		c.header.Set("X-Api-Key", "sk-ant-canary-0123456789")
		c.header.Set("Anthropic-Version", "2023-06-01")
	case Chat:
		c.items = []string{`{"role":"system","content":"You are a test agent."}`, `{"role":"user","content":"Count the lines of every file, one step at a time."}`}
		c.header.Set("Authorization", "Bearer sk-canary-0123456789")
	case Responses:
		c.items = []string{`{"type":"message","role":"developer","content":[{"type":"input_text","text":"Sandbox: full access."}]}`, `{"type":"message","role":"user","content":[{"type":"input_text","text":"Count the lines of every file, one step at a time."}]}`}
		c.header.Set("Authorization", "Bearer sk-canary-0123456789")
	}
	return c
}

func (c *client) path() string {
	switch c.api {
	case Anthropic:
		return "/v1/messages"
	case Chat:
		return "/v1/chat/completions"
	}
	return "/v1/responses"
}

func (c *client) body() []byte {
	list := strings.Join(c.items, ",")
	switch c.api {
	case Anthropic:
		return []byte(`{"model":"claude-test","max_tokens":1000,` + c.members + `"system":"You are a test agent.","messages":[` + list + `],"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"stream":` + fmt.Sprint(c.stream) + `}`)
	case Chat:
		return []byte(`{"model":"gpt-test",` + c.members + `"messages":[` + list + `],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}],"stream":` + fmt.Sprint(c.stream) + `}`)
	}
	return []byte(`{"model":"gpt-test",` + c.members + `"instructions":"You are Codex.","input":[` + list + `],"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}],"store":false,"stream":false,"prompt_cache_key":"conv-1"}`)
}

// step sends the history, appends the answer and a tool result of ~6 KB.
func (c *client) step(n int) *http.Response {
	c.t.Helper()
	body := c.body()
	if c.encoding != "" {
		var err error
		if body, err = encodeBody(c.encoding, body); err != nil {
			c.t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", c.base+c.path()+c.query, bytes.NewReader(body))
	req.Header = c.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	if c.encoding != "" {
		req.Header.Set("Content-Encoding", c.encoding)
	}
	resp, b := roundTrip(c.t, req)
	if resp.StatusCode != 200 {
		c.t.Fatalf("step %d: status %d: %s", n, resp.StatusCode, b)
	}
	out := toolOutput(n)
	if c.outBytes > 0 {
		out = out[:c.outBytes]
	}
	if c.marker {
		out = fmt.Sprintf("STEP-%d\n", n) + out
	}
	q, _ := json.Marshal(out)
	switch c.api {
	case Anthropic:
		var m struct {
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("step %d: %v: %s", n, err, b)
		}
		var id string
		for _, blk := range m.Content {
			var v struct{ Type, ID string }
			_ = json.Unmarshal(blk, &v)
			if v.Type == "tool_use" {
				id = v.ID
			}
		}
		content, _ := json.Marshal(m.Content)
		c.items = append(c.items, `{"role":"assistant","content":`+string(content)+`}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+string(q)+`}]}`)
	case Chat:
		var m struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.Choices) == 0 {
			c.t.Fatalf("step %d: %v: %s", n, err, b)
		}
		var msg struct {
			ToolCalls []struct{ ID string } `json:"tool_calls"`
		}
		_ = json.Unmarshal(m.Choices[0].Message, &msg)
		c.items = append(c.items, string(m.Choices[0].Message),
			`{"role":"tool","tool_call_id":"`+msg.ToolCalls[0].ID+`","content":`+string(q)+`}`)
	case Responses:
		var m struct {
			Output []json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("step %d: %v: %s", n, err, b)
		}
		var id string
		for _, it := range m.Output {
			var v struct {
				Type   string
				CallID string `json:"call_id"`
			}
			_ = json.Unmarshal(it, &v)
			if v.Type == "function_call" {
				id = v.CallID
			}
			c.items = append(c.items, string(it))
		}
		c.items = append(c.items, `{"type":"function_call_output","call_id":"`+id+`","output":`+string(q)+`}`)
	}
	return resp
}

// pairingProblems checks tool pairing in an upstream body independently of
// the proxy's own validator, with the rules of the scripted provider
// (fakeupstream.Pairing): every tool result answers a call of the message
// before it, and every call is answered.
func pairingProblems(t *testing.T, api API, body []byte) []string {
	t.Helper()
	return fakeupstream.Pairing(fakeupstream.API(api), listOf(t, api, body))
}

func TestCompactionInFlight(t *testing.T) {
	for _, api := range []API{Anthropic, Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			up := newFakeUpstream(t)
			up.window = 12000
			srv, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
			c := newClient(t, api, ts.URL)
			c.header.Set("X-Session-Id", "conversation-"+string(api))
			const steps = 24
			for i := 1; i <= steps; i++ {
				c.step(i)
			}
			reqs := up.modelRequests()
			if len(reqs) != steps {
				t.Fatalf("upstream saw %d model requests, want %d", len(reqs), steps)
			}
			summaries := map[string]int{}
			var prev []json.RawMessage
			var prevSummary string
			for k, r := range reqs {
				if got := tokensOf(r.Body); got > 12000 {
					t.Errorf("request %d: %d tokens upstream, over the 12,000 window", k, got)
				}
				for _, p := range pairingProblems(t, api, r.Body) {
					t.Errorf("request %d: %s", k, p)
				}
				list := listOf(t, api, r.Body)
				summary := ""
				for _, it := range list {
					if isSummaryItem(it) {
						summary = string(it)
					}
				}
				if summary != "" {
					summaries[summary]++
				}
				// Between two compactions, every request extends the one
				// before it byte for byte: the provider's cache keeps hitting.
				if summary != "" && summary == prevSummary {
					for i := range prev {
						if !bytes.Equal(prev[i], list[i]) {
							t.Errorf("request %d: item %d differs from the request before under the same compaction", k, i)
							break
						}
					}
				}
				prev, prevSummary = list, summary
			}
			if len(summaries) < 2 {
				t.Fatalf("%d distinct summaries over %d steps, want at least 2 compactions", len(summaries), steps)
			}
			// The task is only in the first user message, long summarized
			// away: every summary must still carry it.
			for sum := range summaries {
				if !strings.Contains(sum, "Count the lines of every file") {
					t.Errorf("a summary lost the user's task: %.300s", sum)
				}
			}
			// The client's own bodies grow without bound; the upstream's do not.
			last := reqs[len(reqs)-1]
			if len(c.body()) < 2*len(last.Body) {
				t.Errorf("client body %d bytes, upstream %d: the proxy did not shrink it", len(c.body()), len(last.Body))
			}
			_ = srv
		})
	}
}

// TestCompressedConversation: Codex sends zstd bodies; a compacted request
// goes upstream compressed the same way, and decodes to the spliced body.
func TestCompressedConversation(t *testing.T) {
	for _, enc := range []string{"zstd", "gzip"} {
		t.Run(enc, func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
			c := newClient(t, Responses, ts.URL)
			c.encoding = enc
			for i := 1; i <= 10; i++ {
				c.step(i)
			}
			compacted := 0
			for _, r := range up.modelRequests() {
				if r.Header.Get("Content-Encoding") != enc {
					t.Fatalf("upstream Content-Encoding %q, want %q", r.Header.Get("Content-Encoding"), enc)
				}
				if isSummaryItem(r.Body) {
					compacted++
				}
				for _, p := range pairingProblems(t, Responses, r.Body) {
					t.Error(p)
				}
			}
			if compacted == 0 {
				t.Error("no compressed request was compacted")
			}
		})
	}
}
