package summarize

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// history returns turns turns, each a user request naming the turn, two
// tool calls with their results and a closing statement: about 7 KB of
// transcript per turn.
func history(turns int) []*compact.Message {
	var msgs []*compact.Message
	for i := 0; i < turns; i++ {
		id := fmt.Sprintf("t%03d", i)
		msgs = append(msgs,
			user(fmt.Sprintf("turn-%03d: please look at file-%03d.go", i, i)),
			calls(id, "read", fmt.Sprintf(`{"path":"file-%03d.go"}`, i), "bash", `{"command":"go test ./..."}`),
			result(id+"-0", "read", fmt.Sprintf("contents of file-%03d.go ", i)+strings.Repeat("r", 1900)),
			result(id+"-1", "bash", strings.Repeat("o", 5000)),
			assistant(fmt.Sprintf("Finished turn %03d.", i)),
		)
	}
	return msgs
}

var turnMark = regexp.MustCompile(`turn-(\d{3}):`)

func TestChunking(t *testing.T) {
	f := &fake{}
	var progress [][2]int
	s, _ := newTest(t, f, model16k, func(o *Options) {
		o.Progress = func(done, total int) { progress = append(progress, [2]int{done, total}) }
	})
	maxTokens, _ := s.MaxTokens(compact.SummaryHistory, 0)
	budget := s.InputBudget(maxTokens)
	// Find a history about five times the input budget.
	turns := 1
	for s.EstimateTokens("", s.Transcript(history(turns))) < 5*budget {
		turns++
	}
	sum, err := s.Summarize(context.Background(), &compact.SummaryRequest{Messages: history(turns), PreviousSummary: "the start"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	n := len(reqs)
	if n < 5 || n > 10 {
		t.Fatalf("%d requests for a history of 5 budgets, want 5 to 10", n)
	}
	var seen []string
	for i, r := range reqs {
		if got := conservative(r) + r.MaxTokens; got > model16k.ContextWindow {
			t.Errorf("request %d: %d tokens with output, window %d", i+1, got, model16k.ContextWindow)
		}
		if got := s.EstimateTokens(r.System, r.Prompt); got > budget {
			t.Errorf("request %d: %d tokens, budget %d", i+1, got, budget)
		}
		// Each request merges into the summary so far.
		wantPrev := "the start"
		if i > 0 {
			wantPrev = handover(fmt.Sprintf("summary %d", i), reqs[i-1].Prompt)
		}
		if got := between(r.Prompt, "<running-summary>\n", "\n</running-summary>"); got != wantPrev {
			t.Errorf("request %d: running summary %q, want %q", i+1, got, wantPrev)
		}
		// Calls and results travel together.
		tr := between(r.Prompt, "<transcript>\n", "\n</transcript>")
		if c, res := strings.Count(tr, "[tool call: "), strings.Count(tr, "[tool result: "); c != res {
			t.Errorf("request %d: %d calls, %d results", i+1, c, res)
		}
		for _, m := range regexp.MustCompile(`"path":"(file-\d{3}\.go)"\}\n\[tool result: read\]\ncontents of (file-\d{3}\.go)`).FindAllStringSubmatch(tr, -1) {
			if m[1] != m[2] {
				t.Errorf("request %d: call on %s followed by the result of %s", i+1, m[1], m[2])
			}
		}
		if strings.Count(tr, "[tool call: read]") != strings.Count(tr, "contents of file-") {
			t.Errorf("request %d: a read call without its result", i+1)
		}
		// Whole turns: a chunk starts at a user message.
		if !strings.HasPrefix(tr, "[user]\nturn-") {
			t.Errorf("request %d starts with %.40q", i+1, tr)
		}
		for _, m := range turnMark.FindAllStringSubmatch(tr, -1) {
			seen = append(seen, m[1])
		}
	}
	// Order kept, every turn once.
	if len(seen) != turns {
		t.Fatalf("%d turns sent, want %d", len(seen), turns)
	}
	for i, v := range seen {
		if v != fmt.Sprintf("%03d", i) {
			t.Fatalf("turn %d sent as %s: order broken", i, v)
		}
	}
	// Progress 1..n of n.
	if len(progress) != n {
		t.Fatalf("progress called %d times, want %d", len(progress), n)
	}
	for i, p := range progress {
		if p != [2]int{i + 1, n} {
			t.Errorf("progress %d = %v, want %v", i, p, [2]int{i + 1, n})
		}
	}
	if sum.Text != handover(fmt.Sprintf("summary %d", n), reqs[n-1].Prompt) {
		t.Errorf("final summary %q", sum.Text)
	}
	if sum.Usage.Input != 10*n || sum.Usage.Output != 2*n {
		t.Errorf("usage %+v, want the sum of %d calls", sum.Usage, n)
	}
}

// TestChunkingInsideTurns covers a single turn larger than a chunk, a
// single message larger than a chunk, and a running summary longer than
// planned.
func TestChunkingInsideTurns(t *testing.T) {
	bigTurn := []*compact.Message{user("one long turn")}
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("b%02d", i)
		bigTurn = append(bigTurn, calls(id, "bash", fmt.Sprintf(`{"command":"step %02d"}`, i)),
			result(id+"-0", "bash", fmt.Sprintf("out %02d ", i)+strings.Repeat("z", 1990)))
	}
	huge := strings.Repeat("the user pasted a very long log line\n", 3000) // ~111 KB
	tests := []struct {
		name    string
		msgs    []*compact.Message
		respond func(n int, req *Request) (*Response, error)
		check   func(t *testing.T, reqs []Request)
	}{
		{"turn split between units", bigTurn, nil, func(t *testing.T, reqs []Request) {
			if len(reqs) < 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			next := 0
			for i, r := range reqs {
				tr := between(r.Prompt, "<transcript>\n", "\n</transcript>")
				for _, m := range regexp.MustCompile(`step (\d\d)"\}\n\[tool result: bash\]\nout (\d\d) `).FindAllStringSubmatch(tr, -1) {
					if m[1] != m[2] || m[1] != fmt.Sprintf("%02d", next) {
						t.Fatalf("request %d: pair %v, want step %02d", i+1, m[1:], next)
					}
					next++
				}
				if strings.Count(tr, "[tool call: ") != strings.Count(tr, "[tool result: ") {
					t.Errorf("request %d splits a call from its result", i+1)
				}
			}
			if next != 40 {
				t.Errorf("%d pairs sent, want 40", next)
			}
		}},
		{"oversized user message cut", []*compact.Message{user("first"), user(huge), user("last")}, nil, func(t *testing.T, reqs []Request) {
			all := ""
			for _, r := range reqs {
				all += r.Prompt
			}
			if !strings.Contains(all, "characters cut ...]") {
				t.Error("no cut marker")
			}
			if !strings.Contains(all, "[user]\nfirst") || !strings.Contains(all, "[user]\nlast") {
				t.Error("small messages lost")
			}
		}},
		{"running summary longer than planned", history(30), func(n int, req *Request) (*Response, error) {
			// A summary of max tokens at 6 characters a token: more room
			// than the plan kept, so the rest is planned again.
			text := handover("long", req.Prompt)
			return &Response{Text: text + strings.Repeat(" s", max(0, 6*req.MaxTokens-len(text))/2)}, nil
		}, func(t *testing.T, reqs []Request) {
			if len(reqs) < 3 {
				t.Errorf("%d requests", len(reqs))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{respond: tt.respond}
			var last [2]int
			s, _ := newTest(t, f, model16k, func(o *Options) { o.Progress = func(d, n int) { last = [2]int{d, n} } })
			maxTokens, _ := s.MaxTokens(compact.SummaryHistory, 0)
			budget := s.InputBudget(maxTokens)
			if _, err := s.Summarize(context.Background(), &compact.SummaryRequest{Messages: tt.msgs}); err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			for i, r := range reqs {
				if got := s.EstimateTokens(r.System, r.Prompt); got > budget {
					t.Errorf("request %d: %d tokens, budget %d", i+1, got, budget)
				}
				if got := conservative(r) + r.MaxTokens; got > model16k.ContextWindow {
					t.Errorf("request %d: %d tokens with output", i+1, got)
				}
			}
			if last != [2]int{len(reqs), len(reqs)} {
				t.Errorf("last progress %v after %d requests", last, len(reqs))
			}
			tt.check(t, reqs)
		})
	}
}

func TestPlanChunks(t *testing.T) {
	mk := func(turnStart bool, size int) unit {
		u := unit{turnStart: turnStart, blocks: []block{{"[x]", strings.Repeat("a", size-4)}}}
		u.measure()
		return u
	}
	tests := []struct {
		name   string
		units  []unit
		budget int
		want   [][2]int
	}{
		{"all fit", []unit{mk(true, 10), mk(false, 10), mk(true, 10)}, 100, [][2]int{{0, 3}}},
		{"turns kept whole", []unit{mk(true, 40), mk(false, 40), mk(true, 40), mk(false, 10)}, 100, [][2]int{{0, 2}, {2, 4}}},
		{"big turn split, starting a chunk", []unit{mk(true, 30), mk(true, 60), mk(false, 60), mk(false, 60)}, 100,
			[][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
		{"oversized unit shortened", []unit{mk(true, 500), mk(true, 10)}, 100, [][2]int{{0, 1}, {1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planChunks(tt.units, tt.budget)
			var spans [][2]int
			for _, c := range got {
				spans = append(spans, [2]int{c.start, c.end})
				if len(c.text) > tt.budget {
					t.Errorf("chunk %v: %d bytes > %d", [2]int{c.start, c.end}, len(c.text), tt.budget)
				}
			}
			if fmt.Sprint(spans) != fmt.Sprint(tt.want) {
				t.Errorf("spans %v, want %v", spans, tt.want)
			}
		})
	}
}

func TestOverflowResplit(t *testing.T) {
	overflow := &compact.ProviderError{Provider: "fake", StatusCode: 400, Body: `{"error":"prompt is too long: 40000 tokens > 32768 maximum"}`}
	tests := []struct {
		name      string
		info      compact.ModelInfo
		turns     int
		limit     int // prompts longer than this many bytes overflow; 0: always
		wantErr   bool
		minCalls  int
		wantCalls int // exact number of requests when not 0
	}{
		// The model's tokenizer is denser than assumed: only prompts under
		// 40 KB fit although the budget allows about 85 KB.
		{"resplit then success", model32k, 10, 40000, false, 3, 0},
		{"always overflowing: bounded", model200k, 100, 0, true, DefaultMaxSplits + 1, DefaultMaxSplits + 1},
		// 28509 → 14254 → 7127: a third halving would leave no room.
		{"always overflowing: small window stops early", model32k, 10, 0, true, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{respond: func(n int, req *Request) (*Response, error) {
				if tt.limit == 0 || len(req.System)+len(req.Prompt) > tt.limit {
					return nil, overflow
				}
				return &Response{Text: handover(fmt.Sprintf("summary %d", n), req.Prompt)}, nil
			}}
			s, clk := newTest(t, f, tt.info, nil)
			_, err := s.Summarize(context.Background(), &compact.SummaryRequest{Messages: history(tt.turns)})
			reqs := f.requests()
			if tt.wantErr {
				if err == nil || !compact.IsContextOverflow(err) {
					t.Fatalf("err = %v, want the overflow", err)
				}
				if len(reqs) != tt.wantCalls {
					t.Errorf("%d requests, want %d", len(reqs), tt.wantCalls)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(reqs) < tt.minCalls {
				t.Errorf("%d requests, want at least %d", len(reqs), tt.minCalls)
			}
			if len(clk.recorded()) != 0 {
				t.Errorf("overflow was retried with backoff: %v", clk.recorded())
			}
			// The sizes shrink after each overflow.
			for i := 1; i < len(reqs) && tt.wantErr; i++ {
				if len(reqs[i].Prompt) >= len(reqs[i-1].Prompt) {
					t.Errorf("request %d not smaller than %d", i+1, i)
				}
			}
		})
	}
}

func TestTruncatedAndEmpty(t *testing.T) {
	tests := []struct {
		name string
		resp Response
		is   error
	}{
		{"truncated", Response{Text: "## Goal\n- half", Truncated: true}, ErrTruncated},
		{"empty", Response{Text: "  \n"}, ErrEmptySummary},
		{"only file lists", Response{Text: "<read-files>\na.go\n</read-files>"}, ErrEmptySummary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{respond: func(int, *Request) (*Response, error) { r := tt.resp; return &r, nil }}
			s, _ := newTest(t, f, model200k, nil)
			sum, err := s.Summarize(context.Background(), &compact.SummaryRequest{Messages: []*compact.Message{user("hi")}})
			if sum != nil || !errors.Is(err, tt.is) {
				t.Fatalf("summary %v, err %v, want %v", sum, err, tt.is)
			}
			var te *TruncatedError
			if errors.As(err, &te) && (te.MaxTokens != 13107 || te.Model != "big-200k" || te.Chunk != 1) {
				t.Errorf("truncated error %+v", te)
			}
			if len(f.requests()) != 1 {
				t.Errorf("%d requests: a bad summary is not retried", len(f.requests()))
			}
		})
	}
}

func TestNoMessages(t *testing.T) {
	s, _ := newTest(t, &fake{}, model200k, nil)
	for _, req := range []*compact.SummaryRequest{nil, {}, {Messages: []*compact.Message{user("  ")}}} {
		if _, err := s.Summarize(context.Background(), req); !errors.Is(err, ErrNoMessages) {
			t.Errorf("err = %v", err)
		}
	}
}

// TestChunkedPrompts checks the prompt of each chunk: the first starts
// fresh (or merges the previous summary), the later ones merge into the
// running summary, for history and turn prefixes alike.
func TestChunkedPrompts(t *testing.T) {
	tests := []struct {
		name              string
		kind              compact.SummaryKind
		prev              string
		firstMark, latter string
	}{
		{"history", compact.SummaryHistory, "", "Write the hand-over notes", "Rewrite it into one record"},
		{"history with previous summary", compact.SummaryHistory, "old", "Rewrite it into one record", "Rewrite it into one record"},
		{"turn prefix", compact.SummaryTurnPrefix, "", "the opening part of one turn", "covers the beginning of this same turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{}
			s, _ := newTest(t, f, model16k, nil)
			if _, err := s.Summarize(context.Background(), &compact.SummaryRequest{
				Kind: tt.kind, Messages: history(20), PreviousSummary: tt.prev, Instructions: "focus words",
			}); err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			if len(reqs) < 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, r := range reqs {
				mark, prev := tt.latter, ""
				if i > 0 {
					prev = handover(fmt.Sprintf("summary %d", i), reqs[i-1].Prompt)
				}
				if i == 0 {
					mark, prev = tt.firstMark, tt.prev
				}
				if !strings.Contains(r.Prompt, mark) {
					t.Errorf("request %d lacks %q", i+1, mark)
				}
				if got := between(r.Prompt, "<running-summary>\n", "\n</running-summary>"); got != prev {
					t.Errorf("request %d: running summary %q, want %q", i+1, got, prev)
				}
				if !strings.Contains(r.Prompt, "<focus>\nfocus words\n</focus>") {
					t.Errorf("request %d lacks the focus", i+1)
				}
			}
		})
	}
}
