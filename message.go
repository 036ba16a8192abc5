package compact

import (
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"

	"github.com/compactkit/compact/internal/jsontext"
)

// Role says who produced a message. The three provider roles (user,
// assistant, tool result) are what every chat API knows; the others are the
// agent-side kinds that pi's session format stores and that become user
// messages when the context is sent to a model.
type Role string

// Message roles.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
	// RoleBash is a shell command the user ran directly (pi's "!cmd").
	RoleBash Role = "bashExecution"
	// RoleCustom is a message injected by an extension or hook.
	RoleCustom Role = "custom"
	// RoleCompactionSummary carries the summary of a compaction.
	RoleCompactionSummary Role = "compactionSummary"
	// RoleBranchSummary carries the summary of an abandoned branch.
	RoleBranchSummary Role = "branchSummary"
)

// PartType names the kind of a content part.
type PartType string

// Content part types.
const (
	PartText     PartType = "text"
	PartThinking PartType = "thinking"
	PartImage    PartType = "image"
	PartToolCall PartType = "toolCall"
)

// Part is one block of a message's content. Exactly the fields that belong to
// its Type are set.
type Part struct {
	Type PartType

	// Text is the text of a text part.
	Text string
	// Thinking is the reasoning text of a thinking part.
	Thinking string

	// ToolCall is set on tool-call parts.
	ToolCall *ToolCall

	// Image is set on image parts.
	Image *Image

	// Extra holds fields of the stored part this package does not model,
	// so that codecs can write them back unchanged.
	Extra map[string]json.RawMessage
}

// Picture returns *p.Image, or the zero Image when Image is nil: an image
// part's fields, read without a nil check.
func (p *Part) Picture() Image {
	if p.Image == nil {
		return Image{}
	}
	return *p.Image
}

// Image is the picture of an image part.
type Image struct {
	// MimeType is the picture's media type ("image/png", ...).
	MimeType string
	// Data is the picture, base64-encoded as stored.
	Data string
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON object of arguments exactly as stored.
	Arguments json.RawMessage

	path   string // cached FilePath
	pathOK bool
}

// FilePath returns the file path argument of the call ("path",
// "file_path" or "filePath", the first present), "" if none. It is read
// once from the arguments and cached; replace Arguments only through a
// new ToolCall.
func (c *ToolCall) FilePath() string {
	if !c.pathOK {
		for _, k := range [...]string{"path", "file_path", "filePath"} {
			if s, ok := jsontext.TopLevelString(c.Arguments, k); ok && s != "" {
				c.path = s
				break
			}
		}
		c.pathOK = true
	}
	return c.path
}

// Usage is the token usage a provider reported for one model call.
//
// Input, CacheRead and CacheWrite are the prompt the answer saw, in three
// disjoint parts (tokens sent uncached, read from the prompt cache and
// written to it); Output is what the answer wrote. They measure the
// context (see ContextTokens). What the call billed beyond that context
// is kept apart, in CacheWrite1h's split and in Compaction.
type Usage struct {
	Input      int
	Output     int
	CacheRead  int
	CacheWrite int
	// Total is the provider's own total, when it reports one.
	Total int

	// CacheWrite1h is the part of CacheWrite written to a one-hour cache
	// (Anthropic's cache_creation.ephemeral_1h_input_tokens), billed
	// higher than the five-minute writes that make up the rest of
	// CacheWrite. 0 when the provider reports no split.
	CacheWrite1h int `json:",omitempty"`
	// Compaction is what the provider's own compaction step billed in the
	// same call: Anthropic's threshold compaction summarizes the
	// conversation before answering and reports that step in
	// usage.iterations (entries of type "compaction"), leaving it out of
	// the counts above, which are the answer's own. It costs money (see
	// Prices.Cost) but is not the context the answer saw.
	Compaction StepUsage `json:",omitzero"`

	// Stored is the JSON text of the usage object as a session file
	// stored it, when it holds more than the counts above (pi's cost,
	// say); "" otherwise. Codecs write it back while its counts still
	// agree with the fields. (A string keeps Usage comparable.)
	Stored string
}

// StepUsage is the token usage of one step a provider billed inside a
// call apart from the answer (see Usage.Compaction); its counts mean what
// Usage's do. It is comparable.
type StepUsage struct {
	Input        int `json:",omitempty"`
	Output       int `json:",omitempty"`
	CacheRead    int `json:",omitempty"`
	CacheWrite   int `json:",omitempty"`
	CacheWrite1h int `json:",omitempty"`
}

