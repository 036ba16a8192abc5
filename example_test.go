package compact_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize/extractive"
)

// Open a session, ask the trigger policy whether it is time to compact,
// and compact it with the offline summarizer.
func ExampleEngine_Compact() {
	path, done := sharedtest.DemoCopy()
	defer done()

	s, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Should it compact? Measure the context, look up the window, ask a policy.
	reg, err := compact.LoadRegistry()
	if err != nil {
		log.Fatal(err)
	}
	view := s.Context()
	model := compact.Config{}.ResolveModel(reg, view.Model)
	fmt.Println(compact.Check(compact.DefaultPolicy{}, model, compact.Measure(view), false).Reason)

	eng := &compact.Engine{Summarizer: extractive.New(extractive.Options{})}
	res, err := eng.Compact(context.Background(), s, compact.Request{})
	switch {
	case errors.Is(err, compact.ErrNothingToCompact): // the history fits in the kept part
		fmt.Println("nothing to compact")
	case err != nil:
		log.Fatal(err) // nothing was written
	default:
		fmt.Printf("%d -> %d tokens; %d messages summarized, kept from entry %s\n",
			res.TokensBefore, res.TokensAfter, res.Plan.MessagesToSummarize(), res.Entry.Compaction.FirstKeptID)
	}
	// Output:
	// 54230 tokens are within the default threshold of 183616
	// 54230 -> 20876 tokens; 22 messages summarized, kept from entry 844b43c7
}

// Give the engine a ladder: an automatic compaction tries the cheap
// strategies first and summarizes only if the context is still above the
// target.
func ExampleEngine_Compact_ladder() {
	path, done := sharedtest.DemoCopy()
	defer done()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}

	eng := &compact.Engine{
		Summarizer: extractive.New(extractive.Options{}),
		Ladder:     &compact.Ladder{}, // nil Strategies: compact.DefaultLadder()
	}
	res, err := eng.Compact(context.Background(), s, compact.Request{Reason: compact.ReasonThreshold, TargetTokens: 40000})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Ladder.Passes {
		fmt.Printf("%s: %d -> %d tokens\n", p.Strategy, p.TokensBefore, p.TokensAfter)
	}
	fmt.Println("summary written:", res.Summarized())
	// Output:
	// strip_images: 54230 -> 54230 tokens
	// mask: 54230 -> 54230 tokens
	// truncate: 54230 -> 39095 tokens
	// summary written: false
}

// Run the cheap strategies on their own, as compact prune does; a dry
// run writes nothing.
func ExampleLadder_Run() {
	path, done := sharedtest.DemoCopy()
	defer done()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}

	ladder := compact.Ladder{Strategies: []compact.Strategy{compact.Mask{}, compact.Truncate{}}}
	res, err := ladder.Run(context.Background(), s, 0, true)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Passes {
		if p.Edit == nil {
			fmt.Printf("%s: nothing worth a cache break\n", p.Strategy)
			continue
		}
		fmt.Printf("%s: %d -> %d tokens, cache break at #%d\n", p.Strategy, p.TokensBefore, p.TokensAfter, p.CacheBreakIndex)
	}
	// Output:
	// mask: nothing worth a cache break
	// truncate: 54230 -> 30289 tokens, cache break at #5
}

