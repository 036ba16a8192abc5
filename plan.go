package compact

import "fmt"

// DefaultKeepRecentTokens is how many of the newest tokens a compaction
// keeps verbatim by default.
const DefaultKeepRecentTokens = 20000

// PlanOptions tune the cut-point planner. The zero value uses the
// defaults.
type PlanOptions struct {
	// KeepRecentTokens is the estimated size of the newest part of the
	// history kept verbatim; 0 means DefaultKeepRecentTokens.
	KeepRecentTokens int
}

// Plan says what a compaction of one path would do. It is computed from
// the entries alone and is cheap: nothing is summarized or written.
type Plan struct {
	// Path is the root-to-leaf path the plan was made for.
	Path []*Entry

	// FirstKeptIndex is the index in Path of the first entry kept
	// verbatim; FirstKeptID is its id.
	FirstKeptIndex int
	FirstKeptID    string

	// SpanStart is the index in Path where the summarized span begins:
	// the first entry the previous compaction kept, so that its kept
	// messages are summarized now rather than lost (pi bug #2608), or 0
	// without a previous compaction.
	SpanStart int

	// Messages is the history to summarize, oldest first.
	Messages []*Message

	// IsSplitTurn is true when the cut falls inside a turn; TurnStartIndex
	// is then the index in Path of the turn's first message and TurnPrefix
	// holds the turn's messages before the cut, summarized on their own.
	IsSplitTurn    bool
	TurnStartIndex int
	TurnPrefix     []*Message

	// PreviousCompaction is the latest compaction on the path before this
	// one, nil if none; PreviousSummary is its summary without the file
	// lists.
	PreviousCompaction *Entry
	PreviousSummary    string

	// Usage is the context size now; TokensBefore = Usage.Tokens.
	Usage        ContextUsage
	TokensBefore int

	// SpanTokens is the estimate of what the compaction replaces in the
	// context: the messages summarized (history and turn prefix, pinned
	// ones apart) as the model sees them, and the previous compaction's
	// summary. A summary must be smaller for the compaction to gain
	// anything (see ErrNothingToGain).
	SpanTokens int

	// KeptTokens is the estimate of the messages kept verbatim, the
	// pinned messages of the summarized history included.
	KeptTokens int

	// Pinned are the pinned messages before the kept part, oldest first:
	// they stay in the context after the summary and are not handed to
	// the summarizer. PinnedIDs are their entries' ids.
	Pinned    []*Message
	PinnedIDs []string

	// Files are the file operations of the summarized messages, merged
	// with the previous compaction's lists; ReadFiles and ModifiedFiles
	// are the lists to record.
	Files         FileOps
	ReadFiles     []string
	ModifiedFiles []string
}

// MessagesToSummarize is the number of messages the compaction replaces:
// the history plus the split turn's prefix.
func (p *Plan) MessagesToSummarize() int { return len(p.Messages) + len(p.TurnPrefix) }

// isTurnStart reports whether an entry begins a turn: a user message, a
// user-run shell command, or a message injected in the user's place.
func isTurnStart(e *Entry) bool {
	switch e.Kind {
	case KindBranchSummary, KindCustomMessage:
		return e.Message != nil
	case KindMessage:
		return e.Message != nil && (e.Message.Role == RoleUser || e.Message.Role == RoleBash)
	}
	return false
}

// isCutPoint reports whether the kept part may begin at this entry. Tool
// results never qualify, so a tool call is never separated from its result.
func isCutPoint(e *Entry) bool {
	if !e.IsContextMessage() {
		return false
	}
	return e.Message.Role != RoleToolResult
}

