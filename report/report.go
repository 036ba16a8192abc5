package report

import (
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
)

// Input is what a report is built from: a session's entries and the
// settings the caller resolved for it.
type Input struct {
	// File names the session in the page's header, as the user gave it.
	File string
	// SessionID and Cwd come from the session's header; either may be "".
	SessionID string
	Cwd       string
	// Entries is every entry of the file, in file order. Compactions and
	// context edits found here but not on Path are counted in the header
	// as being on other branches.
	Entries []*compact.Entry
	// Path is the root-to-leaf path the report follows. It must not be
	// empty.
	Path []*compact.Entry
	// Model is the model whose window the chart is drawn against. A zero
	// ContextWindow means the window is unknown: the page then draws
	// neither the window nor the trigger line.
	Model compact.ModelInfo
	// Policy is the trigger policy whose threshold is drawn; nil means
	// compact.DefaultPolicy{}.
	Policy compact.Policy
	// DisableAuto records that automatic compaction is switched off; the
	// header says so.
	DisableAuto bool
}

// MarkerKind says what kind of event a chart marker stands for.
type MarkerKind string

// The kinds of chart markers. The kind of a compaction comes from the
// reason in its details: "threshold" is automatic, "overflow" was forced
// by a context-overflow error, and "manual" or no reason at all (pi's own
// entries record none) is manual.
const (
	KindAutomatic MarkerKind = "automatic"
	KindOverflow  MarkerKind = "overflow"
	KindManual    MarkerKind = "manual"
	// KindEdit is a context_edit entry: a cheap strategy's pass.
	KindEdit MarkerKind = "edit"
	// KindIdle is a compaction made on a cold prompt cache, after the
	// conversation was idle longer than the cache lives (reason "idle").
	KindIdle MarkerKind = "idle"
)

// Report is everything the page shows, as plain values.
type Report struct {
	File      string
	SessionID string
	Cwd       string
	// Leaf is the id of the path's last entry.
	Leaf string
	// Model and Provider name the model the window belongs to.
	Model    string
	Provider string
	// Window is the model's context window, 0 when unknown.
	Window int
	// Policy names the trigger policy; Trigger is its threshold, 0 when
	// the window is unknown.
	Policy  string
	Trigger int
	// DisableAuto is Input.DisableAuto.
	DisableAuto bool
	// ColdCache is set by a door that compacts a conversation idle past
	// its prompt cache's lifetime (the proxy): the legend then names that
	// kind, and an empty list of cards says "yet" (the conversation goes
	// on).
	ColdCache bool
	// Now is the context size at the leaf (compact.Measure) and
	// Decision what the trigger policy makes of it.
	Now      compact.ContextUsage
	Decision compact.Decision

	// Calls counts the model calls on the path (assistant messages);
	// Estimated how many of them carry no usable provider usage.
	Calls     int
	Estimated int
	// Messages counts the context messages stored on the path.
	Messages int
	// Compactions and Edits count the compaction and context_edit entries
	// on the path; OffPath those elsewhere in the file (other branches).
	Compactions int
	Edits       int
	OffPath     int

	// Points holds one point per model call, in path order.
	Points []Point
	// Markers holds one marker per compaction and context edit on the
	// path, in path order.
	Markers []Marker
	// Cards holds one card per compaction on the path, in path order.
	Cards []Card
	// EditRows describes the context edits on the path, in path order.
	EditRows []EditRow

	// ReadFiles and ModifiedFiles are the files the agent only read and
	// the files it wrote or edited, from the tool calls of the path's
	// messages and the lists of its compactions.
	ReadFiles     []string
	ModifiedFiles []string

	// ByRole and ByTool break the path's stored messages down by role and
	// by tool, with estimated tokens, largest first.
	ByRole []RoleStat
	ByTool []ToolStat
	// Largest holds the path's largest stored messages, at most
	// LargestCount, largest first.
	Largest []MessageStat
}