// Plus returns the counts of s and t added.
func (s StepUsage) Plus(t StepUsage) StepUsage {
	return StepUsage{Input: s.Input + t.Input, Output: s.Output + t.Output, CacheRead: s.CacheRead + t.CacheRead,
		CacheWrite: s.CacheWrite + t.CacheWrite, CacheWrite1h: s.CacheWrite1h + t.CacheWrite1h}
}

// Plus returns the usage of two calls counted together: every count
// added, Compaction included; Stored is dropped (it described one call).
// Summarizers that make several calls report their sum this way.
func (u Usage) Plus(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, Output: u.Output + v.Output, CacheRead: u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite, Total: u.Total + v.Total, CacheWrite1h: u.CacheWrite1h + v.CacheWrite1h,
		Compaction: u.Compaction.Plus(v.Compaction)}
}

// CacheReadShare is the share of the prompt read from the cache, from 0
// to 1: CacheRead over Input + CacheRead + CacheWrite (the provider's own
// compaction step included in both). ok is false when there is no prompt
// to measure.
func (u Usage) CacheReadShare() (share float64, ok bool) {
	read := u.CacheRead + u.Compaction.CacheRead
	prompt := u.PromptTokens() + u.Compaction.Input + u.Compaction.CacheRead + u.Compaction.CacheWrite
	if prompt <= 0 {
		return 0, false
	}
	return float64(read) / float64(prompt), true
}