// PlanCompaction finds where to cut a path and what to summarize.
//
// It walks back from the newest message adding up estimates until
// KeepRecentTokens are covered, then cuts at the first valid cut point at
// or after that message (user, assistant, bash, custom or summary
// messages; never a tool result). Metadata entries just before the cut
// stay with the kept part. If no valid cut point follows (the newest tool
// results alone exceed the budget), it cuts at the last valid point rather
// than keeping everything (pi bugs #7201 and #6879). A cut inside a turn is
// a split turn whose prefix is returned separately.
//
// Pinned messages (see Pin) count first in the kept budget, wherever they
// are; those before the cut stay in the context after the summary and are
// left out of what is summarized.
//
// It returns an error wrapping ErrNothingToCompact when there is nothing
// to summarize.
func PlanCompaction(path []*Entry, opts PlanOptions) (*Plan, error) {
	keep := opts.KeepRecentTokens
	if keep <= 0 {
		keep = DefaultKeepRecentTokens
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("empty session: %w", ErrNothingToCompact)
	}
	p := &Plan{Path: path, TurnStartIndex: -1}
	// Sizes are those of the context the model sees, context edits
	// applied; the messages handed to the summarizer are the stored ones.
	pinned := Pinned(path)
	sizes := tokenSizer(path, pinned)

	prev := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Kind == KindCompaction && path[i].Compaction != nil {
			prev = i
			break
		}
	}
	start := 0
	if prev >= 0 {
		pc := path[prev]
		p.PreviousCompaction = pc
		p.PreviousSummary = StripPinnedCopy(StripFileLists(pc.Compaction.Summary))
		start = prev + 1
		for i := 0; i < prev; i++ {
			if path[i].ID == pc.Compaction.FirstKeptID {
				start = i
				break
			}
		}
	}
	p.SpanStart = start
	end := len(path)

	// The first valid cut point: the cut when everything fits.
	first := -1
	for i := start; i < end; i++ {
		if isCutPoint(path[i]) {
			first = i
			break
		}
	}

	if first < 0 {
		// No entry from the span start on can begin the kept part: the
		// previous compaction kept nothing and nothing came after it (pi
		// writes such compactions), or all that came after is tool results.
		return nil, fmt.Errorf("%s: %w", noCutReason(path, start, prev), ErrNothingToCompact)
	}
	cut := first
	acc := 0
	for _, e := range path {
		if pinned[e.ID] && e.IsContextMessage() {
			acc += sizes(e)
		}
	}
	for i := end - 1; i >= start; i-- {
		if !path[i].IsContextMessage() || pinned[path[i].ID] {
			continue
		}
		acc += sizes(path[i])
		if acc < keep {
			continue
		}
		// The first valid cut point at or after i; failing that, the
		// last one before it.
		found := false
		for c := i; c < end; c++ {
			if isCutPoint(path[c]) {
				cut, found = c, true
				break
			}
		}
		for c := i - 1; !found && c >= start; c-- {
			if isCutPoint(path[c]) {
				cut, found = c, true
			}
		}
		break
	}
	// The cut message's index, before pulling metadata into the kept part.
	msgCut := cut
	for cut > start {
		prevEntry := path[cut-1]
		if prevEntry.Kind == KindCompaction || prevEntry.IsContextMessage() {
			break
		}
		cut--
	}
	if !isTurnStart(path[msgCut]) {
		for i := msgCut; i >= start; i-- {
			if isTurnStart(path[i]) {
				p.TurnStartIndex = i
				break
			}
		}
		p.IsSplitTurn = p.TurnStartIndex >= 0
	}
	p.FirstKeptIndex = cut
	p.FirstKeptID = path[cut].ID

	historyEnd := cut
	if p.IsSplitTurn {
		historyEnd = p.TurnStartIndex
	}
	p.Messages = make([]*Message, 0, historyEnd-start)
	for i := start; i < historyEnd; i++ {
		if path[i].IsContextMessage() && !pinned[path[i].ID] {
			p.Messages = append(p.Messages, path[i].Message)
			p.SpanTokens += sizes(path[i])
		}
	}
	if p.IsSplitTurn {
		for i := p.TurnStartIndex; i < cut; i++ {
			if path[i].IsContextMessage() && !pinned[path[i].ID] {
				p.TurnPrefix = append(p.TurnPrefix, path[i].Message)
				p.SpanTokens += sizes(path[i])
			}
		}
	}
	for i := 0; i < cut && pinned != nil; i++ {
		if path[i].IsContextMessage() && pinned[path[i].ID] {
			p.Pinned = append(p.Pinned, path[i].Message)
			p.PinnedIDs = append(p.PinnedIDs, path[i].ID)
			p.KeptTokens += sizes(path[i])
		}
	}
	if len(p.Messages) == 0 && len(p.TurnPrefix) == 0 {
		return nil, fmt.Errorf("%s: %w", fitReason(path, start, prev, msgCut, keep, pinned, sizes), ErrNothingToCompact)
	}
	if prev >= 0 {
		p.SpanTokens += SummaryMessage(path[prev]).Tokens()
	}

	for i := cut; i < end; i++ {
		if path[i].IsContextMessage() {
			p.KeptTokens += sizes(path[i])
		}
	}
	p.Usage = measurePath(path, prev, sizes)
	p.TokensBefore = p.Usage.Tokens

	if p.PreviousCompaction != nil {
		p.Files.AddCompaction(p.PreviousCompaction.Compaction)
	}
	for _, m := range p.Messages {
		p.Files.AddMessage(m)
	}
	for _, m := range p.TurnPrefix {
		p.Files.AddMessage(m)
	}
	p.ReadFiles, p.ModifiedFiles = p.Files.Lists()
	return p, nil
}

