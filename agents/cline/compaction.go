package cline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
)

// deletedRange is one value of conversationHistoryDeletedRange: api
// messages start..end (inclusive) were cut from the model's context from
// the request after api message at on.
type deletedRange struct {
	start, end, at int
	ui             *uiMessage
	tokensBefore   int
}

// deletedRanges finds each new conversationHistoryDeletedRange in the ui
// messages, in order, and the api message after which it took effect: the
// conversationHistoryIndex of the first ui message carrying it (never
// before the range's end). TokensBefore is the whole context of the last
// request measured before it, the figure that made Cline truncate.
func (b *builder) deletedRanges(reqs []*apiReq) map[int][]deletedRange {
	out := map[int][]deletedRange{}
	reqOf := map[*uiMessage]*apiReq{}
	for _, r := range reqs {
		reqOf[r.ui] = r
	}
	var prev *[2]int
	last := 0
	for _, m := range b.ui {
		if r := reqOf[m]; r != nil && r.info.hasUsage() {
			last = r.info.total()
		}
		rg := m.ConversationHistoryDeletedRange
		if rg == nil || (prev != nil && *rg == *prev) {
			continue
		}
		prev = rg
		s, e := rg[0], rg[1]
		if s < 0 || e < s || e >= len(b.msgs) {
			b.warn("%s:%d: conversationHistoryDeletedRange [%d,%d] is outside the %d api messages; ignored",
				UIMessagesFile, m.line, s, e, len(b.msgs))
			continue
		}
		at := e
		if ci := m.ConversationHistoryIndex; ci != nil && *ci > at {
			at = min(*ci, len(b.msgs)-1)
		}
		out[at] = append(out[at], deletedRange{start: s, end: e, at: at, ui: m, tokensBefore: last})
	}
	return out
}

// truncation returns the compaction entry of a deleted range. Cline keeps
// the messages before the range (the task and the first reply) and
// everything after it; pi keeps only what follows the first kept entry, so
// the summary repeats the text of the messages Cline kept at the start,
// after the summary the model wrote when the range comes from Cline's
// summarize_task (or condense) tool.
func (b *builder) truncation(r deletedRange) *compact.Entry {
	context := b.condenseContext(r.start, min(r.at+1, len(b.msgs)-1))
	var sb strings.Builder
	if context != "" {
		sb.WriteString(context)
		sb.WriteString("\n\n")
	}
	fmt.Fprintf(&sb, "[Cline removed api messages %d to %d (%d messages) from the context; it keeps the %d messages before them, repeated below, and those after them.]",
		r.start, r.end, r.end-r.start+1, r.start)
	for i := 0; i < r.start; i++ {
		if text := plainText(b.msgs[i]); text != "" {
			fmt.Fprintf(&sb, "\n\n%s:\n%s", b.msgs[i].role, text)
		}
	}
	reason := "truncation"
	if context != "" {
		reason = "condense"
	}
	first := ""
	if r.end+1 < len(b.msgs) {
		first = entryID(r.end+1, 0)
	}
	return &compact.Entry{
		ID:        fmt.Sprintf("m%d.range%d-%d", r.at, r.start, r.end),
		Kind:      compact.KindCompaction,
		Timestamp: rfc3339(r.ui.Ts),
		Compaction: &compact.Compaction{
			Summary:      sb.String(),
			FirstKeptID:  first,
			TokensBefore: r.tokensBefore,
			Details: map[string]any{"source": Format, "reason": reason,
				"deletedRange": []any{r.start, r.end}},
		},
	}
}

// condenseContext returns the context argument of the last summarize_task
// or condense call in api messages from..to, "" if none.
func (b *builder) condenseContext(from, to int) string {
	for i := to; i >= from && i >= 0; i-- {
		m := b.msgs[i]
		if m.role != "assistant" {
			continue
		}
		for _, x := range m.blocks {
			switch c := x.part.ToolCall; {
			case c != nil:
				if c.Name == "summarize_task" || c.Name == "condense" {
					var in struct {
						Context string `json:"context"`
					}
					if json.Unmarshal(c.Arguments, &in) == nil && in.Context != "" {
						return in.Context
					}
				}
			case x.Type == "text":
				for _, tool := range []string{"summarize_task", "condense"} {
					if c, ok := findXMLCall(x.part.Text, tool); ok {
						var in struct {
							Context string `json:"context"`
						}
						if json.Unmarshal(c.args, &in) == nil && in.Context != "" {
							return in.Context
						}
					}
				}
			}
		}
	}
	return ""
}

