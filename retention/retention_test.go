package retention

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize/extractive"
)

// fixedSummarizer writes the same summary whatever it is given.
type fixedSummarizer struct{ text string }

func (f fixedSummarizer) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	return &compact.Summary{Text: f.text, Summarizer: "fixed"}, nil
}

// crafted builds a path whose summarized span (at a kept budget of 1,000
// tokens) holds one fact of each kind, and whose kept part holds none.
func crafted() []*compact.Entry {
	b := &needleBuilder{t: &compact.Transcript{}}
	b.user("First: fix the build, ticket ABC-1234.")
	b.tool("", "bash", map[string]any{"command": "sed -i 's/a/b/' only/sed.go"}, "(no output)", false)
	b.tool("", "bash", map[string]any{"command": "go vet ./... 2>&1 | tail -2"}, "vet.go:1:2: printf format %d has arg of wrong type", false)
	b.say("The culprit is `parseArgs`, see https://example.com/issue/77.")
	for k := 0; k < 4; k++ {
		b.user("Next part.")
		b.tool("Reading.", "read", map[string]any{"path": "docs/part.md"}, filler(k, 600), false)
	}
	return b.t.Entries
}

func measureOne(t *testing.T, summary string) Result {
	t.Helper()
	rs, err := Measure(context.Background(), "crafted", crafted(), Options{KeepRecent: []int{1000},
		Summarizer: fixedSummarizer{summary}, Name: "fixed", Cheap: false})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Nothing {
		t.Fatalf("results %+v", rs)
	}
	return rs[0]
}

func TestMeasures(t *testing.T) {
	empty := measureOne(t, "nothing kept")
	full := measureOne(t, strings.Join([]string{
		"First: fix the build, ticket ABC-1234.", "Next part.",
		"edited only/sed.go", "vet.go:1:2: printf format %d has arg of wrong type",
		"`parseArgs` https://example.com/issue/77",
	}, "\n"))
	for _, tt := range []struct {
		name        string
		empty, full Recall
	}{
		// The file touched only by sed -i counts; docs/part.md is read in
		// the span but also by the kept part's calls, so it is found.
		{"files", Recall{Found: 1, Total: 2, Missing: []string{"only/sed.go"}}, Recall{Found: 2, Total: 2}},
		// The error printed under exit 0 counts.
		{"errors", Recall{Found: 0, Total: 1, Missing: []string{"vet.go:1:2: printf format %d has arg of wrong type"}}, Recall{Found: 1, Total: 1}},
		{"identifiers", Recall{Found: 0, Total: 3, Missing: []string{"ABC-1234", "parseArgs", "https://example.com/issue/77"}}, Recall{Found: 3, Total: 3}},
	} {
		var e, f Recall
		switch tt.name {
		case "files":
			e, f = empty.Files, full.Files
		case "errors":
			e, f = empty.Errors, full.Errors
		case "identifiers":
			e, f = empty.Identifiers, full.Identifiers
		}
		if !equalRecall(e, tt.empty) || !equalRecall(f, tt.full) {
			t.Errorf("%s: empty summary %+v (want %+v), full summary %+v (want %+v)", tt.name, e, tt.empty, f, tt.full)
		}
	}
	// "Next part." is also in the kept part; the first request is not.
	if empty.UserText.Found != empty.UserText.Total-1 || full.UserText.Found != full.UserText.Total {
		t.Errorf("user text: empty %+v, full %+v", empty.UserText, full.UserText)
	}
	if empty.Invariants.FirstRequest || !full.Invariants.FirstRequest || !full.Invariants.ToolPairs || !full.Invariants.UnderTarget {
		t.Errorf("invariants: empty %+v, full %+v", empty.Invariants, full.Invariants)
	}
	if full.TokensAfter >= full.TokensBefore || full.SummaryTokens == 0 || full.SpanMessages < 7 {
		t.Errorf("compression: %+v", full)
	}
}