// noCutReason says why no entry of path[start:] can begin the kept part;
// prev is the index of the last compaction, -1 for none.
func noCutReason(path []*Entry, start, prev int) string {
	n := countMessages(path[start:])
	since := "in the session"
	if prev >= 0 {
		since = fmt.Sprintf("after the last compaction (entry %s)", path[prev].ID)
	}
	if n == 0 {
		return "no message " + since
	}
	if n == 1 {
		return "the 1 message " + since + " is a tool result, and the kept part cannot begin at one"
	}
	return fmt.Sprintf("the %d messages %s are all tool results, and the kept part cannot begin at one", n, since)
}

// fitReason says why nothing lies before the kept part, whose first
// message is path[cut], with the numbers the planner compared: the size of the
// messages from the span start on against the keep budget. When the
// context is larger than those messages (the system prompt and tools a
// provider's usage counts, the previous summary, messages the path does
// not reach), it says how much is outside them.
func fitReason(path []*Entry, start, prev, cut, keep int, pinned map[string]bool, sizes func(*Entry) int) string {
	n, total, pinnedBefore := 0, 0, 0
	for i := start; i < len(path); i++ {
		if path[i].IsContextMessage() {
			n++
			total += sizes(path[i])
			if i < cut && pinned[path[i].ID] {
				pinnedBefore++
			}
		}
	}
	what := messagesPhrase(n)
	if prev >= 0 {
		what += fmt.Sprintf(" after the last compaction (entry %s)", path[prev].ID)
	}
	var reason string
	switch {
	case pinnedBefore > 0:
		reason = fmt.Sprintf("the %s before the kept part (entry %s on) are all pinned; the %s are ~%d tokens, the keep budget %d",
			messagesPhrase(pinnedBefore), path[cut].ID, what, total, keep)
	case total < keep && n == 1:
		reason = fmt.Sprintf("the %s (~%d tokens) fits in the %d tokens kept verbatim", what, total, keep)
	case total < keep:
		reason = fmt.Sprintf("all %s (~%d tokens) fit in the %d tokens kept verbatim", what, total, keep)
	default:
		verb := "are"
		if n == 1 {
			verb = "is"
		}
		reason = fmt.Sprintf("the %s %s ~%d tokens, more than the %d tokens kept verbatim, but the budget is reached at the oldest message the kept part can begin at (entry %s, ~%d tokens): nothing before it to summarize",
			what, verb, total, keep, path[cut].ID, sizeAt(path, cut, sizes))
	}
	if u := measurePath(path, prev, sizes); u.Tokens > total {
		outside := "the system prompt and tools, or messages not on this path"
		if prev >= 0 {
			outside = "the previous summary, the system prompt and tools, or messages not on this path"
		}
		reason += fmt.Sprintf("; the context is %d tokens, %d of them outside these messages (%s), which this compaction cannot shrink",
			u.Tokens, u.Tokens-total, outside)
	}
	return reason
}

