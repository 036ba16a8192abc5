// Package compact keeps LLM agent conversations inside the model's context
// window without losing what matters.
//
// The package holds the domain and nothing else: provider-neutral messages
// (Message, Part, Usage), the entries of a conversation log (Entry,
// Compaction), token accounting (EstimateTokens, Measure, the model
// Registry), the trigger policy (DefaultPolicy; Reserve, Ratio,
// InputLimit), the cut-point planner (PlanCompaction), file tracking
// (FileOps), the text a compaction writes around its summary, the cheap
// strategies (Ladder, Preview), the Summarizer interface and the Engine
// that ties them together. It imports only the standard library and
// packages under internal/.
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
//
// # Packages
//
// This package imports none of the others but the internal leaves it
// builds on (internal/jsontext, internal/redact, internal/zerocopy, and
// internal/swar through jsontext); the rest build on it.
//
//   - compact (this package): the domain and the engine.
//   - session: pi coding-agent session files (JSONL): read, write, append.
//   - anthropic: a summarizer client for Anthropic's Messages API.
//   - openai: a summarizer client for OpenAI's Chat Completions (and compatible servers).
//   - summarize: a model behind a Completer as a Summarizer: prompts, chunks, retries.
//   - summarize/extractive: the default offline summarizer, no model or network.
//   - summarize/facts: the facts a summary must keep (files touched, failures, identifiers).
//   - agents: which agent wrote a file, and the reader for it.
//   - agents/claudecode: reads Claude Code project transcripts.
//   - agents/codex: reads OpenAI Codex CLI rollouts.
//   - agents/cline: reads Cline, Roo Code and Kilo Code task histories.
//   - agents/geminicli: reads Gemini CLI chat recordings and checkpoints.
//   - agents/openhands: reads OpenHands event streams and trajectories.
//   - agents/sweagent: reads SWE-agent trajectories (.traj).
//   - agents/requestbody: reads one captured chat API request body.
//   - proxy: the HTTP proxy that compacts an agent's requests in flight.
//   - proxy/store: the proxy's conversation state and its stores.
//   - proxy/store/bolt: the state store of one machine, a file on disk.
//   - proxy/store/redis: the state store shared by several proxy replicas.
//   - proxy/store/storetest: the conformance suite every store passes.
//   - report: one session as a self-contained HTML page.
//   - retention: measures which facts a compaction keeps, at several budgets.
//   - memlog: the memory log (Engine.Memory) written as a Markdown file.
//   - tiktoken: exact token counts for OpenAI models, vocabularies embedded.
//   - internal/jsontext: the byte-level JSON and UTF-16 toolkit (scan, read, count).
//   - internal/redact: takes credentials out of texts and errors.
//   - internal/swar: word-at-a-time byte tests shared by the JSON scanners.
//   - internal/zerocopy: bytes to string and back without a copy (the one home of unsafe conversions).
//   - internal/apihttp: the HTTP plumbing the anthropic and openai clients share.
//   - internal/jsonrec: JSON helpers with line numbers for the agents' readers.
//   - internal/testing/fakeupstream: a scripted model provider for tests.
//   - internal/testing/clustertest: drives proxy replicas that share one store.
//   - internal/testing/readertest: the checks every agent reader runs.
//   - internal/cmd/bigsession, loadupstream, rusage: binaries for benchmarks.
//   - cmd/compact: the command-line tool: flags, files, output, wiring.
package compact
