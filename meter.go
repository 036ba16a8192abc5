package compact

// Meter keeps the size of a context current while messages are appended,
// at constant cost per message: an agent re-checks its trigger after
// every message without walking the history again. It is the one running
// count of the package: Measure, the Guard, the engine's events, the
// reports and the proxy all count with it.
//
// The size is the provider's last valid report (Usage.ContextTokens:
// the prompt of that call plus the reply it wrote, which the next prompt
// holds) plus the messages appended since, each counted by Count when
// set, else estimated: its characters (as EstimateTokens counts them)
// divided by the model's ratio from Cal, rounded up per message, with
// images at ImageTokens each. With Cal nil the ratio is four characters
// per token and each message counts Message.Tokens. With no usable report
// (a new context, or one just compacted) every message is counted.
//
// Only what the model is sent is counted (see ForModel): an assistant
// reply that was aborted or failed is left out with the tool results that
// answer its calls, as is a shell command excluded from the context. pi
// does not send a failed reply again, and the providers' reports confirm
// it: in the real sessions, after a failed reply of 17,000 characters the
// next prompt grew by under 100 tokens.
//
// When Cal is set, every valid report teaches it: the prompt's growth
// since the previous report, less ImageTokens per image, is set against
// the characters of the messages appended in between (see
// Calibrator.Observe). Reports by two different models teach nothing, as
// two tokenizers are involved.
//
// The zero value is an empty context at four characters per token. A
// Meter is not safe for concurrent use.
type Meter struct {
	// Cal, when set, supplies the model's characters per token and learns
	// from each report. Nil means DefaultCharsPerToken and no learning.
	Cal *Calibrator
	// Count, when set, counts each message after the last report instead
	// of the estimate: an exact tokenizer, say package tiktoken's
	// Counter.MessageTokens. Cal, when also set, still learns.
	Count func(*Message) int

	model     string // the model the next call uses
	known     bool   // a usable report was seen since the last reset
	usage     int    // its ContextTokens, less the context edits after it
	prompt    int    // its prompt (Usage.PromptTokens)
	baseModel string // the model that made the reported call
	last      int    // 1 + index of the reporting message, 0 if none
	n         int    // messages seen
	trailing  int    // tokens of the messages sent after the report
	chars     int    // their characters (what Cal learns from)
	images    int    // their images
	filter    sendFilter
}

// NewMeter returns a meter at four characters per token for an existing
// context (see Reset).
func NewMeter(c *Context) *Meter {
	m := &Meter{}
	m.Reset(c)
	return m
}

// Reset measures the context again from scratch, as after a compaction or
// a context edit, keeping Cal and Count and teaching Cal nothing. The last
// valid report recorded after the latest compaction counts, less the
// tokens freed by context edits recorded after it (never below zero); the
// messages after it are counted one by one. Usage recorded before the
// latest compaction measured a context that no longer exists and is
// skipped. The model is the context's, else the one set before. The cost
// is that of the messages after the report.
func (m *Meter) Reset(c *Context) {
	model := c.Model
	if model == "" {
		model = m.model
	}
	*m = Meter{Cal: m.Cal, Count: m.Count, model: model, n: len(c.Messages)}
	for i := len(c.Messages) - 1; i >= c.FirstAfterCompaction; i-- {
		u, ok := c.Messages[i].ValidUsage()
		if !ok {
			continue
		}
		m.known = true
		m.usage = u.ContextTokens()
		for _, p := range c.passes {
			if p.after > i {
				m.usage -= p.freed
			}
		}
		m.usage = max(m.usage, 0)
		m.prompt = u.PromptTokens()
		m.baseModel = c.Messages[i].Model
		m.last = i + 1
		break
	}
	for _, msg := range c.Messages[m.last:] {
		if m.filter.keep(msg) {
			m.count(msg)
		}
	}
}

// SetModel names the model the next call uses (an assistant message added
// sets it too). Messages added from then on are estimated at its ratio.
func (m *Meter) SetModel(model string) { m.model = model }

// Model returns the model the count is for.
func (m *Meter) Model() string { return m.model }