// sizeAt is the size of the first message at or after path[i], 0 if none.
func sizeAt(path []*Entry, i int, sizes func(*Entry) int) int {
	for ; i < len(path); i++ {
		if path[i].IsContextMessage() {
			return sizes(path[i])
		}
	}
	return 0
}

// messagesPhrase is "1 message" or "N messages".
func messagesPhrase(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}

func countMessages(entries []*Entry) int {
	n := 0
	for _, e := range entries {
		if e.IsContextMessage() {
			n++
		}
	}
	return n
}

// measurePath is Measure(BuildContext(path)) without building the
// context: it walks back from the leaf to the last valid usage recorded
// after the compaction at index comp (-1 for none), and only when there is
// none, or a message the model is not sent comes after it, does it
// measure the whole context.
func measurePath(path []*Entry, comp int, sizes func(*Entry) int) ContextUsage {
	u := ContextUsage{LastUsageIndex: -1}
	freed := 0 // by context edits recorded after the usage found
	for i := len(path) - 1; i > comp; i-- {
		e := path[i]
		if e.Kind == KindContextEdit && e.Edit != nil && e.Edit.TokensFreed > 0 {
			freed += e.Edit.TokensFreed
		}
		if e.Kind == KindLabel {
			// A pin changes what the context holds: measure it whole.
			return Measure(BuildContext(path))
		}
		if !e.IsContextMessage() {
			continue
		}
		if notSent(e.Message) {
			// A message the model is not sent, which the meter leaves out
			// with what answers it: count forward, as the Meter does.
			return Measure(BuildContext(path))
		}
		if usage, ok := e.Message.ValidUsage(); ok {
			u.UsageTokens = max(usage.ContextTokens()-freed, 0)
			u.Tokens = u.UsageTokens + u.TrailingTokens
			// The index in the context: count the context messages before.
			u.LastUsageIndex = contextIndex(path, comp, i)
			return u
		}
		u.TrailingTokens += sizes(e)
	}
	return Measure(BuildContext(path))
}

// contextIndex returns the position in BuildContext(path).Messages of the
// message at path index i, after the compaction at index comp.
func contextIndex(path []*Entry, comp, i int) int {
	n := 0
	if comp >= 0 {
		n = 1 // the summary
		kept := false
		pinned := Pinned(path) // the pinned messages follow the summary
		for _, e := range path[:comp] {
			if e.ID == path[comp].Compaction.FirstKeptID {
				kept = true
			}
			if (kept || pinned[e.ID]) && e.IsContextMessage() {
				n++
			}
		}
	}
	for _, e := range path[comp+1 : i] {
		if e.IsContextMessage() {
			n++
		}
	}
	return n
}

// tokenSizer returns the estimate of an entry's message as the model sees
// it: the stored message's cached estimate, or the estimate of its
// replacement when a context edit on the path replaced it (never for a
// pinned entry, which is shown whole).
func tokenSizer(path []*Entry, pinned map[string]bool) func(*Entry) int {
	edits := EditsOf(path)
	if len(edits) == 0 {
		return func(e *Entry) int { return e.Message.Tokens() }
	}
	return func(e *Entry) int {
		content, ok := edits[e.ID]
		if !ok || pinned[e.ID] {
			return e.Message.Tokens()
		}
		m := *e.Message
		m.Content = content
		m.ResetTokens()
		return EstimateTokens(&m)
	}
}
