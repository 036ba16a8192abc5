package compact

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/jsontext"
)

func TestShortenSummary(t *testing.T) {
	var b strings.Builder
	b.WriteString("## Goal\n")
	for i := 0; i < 50; i++ {
		b.WriteString("- goal detail number " + strings.Repeat("g", 60) + "\n")
	}
	b.WriteString("\n## Progress\n### Done\n")
	for i := 0; i < 100; i++ {
		b.WriteString("- [x] finished step " + strings.Repeat("d", 60) + "\n")
	}
	b.WriteString("\n## Next Steps\n1. ship it\n")
	long := b.String()
	if got := ShortenSummary(long, 1_000_000); got != long {
		t.Fatal("a summary that fits was changed")
	}
	for _, max := range []int{2000, 500, 100} {
		short := ShortenSummary(long, max)
		for _, h := range []string{"## Goal", "## Progress", "### Done", "## Next Steps"} {
			if !strings.Contains(short, h+"\n") {
				t.Errorf("max %d: heading %q lost", max, h)
			}
		}
		if got := (jsontext.UTF16Len(short) + 3) / 4; max >= 500 && got > max {
			t.Errorf("max %d: %d tokens", max, got)
		}
		if !strings.Contains(short, "left out to fit the context]") {
			t.Errorf("max %d: no marker", max)
		}
	}
}

// bigSession has a long history and a large recent part.
func bigSession() *builder {
	var b builder
	for i := 0; i < 10; i++ {
		b.user(2000)
		b.result(b.call("edit", `{"path":"x.go","oldText":"a","newText":"b"}`), "edit", 10)
		b.assistant(6000)
	}
	for i := 0; i < 6; i++ {
		b.user(500)
		b.result(b.call("bash", `{"command":"make"}`), "bash", 5000)
		b.assistant(500)
	}
	return &b
}

func TestEngineHeadroomShrinksKeptPartFirst(t *testing.T) {
	log := NewSliceLog(bigSession().path()...)
	eng := &Engine{Summarizer: &recorder{}}
	res, err := eng.Compact(context.Background(), log, Request{KeepRecentTokens: 40000, TargetTokens: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if res.TokensAfter > 20000 {
		t.Fatalf("context after compaction %d, want under the 20000 target", res.TokensAfter)
	}
	if len(res.Adjustments) == 0 || !strings.Contains(res.Adjustments[0], "kept part reduced") {
		t.Fatalf("adjustments %q", res.Adjustments)
	}
	if res.Plan.KeptTokens > 10000 {
		t.Fatalf("kept %d tokens, want at most half the target", res.Plan.KeptTokens)
	}
	if got := Measure(BuildContext(log.Path())).Tokens; got != res.TokensAfter {
		t.Errorf("rebuilt context %d, result %d", got, res.TokensAfter)
	}
}

func TestEngineHeadroomShortensSummary(t *testing.T) {
	long := "## Goal\n" + strings.Repeat("- a long remembered detail of the work so far\n", 2000) + "## Next Steps\n1. more\n"
	verbose := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		return &Summary{Text: long, Summarizer: "verbose"}, nil
	})
	log := NewSliceLog(bigSession().path()...)
	res, err := (&Engine{Summarizer: verbose}).Compact(context.Background(), log, Request{TargetTokens: 30000})
	if err != nil {
		t.Fatal(err)
	}
	if res.TokensAfter > 30000 {
		t.Fatalf("context after %d, want under 30000", res.TokensAfter)
	}
	joined := strings.Join(res.Adjustments, "; ")
	if !strings.Contains(joined, "summary shortened") {
		t.Fatalf("adjustments %q", joined)
	}
	for _, h := range []string{"## Goal", "## Next Steps", "<modified-files>"} {
		if !strings.Contains(res.Summary, h) {
			t.Errorf("shortened summary lost %q", h)
		}
	}
}

func TestEngineFallback(t *testing.T) {
	boom := errors.New("HTTP 500 from the model")
	failing := &recorder{err: boom}
	offline := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		return &Summary{Text: "## Goal\noffline " + req.Kind.String(), Summarizer: "extractive"}, nil
	})
	tests := []struct {
		reason   Reason
		mode     FallbackMode
		fallback bool
	}{
		{ReasonThreshold, FallbackAuto, true},
		{ReasonOverflow, FallbackAuto, true},
		{ReasonManual, FallbackAuto, false},
		{ReasonManual, FallbackOn, true},
		{ReasonThreshold, FallbackOff, false},
	}
	for _, tt := range tests {
		log := NewSliceLog(splitSession().path()...)
		n := len(log.Entries())
		var end Event
		eng := &Engine{Summarizer: failing, Fallback: offline, OnEvent: func(e Event) { end = e }}
		res, err := eng.Compact(context.Background(), log, Request{Reason: tt.reason, Fallback: tt.mode})
		if !tt.fallback {
			if !errors.Is(err, boom) || len(log.Entries()) != n {
				t.Errorf("%s/%d: err %v, %d entries written", tt.reason, tt.mode, err, len(log.Entries())-n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s/%d: %v", tt.reason, tt.mode, err)
		}
		c := res.Entry.Compaction
		if !errors.Is(res.FallbackErr, boom) || c.Details["fallback"] != true || !strings.HasPrefix(c.Summary, "> Written without a model") {
			t.Errorf("%s/%d: fallback not marked: %+v", tt.reason, tt.mode, c.Details)
		}
		if end.Type != EventEnd || !errors.Is(end.FallbackErr, boom) || end.Err != nil {
			t.Errorf("%s/%d: end event %+v", tt.reason, tt.mode, end)
		}
		if !strings.Contains(c.Summary, "offline history") || res.Summarizer != "extractive" {
			t.Errorf("%s/%d: summary %q by %s", tt.reason, tt.mode, c.Summary, res.Summarizer)
		}
	}
	// A cancelled context never falls back.
	ctx, cancel := context.WithCancel(context.Background())
	cancelling := SummarizerFunc(func(context.Context, *SummaryRequest) (*Summary, error) {
		cancel()
		return nil, context.Canceled
	})
	log := NewSliceLog(splitSession().path()...)
	n := len(log.Entries())
	if _, err := (&Engine{Summarizer: cancelling, Fallback: offline}).Compact(ctx, log, Request{Reason: ReasonThreshold}); !errors.Is(err, context.Canceled) || len(log.Entries()) != n {
		t.Errorf("cancelled: %v", err)
	}
}

func TestContinuationNote(t *testing.T) {
	for _, reason := range []Reason{ReasonManual, ReasonThreshold, ReasonOverflow} {
		log := NewSliceLog(splitSession().path()...)
		if _, err := (&Engine{Summarizer: &recorder{}}).Compact(context.Background(), log, Request{Reason: reason}); err != nil {
			t.Fatal(err)
		}
		msgs := BuildContext(log.Path()).ModelMessages()
		first := msgs[0].Text()
		if msgs[0].Role != RoleUser || !strings.HasPrefix(first, SummaryPreface) || !strings.Contains(first, "<summary>") {
			t.Fatalf("%s: summary message %q", reason, first)
		}
		if has := strings.Contains(first, ContinuationNote); has != (reason != ReasonManual) {
			t.Errorf("%s: continuation note present = %v", reason, has)
		}
	}
}
