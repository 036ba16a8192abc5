package cline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/jsonrec"
)

// builder turns the decoded files into the transcript's entries.
type builder struct {
	name string
	t    *compact.Transcript
	msgs []*apiMessage
	ui   []*uiMessage

	// open maps the id of each tool call not yet answered to its tool.
	open map[string]string
	// asst is the entry of the last assistant message and its index.
	asst      *compact.Entry
	asstIndex int
	// first is the id of the first entry of each api message.
	first []string
	// reqOf maps an assistant entry to the api_req_started of its call.
	reqOf map[*compact.Entry]*apiReq
	// tsOf gives a time to api messages that store none.
	tsOf map[int]int64
	// usage maps an api message index to the request it was measured by.
	usage map[int]*apiReq
	// xmlCalls counts the calls synthesized for XML tool uses.
	xmlCalls int
	// tools are the names of the XML tools looked for in assistant text.
	tools map[string]bool
}

func (b *builder) warn(format string, args ...any) {
	b.t.Warnings = append(b.t.Warnings, fmt.Sprintf(format, args...))
}

func (b *builder) add(e *compact.Entry) { b.t.Entries = append(b.t.Entries, e) }

// entryID returns the id of the k-th entry (k from 0) made from api
// message i.
func entryID(i, k int) string {
	if k == 0 {
		return fmt.Sprintf("m%d", i)
	}
	return fmt.Sprintf("m%d.%d", i, k)
}

func (b *builder) build() {
	b.first = make([]string, len(b.msgs))
	b.reqOf = map[*compact.Entry]*apiReq{}
	b.tsOf = map[int]int64{}
	reqs := apiRequests(b.ui)
	b.mapUsage(reqs)
	ranges := b.deletedRanges(reqs)
	b.tools = xmlTools()
	for _, m := range b.msgs {
		if m.role != "user" {
			continue
		}
		for _, x := range m.blocks {
			if h, ok := parseHeader(x.part.Text); ok && x.Type == "text" {
				b.tools[h.tool] = true
			}
		}
	}
	for i, m := range b.msgs {
		b.first[i] = entryID(i, 0)
		b.message(m)
		for _, r := range ranges[i] {
			b.add(b.truncation(r))
		}
	}
	if n := len(b.msgs); n > 0 && b.asst != nil && b.asstIndex == n-1 {
		// What the last response asked for, still unanswered.
		b.leftoverUses(true)
	}
	for _, r := range reqs {
		if !r.used && r.info.hasUsage() {
			b.add(&compact.Entry{ID: fmt.Sprintf("ui%d", r.ui.index), Kind: compact.KindCustom, Timestamp: rfc3339(r.ui.Ts), Meta: &compact.EntryMeta{CustomType: Format + ":api_req_started", Data: r.ui.raw}})
		}
	}
	b.finish()
}

// message adds the entries of one api message.
func (b *builder) message(m *apiMessage) {
	ts := m.ts
	if ts == 0 {
		ts = b.tsOf[m.index]
	}
	switch {
	case m.isSummary:
		b.add(b.condensed(m))
	case m.isMarker:
		b.add(b.marker(m))
	case m.role == "assistant":
		b.assistant(m, ts)
	case m.role == "user":
		b.user(m, ts)
	default:
		kind := m.role
		if kind == "" {
			kind = m.typ
		}
		if kind != "reasoning" {
			b.t.Unknown[kind]++
		}
		b.add(&compact.Entry{ID: entryID(m.index, 0), Kind: compact.KindCustom, Timestamp: rfc3339(ts), Meta: &compact.EntryMeta{CustomType: Format + ":" + kind, Data: m.raw}})
	}
}

// ownKeys are the message extras this package sets itself; a stored
// member of the same name is kept as "cline.<name>" (the members named as
// pi's fields are renamed by jsonrec.SafeExtras, in ReadTask).
var ownKeys = map[string]bool{"unknownBlocks": true, "clineHeader": true}

// messageExtra returns the members of an api message that a Message does
// not model, plus the blocks it could not map.
func messageExtra(m *apiMessage, unknown []json.RawMessage) map[string]json.RawMessage {
	ex := extras(m.fields, ownKeys, "role", "content")
	if len(unknown) > 0 {
		if ex == nil {
			ex = map[string]json.RawMessage{}
		}
		ex["unknownBlocks"], _ = json.Marshal(unknown)
	}
	return ex
}

