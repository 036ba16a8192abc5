package compact_test

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

func loadFixture(tb testing.TB, name string) *session.Session {
	tb.Helper()
	s, err := session.Open(sharedtest.PiSession(tb, name), session.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// The plans must match pi 0.58.3's on its own fixtures with default
// settings, except where pi has a bug: on before-compaction.jsonl the span
// starts at the previous compaction's first kept entry (pi bug #2608), so
// more than pi's 306 messages are summarized.
func TestPlanParityWithPi(t *testing.T) {
	tests := []struct {
		file                          string
		firstKept, history, prefix    int
		tokensBefore                  int // 0: not checked
		previous                      bool
		read, edited, written         int // -1: not checked
		keptFromFirstCompactionCovers bool
	}{
		{file: "large-session.jsonl", firstKept: 837, history: 730, prefix: 3, tokensBefore: 177657,
			read: 21, edited: 20, written: 3},
		// pi summarized 306 messages here; the 77 more are the ones the
		// previous compaction kept, which pi dropped.
		{file: "before-compaction.jsonl", firstKept: 946, history: 383, prefix: 7, previous: true,
			read: -1, keptFromFirstCompactionCovers: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := loadFixture(t, tt.file)
			p, err := compact.PlanCompaction(s.Path(), compact.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := compact.Measure(compact.BuildContext(s.Path())); p.Usage != want {
				t.Errorf("plan usage %+v, want Measure's %+v", p.Usage, want)
			}
			if got := s.Index(p.FirstKeptID); got != tt.firstKept || p.FirstKeptIndex != tt.firstKept {
				t.Errorf("firstKeptEntryIndex %d (path %d), want %d", got, p.FirstKeptIndex, tt.firstKept)
			}
			if len(p.Messages) != tt.history {
				t.Errorf("messages to summarize %d, want %d", len(p.Messages), tt.history)
			}
			if !p.IsSplitTurn || len(p.TurnPrefix) != tt.prefix {
				t.Errorf("split %v with %d prefix messages, want split with %d", p.IsSplitTurn, len(p.TurnPrefix), tt.prefix)
			}
			if tt.tokensBefore != 0 && p.TokensBefore != tt.tokensBefore {
				t.Errorf("tokensBefore %d, want %d", p.TokensBefore, tt.tokensBefore)
			}
			if (p.PreviousSummary != "") != tt.previous {
				t.Errorf("previous summary present %v, want %v", p.PreviousSummary != "", tt.previous)
			}
			if tt.read >= 0 {
				if len(p.Files.Read) != tt.read || len(p.Files.Edited) != tt.edited || len(p.Files.Written) != tt.written {
					t.Errorf("files read %d edited %d written %d, want %d %d %d",
						len(p.Files.Read), len(p.Files.Edited), len(p.Files.Written), tt.read, tt.edited, tt.written)
				}
			}
			if tt.keptFromFirstCompactionCovers {
				prev := p.PreviousCompaction
				if prev == nil || p.Path[p.SpanStart].ID != prev.Compaction.FirstKeptID {
					t.Errorf("the span does not start at the previous compaction's first kept entry")
				}
			}
		})
	}
}

func TestFixtureContexts(t *testing.T) {
	s := loadFixture(t, "before-compaction.jsonl")
	c := s.Context()
	if c.Compaction == nil || c.Messages[0].Role != compact.RoleCompactionSummary {
		t.Fatal("context does not start with the latest compaction's summary")
	}
	kept := c.Compaction.Compaction.FirstKeptID
	if c.EntryIDs[1] != kept {
		t.Fatalf("second context message is %s, want the first kept entry %s", c.EntryIDs[1], kept)
	}
	if c.Model == "" {
		t.Error("no model found")
	}
	large := loadFixture(t, "large-session.jsonl")
	if n := len(large.Context().Messages); n != 914 {
		t.Errorf("large-session context has %d messages, want all 914", n)
	}
}
