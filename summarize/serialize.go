package summarize

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// The transcript is plain text. Each message becomes one or more blocks,
// a header line in square brackets followed by the text:
//
//	[user]                      a user message
//	[user shell command]        a command the user ran (pi's "!cmd")
//	[note: TYPE]                a message injected by an extension
//	[earlier summary]           a compaction summary inside the history
//	[branch summary]            the summary of an abandoned branch
//	[assistant]                 the assistant's text
//	[assistant reasoning]       its thinking, capped like tool output
//	[tool call: NAME]           the call's JSON arguments, capped
//	[tool result: NAME]         the tool's output, capped
//	[tool result: NAME, error]  a failed tool call's output, capped
//
// Each tool call is written together with its result, right after it,
// even when the model made several calls in parallel, and the two form a
// unit the chunker never splits. Blocks of one unit are separated by a
// line break, units by an empty line.

// unit is a piece of the transcript that is never split across chunks:
// a message's text, or a tool call with its result.
type unit struct {
	blocks []block
	// turnStart is true for the first unit of a message that begins a
	// turn (user messages and what stands in their place).
	turnStart bool
	// size is the byte length of the rendered unit.
	size int
}

// block is one header line and its text.
type block struct {
	header string
	body   string
}

const (
	blockSep = "\n"
	unitSep  = "\n\n"
)

func (u *unit) render() string {
	var b strings.Builder
	b.Grow(u.size)
	for i, bl := range u.blocks {
		if i > 0 {
			b.WriteString(blockSep)
		}
		b.WriteString(bl.header)
		b.WriteByte('\n')
		b.WriteString(bl.body)
	}
	return b.String()
}

func (u *unit) measure() {
	n := 0
	for i, bl := range u.blocks {
		if i > 0 {
			n += len(blockSep)
		}
		n += len(bl.header) + 1 + len(bl.body)
	}
	u.size = n
}

// serializer turns messages into units.
type serializer struct {
	// capChars bounds tool output, tool arguments and reasoning, in
	// characters.
	capChars int
}

// units serializes msgs, oldest first.
func (s serializer) units(msgs []*compact.Message) []unit {
	var out []unit
	used := make(map[int]bool) // indexes of tool results already written
	for i, m := range msgs {
		switch m.Role {
		case compact.RoleUser:
			out = s.add(out, true, block{"[user]", s.contentText(m)})
		case compact.RoleBash:
			if m.Metadata().ExcludeFromContext {
				continue
			}
			out = s.add(out, true, block{"[user shell command]", s.bashText(m)})
		case compact.RoleCustom:
			h := "[note]"
			if ct := m.Metadata().CustomType; ct != "" {
				h = "[note: " + oneLine(ct) + "]"
			}
			out = s.add(out, true, block{h, s.contentText(m)})
		case compact.RoleCompactionSummary:
			out = s.add(out, true, block{"[earlier summary]", clean(m.Text())})
		case compact.RoleBranchSummary:
			out = s.add(out, true, block{"[branch summary]", clean(m.Text())})
		case compact.RoleToolResult:
			if used[i] {
				continue
			}
			out = s.add(out, false, s.resultBlock(m))
		case compact.RoleAssistant:
			out = s.assistant(out, msgs, i, used)
		default:
			if t := clean(m.Text()); t != "" {
				out = s.add(out, false, block{"[" + oneLine(string(m.Role)) + "]", t})
			}
		}
	}
	return out
}

// add appends a unit of the given blocks, skipping blocks without text.
func (s serializer) add(out []unit, turnStart bool, blocks ...block) []unit {
	u := unit{turnStart: turnStart}
	for _, b := range blocks {
		if b.body != "" {
			u.blocks = append(u.blocks, b)
		}
	}
	if len(u.blocks) == 0 {
		return out
	}
	u.measure()
	return append(out, u)
}

// assistant writes an assistant message: its text and reasoning in
// order, each tool call followed by its result.
func (s serializer) assistant(out []unit, msgs []*compact.Message, i int, used map[int]bool) []unit {
	m := msgs[i]
	// The results of this message's calls are the tool results that
	// follow it directly.
	results := make(map[string]int)
	for j := i + 1; j < len(msgs) && msgs[j].Role == compact.RoleToolResult; j++ {
		if id := msgs[j].ToolCallID; id != "" && !used[j] {
			if _, dup := results[id]; !dup {
				results[id] = j
			}
		}
	}
	var text []string
	flush := func() {
		if len(text) > 0 {
			out = s.add(out, false, block{"[assistant]", clean(strings.Join(text, "\n"))})
			text = nil
		}
	}
	for _, p := range m.Content {
		switch p.Type {
		case compact.PartText:
			if strings.TrimSpace(p.Text) != "" {
				text = append(text, p.Text)
			}
		case compact.PartThinking:
			flush()
			out = s.add(out, false, block{"[assistant reasoning]", s.capText(clean(p.Thinking))})
		case compact.PartImage:
			text = append(text, "[image]")
		case compact.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			flush()
			blocks := []block{s.callBlock(p.ToolCall)}
			if j, ok := results[p.ToolCall.ID]; ok {
				used[j] = true
				blocks = append(blocks, s.resultBlock(msgs[j]))
			}
			out = s.add(out, false, blocks...)
		}
	}
	switch {
	case m.StopReason == compact.StopError || m.Metadata().ErrorMessage != "":
		msg := "the model call failed"
		if e := strings.TrimSpace(m.Metadata().ErrorMessage); e != "" {
			msg += ": " + s.capText(clean(e))
		}
		text = append(text, "("+msg+")")
	case m.StopReason == compact.StopAborted:
		text = append(text, "(stopped by the user)")
	}
	flush()
	return out
}

