package compact

import (
	"fmt"
	"strconv"
	"strings"
)

// Path returns the entries from the root to the entry leafID, in order,
// following ParentID links through entries. With leafID "" the last entry
// of entries is the leaf. It fails if leafID is unknown or a parent link
// loops.
func Path(entries []*Entry, leafID string) ([]*Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	byID := make(map[string]*Entry, len(entries))
	for _, e := range entries {
		byID[e.ID] = e
	}
	return PathByID(byID, entries[len(entries)-1], leafID)
}

// PathByID is Path for callers that keep an index of entries by id. last
// is the entry used when leafID is "".
func PathByID(byID map[string]*Entry, last *Entry, leafID string) ([]*Entry, error) {
	return pathBy(func(id string) *Entry { return byID[id] }, len(byID), last, leafID)
}

// pathBy is PathByID with the entries found by lookup; n is how many
// there are.
func pathBy(lookup func(id string) *Entry, n int, last *Entry, leafID string) ([]*Entry, error) {
	leaf := last
	if leafID != "" {
		leaf = lookup(leafID)
		if leaf == nil {
			return nil, fmt.Errorf("entry %q: %w", leafID, ErrNoEntry)
		}
	}
	if leaf == nil {
		return nil, nil
	}
	var rev []*Entry
	for e := leaf; e != nil; {
		// A path longer than the number of entries has met an entry twice.
		if len(rev) > n {
			return nil, fmt.Errorf("entry %q: parent links form a cycle", e.ID)
		}
		rev = append(rev, e)
		if e.ParentID == "" {
			break
		}
		e = lookup(e.ParentID)
	}
	path := make([]*Entry, len(rev))
	for i, e := range rev {
		path[len(rev)-1-i] = e
	}
	return path, nil
}

// Context is what the model sees for one path: the latest compaction's
// summary, the entries it kept, and everything after it.
type Context struct {
	// Messages in the order the model sees them. When the path holds a
	// compaction, the first message is its summary (role
	// compactionSummary).
	Messages []*Message
	// EntryIDs[i] is the id of the entry that produced Messages[i] (the
	// compaction entry for the summary).
	EntryIDs []string
	// Compaction is the latest compaction entry on the path, nil if none.
	Compaction *Entry
	// FirstAfterCompaction is the index in Messages of the first message
	// recorded after Compaction (len(Messages) when there is none, 0
	// without a compaction). Provider usage is trusted only from here on.
	FirstAfterCompaction int
	// Provider and Model are the model last selected on the path (a
	// model_change entry or the model that wrote an assistant message).
	Provider, Model string
	// ThinkingLevel is the last thinking level set on the path ("off" by
	// default).
	ThinkingLevel string

	// passes records, for each context edit after the latest compaction,
	// how many messages preceded it and how many tokens it freed, so that
	// Measure can correct a provider usage reported before the pass. A
	// pin recorded there counts as a pass that freed a negative number.
	passes []editMark
	// pinned holds the ids of the pinned entries of the path, nil when
	// none is pinned.
	pinned map[string]bool
}

// editMark is a context edit's place in the context and its saving.
type editMark struct {
	after int // number of context messages recorded before the edit
	freed int
}

// BuildContext rebuilds the model's context from a root-to-leaf path. It
// is a pure function of the entries: every front door that loads the same
// entries shows the model the same messages. The context edits on the path
// are applied: an edited message appears as a copy holding the
// replacement content (a later edit of the same entry wins).
func BuildContext(path []*Entry) *Context {
	return buildContext(path, true)
}

// BuildOriginalContext is BuildContext without the context edits: the
// messages as stored.
func BuildOriginalContext(path []*Entry) *Context {
	return buildContext(path, false)
}

// EditsOf returns the replacement content of each edited entry on the
// path, the later edit of an entry winning; nil when there is none.
func EditsOf(path []*Entry) map[string][]Part {
	var edits map[string][]Part
	for _, e := range path {
		if e.Kind != KindContextEdit || e.Edit == nil {
			continue
		}
		if edits == nil {
			edits = make(map[string][]Part)
		}
		for _, ed := range e.Edit.Edits {
			edits[ed.TargetID] = ed.Content
		}
	}
	return edits
}

