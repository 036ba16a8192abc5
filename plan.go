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

	cut := start
	if first >= 0 {
		cut = first
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
		}
	}
	if p.IsSplitTurn {
		for i := p.TurnStartIndex; i < cut; i++ {
			if path[i].IsContextMessage() && !pinned[path[i].ID] {
				p.TurnPrefix = append(p.TurnPrefix, path[i].Message)
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
		if len(p.Pinned) > 0 && first >= 0 && cut > start {
			return nil, fmt.Errorf("the messages before the kept part are all pinned: %w", ErrNothingToCompact)
		}
		return nil, fmt.Errorf("all %d messages fit in the %d tokens kept verbatim: %w", countMessages(path[start:]), keep, ErrNothingToCompact)
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
// none does it estimate the whole context.
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