// plainText joins the text blocks of a message.
func plainText(m *apiMessage) string {
	var parts []string
	for _, x := range m.blocks {
		if x.Type == "text" {
			if s := strings.TrimSpace(x.part.Text); s != "" {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// details returns the members of m other than its role and content as plain
// values, with source and reason.
func details(m *apiMessage, reason string) map[string]any {
	d := map[string]any{"source": Format, "reason": reason}
	for k, v := range m.fields {
		if k == "role" || k == "content" {
			continue
		}
		if x, ok := plainValue(v); ok {
			d[k] = x
		}
	}
	return d
}

// plainValue decodes raw as a plain value, with integral numbers as
// int64 (Unix millisecond times would lose digits as float64 in print).
func plainValue(raw json.RawMessage) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return nil, false
	}
	if n, ok := x.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, _ := n.Float64()
		return f, true
	}
	return x, true
}

// condensed returns the compaction entry of a Roo Code summary message
// (isSummary): its text is the summary and the next message the first
// kept. Roo's condense_context ui message gives the token counts.
func (b *builder) condensed(m *apiMessage) *compact.Entry {
	c := &compact.Compaction{Summary: plainText(m), Details: details(m, "condense")}
	if m.index+1 < len(b.msgs) {
		c.FirstKeptID = entryID(m.index+1, 0)
	}
	var id string
	_ = json.Unmarshal(m.fields["condenseId"], &id)
	if ci := b.uiCondense(id, m.index); ci != nil {
		c.TokensBefore, c.TokensAfter = ci.PrevContextTokens, ci.NewContextTokens
	}
	return &compact.Entry{ID: entryID(m.index, 0), Kind: compact.KindCompaction, Timestamp: rfc3339(m.ts), Compaction: c}
}

// marker returns the compaction entry of a Roo Code sliding-window
// truncation marker: the messages before it, but the first, are hidden.
// The summary is the marker's text followed by the first message, which
// Roo keeps.
func (b *builder) marker(m *apiMessage) *compact.Entry {
	summary := plainText(m)
	if m.index > 0 {
		if first := plainText(b.msgs[0]); first != "" {
			summary += "\n\n[Roo Code keeps the first message:]\n" + first
		}
	}
	c := &compact.Compaction{Summary: summary, Details: details(m, "truncation")}
	if m.index+1 < len(b.msgs) {
		c.FirstKeptID = entryID(m.index+1, 0)
	}
	var id string
	_ = json.Unmarshal(m.fields["truncationId"], &id)
	if ti := b.uiTruncation(id); ti != nil {
		c.TokensBefore, c.TokensAfter = ti.PrevContextTokens, ti.NewContextTokens
	}
	return &compact.Entry{ID: entryID(m.index, 0), Kind: compact.KindCompaction, Timestamp: rfc3339(m.ts), Compaction: c}
}

// uiCondense finds Roo's condense_context record for a summary: by
// condenseId, else the n-th such record for the n-th summary.
func (b *builder) uiCondense(id string, index int) *condenseInfo {
	var all []*condenseInfo
	for _, u := range b.ui {
		if u.ContextCondense != nil {
			if id != "" && u.ContextCondense.CondenseID == id {
				return u.ContextCondense
			}
			all = append(all, u.ContextCondense)
		}
	}
	n := 0
	for i := 0; i < index; i++ {
		if b.msgs[i].isSummary {
			n++
		}
	}
	if id == "" && n < len(all) {
		return all[n]
	}
	return nil
}

// uiTruncation finds Roo's sliding_window_truncation record by id.
func (b *builder) uiTruncation(id string) *truncationInfo {
	for _, u := range b.ui {
		if t := u.ContextTruncation; t != nil && id != "" && t.TruncationID == id {
			return t
		}
	}
	return nil
}
