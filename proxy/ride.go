package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/summarize"
)

// summaryRun is what a compaction's summarizer leaves for its checkpoint:
// the requests it made to its model with their usage
// (store.Checkpoint.SummaryCalls), and the window of a provider
// compaction (see native). Safe for concurrent use; a nil *summaryRun
// records nothing.
type summaryRun struct {
	mu     sync.Mutex
	calls  []store.SummaryCall
	native *nativeWindow
}

// setNative records the window a provider compaction returned.
func (c *summaryRun) setNative(w *nativeWindow) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.native = w
	c.mu.Unlock()
}

// window returns the window a provider compaction returned, nil
// when none did.
func (c *summaryRun) window() *nativeWindow {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.native
}

func (c *summaryRun) add(onConversation bool, u compact.Usage) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls = append(c.calls, store.SummaryCall{OnConversation: onConversation, Usage: u})
	c.mu.Unlock()
}

// list returns the calls recorded so far.
func (c *summaryRun) list() []store.SummaryCall {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]store.SummaryCall(nil), c.calls...)
}

// recordingCompleter records the usage of every answered transcript
// request.
type recordingCompleter struct {
	summarize.Completer
	calls *summaryRun
}

// Complete sends the request and records its usage.
func (c recordingCompleter) Complete(ctx context.Context, req *summarize.Request) (*summarize.Response, error) {
	resp, err := c.Completer.Complete(ctx, req)
	if err == nil && resp != nil {
		c.calls.add(false, resp.Usage)
	}
	return resp, err
}

// sender posts a request body built by the caller, unchanged (the
// anthropic and openai clients' Send).
type sender interface {
	Send(ctx context.Context, body []byte, header http.Header) (*summarize.Response, error)
}

// rider asks for one compaction's summaries on the conversation itself
// (summarize.Options.Conversation): the request as the proxy sends it
// upstream, up to the end of the summarized span, plus the summarizer's
// closing instruction. The provider reads that prefix from its prompt
// cache, where a transcript request would be written to it at full price.
type rider struct {
	s       *Server
	v       *view
	info    compact.ModelInfo // the summarizer model, the conversation's own
	send    sender
	lim     *callLimit
	calls   *summaryRun
	secrets []string
	// betas is the client's anthropic-beta header.
	betas []string
}

// header returns the headers a fork needs beyond the client's: the beta
// values its body uses (see anthropicBetas), added to the client's.
func (r *rider) header(body []byte) http.Header {
	if r.v.api != Anthropic {
		return nil
	}
	need := anthropicBetas(body)
	if len(need) == 0 {
		return nil
	}
	h := http.Header{"Anthropic-Beta": append([]string(nil), r.betas...)}
	addBetas(h, need)
	return h
}

// ask implements summarize.ConversationFunc.
func (r *rider) ask(ctx context.Context, req *summarize.ConversationRequest) (*summarize.Response, error) {
	body, out, err := r.body(req)
	if err != nil {
		return nil, errors.Join(summarize.ErrNotOnConversation, err)
	}
	if w := r.info.ContextWindow; w > 0 {
		margin := max(w/20, 1024)
		if est := r.forkTokens(body); est+out > w-margin {
			return nil, fmt.Errorf("%w: %d tokens and %d of output exceed the window of %d", summarize.ErrNotOnConversation, est, out, w)
		}
	}
	if r.info.MaxOutput > 0 && out > r.info.MaxOutput {
		return nil, fmt.Errorf("%w: an output limit of %d exceeds the model's %d", summarize.ErrNotOnConversation, out, r.info.MaxOutput)
	}
	if err := r.lim.take(); err != nil {
		return nil, err
	}
	resp, err := r.send.Send(ctx, body, r.header(body))
	if err != nil {
		var pe *compact.ProviderError
		if errors.As(err, &pe) && pe.StatusCode == 400 && !compact.IsContextOverflow(err) {
			r.s.log.Warn("summary request on the conversation refused; writing the summary from a transcript",
				"conversation", r.v.id.short, "err", redact.String(err.Error(), r.secrets...))
		}
		return nil, err
	}
	r.calls.add(true, resp.Usage)
	return resp, nil
}

// body builds the request of req: the list as it goes upstream (the head,
// the applied compaction's summary, the kept items as the codec prepares
// them) up to the end of the span, without a trailing unit whose tool
// calls the prefix does not answer, then the closing instruction.
func (r *rider) body(req *summarize.ConversationRequest) ([]byte, int, error) {
	v := r.v
	p := v.p
	_, items, envelope, err := sentPrefix(v, req.Summary.Messages)
	if err != nil {
		return nil, 0, err
	}
	body, out, err := codecFor(v.api).fork(p, p.Body, items, req.Instruction, req.MaxTokens)
	if err != nil {
		return nil, 0, err
	}
	if envelope != nil {
		body = envelope(body)
	}
	return body, out, nil
}