// Point is the context size at one model call.
type Point struct {
	// Call numbers the model calls from 1.
	Call int
	// EntryID is the assistant message's entry.
	EntryID string
	// Tokens is the context size: the usage the provider reported
	// (compact.Usage.ContextTokens), or, when the call carries no usable
	// report (aborted, failed, or all zeros), the estimate compact.Measure
	// makes at that point.
	Tokens int
	// Estimated is true when Tokens is an estimate.
	Estimated bool
}

// Marker places a compaction or a context edit between model calls.
type Marker struct {
	Kind MarkerKind
	// EntryID is the compaction or context_edit entry.
	EntryID string
	// AfterCall is the number of model calls before the entry on the
	// path: the marker sits between call AfterCall and the next one.
	AfterCall int
	// Label is the compaction's reason as recorded ("" when none) or the
	// edit's strategy.
	Label string
	// TokensBefore and TokensAfter are the context sizes around the
	// event; for an edit, TokensAfter = TokensBefore - the tokens freed.
	TokensBefore int
	TokensAfter  int
	// Card is the number (from 1) of the compaction's card, 0 for an
	// edit.
	Card int
}

// Card describes one compaction.
type Card struct {
	// Number counts the compactions on the path from 1.
	Number    int
	EntryID   string
	Timestamp string
	Kind      MarkerKind
	// Reason is the reason recorded in the entry's details, "" when none.
	Reason string
	// TokensBefore is the context size when the compaction ran (as
	// recorded). TokensAfter is the size right after it: as recorded, or
	// when the entry has none (pi records none) the estimate of the
	// summary and the kept messages, with AfterEstimated set.
	TokensBefore   int
	TokensAfter    int
	AfterEstimated bool
	// Freed is TokensBefore - TokensAfter (negative when the context
	// grew).
	Freed int
	// Summarized counts the context messages the summary replaced: those
	// on the path from the previous compaction's first kept entry (or the
	// start) up to this one's.
	Summarized int
	// FirstKeptID is the first entry kept verbatim. FirstKept describes
	// it where entries have no ids (the proxy: "message 15, user: …").
	FirstKeptID string
	FirstKept   string
	// Summarizer names what wrote the summary, "" when not recorded.
	// Cost and Usage describe its own spending, "" when not recorded.
	Summarizer string
	Cost       string
	Usage      string
	// Fallback is set when the configured summarizer failed and the
	// fallback wrote the summary; SummarizerError is its error.
	Fallback        bool
	SummarizerError string
	// FromHook is set when an extension wrote the summary.
	FromHook bool
	// Intro is the summary's text before its first "## " heading.
	Intro []Block
	// Sections are the summary's "## " sections, in order.
	Sections []Section
	// ReadFiles and ModifiedFiles are the entry's file lists.
	ReadFiles     []string
	ModifiedFiles []string
	// Facts are more numbers a door knows about the compaction (the
	// proxy: how long it took, whether it was written ahead, what the
	// summary requests read from the cache), shown after the others.
	Facts []Fact
}

// Fact is one labelled value of a card.
type Fact struct {
	Label string
	Value string
}

// EditRow describes one context edit.
type EditRow struct {
	EntryID   string
	Timestamp string
	Strategy  string
	// Messages counts the messages the pass replaced.
	Messages int
	Freed    int
	// AfterCall is the marker's place (see Marker.AfterCall).
	AfterCall int
}

// RoleStat counts the messages of one role and their estimated tokens
// (see Composition).
type RoleStat struct {
	Role     string `json:"role"`
	Messages int    `json:"messages"`
	Tokens   int    `json:"tokens"`
}

// ToolStat counts the calls of one tool and the estimated tokens of its
// results.
type ToolStat struct {
	Tool         string `json:"tool"`
	Calls        int    `json:"calls"`
	Results      int    `json:"results"`
	Errors       int    `json:"errors"`
	ResultTokens int    `json:"resultTokens"`
}

