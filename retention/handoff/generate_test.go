package handoff

import (
	"bytes"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

func encode(t *testing.T, c *Case) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := session.EncodeTranscript(&b, c.Transcript); err != nil {
		t.Fatal(err)
	}
	for _, cont := range c.Continuations {
		for _, m := range cont {
			b.WriteString(m.Text())
		}
	}
	return b.Bytes()
}

// TestGenerateDeterministic: a seed gives the same case every time, and
// another seed another case.
func TestGenerateDeterministic(t *testing.T) {
	for _, f := range Families {
		a, b := encode(t, Generate(f, 7, 3000)), encode(t, Generate(f, 7, 3000))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two cases of seed 7 differ", f)
		}
		if bytes.Equal(a, encode(t, Generate(f, 8, 3000))) {
			t.Errorf("%s: seeds 7 and 8 give the same case", f)
		}
	}
	if Generate("nope", 1, 500).Family != BuriedConstraint {
		t.Error("an unknown family does not fall back to the first")
	}
}

// TestGenerateShape: the length asked for, the truth stated before the
// noise that is longer than twice the keep budget, every tool result
// after its call, and the truth each family promises.
func TestGenerateShape(t *testing.T) {
	for _, f := range Families {
		for _, size := range []int{100, 500, 2000, 15000} {
			for seed := int64(1); seed <= 6; seed++ {
				c := Generate(f, seed, size)
				if c.Tokens < max(size, MinSize) || c.KeepRecent != KeepRecentFor(max(size, MinSize)) {
					t.Errorf("%s: %d tokens, keep %d", c, c.Tokens, c.KeepRecent)
				}
				after, seen := 0, false
				calls := map[string]bool{}
				for _, e := range c.Transcript.Entries {
					m := e.Message
					if seen {
						after += m.Tokens()
					}
					seen = seen || e.ID == c.LastCritical
					for _, call := range m.ToolCalls() {
						calls[call.ID] = true
					}
					if m.Role == compact.RoleToolResult && !calls[m.ToolCallID] {
						t.Errorf("%s: tool result %s before its call", c, m.ToolCallID)
					}
				}
				if after < 2*c.KeepRecent {
					t.Errorf("%s: %d tokens after the last critical turn, keep %d", c, after, c.KeepRecent)
				}
				if len(c.Continuations) != DriftCycles-1 {
					t.Errorf("%s: %d continuations", c, len(c.Continuations))
				}
				tr := c.Truth
				if tr.Goal.Text == "" || len(tr.Next) == 0 || len(tr.Forbidden) == 0 || len(tr.Facts) == 0 {
					t.Errorf("%s: truth without goal, next step, forbidden action or facts: %+v", c, tr)
				}
				switch f {
				case DecisionOverride:
					if tr.Final == nil || len(tr.Superseded) < 1 || len(tr.Superseded) > 2 {
						t.Errorf("%s: %+v", c, tr)
					}
				case Roles:
					if len(tr.Roles) < 5 {
						t.Errorf("%s: roles %+v", c, tr.Roles)
					}
				case References:
					if len(tr.Referents) != 2 || len(tr.Next) != 3 {
						t.Errorf("%s: %+v", c, tr)
					}
				}
				for _, it := range append(tr.Items(), tr.Superseded...) {
					if len(it.Keys) == 0 {
						t.Errorf("%s: item %q has no key words", c, it.Text)
					}
				}
			}
		}
	}
}

// TestNoiseHoldsNoTruth: the turns after the last critical one and the
// continuations name nothing of the truth, so an item found in a context
// came from the turn that stated it.
func TestNoiseHoldsNoTruth(t *testing.T) {
	for _, f := range Families {
		for seed := int64(1); seed <= 20; seed++ {
			c := Generate(f, seed, 6000)
			var msgs []*compact.Message
			seen := false
			for _, e := range c.Transcript.Entries {
				if seen {
					msgs = append(msgs, e.Message)
				}
				seen = seen || e.ID == c.LastCritical
			}
			for _, cont := range c.Continuations {
				msgs = append(msgs, cont...)
			}
			s := ScoreTruth(&c.Truth, ReadContext(&compact.Context{Messages: msgs}))
			if s.Items.Found != 0 || s.Final.Found != 0 || s.Roles.Found != 0 || s.Superseded.Found != s.Superseded.Total {
				t.Errorf("%s: the noise holds truth: %+v", c, s)
			}
		}
	}
}
