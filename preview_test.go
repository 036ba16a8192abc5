package compact_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// TestPreviewMatchesSingleLadders: Preview gives, for every strategy,
// the pass a dry run of a ladder holding that strategy alone gives.
func TestPreviewMatchesSingleLadders(t *testing.T) {
	for _, name := range sharedtest.PiSessions() {
		s := loadFixture(t, name)
		ctx := context.Background()
		strategies := []compact.Strategy{compact.StripImages{}, compact.Mask{}, compact.Truncate{}, compact.Prune{}, compact.ClearToolUses{}}
		got, err := previewAll(ctx, s.Path(), strategies, compact.PreviewEdits)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(strategies) {
			t.Fatalf("%d reports for %d strategies", len(got), len(strategies))
		}
		edited := 0
		for i, st := range strategies {
			res, err := compact.Ladder{Strategies: []compact.Strategy{st}}.Run(ctx, s, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			want := res.Passes[0]
			g := got[i]
			if g.Strategy != want.Strategy || g.TokensBefore != want.TokensBefore || g.TokensAfter != want.TokensAfter ||
				g.CacheBreakIndex != want.CacheBreakIndex || (g.Edit == nil) != (want.Edit == nil) {
				t.Errorf("%s %s: Preview %+v, ladder %+v", name, st.Name(), g, want)
			}
			if g.Edit != nil {
				edited++
				if len(g.Edit.Edits) != len(want.Edit.Edits) || g.Edit.TokensFreed != want.Edit.TokensFreed {
					t.Errorf("%s %s: %d edits freeing %d, ladder %d freeing %d", name, st.Name(), len(g.Edit.Edits), g.Edit.TokensFreed, len(want.Edit.Edits), want.Edit.TokensFreed)
					continue
				}
				// The strategies of a preview share their proposal
				// buffers, one after the other: what one left must not
				// show in the next.
				for k, ed := range g.Edit.Edits {
					if w := want.Edit.Edits[k]; ed.TargetID != w.TargetID || fmt.Sprint(ed.Content) != fmt.Sprint(w.Content) {
						t.Errorf("%s %s: edit %d targets %s, ladder %s (or their contents differ)", name, st.Name(), k, ed.TargetID, w.TargetID)
						break
					}
				}
			}
		}
		if edited == 0 {
			t.Errorf("%s: no strategy edited anything; the comparison proves little", name)
		}
	}
}

// TestPreviewOrderAndStop: Preview hands over one report per strategy,
// in the order of the strategies, and stops at the first error of its
// callback, returning it.
func TestPreviewOrderAndStop(t *testing.T) {
	s := loadFixture(t, "large-session.jsonl")
	ctx := context.Background()
	strategies := []compact.Strategy{compact.Mask{}, compact.Truncate{}, compact.Prune{}}
	for _, detail := range []compact.PreviewDetail{compact.PreviewEdits, compact.PreviewFigures} {
		got, err := previewAll(ctx, s.Path(), strategies, detail)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(strategies) {
			t.Fatalf("detail %d: %d reports for %d strategies", detail, len(got), len(strategies))
		}
		for i, r := range got {
			if r.Strategy != strategies[i].Name() {
				t.Errorf("detail %d: report %d is %s, want %s", detail, i, r.Strategy, strategies[i].Name())
			}
		}
		stop := errors.New("enough")
		calls := 0
		err = compact.Preview(ctx, s.Path(), strategies, detail, func(compact.PassReport) error {
			calls++
			return stop
		})
		if err != stop || calls != 1 {
			t.Errorf("detail %d: error %v after %d calls, want %v after 1", detail, err, calls, stop)
		}
	}
}

// TestPreviewTokensAfterMatchesContext: the TokensAfter of each preview,
// which Preview counts without building the edited context, is what
// Measure gives on the context built with the edit appended to the path.
// The paths cover a compaction, an earlier context edit on the path, pinned
// messages the strategies would otherwise edit, and an edit whose freed
// tokens exceed the provider's report.
func TestPreviewTokensAfterMatchesContext(t *testing.T) {
	ctx := context.Background()
	strategies := []compact.Strategy{compact.StripImages{}, compact.Mask{}, compact.Truncate{}, compact.Prune{}, compact.ClearToolUses{}}
	type variant struct {
		name string
		path []*compact.Entry
	}
	var variants []variant
	for _, name := range sharedtest.PiSessions() {
		path := loadFixture(t, name).Path()
		variants = append(variants, variant{name, path})

		// An earlier mask pass on the path: the strategies plan on top of it.
		reps, err := previewAll(ctx, path, []compact.Strategy{compact.Mask{}}, compact.PreviewEdits)
		if err != nil {
			t.Fatal(err)
		}
		if reps[0].Edit != nil {
			e := compact.NewContextEditEntry(reps[0].Edit)
			e.ID, e.ParentID = "earlier-mask", path[len(path)-1].ID
			variants = append(variants, variant{name + " after a mask pass", append(path[:len(path):len(path)], e)})
		}

		// Pins on every third tool result and on an assistant message.
		pinned := path[:len(path):len(path)]
		n := 0
		for _, e := range path {
			m := e.Message
			if m == nil || !(m.Role == compact.RoleToolResult || m.Role == compact.RoleAssistant) {
				continue
			}
			if n++; n%3 != 0 {
				continue
			}
			pinned = append(pinned, &compact.Entry{ID: fmt.Sprintf("pin%d", n), ParentID: pinned[len(pinned)-1].ID,
				Kind: compact.KindLabel, Meta: &compact.EntryMeta{TargetID: e.ID, Label: compact.PinLabel}})
		}
		variants = append(variants, variant{name + " with pins", pinned})

		// An edit of the latest messages, pinned or not, as a strategy that
		// ignores pins would make: the pinned ones keep their content.
		ce := &compact.ContextEdit{Strategy: "test", TokensFreed: 5}
		for i := len(path) - 1; i >= 0 && len(ce.Edits) < 12; i-- {
			if path[i].IsContextMessage() {
				ce.Edits = append(ce.Edits, compact.Edit{TargetID: path[i].ID, Content: []compact.Part{{Type: compact.PartText, Text: "x"}}})
			}
		}
		// Without any provider report, so that every message is counted,
		// and with an edit naming the compaction: the summary it stands for
		// is not an edited message.
		bare := make([]*compact.Entry, len(path))
		named := &compact.ContextEdit{Strategy: "test", TokensFreed: 5, Edits: ce.Edits[:len(ce.Edits):len(ce.Edits)]}
		for i, e := range path {
			c := *e
			if e.Kind == compact.KindCompaction {
				named.Edits = append(named.Edits, compact.Edit{TargetID: e.ID, Content: []compact.Part{{Type: compact.PartText, Text: "x"}}})
			}
			if e.Message != nil {
				m := *e.Message
				m.Usage = nil
				c.Message = &m
			}
			bare[i] = &c
		}
		// The same edits in context order (as this package's strategies
		// make them), and with one entry edited twice, the later edit
		// winning.
		ordered := &compact.ContextEdit{Strategy: "test", TokensFreed: 5, Edits: slices.Clone(ce.Edits)}
		slices.Reverse(ordered.Edits)
		twice := &compact.ContextEdit{Strategy: "test", TokensFreed: 5, Edits: slices.Clone(ordered.Edits)}
		twice.Edits = append(twice.Edits, compact.Edit{TargetID: twice.Edits[0].TargetID,
			Content: []compact.Part{{Type: compact.PartText, Text: strings.Repeat("y", 4000)}}})
		for _, p := range []struct {
			what string
			path []*compact.Entry
			ce   *compact.ContextEdit
		}{{"an edit of pinned messages", pinned, ce}, {"no usage, an edit naming the compaction", bare, named},
			{"no usage, edits in context order", bare, ordered}, {"no usage, an entry edited twice", bare, twice}} {
			e := compact.NewContextEditEntry(p.ce)
			e.ID, e.ParentID = "edit", p.path[len(p.path)-1].ID
			want := compact.Measure(compact.BuildContext(append(p.path[:len(p.path):len(p.path)], e))).Tokens
			if got := compact.TokensAfter(p.path, p.ce); got != want {
				t.Errorf("%s: %s: TokensAfter %d, the built context measures %d", name, p.what, got, want)
			}
		}
	}
	for _, v := range variants {
		edited := 0
		err := compact.Preview(ctx, v.path, strategies, compact.PreviewEdits, func(r compact.PassReport) error {
			if r.Edit == nil {
				return nil
			}
			edited++
			e := compact.NewContextEditEntry(r.Edit)
			e.ID, e.ParentID = "preview", v.path[len(v.path)-1].ID
			want := compact.Measure(compact.BuildContext(append(v.path[:len(v.path):len(v.path)], e))).Tokens
			if r.TokensAfter != want {
				t.Errorf("%s, %s: TokensAfter %d, the built context measures %d", v.name, r.Strategy, r.TokensAfter, want)
			}
			// The same edit claiming to free more than the report holds.
			big := *r.Edit
			big.TokensFreed = r.TokensBefore * 2
			e = compact.NewContextEditEntry(&big)
			e.ID, e.ParentID = "preview", v.path[len(v.path)-1].ID
			want = compact.Measure(compact.BuildContext(append(v.path[:len(v.path):len(v.path)], e))).Tokens
			if got := compact.TokensAfter(v.path, &big); got != want {
				t.Errorf("%s, %s, freeing %d: TokensAfter %d, the built context measures %d", v.name, r.Strategy, big.TokensFreed, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if edited == 0 {
			t.Errorf("%s: %d strategies edited: the comparison proves nothing", v.name, edited)
		}
	}
}

// PreviewFigures reports what PreviewEdits reports, edits without their
// content: the same strategies, measures, cache break, tokens freed and
// targets, on the fixtures with and without pins and an earlier pass,
// and for ClearToolUses clearing inputs too (a pass that builds on its
// own proposals).
func TestPreviewFiguresMatchesEdits(t *testing.T) {
	ctx := context.Background()
	strategies := []compact.Strategy{compact.StripImages{}, compact.Mask{}, compact.Truncate{}, compact.Prune{},
		compact.ClearToolUses{}, compact.ClearToolUses{ClearInputs: true, Keep: 1}, compact.Truncate{MinChars: 200}}
	for _, name := range sharedtest.PiSessions() {
		path := loadFixture(t, name).Path()
		reps, err := previewAll(ctx, path, []compact.Strategy{compact.Mask{}}, compact.PreviewEdits)
		if err != nil {
			t.Fatal(err)
		}
		e := compact.NewContextEditEntry(reps[0].Edit)
		e.ID, e.ParentID = "earlier-mask", path[len(path)-1].ID
		// Without any provider report every message is counted, the
		// edited ones from what their edit frees.
		bare := make([]*compact.Entry, len(path))
		for i, e := range path {
			c := *e
			if e.Message != nil {
				m := *e.Message
				m.Usage = nil
				c.Message = &m
			}
			bare[i] = &c
		}
		paths := map[string][]*compact.Entry{name: path, name + " after a mask pass": append(path[:len(path):len(path)], e),
			name + " without usage": bare}
		for what, p := range paths {
			want, err := previewAll(ctx, p, strategies, compact.PreviewEdits)
			if err != nil {
				t.Fatal(err)
			}
			var got []compact.PassReport
			if err := compact.Preview(ctx, p, strategies, compact.PreviewFigures, func(r compact.PassReport) error {
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d reports, want %d", what, len(got), len(want))
			}
			edited := 0
			for k, w := range want {
				g := got[k]
				if g.Strategy != w.Strategy || g.TokensBefore != w.TokensBefore || g.TokensAfter != w.TokensAfter || g.CacheBreakIndex != w.CacheBreakIndex || (g.Edit == nil) != (w.Edit == nil) {
					t.Errorf("%s, pass %d: got %s %d -> %d (break %d, edit %v), want %s %d -> %d (break %d, edit %v)", what, k,
						g.Strategy, g.TokensBefore, g.TokensAfter, g.CacheBreakIndex, g.Edit != nil, w.Strategy, w.TokensBefore, w.TokensAfter, w.CacheBreakIndex, w.Edit != nil)
					continue
				}
				if w.Edit == nil {
					continue
				}
				edited++
				if g.Edit.TokensFreed != w.Edit.TokensFreed || g.Edit.FirstChangedID != w.Edit.FirstChangedID || len(g.Edit.Edits) != len(w.Edit.Edits) {
					t.Errorf("%s, %s: freed %d from %s in %d edits, want %d from %s in %d", what, w.Strategy,
						g.Edit.TokensFreed, g.Edit.FirstChangedID, len(g.Edit.Edits), w.Edit.TokensFreed, w.Edit.FirstChangedID, len(w.Edit.Edits))
					continue
				}
				for j, ed := range g.Edit.Edits {
					if ed.TargetID != w.Edit.Edits[j].TargetID || ed.Content != nil {
						t.Errorf("%s, %s, edit %d: target %s with %d parts, want %s without content", what, w.Strategy, j, ed.TargetID, len(ed.Content), w.Edit.Edits[j].TargetID)
						break
					}
				}
			}
			if edited < 3 {
				t.Errorf("%s: only %d strategies edited: the comparison proves little", what, edited)
			}
		}
	}
}

// previewAll collects the reports of Preview.
func previewAll(ctx context.Context, path []*compact.Entry, strategies []compact.Strategy, detail compact.PreviewDetail) ([]compact.PassReport, error) {
	var out []compact.PassReport
	err := compact.Preview(ctx, path, strategies, detail, func(r compact.PassReport) error {
		out = append(out, r)
		return nil
	})
	return out, err
}
