package fakeupstream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store/storetest"
)

// anthropicCached is a Messages body: a system block marked for caching,
// n user/assistant text messages of a few hundred bytes, and markers on
// the last message's block when last is a cache_control object ("" for
// none); top is the top-level cache_control ("" for none).
func anthropicCached(n int, last, top, thinking string) string {
	var msgs []string
	for i := 0; i < n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		cc := ""
		if i == n-1 && last != "" {
			cc = `,"cache_control":` + last
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":"message %d %s"%s}]}`, role, i, strings.Repeat("words ", 60), cc))
	}
	extra := ""
	if top != "" {
		extra += `"cache_control":` + top + `,`
	}
	if thinking != "" {
		extra += `"thinking":` + thinking + `,`
	}
	return `{"model":"claude-x","max_tokens":100,` + extra + `"system":[{"type":"text","text":"` + strings.Repeat("system ", 200) + `","cache_control":{"type":"ephemeral"}}],"messages":[` + strings.Join(msgs, ",") + `]}`
}

// anthropicUsageOf reads the usage of a non-streamed Messages answer.
type anthropicUsageFields struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

func TestAnthropicCache(t *testing.T) {
	const eph = `{"type":"ephemeral"}`
	const eph1h = `{"type":"ephemeral","ttl":"1h"}`
	clk := storetest.NewClock()
	f, url := Start(t, Config{Now: clk.Now, CacheMinTokens: 1})
	var prev []Request // earlier requests of the run, by step name
	byName := map[string]Request{}
	steps := []struct {
		name    string
		body    string
		key     string
		advance time.Duration
		check   func(r Request) string
	}{
		{"first: writes to its breakpoints", anthropicCached(3, eph, "", ""), "k1", 0, func(r Request) string {
			if r.CacheRead != 0 || r.CacheWrite == 0 {
				return "want a write and no read"
			}
			return ""
		}},
		{"same again: reads it all", anthropicCached(3, eph, "", ""), "k1", time.Minute, func(r Request) string {
			if w := byName["first: writes to its breakpoints"].CacheWrite; r.CacheRead != w || r.CacheWrite != 0 {
				return fmt.Sprintf("want read %d, no write", w)
			}
			return ""
		}},
		{"extended: reads the old prefix, writes the new part", anthropicCached(6, eph, "", ""), "k1", time.Minute, func(r Request) string {
			if w := byName["first: writes to its breakpoints"].CacheWrite; r.CacheRead != w || r.CacheWrite == 0 {
				return fmt.Sprintf("want read %d and a write", w)
			}
			return ""
		}},
		{"another credential reads nothing", anthropicCached(6, eph, "", ""), "k2", 0, func(r Request) string {
			if r.CacheRead != 0 {
				return "read across credentials"
			}
			return ""
		}},
		{"thinking changed: system still read, messages written", anthropicCached(6, eph, "", `{"type":"adaptive"}`), "k1", 0, func(r Request) string {
			ext := byName["extended: reads the old prefix, writes the new part"]
			if r.CacheRead == 0 || r.CacheRead >= ext.CacheRead+ext.CacheWrite || r.CacheWrite == 0 {
				return "want the system prefix read and the messages written"
			}
			return ""
		}},
		{"idle past the 5-minute TTL: all written again", anthropicCached(6, eph, "", ""), "k1", 6 * time.Minute, func(r Request) string {
			ext := byName["extended: reads the old prefix, writes the new part"]
			if r.CacheRead != 0 || r.CacheWrite != ext.CacheRead+ext.CacheWrite {
				return fmt.Sprintf("want read 0, write %d", ext.CacheRead+ext.CacheWrite)
			}
			return ""
		}},
		{"a 1-hour breakpoint", anthropicCached(8, eph1h, "", ""), "k1", 0, func(r Request) string {
			if r.CacheWrite1h == 0 || r.CacheWrite1h != r.CacheWrite {
				return "want the new part written with the 1h TTL"
			}
			return ""
		}},
		{"the 1-hour entry outlives 5 minutes", anthropicCached(8, eph1h, "", ""), "k1", 30 * time.Minute, func(r Request) string {
			one := byName["a 1-hour breakpoint"]
			if r.CacheRead != one.CacheRead+one.CacheWrite {
				return fmt.Sprintf("want read %d", one.CacheRead+one.CacheWrite)
			}
			return ""
		}},
		{"more than 20 blocks past the last entry: a miss", anthropicCached(8+25, eph, "", ""), "k1", 0, func(r Request) string {
			if r.CacheRead != 0 {
				return "read beyond the 20-block lookback"
			}
			return ""
		}},
		{"top-level automatic cache_control writes at the end", anthropicCached(40, "", eph, ""), "k3", 0, func(r Request) string {
			if r.CacheWrite == 0 {
				return "no write"
			}
			return ""
		}},
		{"and is read next time", anthropicCached(40, "", eph, ""), "k3", 0, func(r Request) string {
			if r.CacheRead != byName["top-level automatic cache_control writes at the end"].CacheWrite {
				return "not read"
			}
			return ""
		}},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		status, out := postWith(t, url, "/v1/messages", s.body, "x-api-key", s.key)
		if status != 200 {
			t.Fatalf("%s: status %d: %s", s.name, status, out)
		}
		reqs := f.Requests()
		r := reqs[len(reqs)-1]
		byName[s.name] = r
		prev = append(prev, r)
		if msg := s.check(r); msg != "" {
			t.Errorf("%s: %s (read %d write %d write1h %d of %d)", s.name, msg, r.CacheRead, r.CacheWrite, r.CacheWrite1h, r.Tokens)
		}
		var msg struct {
			Usage anthropicUsageFields `json:"usage"`
		}
		decode(t, string(out), &msg)
		u := msg.Usage
		if u.CacheReadInputTokens != r.CacheRead || u.CacheCreationInputTokens != r.CacheWrite ||
			u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens != r.Tokens ||
			u.CacheCreation.Ephemeral1h != r.CacheWrite1h || u.CacheCreation.Ephemeral5m+u.CacheCreation.Ephemeral1h != r.CacheWrite {
			t.Errorf("%s: usage %+v does not match the record (read %d write %d of %d)", s.name, u, r.CacheRead, r.CacheWrite, r.Tokens)
		}
	}
	sum := SumCache(prev)
	if sum.Requests != len(steps) || sum.Read == 0 || sum.ReadShare() <= 0 || sum.ReadShare() >= 1 || f.Cache() != sum {
		t.Errorf("SumCache = %+v, share %.2f", sum, sum.ReadShare())
	}
}