// MessageStat is one large message.
type MessageStat struct {
	EntryID string
	Role    string
	// Tool is the tool of a tool result, or the tools an assistant
	// message calls, comma-separated.
	Tool    string
	Tokens  int
	Preview string
}

// LargestCount is how many of the largest messages a report lists.
const LargestCount = 10

// Build computes the report of in. A path without entries (a session
// holding only its header) gives a report without calls or compactions.
// It returns an error for nothing else today; the error result leaves
// room for checks of the input.
func Build(in Input) (*Report, error) {
	policy := in.Policy
	if policy == nil {
		policy = compact.DefaultPolicy{}
	}
	ctx := compact.BuildContext(in.Path)
	r := &Report{
		File:        in.File,
		SessionID:   in.SessionID,
		Cwd:         in.Cwd,
		Model:       in.Model.ID,
		Provider:    in.Model.Provider,
		Window:      in.Model.ContextWindow,
		Policy:      policy.Name(),
		DisableAuto: in.DisableAuto,
		Now:         compact.Measure(ctx),
	}
	if len(in.Path) > 0 {
		r.Leaf = in.Path[len(in.Path)-1].ID
	}
	if r.Model == "" {
		r.Model = ctx.Model
	}
	if r.Provider == "" {
		r.Provider = ctx.Provider
	}
	if t, ok := policy.Threshold(in.Model); ok {
		r.Trigger = t
	}
	r.Decision = compact.Check(policy, in.Model, r.Now, in.DisableAuto)

	r.walk(in.Path)
	r.OffPath = offPath(in.Entries, in.Path)
	r.files(in.Path)
	r.composition(in.Path)
	return r, nil
}

// walk follows the path once, measuring the context at every model call
// and around every compaction and edit.
func (r *Report) walk(path []*compact.Entry) {
	meter := &compact.Meter{}
	index := make(map[string]int, len(path))
	for i, e := range path {
		index[e.ID] = i
	}
	// keptFrom is the path index where the messages the next compaction
	// summarizes start: the previous compaction's first kept entry.
	keptFrom := 0
	for i, e := range path {
		switch {
		case e.Kind == compact.KindCompaction && e.Compaction != nil:
			before := meter.Usage().Tokens
			meter.Reset(compact.BuildContext(path[:i+1]))
			card := r.card(e, path, index, keptFrom, i, before, meter.Usage().Tokens)
			r.Cards = append(r.Cards, card)
			r.Compactions++
			r.Markers = append(r.Markers, Marker{Kind: card.Kind, EntryID: e.ID, AfterCall: r.Calls, Label: card.Reason,
				TokensBefore: card.TokensBefore, TokensAfter: card.TokensAfter, Card: card.Number})
			if k, ok := index[e.Compaction.FirstKeptID]; ok && k < i {
				keptFrom = k
			} else {
				keptFrom = i
			}
		case e.Kind == compact.KindContextEdit && e.Edit != nil:
			before := meter.Usage().Tokens
			meter.Reset(compact.BuildContext(path[:i+1]))
			r.Edits++
			row := EditRow{EntryID: e.ID, Timestamp: e.Timestamp, Strategy: e.Edit.Strategy, Messages: len(e.Edit.Edits),
				Freed: e.Edit.TokensFreed, AfterCall: r.Calls}
			r.EditRows = append(r.EditRows, row)
			r.Markers = append(r.Markers, Marker{Kind: KindEdit, EntryID: e.ID, AfterCall: r.Calls, Label: e.Edit.Strategy,
				TokensBefore: before, TokensAfter: before - e.Edit.TokensFreed})
		case e.IsContextMessage():
			r.Messages++
			meter.Add(e.Message)
			if e.Message.Role != compact.RoleAssistant {
				continue
			}
			r.Calls++
			p := Point{Call: r.Calls, EntryID: e.ID}
			if u, ok := e.Message.ValidUsage(); ok {
				p.Tokens = u.ContextTokens()
			} else {
				p.Tokens, p.Estimated = meter.Usage().Tokens, true
				r.Estimated++
			}
			r.Points = append(r.Points, p)
		}
	}
}