// ContextTokens is the size of the context the call saw plus what it
// wrote: the provider's total when given, else the sum of the parts.
func (u Usage) ContextTokens() int {
	if u.Total > 0 {
		return u.Total
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// PromptTokens is the size of the prompt the call saw, without what it
// wrote: input, cache read and cache write tokens.
func (u Usage) PromptTokens() int { return u.Input + u.CacheRead + u.CacheWrite }

// StopReason says why an assistant message ended.
type StopReason string

// Stop reasons as recorded by pi.
const (
	StopEnd     StopReason = "stop"
	StopLength  StopReason = "length"
	StopToolUse StopReason = "toolUse"
	StopError   StopReason = "error"
	StopAborted StopReason = "aborted"
)

// Message is one provider-neutral conversation message.
//
// The zero value is an empty user message. Fields that do not belong to
// the Role are left empty.
type Message struct {
	Role    Role
	Content []Part

	// Assistant messages.
	Usage      *Usage
	StopReason StopReason
	Provider   string
	Model      string

	// Tool results.
	ToolCallID string
	ToolName   string

	// Timestamp is the message time in Unix milliseconds, 0 when unknown.
	Timestamp int64

	// Meta holds the fields few messages set: bash executions' command and
	// output, an assistant's error message, a custom message's type. It is
	// nil when none is set, which keeps the common message small.
	Meta *MessageMeta

	// Extra holds fields of the stored message this package does not model.
	// Messages may share one map: copies of a message do, and a session
	// reader gives the messages that store the same single extra field one
	// map. Replace the map rather than change it.
	Extra map[string]json.RawMessage

	// tokens is the cached estimate plus one, 0 until computed; it is
	// read and written atomically (see Tokens).
	tokens int32
	// IsError is set on a tool result that reports a failure.
	IsError bool
}

// HarnessNotePrefix begins the CustomType of a custom message that holds
// text an agent's harness wrote in the user's turn rather than the user's
// own words: the caveat before a slash command's output, the command's
// wrappers and output, an "interrupted by user" notice, a
// <system-reminder> block (see SplitReminders), the environment details
// an extension appends to every turn, a tool result whose call the
// conversation does not hold (see OrphanResult). A reader of another agent's
// format imports such text as a RoleCustom message whose CustomType is
// HarnessNotePrefix plus the agent and the kind of text, for example
// "harness:claude-code:caveat". The model still sees a note as user text
// (see ForModel); summarizers never quote one as the user's request or
// constraint (see IsHarnessNote).
const HarnessNotePrefix = "harness:"

// HarnessNoteType returns the CustomType of a harness note of agent of
// the given kind: "harness:claude-code:caveat" for ("claude-code",
// "caveat"). It is the one place the pieces are joined.
func HarnessNoteType(agent, kind string) string {
	return HarnessNotePrefix + agent + ":" + kind
}

// MarkHarnessNote turns m into a harness note of agent of the given kind
// (see HarnessNotePrefix): a RoleCustom message whose metadata holds
// HarnessNoteType(agent, kind) and nothing else. Its content is kept.
func (m *Message) MarkHarnessNote(agent, kind string) {
	m.Role = RoleCustom
	m.Meta = &MessageMeta{CustomType: HarnessNoteType(agent, kind)}
}

// IsHarnessNote reports whether m is a note of an agent's harness: a
// custom message whose CustomType begins with HarnessNotePrefix.
func IsHarnessNote(m *Message) bool {
	return m != nil && m.Role == RoleCustom && m.Meta != nil && strings.HasPrefix(m.Meta.CustomType, HarnessNotePrefix)
}

// MessageMeta holds the fields of a Message that only some roles set, and
// few messages of those.
type MessageMeta struct {
	// ErrorMessage is an assistant message's error, as the provider gave it.
	ErrorMessage string

	// Command, Output and ExitCode describe a bash execution; ExitCode is
	// nil when the command did not finish. Cancelled is set when the user
	// stopped it, ExcludeFromContext when its output must not reach the
	// model.
	Command            string
	Output             string
	ExitCode           *int
	Cancelled          bool
	ExcludeFromContext bool

	// CustomType names the extension of a custom message.
	CustomType string

	// Details is the JSON a tool result carries beside its content for
	// the agent's own use (pi's edit diffs, read ranges, exit codes), as
	// stored; nil when there is none. It never reaches the model.
	Details json.RawMessage
}

// IsZero reports whether no field of m is set: a message with such a Meta
// may as well have none.
func (m *MessageMeta) IsZero() bool {
	return m.ErrorMessage == "" && m.Command == "" && m.Output == "" && m.ExitCode == nil &&
		!m.Cancelled && !m.ExcludeFromContext && m.CustomType == "" && m.Details == nil
}

// Metadata returns a copy of *m.Meta, or the zero MessageMeta when Meta is
// nil: the rarely set fields, read without a nil check.
func (m *Message) Metadata() MessageMeta {
	if m.Meta == nil {
		return MessageMeta{}
	}
	return *m.Meta
}

// Text joins the message's text parts with newlines. For bash executions
// it is the command and its output; for summaries, the summary.
func (m *Message) Text() string {
	if m.Role == RoleBash {
		run := m.Metadata()
		if run.Output == "" {
			return run.Command
		}
		return run.Command + "\n" + run.Output
	}
	// One text part, the common case, is returned as it is: no copy.
	n, size, only := 0, 0, ""
	for i := range m.Content {
		if p := &m.Content[i]; p.Type == PartText {
			n++
			size += len(p.Text)
			only = p.Text
		}
	}
	if n <= 1 {
		return only
	}
	var b strings.Builder
	b.Grow(size + n - 1)
	first := true
	for i := range m.Content {
		if p := &m.Content[i]; p.Type == PartText {
			if !first {
				b.WriteByte('\n')
			}
			first = false
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the tool calls of an assistant message, in order.
func (m *Message) ToolCalls() []*ToolCall {
	var calls []*ToolCall
	for i := range m.Content {
		if m.Content[i].Type == PartToolCall && m.Content[i].ToolCall != nil {
			calls = append(calls, m.Content[i].ToolCall)
		}
	}
	return calls
}

// ValidUsage returns the message's usage when it can be trusted as a
// measure of the context: an assistant message that was neither aborted nor
// failed, with usage recorded. A usage whose fields are all zero (local
// servers and streams that report none write zeros) counts as no report:
// no real call sees an empty context, and reading it as 0 tokens would
// hide the whole context from the measure.
func (m *Message) ValidUsage() (Usage, bool) {
	if m.Role != RoleAssistant || m.Usage == nil || m.Usage.ContextTokens() <= 0 {
		return Usage{}, false
	}
	if m.StopReason == StopAborted || m.StopReason == StopError {
		return Usage{}, false
	}
	return *m.Usage, true
}

// Tokens returns the estimated token count of the message (see
// EstimateTokens), computed on the first call and cached in the message.
// Change a message's content only through a copy, or call ResetTokens
// afterwards.
//
// The cache is read and written atomically, so goroutines may call Tokens
// on a shared message at the same time. Readers do not compute estimates
// ahead of time (session.Open leaves them to the first plan or measure,
// as pi does); a program that copies a message (*m) in one goroutine
// while another may make the first Tokens call should call Tokens once
// before sharing it.
func (m *Message) Tokens() int {
	if t := atomic.LoadInt32(&m.tokens); t != 0 {
		return int(t - 1)
	}
	t := int32(min(EstimateTokens(m), math.MaxInt32-1))
	atomic.StoreInt32(&m.tokens, t+1)
	return int(t)
}

// ResetTokens drops the cached estimate after the content was changed.
func (m *Message) ResetTokens() { atomic.StoreInt32(&m.tokens, 0) }

// TextMessage returns a message of the given role holding one text part.
func TextMessage(role Role, text string) *Message {
	return &Message{Role: role, Content: []Part{{Type: PartText, Text: text}}}
}