// assistant adds an assistant message: text, reasoning, native tool_use
// blocks (as calls) and images; its usage from the message's own metrics
// or from the ui's api_req_started.
func (b *builder) assistant(m *apiMessage, ts int64) {
	msg := &compact.Message{Role: compact.RoleAssistant, Timestamp: ts}
	var unknown []json.RawMessage
	for _, x := range m.blocks {
		if x.kept {
			unknown = append(unknown, x.Raw)
			b.t.Unknown["block:"+x.Type]++
			continue
		}
		msg.Content = append(msg.Content, x.part)
		b.countUnmodelled(x.part)
		if c := x.part.ToolCall; c != nil {
			b.open[c.ID] = c.Name
		}
	}
	msg.Extra = messageExtra(m, unknown)
	if mi := m.modelInfo; mi != nil {
		msg.Provider, msg.Model = mi.ProviderID, mi.ModelID
	}
	if u := metricsUsage(m.fields["metrics"]); u != nil {
		msg.Usage = u
	}
	r := b.usage[m.index]
	if ts == 0 && r != nil {
		ts = r.ui.Ts
		msg.Timestamp = ts
	}
	e := &compact.Entry{ID: entryID(m.index, 0), Kind: compact.KindMessage, Timestamp: rfc3339(ts), Message: msg}
	if r != nil {
		b.reqOf[e] = r
		if msg.Usage == nil {
			msg.Usage = reqUsage(&r.info)
		}
		if mi := r.ui.ModelInfo; mi != nil && msg.Model == "" {
			msg.Provider, msg.Model = mi.ProviderID, mi.ModelID
		}
	}
	b.add(e)
	b.asst, b.asstIndex = e, m.index
}

// user adds a user message: its tool results (native tool_result blocks,
// and the "[tool for 'x'] Result:" text blocks of the XML protocol) each
// as a tool result message first, then what remains as one user message.
func (b *builder) user(m *apiMessage, ts int64) {
	var results []*compact.Message
	// orphans are the results whose call the history does not hold, as
	// harness notes (see compact.OrphanResult); they follow the results.
	var orphans []*compact.Message
	var rest []compact.Part
	var unknown []json.RawMessage
	// answered maps a tool to the last result a header of this message
	// gave it.
	answered := map[string]*compact.Message{}
	for j := 0; j < len(m.blocks); j++ {
		x := m.blocks[j]
		switch {
		case x.result != nil:
			r := x.result
			id := r.ToolCallID
			tool, ok := b.open[id]
			r.ToolName, r.Timestamp = tool, ts
			for _, p := range r.Content {
				b.countUnmodelled(p)
			}
			if !ok {
				b.warn("%s:%d: message %d: tool_result %q has no earlier tool_use; kept as a harness note", b.name, m.line, m.index+1, id)
				orphans = append(orphans, compact.OrphanResult(Format, r))
				continue
			}
			delete(b.open, id)
			results = append(results, r)
		case x.kept:
			unknown = append(unknown, x.Raw)
			b.t.Unknown["block:"+x.Type]++
		case x.Type == "text":
			h, ok := parseHeader(x.part.Text)
			if !ok {
				rest = append(rest, splitWrapped(x.part)...)
				continue
			}
			var parts []compact.Part
			if strings.TrimSpace(h.rest) != "" {
				parts = append(parts, compact.Part{Type: compact.PartText, Text: h.rest})
			}
			for j+1 < len(m.blocks) && resultBody(m.blocks[j+1]) {
				j++
				parts = append(parts, m.blocks[j].part)
			}
			if prev := answered[h.tool]; prev != nil && !b.unanswered(m.index, h.tool) {
				// A second header for the same use (Roo Code answers one
				// read_file with two, say): the same call's output goes on.
				prev.Content = append(prev.Content, compact.Part{Type: compact.PartText, Text: x.part.Text})
				prev.Content = append(prev.Content, parts...)
				prev.IsError = prev.IsError || xmlError(parts)
				continue
			}
			id := b.xmlCall(m.index, h.tool)
			extra := map[string]json.RawMessage{}
			extra["clineHeader"] = jsonString(h.header)
			for k, v := range x.part.Extra {
				extra[k] = v
			}
			r := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, ToolName: h.tool,
				IsError: xmlError(parts), Content: parts, Timestamp: ts, Extra: extra}
			if id == "" {
				b.warn("%s:%d: message %d: %q has no assistant message before it; kept as a harness note", b.name, m.line, m.index+1, h.header)
				orphans = append(orphans, compact.OrphanResult(Format, r))
				continue
			}
			answered[h.tool] = r
			results = append(results, r)
		default:
			rest = append(rest, x.part)
			b.countUnmodelled(x.part)
		}
	}
	if b.asst != nil && b.asstIndex == m.index-1 {
		for _, c := range b.leftoverUses(false) {
			if r := notExecuted(c, results, &rest, ts); r != nil {
				results = append(results, r)
			}
		}
	}
	extra := messageExtra(m, unknown)
	k := 0
	for _, r := range append(results, orphans...) {
		if k == 0 {
			r.Extra = jsonrec.Merge(extra, r.Extra)
		}
		b.add(&compact.Entry{ID: entryID(m.index, k), Kind: compact.KindMessage, Timestamp: rfc3339(ts), Message: r})
		k++
	}
	if k == 0 && len(rest) == 0 {
		rest = []compact.Part{} // an empty message stays one
	}
	// The rest in runs of the user's parts and the extension's notes, in
	// the order written.
	for len(rest) > 0 || k == 0 {
		kind := noteKind(rest)
		n := 1
		for n < len(rest) && noteKind(rest[n:]) == kind {
			n++
		}
		if len(rest) == 0 {
			n = 0
		}
		u := &compact.Message{Role: compact.RoleUser, Content: rest[:n], Timestamp: ts}
		if kind != "" {
			u.MarkHarnessNote(Format, kind)
		}
		if k == 0 {
			u.Extra = extra
		}
		b.add(&compact.Entry{ID: entryID(m.index, k), Kind: compact.KindMessage, Timestamp: rfc3339(ts), Message: u})
		rest = rest[n:]
		k++
	}
}