func (s serializer) callBlock(c *compact.ToolCall) block {
	args := compactJSON(c.Arguments)
	capped := s.capText(args)
	if capped != args {
		// Keep the file the call worked on visible even when the part of
		// the arguments naming it was cut.
		if p := c.FilePath(); p != "" && !strings.Contains(capped, p) {
			capped = "path: " + p + "\n" + capped
		}
	}
	return block{"[tool call: " + oneLine(c.Name) + "]", capped}
}

func (s serializer) resultBlock(m *compact.Message) block {
	name := oneLine(m.ToolName)
	if name == "" {
		name = "unknown tool"
	}
	h := "[tool result: " + name + "]"
	if m.IsError {
		h = "[tool result: " + name + ", error]"
	}
	body := s.capText(s.contentText(m))
	if body == "" {
		body = "(no output)"
	}
	return block{h, body}
}

// contentText joins a message's text parts and marks its images.
func (s serializer) contentText(m *compact.Message) string {
	var parts []string
	for _, p := range m.Content {
		switch p.Type {
		case compact.PartText:
			parts = append(parts, p.Text)
		case compact.PartImage:
			parts = append(parts, "[image]")
		}
	}
	return clean(strings.Join(parts, "\n"))
}

func (s serializer) bashText(m *compact.Message) string {
	run := m.Metadata()
	var b strings.Builder
	b.WriteString("$ " + strings.TrimSpace(run.Command))
	if out := clean(run.Output); out != "" {
		b.WriteString("\n" + s.capText(out))
	}
	switch {
	case run.Cancelled:
		b.WriteString("\n(cancelled)")
	case run.ExitCode != nil && *run.ExitCode != 0:
		b.WriteString("\n(exit status " + strconv.Itoa(*run.ExitCode) + ")")
	}
	return b.String()
}

// capText shortens s to the tool output cap, keeping head and tail.
func (s serializer) capText(t string) string {
	if s.capChars <= 0 {
		return t
	}
	return cutChars(t, s.capChars)
}

// clean normalises line ends, trims surrounding blank space and defuses
// the transcript's closing tag.
func clean(s string) string {
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return defuse(strings.TrimSpace(s), tagTranscript)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// compactJSON writes JSON arguments without insignificant space; other
// input is returned as it is.
func compactJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return clean(string(raw))
	}
	return defuse(b.String(), tagTranscript)
}

// cutMarker is the text that replaces the middle of a shortened text.
func cutMarker(n int) string {
	return "[... " + strconv.Itoa(n) + " characters cut ...]"
}

// cutChars keeps at most max characters of s, half from the start and
// half from the end, with a marker in between saying how many characters
// were cut. Text within the limit is returned unchanged.
func cutChars(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	head := max - max/2
	tail := max / 2
	return joinCut(s, jsontext.RuneOffset(s, head), jsontext.RuneOffset(s, n-tail), n-head-tail)
}

// cutBytes shortens s, keeping its start and end, so that the result with
// its marker takes at most max bytes. Text within the limit is returned
// unchanged. Cuts fall on character boundaries.
func cutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	// The marker's length depends on the count it states; the count is
	// below len(s), so this is an upper bound.
	room := max - len(cutMarker(len(s))) - 2
	if room < 0 {
		room = 0
	}
	headEnd := runeStart(s, room-room/2)
	tailStart := len(s) - (room / 2)
	for tailStart < len(s) && !utf8.RuneStart(s[tailStart]) {
		tailStart++
	}
	if tailStart < headEnd {
		tailStart = headEnd
	}
	cut := utf8.RuneCountInString(s[headEnd:tailStart])
	return joinCut(s, headEnd, tailStart, cut)
}

func joinCut(s string, headEnd, tailStart, cut int) string {
	return s[:headEnd] + "\n" + cutMarker(cut) + "\n" + s[tailStart:]
}

// runeStart moves a byte offset back to the start of its character.
func runeStart(s string, off int) int {
	if off >= len(s) {
		return len(s)
	}
	for off > 0 && !utf8.RuneStart(s[off]) {
		off--
	}
	return off
}

// fitUnit shortens the bodies of a unit so that it renders in at most max
// bytes. Short bodies are kept whole and the room left is shared among
// the long ones.
func fitUnit(u unit, max int) unit {
	if u.size <= max {
		return u
	}
	out := unit{turnStart: u.turnStart, blocks: append([]block(nil), u.blocks...)}
	fixed := 0
	for i, b := range out.blocks {
		if i > 0 {
			fixed += len(blockSep)
		}
		fixed += len(b.header) + 1
	}
	room := max - fixed
	if room < 0 {
		room = 0
	}
	// Share the room: the shortest bodies first take what they need, up to
	// an equal share of what is left.
	order := make([]int, len(out.blocks))
	for i := range order {
		order[i] = i
	}
	sortByLen(order, out.blocks)
	left := len(order)
	for _, i := range order {
		share := room / left
		if b := out.blocks[i].body; len(b) > share {
			out.blocks[i].body = cutBytes(b, share)
		}
		room -= len(out.blocks[i].body)
		left--
	}
	out.measure()
	return out
}

// sortByLen sorts block indexes by body length, shortest first (an
// insertion sort: units have a few blocks).
func sortByLen(idx []int, blocks []block) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && len(blocks[idx[j]].body) < len(blocks[idx[j-1]].body); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}