func buildContext(path []*Entry, applyEdits bool) *Context {
	c := &Context{ThinkingLevel: "off"}
	compIdx := -1
	labels := false
	for i, e := range path {
		switch e.Kind {
		case KindThinkingLevelChange:
			c.ThinkingLevel = e.Metadata().ThinkingLevel
		case KindModelChange:
			m := e.Metadata()
			c.Provider, c.Model = m.Provider, m.ModelID
		case KindMessage:
			if e.Message != nil && e.Message.Role == RoleAssistant && e.Message.Model != "" {
				c.Provider, c.Model = e.Message.Provider, e.Message.Model
			}
		case KindCompaction:
			if e.Compaction != nil {
				compIdx = i
			}
		case KindLabel:
			labels = true
		}
	}
	var edits map[string][]Part
	if applyEdits {
		edits = EditsOf(path)
	}
	var pins *pinState
	if labels {
		pins = newPinState(path, compIdx, edits)
		c.pinned = pins.pinned
	}
	add := func(e *Entry) {
		if !e.IsContextMessage() {
			return
		}
		m := e.Message
		if content, ok := edits[e.ID]; ok && !c.pinned[e.ID] {
			edited := *m
			edited.Content = content
			edited.ResetTokens()
			m = &edited
		}
		c.Messages = append(c.Messages, m)
		c.EntryIDs = append(c.EntryIDs, e.ID)
	}
	note := func(i int, e *Entry) {
		switch {
		case e.Kind == KindContextEdit && e.Edit != nil && e.Edit.TokensFreed > 0:
			c.passes = append(c.passes, editMark{after: len(c.Messages), freed: e.Edit.TokensFreed})
		case e.Kind == KindLabel && pins != nil:
			if grown := pins.grown(i); grown != 0 {
				c.passes = append(c.passes, editMark{after: len(c.Messages), freed: -grown})
			}
		}
	}
	if compIdx < 0 {
		c.Messages = make([]*Message, 0, len(path))
		c.EntryIDs = make([]string, 0, len(path))
		for i, e := range path {
			note(i, e)
			add(e)
		}
		return c
	}
	comp := path[compIdx]
	c.Compaction = comp
	summary := SummaryMessage(comp)
	if ids := pinnedCopyIDs(comp.Compaction); len(ids) > 0 && c.pinned != nil {
		held := true
		for _, id := range ids {
			held = held && c.pinned[id]
		}
		if held {
			summary = TextMessage(RoleCompactionSummary, StripPinnedCopy(comp.Compaction.Summary))
		}
	}
	c.Messages = append(c.Messages, summary)
	c.EntryIDs = append(c.EntryIDs, comp.ID)
	// The pinned messages of the summarized history come right after the
	// summary, in their order; then the kept part.
	kept := false
	for _, e := range path[:compIdx] {
		if e.ID == comp.Compaction.FirstKeptID {
			kept = true
		}
		if kept || c.pinned[e.ID] {
			add(e)
		}
	}
	c.FirstAfterCompaction = len(c.Messages)
	for i, e := range path[compIdx+1:] {
		note(compIdx+1+i, e)
		add(e)
	}
	return c
}

// pinState is what buildContext knows of the pins of a path.
type pinState struct {
	path   []*Entry
	pinned map[string]bool
	// keptFrom is the index of the latest compaction's first kept entry
	// (len(path) when the path has a compaction whose kept entry is not
	// found, 0 without a compaction): messages before it are in the
	// context only when pinned.
	keptFrom int
	edits    map[string][]Part
	// before holds, for each label entry by path index, the target's
	// label before it.
	before map[int]string
}

func newPinState(path []*Entry, compIdx int, edits map[string][]Part) *pinState {
	ps := &pinState{path: path, edits: edits, before: map[int]string{}}
	labels := map[string]string{}
	for i, e := range path {
		if e.Kind != KindLabel {
			continue
		}
		m := e.Metadata()
		ps.before[i] = labels[m.TargetID]
		if m.Label == "" {
			delete(labels, m.TargetID)
		} else {
			labels[m.TargetID] = m.Label
		}
	}
	ps.pinned = pinnedFrom(path, labels)
	if compIdx >= 0 {
		ps.keptFrom = len(path)
		for i := 0; i < compIdx; i++ {
			if path[i].ID == path[compIdx].Compaction.FirstKeptID {
				ps.keptFrom = i
				break
			}
		}
	}
	return ps
}

// grown returns how many tokens the label entry at index i added to the
// context by pinning its target (negative when it unpinned it): a pinned
// message of the summarized history enters the context, and a pinned
// message a strategy had shortened is shown whole. It is what Measure
// adds to a usage reported before the label.
func (ps *pinState) grown(i int) int {
	e := ps.path[i]
	m := e.Metadata()
	was, now := IsPinLabel(ps.before[i]), IsPinLabel(m.Label)
	if was == now {
		return 0
	}
	t := -1
	for j, x := range ps.path {
		if x.ID == m.TargetID {
			t = j
			break
		}
	}
	if t < 0 || !ps.path[t].IsContextMessage() {
		return 0
	}
	delta := 0
	for _, j := range pinGroup(ps.path, t) {
		m := ps.path[j].Message
		unpinned := 0 // its size in the context when not pinned
		if j >= ps.keptFrom {
			unpinned = m.Tokens()
			if content, ok := ps.edits[ps.path[j].ID]; ok {
				edited := *m
				edited.Content = content
				edited.ResetTokens()
				unpinned = EstimateTokens(&edited)
			}
		}
		delta += m.Tokens() - unpinned
	}
	if !now {
		delta = -delta
	}
	return delta
}