func equalRecall(a, b Recall) bool {
	return a.Found == b.Found && a.Total == b.Total && slices.Equal(a.Missing, b.Missing)
}

func TestOrphansAndTarget(t *testing.T) {
	c := &compact.Context{Messages: []*compact.Message{
		{Role: compact.RoleToolResult, ToolCallID: "lost"},
	}}
	if got := Orphans(c); !slices.Equal(got, []string{"lost"}) {
		t.Errorf("Orphans = %v", got)
	}
	rs, err := Measure(context.Background(), "crafted", crafted(), Options{KeepRecent: []int{1000},
		Summarizer: fixedSummarizer{strings.Repeat("long summary ", 2000)}, Name: "fixed", TargetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Invariants.UnderTarget || rs[0].Invariants.OK() {
		t.Errorf("a context over the target passes: %+v", rs[0])
	}
}

func TestNothingToCompactAndCheap(t *testing.T) {
	rs, err := Measure(context.Background(), "crafted", crafted(), Options{KeepRecent: []int{1000000, 1000},
		Summarizer: fixedSummarizer{"x"}, Name: "fixed", Cheap: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 || !rs[0].Nothing || !rs[1].Nothing || rs[2].Nothing || rs[3].Method != CheapMethod {
		t.Fatalf("rows: %+v", rs)
	}
	if rs[3].UserText.Percent() != 100 || rs[3].Files.Percent() != 100 {
		t.Errorf("the cheap strategies drop no message: %+v", rs[3])
	}
}

func TestMeasureLeavesEntriesAlone(t *testing.T) {
	path := crafted()
	n := len(path)
	if _, err := Measure(context.Background(), "crafted", path, Options{KeepRecent: []int{1000}, Summarizer: fixedSummarizer{"x"}, Cheap: true}); err != nil {
		t.Fatal(err)
	}
	if len(path) != n || path[n-1].Kind != compact.KindMessage {
		t.Error("Measure changed the entries it was given")
	}
}

// TestExtractiveGoals is the regression test of the extractive
// summarizer's goals on the real sessions at the default kept budget, as
// "compact bench" measures them with the defaults of "compact run".
func TestExtractiveGoals(t *testing.T) {
	sharedtest.EachPiSession(t, func(t *testing.T, name string) {
		s, err := session.Open(sharedtest.PiSession(t, name), session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := Measure(context.Background(), name, s.Path(), Options{KeepRecent: []int{20000},
			Summarizer: extractive.New(extractive.Options{}), Name: extractive.Name,
			MaxTokens: compact.DefaultReserveTokens * 4 / 5, TargetTokens: 100000})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		for _, g := range []struct {
			what     string
			got, min float64
		}{
			{"file recall", r.Files.Percent(), 100},
			{"error recall", r.Errors.Percent(), 80},
			{"identifier recall", r.Identifiers.Percent(), 80},
			{"user text", r.UserText.Percent(), 100},
		} {
			if g.got < g.min {
				t.Errorf("%s %.1f%%, want at least %.0f%%", g.what, g.got, g.min)
			}
		}
		if r.Ratio() > 25 {
			t.Errorf("context after %d tokens, %.1f%% of %d, want at most 25%%", r.TokensAfter, r.Ratio(), r.TokensBefore)
		}
		if r.Files.Total < 30 || r.Errors.Total < 5 || r.Identifiers.Total < 100 {
			t.Errorf("too few facts to judge: %+v", r)
		}
		if !r.Invariants.ToolPairs || !r.Invariants.UnderTarget || !r.Invariants.FirstRequest {
			t.Errorf("invariants %+v", r.Invariants)
		}
	})
}

// TestGenerateRoundTrip writes the planted-needle sessions and checks
// that the extractive summarizer keeps every needle at every default
// budget.
func TestGenerateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != GeneratedSessions {
		t.Fatalf("%d files", len(files))
	}
	for i, file := range files {
		var n Needles
		data, err := os.ReadFile(strings.TrimSuffix(file, ".jsonl") + ".needles.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &n); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(n.FirstRequest, "BILL-48"+strconv.Itoa(i+1)+"1") {
			t.Errorf("needles of %s: %+v", file, n)
		}
		s, err := session.Open(file, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := Measure(context.Background(), file, s.Path(), Options{Summarizer: extractive.New(extractive.Options{}), Name: "extractive",
			MaxTokens: compact.DefaultReserveTokens * 4 / 5, TargetTokens: 100000})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != len(DefaultKeepRecent) {
			t.Fatalf("%d rows", len(rs))
		}
		for _, r := range rs {
			if r.Nothing || r.SpanMessages < 20 {
				t.Fatalf("%s keep %d: the needles are not in the span: %+v", file, r.KeepRecent, r)
			}
			for _, c := range []struct {
				what    string
				needles []string
				rec     Recall
			}{{"file", n.Files, r.Files}, {"error", n.ErrorLines, r.Errors}, {"identifier", n.Identifiers, r.Identifiers}} {
				if c.rec.Total < len(c.needles) {
					t.Errorf("%s keep %d: %d %ss found in the span, %d planted", file, r.KeepRecent, c.rec.Total, c.what, len(c.needles))
				}
				for _, needle := range c.needles {
					if slices.Contains(c.rec.Missing, needle) {
						t.Errorf("%s keep %d: %s needle %q lost", file, r.KeepRecent, c.what, needle)
					}
				}
			}
			if !r.Invariants.OK() || r.UserText.Percent() != 100 {
				t.Errorf("%s keep %d: %+v", file, r.KeepRecent, r)
			}
		}
	}
	// The same version writes the same bytes.
	again := t.TempDir()
	if _, err := Generate(again); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(files[0])
	b, _ := os.ReadFile(filepath.Join(again, filepath.Base(files[0])))
	if string(a) != string(b) {
		t.Error("Generate is not deterministic")
	}
}

// TestGrewRefused: the provider reported a prompt far smaller than its
// messages look (a cache of its own, say), so the context measures small
// before; a compaction would leave it estimated larger. The engine
// records none ("nothing to gain"), and Measure reports the budget as
// having nothing to compact rather than a compaction that grew the
// context.
func TestGrewRefused(t *testing.T) {
	path := crafted()
	for i := len(path) - 1; i >= 0; i-- {
		if m := path[i].Message; m != nil && m.Role == compact.RoleAssistant {
			m.Usage = &compact.Usage{Input: 10, Output: 5}
			break
		}
	}
	rs, err := Measure(context.Background(), "crafted", path, Options{KeepRecent: []int{1000}, Summarizer: fixedSummarizer{"short"}, Name: "fixed"})
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Nothing || !strings.Contains(rs[0].Reason, "nothing to gain: the context would be") {
		t.Errorf("row %+v", rs[0])
	}
}

// TestSmallerInvariant: a row whose context did not shrink fails.
func TestSmallerInvariant(t *testing.T) {
	for _, tt := range []struct {
		method        string
		before, after int
		ok            bool
	}{
		{"fixed", 100, 60, true}, {"fixed", 100, 100, false}, {"fixed", 100, 120, false},
		{CheapMethod, 100, 100, true}, {CheapMethod, 100, 120, false},
	} {
		r := Result{Method: tt.method, TokensBefore: tt.before, TokensAfter: tt.after}
		if got := r.shrank(); got != tt.ok {
			t.Errorf("%s %d -> %d: shrank = %v", tt.method, tt.before, tt.after, got)
		}
		if (Invariants{ToolPairs: true, FirstRequest: true, UnderTarget: true, Smaller: tt.ok}).OK() != tt.ok {
			t.Errorf("%s %d -> %d: OK does not follow Smaller", tt.method, tt.before, tt.after)
		}
	}
}
