package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// recorder is a summarizer that records its requests.
type recorder struct {
	reqs []*SummaryRequest
	err  error
}

func (r *recorder) Summarize(ctx context.Context, req *SummaryRequest) (*Summary, error) {
	r.reqs = append(r.reqs, req)
	if r.err != nil {
		return nil, r.err
	}
	return &Summary{Text: "## Goal\n" + req.Kind.String(), Summarizer: "test", Usage: &Usage{Input: 10, Output: 2}}, nil
}

// splitSession has history, then a turn cut in two.
func splitSession() *builder {
	var b builder
	b.user(3000)
	b.result(b.call("read", `{"path":"main.go"}`), "read", 3000)
	b.assistant(100)
	b.user(100)
	b.result(b.call("edit", `{"path":"main.go","oldText":"a","newText":"b"}`), "edit", 15000)
	b.result(b.call("bash", `{"command":"go test"}`), "bash", 15000)
	b.assistant(100)
	return &b
}

func TestEngineCompact(t *testing.T) {
	b := splitSession()
	log := NewSliceLog(b.path()...)
	before := Measure(BuildContext(log.Path())).Tokens
	rec := &recorder{}
	var events []Event
	clock := time.Unix(0, 0)
	eng := &Engine{Summarizer: rec, OnEvent: func(e Event) { events = append(events, e) },
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }}

	res, err := eng.Compact(context.Background(), log, Request{Reason: ReasonThreshold, Instructions: "focus on tests", MaxTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.reqs) != 2 || rec.reqs[0].Kind != SummaryHistory || rec.reqs[1].Kind != SummaryTurnPrefix {
		t.Fatalf("want a history and a turn-prefix request, got %d", len(rec.reqs))
	}
	if rec.reqs[0].MaxTokens != 1000 || rec.reqs[1].MaxTokens != 500 {
		t.Errorf("output budgets %d and %d, want 1000 and 500", rec.reqs[0].MaxTokens, rec.reqs[1].MaxTokens)
	}
	if rec.reqs[0].Instructions != "focus on tests" || len(rec.reqs[0].Messages) == 0 || len(rec.reqs[1].Messages) == 0 {
		t.Fatal("requests lack instructions or messages")
	}
	if before := res.Plan.Path[res.Plan.TurnStartIndex-1].Message; before.Role != RoleAssistant ||
		rec.reqs[1].Asked == "" || rec.reqs[1].Asked != strings.TrimSpace(before.Text()) || rec.reqs[0].Asked != "" {
		t.Errorf("turn prefix Asked = %q, want the assistant's text before the turn; history Asked = %q", rec.reqs[1].Asked, rec.reqs[0].Asked)
	}
	s := res.Summary
	if !strings.Contains(s, "history") || !strings.Contains(s, "turn-prefix") {
		t.Fatalf("summary does not merge both parts:\n%s", s)
	}
	if !strings.HasSuffix(s, "<modified-files>\nmain.go\n</modified-files>") {
		t.Fatalf("summary does not end with the file lists:\n%s", s)
	}
	last := log.Path()[len(log.Path())-1]
	if last != res.Entry || last.Kind != KindCompaction || last.Compaction.FirstKeptID != res.Plan.FirstKeptID {
		t.Fatal("compaction entry not appended as the leaf")
	}
	c := last.Compaction
	if c.TokensBefore != before || c.TokensAfter != res.TokensAfter || c.TokensAfter >= before {
		t.Fatalf("tokens before %d after %d (measured before %d)", c.TokensBefore, c.TokensAfter, before)
	}
	if strings.Join(c.ModifiedFiles, ",") != "main.go" || c.Details["reason"] != "threshold" {
		t.Fatalf("compaction details %+v", c)
	}
	after := Measure(BuildContext(log.Path())).Tokens
	if after != res.TokensAfter {
		t.Errorf("rebuilt context measures %d, result says %d", after, res.TokensAfter)
	}
	if len(events) != 2 || events[0].Type != EventStart || events[1].Type != EventEnd {
		t.Fatalf("events %+v", events)
	}
	end := events[1]
	if end.Reason != ReasonThreshold || end.TokensBefore != before || end.TokensAfter != res.TokensAfter ||
		end.MessagesSummarized != res.Plan.MessagesToSummarize() || end.Duration != time.Second || end.Err != nil {
		t.Fatalf("end event %+v", end)
	}
	if end.Usage == nil || end.Usage.Input != 20 {
		t.Fatalf("summarizer usage not summed: %+v", end.Usage)
	}
}

