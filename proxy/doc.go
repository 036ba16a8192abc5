// Package proxy is the third front door of compact: an HTTP proxy that an
// agent points its API base URL at, which keeps every conversation inside
// the model's context window by compacting it in flight, and otherwise
// passes every byte through untouched.
//
// # What a request goes through
//
// A Server serves the Anthropic Messages API (/v1/messages,
// /v1/messages/count_tokens), OpenAI Chat Completions (/v1/chat/completions)
// and OpenAI Responses (/v1/responses); every other path is forwarded as it
// is, and WebSocket upgrades are refused so that clients fall back to HTTP.
// Before anything else, a request must carry the proxy's own token when
// Config.AuthToken is set (auth.go), and a request to the three APIs that
// carries no provider credential is passed through unread (server.go
// routes; forward.go passes through). For the three APIs, the files
// follow the request: exchange.go holds the one function that reads top
// to bottom (Server.serveAPI, with prepare and read below it), and each
// step is a file of its own:
//
//  0. admit.go: the body's size is reserved under the in-flight budget
//     (Config.MaxInFlightBytes): a request waits for room, then gets 503.
//     The body must arrive within Config.BodyTimeout, and every write of
//     the answer within Config.WriteIdleTimeout.
//  1. body.go: the body is read (gzip and zstd decoded, up to
//     Config.MaxBodyBytes) and parsed by the API's codec (codec*.go) into
//     its message list, located as exact byte spans (internal/jsontext): the
//     proxy never re-encodes a message it does not change. The list is cut
//     into units (a message, or a Responses turn with its reasoning and
//     tool calls) that are read into the engine's messages, once per
//     distinct unit (itemcache.go).
//  2. identity.go: the conversation is found by the id the client sends (a
//     header, or the body's session), namespaced by a hash of the
//     credential, and its units hashed into a chain; a stored compaction
//     (a store.Checkpoint) applies only when its chain equals the
//     request's prefix, so unrelated conversations never share a summary.
//  3. measure.go: the usage the provider reported for this conversation's
//     previous request plus an estimate of what was added, calibrated per
//     model.
//  4. decide.go: the one place that decides whether to compact: the root
//     policy's verdict (compact.Check), and the proxy's rules on top.
//  5. compact.go: the engine plans the cut, the summarizer writes the
//     summary (summarizer.go: the conversation's own model through the same
//     upstream with the client's credentials, or offline), and the
//     checkpoint is stored; replicas sharing a store take turns
//     (cluster.go).
//  6. splice.go: the request sent upstream is the client's bytes before
//     the list, the head (system and developer) items, the stored summary
//     item, the kept items, and the client's bytes after the list, checked
//     against the API's rules (check.go): system and tools are untouched,
//     and every later request of the conversation carries the same summary
//     bytes, so the provider's prompt cache keeps hitting.
//  7. send.go and forward.go: the answer is relayed as it comes, flushed
//     per read, while an observer (observe.go) reads the usage and
//     in-stream errors from a copy.
//  8. record.go: once the answer is over (after.go runs it after the
//     handler returns), its usage is stored for the next request's
//     measurement, with the conversation's totals and timeline; a
//     prompt-cache miss is explained there (cachemiss.go).
//
// An overflow error before any byte reached the client forces a compaction
// and one retry; an overflow inside a started stream makes the next request
// compact first. A window stated in the provider's own overflow error shape
// (see compact.OverflowWindow) is remembered for that upstream and
// credential only, never below the registry's smallest window (learn.go). The
// upstream's answers are not trusted further than that: error bodies are
// relayed whole whatever their size, usage impossible for the model is
// ignored, and reading a stream costs time linear in its size. Whatever fails on the proxy's side, the client's own
// request is sent: compaction never costs the client an error. A
// conversation known to be well under its trigger is forwarded while its
// body is still arriving, and read afterwards (streamed.go). A panic on
// the proxy's side is contained per request (panic.go); what fails is
// counted (metrics.go) and logged (log.go).
//
// # Seeing what it did
//
// What record.go and compact.go store is what people and scripts read:
// the conversation API (conversations.go, with shape.go for the latest
// request beside what went upstream), the live view at UIPath (ui.go and
// assets/: one page drawn with the report package's chart and cards), the
// compaction hooks (hooks.go) and the metrics. None of it is on a
// request's path.
//
// # Choices
//
// The forwarding is written here on net/http rather than with
// httputil.ReverseProxy: the proxy must read the whole body before deciding
// what to send, retry on an overflow before the client sees anything, and
// tee the response into an observer, which would mean overriding most of
// ReverseProxy's hooks; what remains (hop-by-hop headers, flushing, context
// cancellation) is a few lines. State goes through the store.Store
// interface of package proxy/store, which also holds the in-memory
// store.Memory; the bbolt file store is in proxy/store/bolt, Redis for
// many replicas in proxy/store/redis. Metrics use the Prometheus client
// library on a registry of the server's own; compressed bodies use klauspost/compress, since the
// standard library has no zstd (Codex sends zstd bodies).
package proxy
