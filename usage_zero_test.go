package compact

import (
	"context"
	"testing"
)

// zeroUsageSession is a session from a server that reports no usage: every
// assistant message carries a usage record whose fields are all zero.
func zeroUsageSession() *builder {
	var b builder
	for i := 0; i < 8; i++ {
		b.user(2000)
		id := b.call("read", `{"path":"main.go"}`)
		b.result(id, "read", 2000)
		b.assistant(500)
	}
	for _, e := range b.path() {
		if e.Message != nil && e.Message.Role == RoleAssistant {
			e.Message.Usage = &Usage{}
		}
	}
	return &b
}

// An all-zero usage is no report: every measure falls back to the
// estimate instead of calling the context empty.
func TestZeroUsageCountsAsNoReport(t *testing.T) {
	path := zeroUsageSession().path()
	c := BuildContext(path)
	estimate := 0
	for _, m := range c.Messages {
		estimate += m.Tokens()
	}
	if estimate < 30000 {
		t.Fatalf("fixture too small: %d tokens", estimate)
	}
	want := ContextUsage{Tokens: estimate, TrailingTokens: estimate, LastUsageIndex: -1}
	if got := Measure(c); got != want {
		t.Errorf("Measure %+v, want %+v", got, want)
	}
	if got := NewMeter(c).Usage(); got != want {
		t.Errorf("Meter %+v, want %+v", got, want)
	}
	var m Meter
	for _, msg := range c.Messages {
		m.Add(msg)
	}
	if got := m.Usage(); got != want {
		t.Errorf("Meter.Add %+v, want %+v", got, want)
	}
	// A meter with a calibrator that learned nothing estimates at four
	// characters per token, message by message: the same count.
	cm := &Meter{Cal: &Calibrator{}}
	cm.Reset(c)
	if got := cm.Usage(); got != want {
		t.Errorf("Meter with a Calibrator %+v, want %+v", got, want)
	}
	if _, ok := c.Messages[2].ValidUsage(); ok {
		t.Error("ValidUsage accepts an all-zero usage")
	}
	plan, err := PlanCompaction(path, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.TokensBefore != estimate || plan.Usage != want {
		t.Errorf("plan measures %+v, want %+v", plan.Usage, want)
	}
	res, err := (&Engine{Summarizer: &recorder{}}).Compact(context.Background(), NewSliceLog(path...), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.TokensBefore != estimate || res.Entry.Compaction.TokensBefore != estimate {
		t.Errorf("compaction records %d tokens before, want %d", res.TokensBefore, estimate)
	}
}
