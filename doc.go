// Package compact keeps LLM agent conversations inside the model's context
// window without losing what matters.
//
// The package holds the domain and nothing else: provider-neutral messages
// (Message, Part, Usage), the entries of a conversation log (Entry,
// Compaction), token accounting (EstimateTokens, Measure, the model
// Registry), trigger policies (DefaultPolicy, Reserve, Ratio, InputLimit), the cut-point
// planner (PlanCompaction), file tracking (FileOps), the Summarizer
// interface and the Engine that ties them together. It imports only the
// standard library and internal/swar, a leaf package of word-at-a-time
// byte tests it shares with the session decoder.
//
// Storage and summarizers live in subpackages that import this one:
// session reads and writes pi coding-agent session files, extractive is
// the offline summarizer, and cmd/compact is the command-line tool.
//
// A compaction is data: a summary plus the id of the first entry kept
// verbatim. BuildContext turns a root-to-leaf path of entries into the
// messages the model sees, as a pure function, so every front door shows
// the model the same thing.
//
// Typical use:
//
//	eng := &compact.Engine{Summarizer: extractive.New(extractive.Options{})}
//	res, err := eng.Compact(ctx, sess, compact.Request{Reason: compact.ReasonManual})
//	if errors.Is(err, compact.ErrNothingToCompact) {
//		// the history fits in the part kept verbatim
//	}
package compact