// TestAnthropicCacheMinimum: a prefix under Config.CacheMinTokens (1024 by
// default) is not cached, and NoCache bills nothing.
func TestAnthropicCacheMinimum(t *testing.T) {
	small := `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"short","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}`
	big := anthropicCached(30, `{"type":"ephemeral"}`, "", "")
	cases := []struct {
		name      string
		cfg       Config
		body      string
		wantWrite bool
	}{
		{"small prefix", Config{}, small, false},
		{"large prefix", Config{}, big, true},
		{"NoCache", Config{NoCache: true}, big, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, url := Start(t, c.cfg)
			postOK(t, url, "/v1/messages", c.body)
			postOK(t, url, "/v1/messages", c.body)
			r := f.Requests()
			if (r[0].CacheWrite > 0) != c.wantWrite || (r[1].CacheRead > 0) != c.wantWrite {
				t.Errorf("writes %d then reads %d", r[0].CacheWrite, r[1].CacheRead)
			}
		})
	}
}

// openaiTurns is a Chat or Responses body with n messages of about 600
// tokens each.
func openaiTurns(api API, n int) string {
	var items []string
	for i := 0; i < n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := fmt.Sprintf("turn %d %s", i, strings.Repeat("token ", 400))
		if api == Chat {
			items = append(items, fmt.Sprintf(`{"role":%q,"content":%q}`, role, text))
		} else {
			items = append(items, fmt.Sprintf(`{"type":"message","role":%q,"content":%q}`, role, text))
		}
	}
	if api == Chat {
		return `{"model":"gpt-x","messages":[` + strings.Join(items, ",") + `]}`
	}
	return `{"model":"gpt-x","instructions":"be brief","input":[` + strings.Join(items, ",") + `]}`
}