// forkTokens estimates the size of a fork in the provider's tokens: the
// request's own measure (the provider's last usage plus what was added,
// see measure) scaled by the fork's share of the bytes the request sends
// upstream. A raw byte estimate alone counts JSON escapes (every "\n" of a
// tool output is two bytes) as characters and overshoots, refusing forks
// that fit.
func (r *rider) forkTokens(body []byte) int {
	v := r.v
	sent := len(v.p.Body)
	if v.cp != nil && v.cp.Covered < len(v.p.Units) {
		for _, it := range v.p.Items[v.p.Head:v.p.Units[v.cp.Covered].Start] {
			sent -= len(it) + 1
		}
		sent += len(v.cp.Item) + 1
	}
	if v.tokens <= 0 || sent <= 0 {
		return r.s.estimateBytes(v.p.Model, body)
	}
	return int(float64(v.tokens) * float64(len(body)) / float64(sent))
}

// sentPrefix returns the list of v's request as the proxy sends it
// upstream (the head, the applied compaction's item, the kept items as
// the codec prepares them), up to the end of the unit holding the last of
// msgs, without a trailing unit whose tool calls that prefix does not
// answer; end is the number of units it covers, envelope the change
// outside the list the kept items need (nil when none).
func sentPrefix(v *view, msgs []*compact.Message) (end int, items [][]byte, envelope func([]byte) []byte, err error) {
	p := v.p
	end, ok := spanEnd(p.Units, msgs)
	if !ok {
		return 0, nil, nil, errors.New("the summarized messages are not in the request")
	}
	start := 0
	if v.cp != nil {
		start = v.cp.Covered
	}
	for end > start && unanswered(p.Units[end-1]) {
		end--
	}
	if end <= start {
		return 0, nil, nil, errors.New("nothing before the cut but unanswered tool calls")
	}
	items = append([][]byte(nil), p.Items[:p.Head]...)
	if v.cp == nil {
		return end, append(items, p.Items[p.Head:p.Units[end-1].End]...), nil, nil
	}
	// The thinking kept is that of the tool loop in progress at the end
	// of the span, as the proxy sent it while that loop ran.
	short := *p
	short.Items = p.Items[:p.Units[end-1].End]
	short.Units = p.Units[:end]
	kept, envelope := keptItems(codecFor(v.api), &short, v.cp)
	return end, append(append(items, v.cp.Item), kept...), envelope, nil
}

// spanEnd returns the index after the unit holding the last of msgs (the
// engine's messages, the units' own or a copy of a folded tool result, see
// unitMessages).
func spanEnd(units []Unit, msgs []*compact.Message) (int, bool) {
	if len(msgs) == 0 {
		return 0, false
	}
	i, ok := unitOf(units, msgs[len(msgs)-1])
	return i + 1, ok
}

// unitOf returns the index of the unit holding the engine message m (one
// of the units' own, or a copy of a folded tool result, see unitMessages).
func unitOf(units []Unit, m *compact.Message) (int, bool) {
	for i := len(units) - 1; i >= 0; i-- {
		for _, um := range units[i].Messages {
			if um == m || (m.Role == compact.RoleToolResult && um.Role == compact.RoleToolResult &&
				m.ToolCallID != "" && um.ToolCallID == m.ToolCallID) {
				return i, true
			}
		}
	}
	return 0, false
}

// unanswered reports whether u makes a tool call that u itself does not
// answer: as the last unit of a fork, a call without its result, which
// the APIs refuse.
func unanswered(u Unit) bool {
	open := map[string]bool{}
	for _, m := range u.Messages {
		for _, part := range m.Content {
			if part.ToolCall != nil {
				open[part.ToolCall.ID] = true
			}
		}
		if m.Role == compact.RoleToolResult {
			delete(open, m.ToolCallID)
		}
	}
	return len(open) > 0
}

// summaryCallsLog describes a compaction's summary requests for its log
// line: per request, where it was asked ("conversation" or "transcript"),
// its prompt tokens and the share of them read from the provider's cache,
// as in "conversation 41200 tokens 97% cached", after "anthropic
// compaction: " or "responses compaction: " when the provider's own
// compaction made the checkpoint's item. "" when there were none.
func summaryCallsLog(cp *store.Checkpoint) string {
	var b strings.Builder
	if cp.Native != "" && len(cp.SummaryCalls) > 0 {
		b.WriteString(cp.Native + " compaction: ")
	}
	for i, c := range cp.SummaryCalls {
		if i > 0 {
			b.WriteString("; ")
		}
		where := "transcript"
		if c.OnConversation {
			where = "conversation"
		}
		fmt.Fprintf(&b, "%s %d tokens %.0f%% cached", where, c.Usage.PromptTokens(), 100*c.CacheReadShare())
	}
	return b.String()
}