// noteKind names the extension's own text that the first of parts is, ""
// when it may be the user's: the environment details appended to every
// user message, Cline's reminder to keep a todo list, and the preambles
// before the user's words that splitWrapped cuts off.
func noteKind(parts []compact.Part) string {
	if len(parts) == 0 || parts[0].Type != compact.PartText {
		return ""
	}
	s := strings.TrimSpace(parts[0].Text)
	switch {
	case strings.HasPrefix(s, "<environment_details>"):
		return "environment_details"
	case strings.HasPrefix(s, "# TODO LIST RECOMMENDED"):
		return "todo_reminder"
	case strings.HasPrefix(s, resumptionMark):
		return "task_resumption"
	}
	for _, w := range wrappers {
		for _, pre := range w.preambles {
			if s == pre {
				return w.kind
			}
		}
	}
	return ""
}

// resumptionMark begins the preamble Cline and Roo Code write into the
// user's turn when an interrupted task is resumed.
const resumptionMark = "[TASK RESUMPTION]"

// wrappers are the preambles the extension writes before the user's own
// words, which it wraps in tags: the resumption of an interrupted task
// (Roo Code's newer versions write only "New instructions for task
// continuation:") and the user's feedback on a result.
var wrappers = []struct {
	kind       string
	preambles  []string // how the preamble begins; all of it but the first
	open, shut string
}{
	{"task_resumption", []string{resumptionMark, "New instructions for task continuation:"}, "<user_message>", "</user_message>"},
	{"feedback", []string{"The user provided the following feedback:", "Feedback on the result:"}, "<feedback>", "</feedback>"},
}

