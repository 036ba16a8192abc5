package proxy

import (
	"io"

	"github.com/compactkit/compact"
)

// API names one of the wire formats the proxy reads and rewrites.
type API string

// The wire formats the proxy compacts.
const (
	// Anthropic is the Messages API: POST /v1/messages (and
	// /v1/messages/count_tokens, which is forwarded the same way).
	Anthropic API = "anthropic"
	// Chat is OpenAI's Chat Completions API: POST /v1/chat/completions.
	Chat API = "chat"
	// Responses is OpenAI's Responses API: POST /v1/responses.
	Responses API = "responses"
)

// Parsed is a request body read for compaction. Every byte slice in it is
// a subslice of Body: the proxy splices requests from the client's own
// bytes and never re-encodes a message it does not change.
type Parsed struct {
	API API
	// Body is the (decoded) request body as the client sent it.
	Body []byte
	// Model is the top-level "model" field, "" when absent.
	Model string
	// Stream is the top-level "stream" field.
	Stream bool

	// ListStart and ListEnd delimit the message list in Body: Body[ListStart]
	// is its '[' and Body[ListEnd-1] its ']'. The list is "messages" for
	// Anthropic and Chat and "input" for Responses (a string input has no
	// list: ListStart = ListEnd = 0 and Items is empty).
	ListStart, ListEnd int
	// Items are the list's elements exactly as in Body, in order.
	Items [][]byte
	// Head is the number of leading items kept before the summary and
	// never summarized: the system and developer messages that open a Chat
	// or Responses list. 0 for Anthropic, whose system prompt lives outside
	// the list.
	Head int
	// Units partition Items[Head:] into runs that must stay together (a
	// Responses reasoning item with the items of the same turn, say), each
	// read into one or more engine messages. A cut between compacted and
	// kept items only ever falls on a unit boundary.
	Units []Unit

	// Thinking is true when the request enables extended thinking
	// (Anthropic "thinking": {"type": "enabled"|"adaptive"}).
	Thinking bool
	// BodySession is a conversation id carried in the body, "" when none:
	// Anthropic metadata.user_id's session part, or "prompt_cache_key".
	BodySession string
	// StandDown is non-empty when the client manages its own context and
	// the proxy must not compact (a context_management or compaction field,
	// a compaction block or item in the list); it says why.
	StandDown string
}

// Unit is a run of list items that the proxy keeps or summarizes as a
// whole.
type Unit struct {
	// Start and End are the unit's item range in Parsed.Items: [Start, End).
	Start, End int
	// Messages is what the engine sees of the unit, at least one message.
	// Tool calls become assistant messages with tool-call parts, tool
	// outputs become compact.RoleToolResult messages with ToolCallID set.
	Messages []*compact.Message
	// Digest identifies the unit's content for the conversation hash chain:
	// a SHA-256 over its items' bytes with volatile markers that clients move
	// from turn to turn (Anthropic "cache_control") left out, so that the same
	// message resent with or without a breakpoint hashes the same.
	Digest [32]byte
}

// codec is everything the proxy needs to know about one wire format.
type codec interface {
	// api names the format.
	api() API
	// parse reads a request body. It fails only on a body that is not a
	// JSON object or whose list is not a JSON array; unknown fields and
	// unknown item types are fine (an unknown item becomes a unit of its
	// own holding a user message with its raw JSON as text).
	parse(body []byte) (*Parsed, error)
	// summaryItem encodes the summary text as one list element of this
	// format: a user message. The same text gives the same bytes.
	summaryItem(text string) []byte
	// prepareKept returns the items that follow the summary, from
	// p.Items[from:], made valid for the provider after the history before
	// them was replaced (Anthropic: signed thinking blocks that the rewrite
	// would invalidate are dropped). Items needing no change are returned
	// as the same slices. envelope rewrites the body outside the list when
	// the kept items need it (nil when not).
	prepareKept(p *Parsed, from int) (items [][]byte, envelope func(body []byte) []byte)
	// fork returns the summary request made on the conversation itself
	// (see fork.go): body (the request as it goes upstream, its list
	// described by p) with its list replaced by items plus instruction as
	// a closing user message, the tools not callable, no stream, and an
	// output limit of maxTokens plus any reasoning room, which it also
	// returns.
	fork(p *Parsed, body []byte, items [][]byte, instruction string, maxTokens int) ([]byte, int, error)
	// newObserver returns a reader of one response body, fed the bytes as
	// they pass to the client. stream says whether the response is an SSE
	// stream (Content-Type text/event-stream).
	newObserver(stream bool) observer
}

// observer reads a copy of a response on its way to the client. Write
// never fails and never blocks: a malformed or truncated response only
// yields less.
type observer interface {
	io.Writer
	// Observed is what was read so far; call it after the last Write.
	Observed() Observed
}

// Observed is what the proxy learned from one response.
type Observed struct {
	// Usage is the final usage the provider reported, nil when none was
	// seen. For Anthropic it is message_start's usage updated by every
	// message_delta (whose counts are cumulative, never summed).
	Usage *compact.Usage
	// Complete is true when the response ended properly: a non-streamed
	// body was read in full, or the stream's terminal event arrived
	// (message_stop, data: [DONE], response.completed).
	Complete bool
	// ErrorBody is the JSON of an error reported inside a successful
	// response (an SSE error event, Responses response.failed), "" when
	// none.
	ErrorBody string
	// Overflow is true when that error says the context did not fit.
	Overflow bool
	// Diagnostics is what Anthropic's cache diagnostics said about the
	// request's prompt cache, nil when the answer carried none (the
	// client did not ask, or said null).
	Diagnostics *CacheDiagnostics
}