func TestEngineWritesNothingOnFailure(t *testing.T) {
	boom := errors.New("model unavailable")
	// The summarizer cancels the context itself once it has started: the
	// cancellation lands during the summary, with no timer involved.
	during, cancelDuring := context.WithCancel(context.Background())
	defer cancelDuring()
	blocking := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		cancelDuring()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		s    Summarizer
		ctx  context.Context
		want error
	}{
		{"summarizer error", &recorder{err: boom}, context.Background(), boom},
		{"cancelled before", &recorder{}, cancelled, context.Canceled},
		{"cancelled during", blocking, during, context.Canceled},
	}
	for _, tt := range tests {
		b := splitSession()
		log := NewSliceLog(b.path()...)
		n := len(log.Entries())
		var end *Event
		eng := &Engine{Summarizer: tt.s, OnEvent: func(e Event) {
			if e.Type == EventEnd {
				end = &e
			}
		}}
		_, err := eng.Compact(tt.ctx, log, Request{})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.want)
		}
		if len(log.Entries()) != n {
			t.Errorf("%s: an entry was written", tt.name)
		}
		if tt.ctx.Err() == nil || tt.name == "cancelled during" {
			if end == nil || !errors.Is(end.Err, tt.want) {
				t.Errorf("%s: end event %+v", tt.name, end)
			}
		}
	}
}

func TestEngineNothingToCompactCallsNoSummarizer(t *testing.T) {
	var b builder
	b.user(10)
	b.assistant(10)
	rec := &recorder{}
	eng := &Engine{Summarizer: rec}
	_, err := eng.Compact(context.Background(), NewSliceLog(b.path()...), Request{})
	if !errors.Is(err, ErrNothingToCompact) || len(rec.reqs) != 0 {
		t.Fatalf("err %v, %d summarizer calls", err, len(rec.reqs))
	}
}

func TestEngineSecondCompactionMergesPrevious(t *testing.T) {
	var b builder
	for i := 0; i < 6; i++ {
		b.user(4000)
		b.assistant(4000)
	}
	log := NewSliceLog(b.path()...)
	rec := &recorder{}
	eng := &Engine{Summarizer: rec}
	first, err := eng.Compact(context.Background(), log, Request{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("n", 16000)))
		log.AppendMessage(context.Background(), TextMessage(RoleAssistant, strings.Repeat("m", 16000)))
	}
	rec.reqs = nil
	second, err := eng.Compact(context.Background(), log, Request{})
	if err != nil {
		t.Fatal(err)
	}
	req := rec.reqs[0]
	if req.PreviousSummary != strings.TrimSpace(first.Summary) {
		t.Fatalf("previous summary %q", req.PreviousSummary)
	}
	// Everything the first compaction kept is summarized now.
	firstKept := first.Plan.Path[first.Plan.FirstKeptIndex:]
	inReq := map[*Message]bool{}
	for _, m := range req.Messages {
		inReq[m] = true
	}
	for _, e := range firstKept {
		if e.IsContextMessage() && indexOf(second.Plan.Path, e.ID) < second.Plan.FirstKeptIndex && !inReq[e.Message] {
			t.Fatalf("message %s kept by the first compaction was lost by the second", e.ID)
		}
	}
}

// TestFirstRequestBeforeSpan: when an earlier compaction summarized the
// session's first request, the summarizer is given it again; otherwise
// it is among the messages and FirstRequest is nil.
func TestFirstRequestBeforeSpan(t *testing.T) {
	var b builder
	first := b.msg(TextMessage(RoleUser, "Port the parser to Go; keep the CLI flags."))
	b.assistant(3000)
	kept := b.user(3000)
	b.assistant(3000)
	rec := &recorder{}
	eng := &Engine{Summarizer: rec, KeepRecentTokens: 3500}
	log := NewSliceLog(b.path()...)
	if _, err := eng.Compact(context.Background(), log, Request{}); err != nil {
		t.Fatal(err)
	}
	if rec.reqs[0].FirstRequest != nil {
		t.Error("FirstRequest set although the first request is among the messages")
	}
	_ = kept
	for i := 0; i < 3; i++ {
		log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("n", 12000)))
		a := TextMessage(RoleAssistant, "ok")
		a.StopReason = StopEnd
		log.AppendMessage(context.Background(), a)
	}
	rec.reqs = nil
	if _, err := eng.Compact(context.Background(), log, Request{}); err != nil {
		t.Fatal(err)
	}
	if got := rec.reqs[0].FirstRequest; got != first.Message {
		t.Errorf("second compaction: FirstRequest = %v, want the session's first request", got)
	}
}