// splitWrapped splits a text part that begins with one of the extension's
// preambles (see wrappers) into the preamble, a note (see noteKind), and
// the user's own words after it: the words become a part of their own,
// without their tags. Any other part comes back as it is, and so does a
// preamble followed by no words.
func splitWrapped(p compact.Part) []compact.Part {
	if p.Type != compact.PartText {
		return []compact.Part{p}
	}
	s := p.Text
	t := strings.TrimSpace(s)
	for _, w := range wrappers {
		if !slices.ContainsFunc(w.preambles, func(pre string) bool { return strings.HasPrefix(t, pre) }) {
			continue
		}
		i := strings.Index(s, w.open)
		if i < 0 {
			break
		}
		words := s[i+len(w.open):]
		if j := strings.LastIndex(words, w.shut); j >= 0 {
			words = words[:j] + words[j+len(w.shut):]
		}
		words = strings.TrimSpace(words)
		pre := p
		pre.Text = strings.TrimSpace(s[:i])
		if words == "" {
			return []compact.Part{pre}
		}
		return []compact.Part{pre, {Type: compact.PartText, Text: words}}
	}
	return []compact.Part{p}
}

// cwdOf finds the working directory in the environment details Cline and
// Roo Code append to user messages: "# Current Working Directory (<dir>)
// Files" (Roo: "Workspace Directory").
func cwdOf(parts []compact.Part) string {
	for _, p := range parts {
		if p.Type != compact.PartText {
			continue
		}
		for _, head := range []string{"# Current Working Directory (", "# Current Workspace Directory ("} {
			i := strings.Index(p.Text, head)
			if i < 0 {
				continue
			}
			rest := p.Text[i+len(head):]
			if j := strings.Index(rest, ") Files"); j > 0 && !strings.Contains(rest[:j], "\n") {
				return rest[:j]
			}
		}
	}
	return ""
}

// finish sets what needs the whole file: stop reasons, the transcript's
// start time, first model (and its provider) and working directory.
func (b *builder) finish() {
	for _, e := range b.t.Entries {
		m := e.Message
		if m == nil {
			continue
		}
		if m.Role == compact.RoleAssistant {
			m.StopReason = stopReason(m, b.reqOf[e])
			if m.Model != "" && b.t.Model == "" {
				b.t.Model, b.t.Provider = m.Model, m.Provider
			}
		}
		if b.t.Timestamp == "" && e.Timestamp != "" {
			b.t.Timestamp = e.Timestamp
		}
		if b.t.Cwd == "" && (m.Role == compact.RoleUser || m.Role == compact.RoleCustom) {
			b.t.Cwd = cwdOf(m.Content)
		}
	}
	if b.t.Timestamp == "" {
		for _, u := range b.ui {
			if u.Ts > 0 {
				b.t.Timestamp = rfc3339(u.Ts)
				break
			}
		}
	}
}

// stopReason maps how an assistant message ended: toolUse when it calls
// tools; aborted or error when Cline marked it interrupted (its
// "[Response interrupted by user]" / "...by API Error]" suffix, or the
// request's cancelReason); stop otherwise.
func stopReason(m *compact.Message, r *apiReq) compact.StopReason {
	if r != nil {
		switch r.info.CancelReason {
		case "user_cancelled":
			return compact.StopAborted
		case "streaming_failed", "retries_exhausted":
			return compact.StopError
		}
	}
	text := strings.TrimSpace(m.Text())
	switch {
	case strings.HasSuffix(text, "[Response interrupted by user]"):
		return compact.StopAborted
	case strings.HasSuffix(text, "[Response interrupted by API Error]"):
		return compact.StopError
	case len(m.ToolCalls()) > 0:
		return compact.StopToolUse
	}
	return compact.StopEnd
}

// rfc3339 formats a Unix millisecond time, "" for 0.
func rfc3339(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return jsonrec.Stamp(time.UnixMilli(ms))
}

// extras returns the members of f not listed in modelled, or nil; one
// named in reserved is kept as "cline.<name>".
func extras(f map[string]json.RawMessage, reserved map[string]bool, modelled ...string) map[string]json.RawMessage {
	return jsonrec.ExtrasRenamed(f, reserved, Format+".", modelled...)
}

// countUnmodelled counts a part standing for a block the Anthropic
// mapping does not model (a document, a server tool's block; see
// anthropic.BlockExtra) in Transcript.Unknown as "block:<type>".
func (b *builder) countUnmodelled(p compact.Part) {
	if typ := anthropic.UnmodelledType(p); typ != "" {
		b.t.Unknown["block:"+typ]++
	}
}