func TestOpenAICache(t *testing.T) {
	for _, api := range []API{Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			clk := storetest.NewClock()
			f, url := Start(t, Config{Now: clk.Now})
			path := "/v1/chat/completions"
			if api == Responses {
				path = "/v1/responses"
			}
			steps := []struct {
				name    string
				n       int
				key     string
				advance time.Duration
				cached  func(prev []Request) int
			}{
				{"first", 1, "k1", 0, func([]Request) int { return 0 }},
				{"under 1024 tokens nothing was stored", 3, "k1", 0, func([]Request) int { return 0 }},
				{"extended: the longest stored boundary", 5, "k1", time.Minute, func(p []Request) int { return p[1].CacheRead }},
				{"another credential", 5, "k2", 0, func([]Request) int { return 0 }},
				{"idle past 30 minutes", 5, "k1", 31 * time.Minute, func([]Request) int { return 0 }},
			}
			var prev []Request
			for i, s := range steps {
				clk.Advance(s.advance)
				status, out := postWith(t, url, path, openaiTurns(api, s.n), "Authorization", "Bearer "+s.key)
				if status != 200 {
					t.Fatalf("%s: status %d: %s", s.name, status, out)
				}
				r := f.Requests()[i]
				prev = append(prev, r)
				want := s.cached(prev)
				if i == 2 {
					// The prefix of three messages was stored by step 2 and is
					// what step 3 reads.
					want = cumTokens(t, api, openaiTurns(api, 3))
				}
				if r.CacheRead != want {
					t.Errorf("%s: cached %d, want %d", s.name, r.CacheRead, want)
				}
				var body struct {
					Usage struct {
						Prompt  int `json:"prompt_tokens"`
						Input   int `json:"input_tokens"`
						Details struct {
							Cached int `json:"cached_tokens"`
						} `json:"prompt_tokens_details"`
						InputDetails struct {
							Cached int `json:"cached_tokens"`
						} `json:"input_tokens_details"`
					} `json:"usage"`
				}
				decode(t, string(out), &body)
				total, cached := body.Usage.Prompt, body.Usage.Details.Cached
				if api == Responses {
					total, cached = body.Usage.Input, body.Usage.InputDetails.Cached
				}
				if total != r.Tokens || cached != r.CacheRead {
					t.Errorf("%s: usage %d cached %d, recorded %d cached %d", s.name, total, cached, r.Tokens, r.CacheRead)
				}
			}
		})
	}
}

// cumTokens is the tokens of a whole OpenAI prompt's boundaries, as the
// cache counts them.
func cumTokens(t *testing.T, api API, raw string) int {
	t.Helper()
	b, err := parseBody(api, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	u := openaiUnits(api, b)
	if u[len(u)-1].cum < DefaultCacheMinTokens {
		t.Fatalf("the test's prefix (%d tokens) is under the minimum", u[len(u)-1].cum)
	}
	return u[len(u)-1].cum
}

// TestOutputRecorded: the output tokens a request records are the ones
// its answer's usage reports, for a tool call and for a text answer, on
// each API.
func TestOutputRecorded(t *testing.T) {
	bash := `{"name":"Bash","description":"Run a shell command.","input_schema":{"type":"object"}}`
	fn := `{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}`
	for _, tc := range []struct {
		name, path, body string
	}{
		{"anthropic tool call", "/v1/messages", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"go"}],"tools":[` + bash + `]}`},
		{"anthropic text", "/v1/messages", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"a title"}]}`},
		{"chat tool call", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[` + fn + `]}`},
		{"responses text", "/v1/responses", `{"model":"m","input":[{"type":"message","role":"user","content":"a title"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, url := Start(t, Config{})
			out := postOK(t, url, tc.path, tc.body)
			var u struct {
				Usage struct {
					Output     *int `json:"output_tokens"`
					Completion *int `json:"completion_tokens"`
				} `json:"usage"`
			}
			decode(t, string(out), &u)
			want := u.Usage.Output
			if want == nil {
				want = u.Usage.Completion
			}
			if want == nil {
				t.Fatalf("no output count in the usage: %s", out)
			}
			if got := f.Requests()[0].Output; got != *want || got == 0 {
				t.Errorf("recorded Output %d, the usage says %d", got, *want)
			}
		})
	}
}