// card describes the compaction entry e at path index i. keptFrom is
// where the messages it summarized start; measured and after are the
// context sizes just before and just after it.
func (r *Report) card(e *compact.Entry, path []*compact.Entry, index map[string]int, keptFrom, i, measured, after int) Card {
	c := e.Compaction
	card := Card{
		Number:        len(r.Cards) + 1,
		EntryID:       e.ID,
		Timestamp:     e.Timestamp,
		TokensBefore:  c.TokensBefore,
		TokensAfter:   c.TokensAfter,
		FirstKeptID:   c.FirstKeptID,
		FromHook:      c.FromHook,
		ReadFiles:     c.ReadFiles,
		ModifiedFiles: c.ModifiedFiles,
	}
	card.Reason, _ = c.Details["reason"].(string)
	card.Kind = kindOf(card.Reason)
	card.Summarizer, _ = c.Details["summarizer"].(string)
	card.Fallback, _ = c.Details["fallback"].(bool)
	card.SummarizerError, _ = c.Details["summarizerError"].(string)
	card.Cost = costOf(c.Details["cost"])
	card.Usage = usageOf(c.Details["usage"])
	if card.TokensBefore <= 0 {
		card.TokensBefore = measured
	}
	if card.TokensAfter <= 0 {
		card.TokensAfter, card.AfterEstimated = after, true
	}
	card.Freed = card.TokensBefore - card.TokensAfter

	end := i
	if k, ok := index[c.FirstKeptID]; ok && k < i {
		end = k
	}
	for _, p := range path[min(keptFrom, end):end] {
		if p.IsContextMessage() {
			card.Summarized++
		}
	}
	card.Intro, card.Sections = ParseSummary(compact.StripFileLists(c.Summary))
	return card
}

// kindOf maps a recorded compaction reason to a marker kind.
func kindOf(reason string) MarkerKind {
	switch compact.Reason(reason) {
	case compact.ReasonThreshold:
		return KindAutomatic
	case compact.ReasonOverflow:
		return KindOverflow
	case compact.ReasonIdle:
		return KindIdle
	}
	return KindManual
}

// KindOf is the marker kind of a compaction made for reason (as
// compact.Reason names them): threshold is automatic, overflow forced,
// idle a cold-cache compaction, anything else manual.
func KindOf(reason string) MarkerKind { return kindOf(reason) }

// costOf formats a recorded summarizer cost: a number, or an object with
// a "total".
func costOf(v any) string {
	if m, ok := v.(map[string]any); ok {
		v = m["total"]
	}
	if f, ok := v.(float64); ok {
		return fmt.Sprintf("$%.4f", f)
	}
	return ""
}

// usageOf formats a recorded summarizer usage object, "" when absent.
func usageOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	in, _ := m["input"].(float64)
	out, _ := m["output"].(float64)
	if in == 0 && out == 0 {
		return ""
	}
	return fmt.Sprintf("%s in, %s out", numfmt.Thousands(int(in)), numfmt.Thousands(int(out)))
}

// offPath counts the compaction and context_edit entries of the file that
// are not on the path.
func offPath(entries, path []*compact.Entry) int {
	on := make(map[*compact.Entry]bool, len(path))
	for _, e := range path {
		on[e] = true
	}
	n := 0
	for _, e := range entries {
		if (e.Kind == compact.KindCompaction || e.Kind == compact.KindContextEdit) && !on[e] {
			n++
		}
	}
	return n
}

// files collects the files touched on the path.
func (r *Report) files(path []*compact.Entry) {
	var ops compact.FileOps
	for _, e := range path {
		switch {
		case e.Kind == compact.KindCompaction:
			ops.AddCompaction(e.Compaction)
		case e.IsContextMessage():
			ops.AddMessage(e.Message)
		}
	}
	r.ReadFiles, r.ModifiedFiles = ops.Lists()
}
