package compact_test

import (
	"math"
	"slices"
	"testing"

	"github.com/compactkit/compact"
)

// calibrationErrors gathers, for one prediction method on one session, the
// relative errors of each next-call prediction.
type calibrationErrors struct {
	total  []float64 // whole prompt, against the reported prompt
	growth []float64 // prompt growth since the previous report
	added  []float64 // the new messages alone, where they weigh enough
}

// minAddedTokens is the smallest size of the new messages (reported
// growth less the previous reply's output) for which their relative error
// is kept: below it, a handful of framing tokens decide the percentage.
const minAddedTokens = 250

func (e *calibrationErrors) record(predicted, base, prevPrompt, prompt int) {
	e.total = append(e.total, relErr(predicted, prompt))
	if g := prompt - prevPrompt; g > 0 {
		e.growth = append(e.growth, relErr(predicted-prevPrompt, g))
	}
	if a := prompt - base; a >= minAddedTokens {
		e.added = append(e.added, relErr(predicted-base, a))
	}
}

func relErr(got, want int) float64 {
	return math.Abs(float64(got-want)) / float64(want)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// calibrationRun replays a session call by call and predicts the prompt
// each valid report will show from what was known before the call: with
// a Meter at a fixed four characters per token, and with a Meter learning
// its ratio online.
type calibrationRun struct {
	plain, learned calibrationErrors
	calls          int
	cal            *compact.Calibrator
	model          string
}

func replayCalibration(t *testing.T, name string) *calibrationRun {
	t.Helper()
	s := loadFixture(t, name)
	run := &calibrationRun{cal: &compact.Calibrator{}}
	plain := &compact.Meter{}
	learned := &compact.Meter{Cal: run.cal}
	path := s.Path()
	for i, e := range path {
		switch e.Kind {
		case compact.KindCompaction:
			// Reports before a compaction measured a context that is
			// gone: start again from the compacted context.
			c := compact.BuildContext(path[:i+1])
			plain.Reset(c)
			learned.Reset(c)
			continue
		case compact.KindModelChange:
			plain.SetModel(e.Metadata().ModelID)
			learned.SetModel(e.Metadata().ModelID)
		}
		if !e.IsContextMessage() {
			continue
		}
		m := e.Message
		if u, ok := m.ValidUsage(); ok && u.ContextTokens() > 0 {
			// The agent knows which model it is about to call.
			plain.SetModel(m.Model)
			learned.SetModel(m.Model)
			prompt := u.Input + u.CacheRead + u.CacheWrite
			if prev, ok := learned.LastPrompt(); ok {
				run.calls++
				base := learned.Usage().UsageTokens
				run.plain.record(plain.Tokens(), base, prev, prompt)
				run.learned.record(learned.Tokens(), base, prev, prompt)
			}
			run.model = m.Model
		}
		plain.Add(m)
		learned.Add(m)
	}
	return run
}

// TestCalibration measures the next-call prediction on the real sessions
// (BENCHMARKS.md, "Calibration (issue 5)").
func TestCalibration(t *testing.T) {
	for _, name := range []string{"large-session.jsonl", "before-compaction.jsonl"} {
		t.Run(name, func(t *testing.T) {
			run := replayCalibration(t, name)
			if run.calls < 100 {
				t.Fatalf("only %d calls measured", run.calls)
			}
			st := run.cal.Stats(run.model)
			t.Logf("%d calls measured; %s learned %.3f chars/token from %d observations",
				run.calls, run.model, st.CharsPerToken, st.Observations)
			for _, r := range []struct {
				method string
				e      *calibrationErrors
			}{{"chars/4", &run.plain}, {"calibrated", &run.learned}} {
				t.Logf("%-16s total %6.3f%% (n=%d)  growth %5.1f%% (n=%d)  new messages %5.1f%% (n=%d)",
					r.method, 100*median(r.e.total), len(r.e.total), 100*median(r.e.growth), len(r.e.growth),
					100*median(r.e.added), len(r.e.added))
			}
			cal, plain := median(run.learned.total), median(run.plain.total)
			if cal >= 0.05 {
				t.Errorf("calibrated median total error %.2f%%, want under 5%%", 100*cal)
			}
			if cal >= plain {
				t.Errorf("calibrated median total error %.4f%% is not below chars/4's %.4f%%", 100*cal, 100*plain)
			}
			if c, p := median(run.learned.added), median(run.plain.added); c >= p {
				t.Errorf("calibrated median error on new messages %.1f%% is not below chars/4's %.1f%%", 100*c, 100*p)
			}
		})
	}
}