// Add accounts for one message appended to the context. A message with a
// valid provider report replaces the count of everything before it and,
// when Cal is set, teaches it the ratio of the messages added since the
// previous report.
//
// Add runs once per message appended, so the common case, a message that
// is neither an assistant reply nor a shell command, with no failed reply
// before it and neither Cal nor Count set, is counted here with
// Message.Tokens (cached on the message); everything else goes to add.
func (m *Meter) Add(msg *Message) {
	m.n++
	if msg.Role != RoleAssistant && msg.Role != RoleBash && m.filter.failed == nil && m.Cal == nil && m.Count == nil {
		// Only an assistant reply can carry a valid report or name the
		// model, and the filter keeps every other message when no
		// failed reply precedes it, apart from shell commands.
		m.trailing += msg.Tokens()
		return
	}
	m.add(msg)
}

// add is Add for the messages its fast path does not settle.
func (m *Meter) add(msg *Message) {
	if msg.Role == RoleAssistant && msg.Model != "" {
		m.model = msg.Model
	}
	if !m.filter.keep(msg) {
		return
	}
	u, ok := msg.ValidUsage()
	if !ok {
		m.count(msg)
		return
	}
	prompt := u.PromptTokens()
	if m.known && m.Cal != nil && m.baseModel == msg.Model {
		m.Cal.observeAdded(msg.Model, m.chars, m.images, prompt-m.usage)
	}
	*m = Meter{Cal: m.Cal, Count: m.Count, model: m.model, n: m.n,
		known: true, usage: u.ContextTokens(), prompt: prompt, baseModel: msg.Model, last: m.n}
}

// count adds a message that is sent and carries no usable report.
func (m *Meter) count(msg *Message) {
	if m.Cal == nil {
		if m.Count != nil {
			m.trailing += m.Count(msg)
		} else {
			m.trailing += msg.Tokens()
		}
		return
	}
	chars, images := messageSize(msg)
	m.chars += chars
	m.images += images
	if m.Count != nil {
		m.trailing += m.Count(msg)
	} else {
		m.trailing += m.Cal.sizeTokens(m.model, chars, images)
	}
}

// Usage returns the current count in Measure's terms: UsageTokens is the
// last report, TrailingTokens the count of the messages after it,
// LastUsageIndex the index of the reporting message (-1 when none).
func (m *Meter) Usage() ContextUsage {
	return ContextUsage{Tokens: m.usage + m.trailing, UsageTokens: m.usage, TrailingTokens: m.trailing, LastUsageIndex: m.last - 1}
}

// Tokens returns the current count: the size the next call's prompt is
// expected to have.
func (m *Meter) Tokens() int { return m.usage + m.trailing }

// LastPrompt returns the prompt size (input, cache read and cache write
// tokens) of the last report, and whether there is one.
func (m *Meter) LastPrompt() (int, bool) { return m.prompt, m.known }

// sendFilter decides, message by message in context order, what ForModel
// sends to the model: every message but an assistant reply that was
// aborted or failed, the tool results that answer that reply's calls, and
// a shell command excluded from the context. pi does not send a failed
// reply again: it is an incomplete turn (a partial text, tool calls that
// never ran) that a provider may refuse; its results would then answer
// calls the provider never saw. The zero value is at the start of a
// context.
type sendFilter struct {
	failed *Message // the latest assistant reply, when it failed
}

// keep reports whether m, the next message of the context, is sent.
func (f *sendFilter) keep(m *Message) bool {
	if m.Role == RoleAssistant {
		f.failed = nil
	}
	if notSent(m) {
		if m.Role == RoleAssistant {
			f.failed = m
		}
		return false
	}
	if m.Role == RoleToolResult && f.failed != nil && m.ToolCallID != "" {
		for _, c := range f.failed.ToolCalls() {
			if c.ID == m.ToolCallID {
				return false
			}
		}
	}
	return true
}

// notSent reports whether m is never sent to the model, whatever comes
// before it: an assistant reply that was aborted or failed, or a shell
// command excluded from the context.
func notSent(m *Message) bool {
	switch m.Role {
	case RoleAssistant:
		return m.StopReason == StopAborted || m.StopReason == StopError
	case RoleBash:
		return m.Metadata().ExcludeFromContext
	}
	return false
}
