package compact_test

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// strategyCases are the strategies run on the real fixtures: each at its
// defaults (the first five), then with settings loose enough that it
// edits these sessions, so that the invariants are checked on real data.
var strategyCases = []struct {
	name string
	s    compact.Strategy
	// under sets StrategyEnv.Target this many tokens under the context.
	under int
	// mustFree: the pass frees tokens on both fixtures. The defaults of
	// clear_tool_uses do not (the old tool uses free less than the cache
	// rewrite costs), nor does strip_images (no images).
	mustFree bool
}{
	{name: "prune", s: compact.Prune{}, mustFree: true},
	{name: "clear_tool_uses", s: compact.ClearToolUses{}},
	{name: "mask", s: compact.Mask{}, mustFree: true},
	{name: "truncate", s: compact.Truncate{}, mustFree: true},
	{name: "strip_images", s: compact.StripImages{}},
	{name: "clear_tool_uses_any", s: compact.ClearToolUses{ClearAtLeast: 1, ClearInputs: true}, mustFree: true},
	{name: "prune_any", s: compact.Prune{MinimumFree: -2, ProtectTokens: 5000, ProtectedTools: []string{"read"}}, mustFree: true},
	{name: "truncate_to_target", s: compact.Truncate{}, under: 20000, mustFree: true},
}

func TestStrategiesOnFixtures(t *testing.T) {
	for _, f := range sharedtest.PiSessions() {
		path := loadFixture(t, f).Path()
		usage := compact.Measure(compact.BuildContext(path))
		for _, tc := range strategyCases {
			t.Run(f+"/"+tc.name, func(t *testing.T) {
				env := compact.StrategyEnv{Usage: usage}
				if tc.under > 0 {
					env.Target = usage.Tokens - tc.under
				}
				ce := compact.CheckStrategy(t, tc.s, path, env)
				freed, edits, first := 0, 0, ""
				if ce != nil {
					freed, edits, first = ce.TokensFreed, len(ce.Edits), ce.FirstChangedID
				}
				t.Logf("%s on %s: %d tokens freed by %d edits, cache breaks at %q (context %d tokens)",
					tc.name, f, freed, edits, first, usage.Tokens)
				if tc.mustFree && ce == nil {
					t.Fatalf("%s freed nothing on %s", tc.name, f)
				}
				if tc.under > 0 && (freed < tc.under || freed > 2*tc.under) {
					t.Errorf("truncating to %d under the context freed %d", tc.under, freed)
				}
				if tc.name == "prune_any" {
					c := compact.BuildContext(path)
					for _, ed := range ce.Edits {
						for i, id := range c.EntryIDs {
							if id == ed.TargetID && c.Messages[i].ToolName == "read" {
								t.Fatalf("protected read output %s pruned", id)
							}
						}
					}
				}
			})
		}
	}
}

// BenchmarkStrategies times one Plan of each strategy at its defaults on
// the loaded fixtures, estimates cached. The target is under 1 ms a pass.
func BenchmarkStrategies(b *testing.B) {
	for _, tc := range strategyCases[:5] {
		for _, f := range sharedtest.PiSessions() {
			b.Run(tc.name+"/"+f, func(b *testing.B) {
				path := loadFixture(b, f).Path()
				warmEstimates(path)
				env := compact.StrategyEnv{Usage: compact.Measure(compact.BuildContext(path))}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := tc.s.Plan(path, env); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