// Wrap an agent's model calls in a Guard: before each call it measures
// the context and, above the trigger, compacts it (the cheap tier first,
// a summary only if still needed). Here the 54,000-token demo session
// meets a local model with a 32k window.
func ExampleGuard() {
	path, done := sharedtest.DemoCopy()
	defer done()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// callMyModel stands for the agent's real model call.
	callMyModel := func(ctx context.Context, messages []*compact.Message) (*compact.Message, error) {
		reply := compact.TextMessage(compact.RoleAssistant, fmt.Sprintf("I see %d messages.", len(messages)))
		reply.StopReason = compact.StopEnd
		return reply, nil
	}

	g := &compact.Guard{
		Engine:     &compact.Engine{Summarizer: extractive.New(extractive.Options{}), Ladder: &compact.Ladder{}},
		Log:        s, // a *session.Session or a *compact.SliceLog
		Model:      compact.ModelInfo{ID: "qwen2.5-coder:7b", ContextWindow: 32768, MaxOutput: 4096},
		Calibrator: &compact.Calibrator{},
		AfterCompaction: func(ctx context.Context, res *compact.Result) {
			fmt.Printf("compacted %d -> %d tokens, summary written: %v\n", res.TokensBefore, res.TokensAfter, res.Summarized())
			for _, a := range res.Adjustments {
				fmt.Println("adjusted:", a)
			}
		},
	}
	ctx := context.Background()
	resp, err := g.Call(ctx, callMyModel) // appends resp to the log
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Text())
	// Output:
	// compacted 54230 -> 4147 tokens, summary written: true
	// adjusted: kept part reduced from ~12419 to ~2828 tokens so that the context fits under 13107
	// I see 13 messages.
}

// A Guard that writes the summary ahead of time: once a call leaves the
// context past 80 % of the threshold, the summary of the history so far is
// written in the background while the agent goes on, and the call that
// crosses the threshold records it at once.
func ExampleGuard_ahead() {
	ctx := context.Background()
	conv := compact.NewSliceLog()
	if _, err := conv.AppendMessage(ctx, compact.TextMessage(compact.RoleUser, "Read every file of the project and fix the failing test.")); err != nil {
		log.Fatal(err)
	}
	// callMyModel stands for the agent's real model call.
	callMyModel := func(ctx context.Context, messages []*compact.Message) (*compact.Message, error) {
		reply := compact.TextMessage(compact.RoleAssistant, "Reading the next file.")
		reply.StopReason = compact.StopEnd
		return reply, nil
	}
	g := &compact.Guard{
		Engine: &compact.Engine{Summarizer: extractive.New(extractive.Options{}), KeepRecentTokens: 4000},
		Log:    conv,
		Model:  compact.ModelInfo{ID: "small", ContextWindow: 16000},
		Policy: compact.Reserve{Tokens: 4000}, // the threshold is at 12,000 tokens
		Ahead:  0.8,                           // the summary starts at 9,600
		AfterCompaction: func(ctx context.Context, res *compact.Result) {
			fmt.Printf("compacted %d -> %d tokens, summary written ahead: %v\n", res.TokensBefore, res.TokensAfter, res.Ahead != nil)
		},
	}
	defer g.Close() // stops a summary still being written
	for i := range 12 {
		if _, err := g.Call(ctx, callMyModel); err != nil {
			log.Fatal(err)
		}
		// The agent reads the next file.
		text := fmt.Sprintf("file%d.go: %s", i, strings.Repeat("func f() {} ", 400))
		if _, err := conv.AppendMessage(ctx, compact.TextMessage(compact.RoleUser, text)); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// compacted 12104 -> 8883 tokens, summary written ahead: true
}

// Pin the first request and a tool result, then compact: both stay in
// the context word for word, right after the summary.
func ExamplePin() {
	path, done := sharedtest.DemoCopy()
	defer done()

	s, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// 949707de is the first request; 2d6fd637 a read result, pinned
	// with its call and that call's other result.
	for _, id := range []string{"949707de", "2d6fd637"} {
		if err := compact.Pin(ctx, s, id); err != nil {
			log.Fatal(err)
		}
	}
	eng := &compact.Engine{Summarizer: extractive.New(extractive.Options{})}
	res, err := eng.Compact(ctx, s, compact.Request{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pinned before the kept part:", res.Plan.PinnedIDs)
	view := s.Context()
	fmt.Println("context starts:", view.EntryIDs[1:5])
	// Output:
	// pinned before the kept part: [949707de a6974133 2d6fd637 69fc1ce2]
	// context starts: [949707de a6974133 2d6fd637 69fc1ce2]
}