// SummaryMessage returns the context message that stands for a compaction
// entry: role compactionSummary with the summary as its text.
func SummaryMessage(e *Entry) *Message {
	m := TextMessage(RoleCompactionSummary, e.Compaction.Summary)
	return m
}

// ContextUsage is the measured size of a context.
type ContextUsage struct {
	// Tokens = UsageTokens + TrailingTokens.
	Tokens int `json:"tokens"`
	// UsageTokens is the context size the provider reported on its last
	// valid response (0 when there is none).
	UsageTokens int `json:"usageTokens"`
	// TrailingTokens is the estimate of every message after that response
	// (or of the whole context when there is no usable report).
	TrailingTokens int `json:"trailingTokens"`
	// LastUsageIndex is the index in the context's messages of the message
	// whose usage was used, -1 when none.
	LastUsageIndex int `json:"lastUsageIndex"`
}

// Measure returns the size of the context as a Meter counts it at four
// characters per token: the last valid provider usage plus the estimate
// of the messages after it that the model is sent. Usage of aborted or
// failed calls, and usage recorded before the latest compaction (which
// measured a context that no longer exists), is skipped. Context edits
// recorded after the usage was reported shrank the context it measured:
// their tokens freed are taken off it (never below zero). With no usable
// report the estimate of every message sent is the size. An aborted or
// failed reply, or a shell command excluded from the context, is not
// counted: ForModel does not send it.
func Measure(c *Context) ContextUsage {
	var m Meter
	m.Reset(c)
	return m.Usage()
}

// MeasureWith is Measure with the messages after the last usable report
// counted by count (an exact tokenizer, say package tiktoken's
// Counter.MessageTokens); nil counts with Message.Tokens, the estimate.
func MeasureWith(c *Context, count func(*Message) int) ContextUsage {
	m := Meter{Count: count}
	m.Reset(c)
	return m.Usage()
}

// IsPinned reports whether the i-th message of the context comes from a
// pinned entry (see Pin).
func (c *Context) IsPinned(i int) bool {
	return i >= 0 && i < len(c.EntryIDs) && c.pinned[c.EntryIDs[i]]
}

// ModelMessages returns the context as a chat API accepts it (see
// ForModel). After an automatic compaction (reason threshold or overflow
// recorded in its details) the summary message ends with
// ContinuationNote; after a manual one it does not.
func (c *Context) ModelMessages() []*Message {
	out := ForModel(c.Messages)
	if c.Compaction != nil && len(out) > 0 && c.Messages[0].Role == RoleCompactionSummary && AutomaticCompaction(c.Compaction) {
		out[0] = asUser(c.Messages[0], SummaryText(c.Messages[0].Text())+"\n\n"+ContinuationNote)
	}
	return out
}

// ForModel converts a context into the messages a chat API accepts: user,
// assistant and tool results. Summaries, user-run shell commands and
// custom messages become user messages; shell commands marked as excluded
// from the context are dropped, and so are assistant replies that were
// aborted or failed, with the tool results that answer their calls, as pi
// drops them: they are incomplete turns (a partial text, tool calls that
// never ran) that a provider may refuse and the model should not build
// on. The Meter counts exactly the messages kept here. The input is not
// modified.
func ForModel(msgs []*Message) []*Message {
	out := make([]*Message, 0, len(msgs))
	var sent sendFilter
	for _, m := range msgs {
		if !sent.keep(m) {
			continue
		}
		switch m.Role {
		case RoleCompactionSummary:
			out = append(out, asUser(m, SummaryText(m.Text())))
		case RoleBranchSummary:
			out = append(out, asUser(m, BranchPreface+"\n\n<summary>\n"+m.Text()+"\n</summary>"))
		case RoleBash:
			out = append(out, asUser(m, bashText(m)))
		case RoleCustom:
			u := *m
			u.Role = RoleUser
			if mm := m.Metadata(); mm.CustomType != "" {
				mm.CustomType = ""
				u.Meta = &mm
				if mm.IsZero() {
					u.Meta = nil
				}
			}
			u.ResetTokens()
			out = append(out, &u)
		default:
			out = append(out, m)
		}
	}
	return out
}

func asUser(m *Message, text string) *Message {
	u := TextMessage(RoleUser, text)
	u.Timestamp = m.Timestamp
	return u
}

// bashText renders a shell command the user ran, with its output and a
// failing exit status.
func bashText(m *Message) string {
	run := m.Metadata()
	var b strings.Builder
	b.WriteString("I ran `")
	b.WriteString(run.Command)
	b.WriteString("`")
	if run.Output != "" {
		b.WriteString("\n```\n")
		b.WriteString(run.Output)
		b.WriteString("\n```")
	} else {
		b.WriteString(" (no output)")
	}
	switch {
	case run.Cancelled:
		b.WriteString("\nThe command was cancelled.")
	case run.ExitCode != nil && *run.ExitCode != 0:
		b.WriteString("\nExit status: " + strconv.Itoa(*run.ExitCode))
	}
	return b.String()
}