// The summarizer error quoted in a fallback summary is cut at a
// character, never inside one: it used to be cut at byte 300, which
// split a multi-byte character and wrote invalid UTF-8.
func TestOneLineCutsAtACharacter(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"short\nsecond line", "short"},
		{strings.Repeat("é", 299) + "x", strings.Repeat("é", 299) + "x"},
		{strings.Repeat("é", 400), strings.Repeat("é", 300) + "..."},
		{strings.Repeat("a", 299) + "é" + "tail", strings.Repeat("a", 299) + "é..."},
	}
	for _, tt := range tests {
		got := oneLine(tt.in)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("oneLine(%.20q…) = %.40q… (%d bytes), want %.40q… (%d bytes)", tt.in, got, len(got), tt.want, len(tt.want))
		}
	}
}

// TestEngineRejectedSummary: a model reply the summarizer's review
// refused goes to the fallback in every mode, FallbackOff included, and
// the entry says so; a reply refused once and then replaced is recorded
// with what was refused.
func TestEngineRejectedSummary(t *testing.T) {
	rejected := SummarizerFunc(func(context.Context, *SummaryRequest) (*Summary, error) {
		return nil, fmt.Errorf("summarize with m: %w", &SummaryRejectedError{Summarizer: "m", Problems: []string{"it is a refusal or an apology, not notes"}})
	})
	offline := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		return &Summary{Text: "## Goal\noffline " + req.Kind.String(), Summarizer: "extractive"}, nil
	})
	for _, mode := range []FallbackMode{FallbackAuto, FallbackOn, FallbackOff} {
		log := NewSliceLog(splitSession().path()...)
		res, err := (&Engine{Summarizer: rejected, Fallback: offline}).Compact(context.Background(), log, Request{Reason: ReasonManual, Fallback: mode})
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		c := res.Entry.Compaction
		if !errors.Is(res.FallbackErr, ErrSummaryRejected) || c.Details["summaryRejected"] != true ||
			!strings.HasPrefix(c.Summary, "> Written without a model: the model's summary was refused (summarize history: summarize with m: summary from m rejected: it is a refusal") {
			t.Errorf("mode %d: details %v, summary %.160q", mode, c.Details, c.Summary)
		}
	}
	// Without a fallback the rejection fails the compaction and nothing
	// is written.
	log := NewSliceLog(splitSession().path()...)
	n := len(log.Entries())
	if _, err := (&Engine{Summarizer: rejected}).Compact(context.Background(), log, Request{Reason: ReasonThreshold}); !errors.Is(err, ErrSummaryRejected) || len(log.Entries()) != n {
		t.Errorf("no fallback: err %v, %d entries written", err, len(log.Entries())-n)
	}
	// Refused once, then used: recorded with what was refused.
	second := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		return &Summary{Text: "## Goal\nsecond answer", Summarizer: "m", Usage: &Usage{Input: 2}, Refused: []string{"it is far too short"}}, nil
	})
	log = NewSliceLog(splitSession().path()...)
	res, err := (&Engine{Summarizer: second, Fallback: offline}).Compact(context.Background(), log, Request{Reason: ReasonManual})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Entry.Compaction.Details["refusedOnce"]; fmt.Sprint(got) != "[it is far too short it is far too short]" || res.FallbackErr != nil {
		t.Errorf("refusedOnce = %v (history and turn prefix each refused once), fallback %v", got, res.FallbackErr)
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

// TestEngineNeverGrowsContext: when the provider reported a prompt far
// smaller than the messages are estimated at, a summary smaller than its
// span would still leave the context larger than the provider's count;
// nothing is recorded.
func TestEngineNeverGrowsContext(t *testing.T) {
	entries := splitSession().path()
	for i := len(entries) - 1; i >= 0; i-- {
		if m := entries[i].Message; m != nil && m.Role == RoleAssistant {
			m.Usage = &Usage{Input: 20, Output: 5}
			break
		}
	}
	log := NewSliceLog(entries...)
	n := len(log.Entries())
	_, err := (&Engine{Summarizer: &recorder{}}).Compact(context.Background(), log, Request{Reason: ReasonManual})
	var ge *GainError
	if !errors.Is(err, ErrNothingToGain) || !errors.As(err, &ge) || ge.TokensAfter < ge.TokensBefore || len(log.Entries()) != n {
		t.Errorf("err %v, %d entries written", err, len(log.Entries())-n)
	}
}
