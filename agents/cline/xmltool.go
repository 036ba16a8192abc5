package cline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
)

// resultHeader is the text block with which Cline's XML tool protocol opens
// a tool's output in the next user message: "[read_file for 'a.go']
// Result:" (or "[attempt_completion] Result:"), optionally followed on the
// same block by the output itself.
type resultHeader struct {
	tool   string // tool name
	header string // the header as written, "[... ] Result:"
	rest   string // text after the header in the same block
}

const resultMark = "] Result:"

// parseHeader recognizes a result header at the start of s.
func parseHeader(s string) (resultHeader, bool) {
	if !strings.HasPrefix(s, "[") {
		return resultHeader{}, false
	}
	end := strings.Index(s, resultMark)
	if end < 0 {
		return resultHeader{}, false
	}
	inner := s[1:end]
	tool := inner
	if sp := strings.IndexByte(inner, ' '); sp >= 0 {
		if !strings.HasPrefix(inner[sp+1:], "for ") {
			return resultHeader{}, false
		}
		tool = inner[:sp]
	}
	if !toolName(tool) {
		return resultHeader{}, false
	}
	h := end + len(resultMark)
	rest := strings.TrimPrefix(strings.TrimPrefix(s[h:], "\r"), "\n")
	return resultHeader{tool: tool, header: s[:h], rest: rest}, true
}

// toolName reports whether s can be a tool name (letters, digits, _ - : .).
func toolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}

// xmlCall is a tool use the assistant wrote as XML in its text.
type xmlCall struct {
	before, after string // the text around the XML
	xml           string // the XML as written
	args          json.RawMessage
	closed        bool // the use ends with its closing tag
}

// findXMLCall looks for the XML tool use <tool>...</tool> in text. The
// closing tag is the last one in the text (a tool's own parameters may
// quote the tag); a use cut off before its closing tag (an interrupted
// response) runs to the end of the text, or to the "[Response interrupted
// …]" notice Cline appends, which stays text.
func findXMLCall(text, tool string) (xmlCall, bool) {
	open := "<" + tool + ">"
	i := strings.Index(text, open)
	if i < 0 {
		return xmlCall{}, false
	}
	bodyStart := i + len(open)
	closeTag := "</" + tool + ">"
	end, bodyEnd := len(text), len(text)
	closed := false
	if j := strings.LastIndex(text[bodyStart:], closeTag); j >= 0 {
		bodyEnd = bodyStart + j
		end = bodyEnd + len(closeTag)
		closed = true
	} else if j := strings.LastIndex(text[bodyStart:], "[Response interrupted"); j >= 0 {
		end = bodyStart + len(strings.TrimRight(text[bodyStart:bodyStart+j], " \t\r\n"))
		bodyEnd = end
	}
	return xmlCall{
		before: text[:i],
		after:  text[end:],
		xml:    text[i:end],
		args:   xmlParams(text[bodyStart:bodyEnd]),
		closed: closed,
	}, true
}

// xmlParams turns the parameters of an XML tool use, <name>value</name>
// one after the other, into a JSON object of strings in the order written.
// The values of content and diff run to their last closing tag (they may
// contain anything); others to the first. Values are trimmed as Cline trims
// them; text between parameters is ignored.
func xmlParams(body string) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	seen := map[string]bool{}
	for pos := 0; pos < len(body); {
		lt := strings.IndexByte(body[pos:], '<')
		if lt < 0 {
			break
		}
		lt += pos
		gt := strings.IndexByte(body[lt:], '>')
		if gt < 0 {
			break
		}
		gt += lt
		name := body[lt+1 : gt]
		if !paramName(name) {
			pos = lt + 1
			continue
		}
		closeTag := "</" + name + ">"
		var j int
		if name == "content" || name == "diff" {
			j = strings.LastIndex(body[gt+1:], closeTag)
		} else {
			j = strings.Index(body[gt+1:], closeTag)
		}
		value, next := "", len(body)
		if j >= 0 {
			value, next = body[gt+1:gt+1+j], gt+1+j+len(closeTag)
		} else {
			value = body[gt+1:]
		}
		if name == "content" || name == "diff" {
			value = strings.TrimSuffix(strings.TrimPrefix(value, "\n"), "\n")
		} else {
			value = strings.TrimSpace(value)
		}
		if !seen[name] {
			seen[name] = true
			if buf.Len() > 1 {
				buf.WriteByte(',')
			}
			buf.Write(jsonString(name))
			buf.WriteByte(':')
			buf.Write(jsonString(value))
		}
		pos = next
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// paramName reports whether s is a parameter tag name: lower-case letters,
// digits and underscores, starting with a letter.
func paramName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// jsonString encodes s as a JSON string without escaping <, > and &
// (tool arguments are code and markup).
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// resultBody reports whether a block after a result header still belongs
// to that tool's output: text and images up to the next header or the
// environment details Cline appends to every user message.
func resultBody(x block) bool {
	switch x.Type {
	case "image":
		return true
	case "text":
		s := x.part.Text
		if _, ok := parseHeader(s); ok {
			return false
		}
		return !strings.HasPrefix(strings.TrimSpace(s), "<environment_details>")
	}
	return false
}

// xmlError reports whether an XML-protocol result is an error: Cline words
// tool failures as "The tool execution failed with the following error" and
// other errors with an "[ERROR]" or "Error" prefix.
func xmlError(parts []compact.Part) bool {
	if len(parts) == 0 || parts[0].Type != compact.PartText {
		return false
	}
	s := strings.TrimSpace(parts[0].Text)
	return strings.HasPrefix(s, "The tool execution failed") || strings.HasPrefix(s, "[ERROR]") ||
		strings.HasPrefix(s, "Error ") || strings.HasPrefix(s, "Error:")
}

// unanswered reports whether the assistant message just before api
// message i still holds a use of tool that no header has answered: a
// <tool> use in its text or a native call of that name still open.
func (b *builder) unanswered(i int, tool string) bool {
	if b.asst == nil || b.asstIndex != i-1 {
		return false
	}
	if b.openCall(tool) != "" {
		return true
	}
	for _, p := range b.asst.Message.Content {
		if p.Type == compact.PartText && strings.Contains(p.Text, "<"+tool+">") {
			return true
		}
	}
	return false
}

// openCall returns the id of the first native call of tool in the last
// assistant message that no result has answered yet, "" if none.
func (b *builder) openCall(tool string) string {
	for _, c := range b.asst.Message.ToolCalls() {
		if c.Name == tool && c.ID != "" && b.open[c.ID] == tool {
			return c.ID
		}
	}
	return ""
}

// xmlCall returns the id of the call that a result header of tool answers:
// the <tool> use in the text of the assistant message just before api
// message i, turned into a tool call part (its XML, as written, kept in
// the part's Extra["clineXml"] and cut from the text); else a native call
// of that tool the message made and no result answered yet; else a call
// synthesized with empty arguments. "" when the message before is not an
// assistant message.
func (b *builder) xmlCall(i int, tool string) string {
	if b.asst == nil || b.asstIndex != i-1 {
		return ""
	}
	if id := b.cutUse(tool, true); id != "" {
		return id
	}
	if id := b.openCall(tool); id != "" {
		delete(b.open, id)
		return id
	}
	msg := b.asst.Message
	id := b.callID()
	msg.Content = append(msg.Content, compact.Part{Type: compact.PartToolCall,
		ToolCall: &compact.ToolCall{ID: id, Name: tool, Arguments: json.RawMessage(`{}`)},
		Extra:    map[string]json.RawMessage{"clineSynthesized": json.RawMessage(`true`)}})
	return id
}

// callID returns the id of the next call made from the XML protocol.
func (b *builder) callID() string {
	b.xmlCalls++
	return fmt.Sprintf("cline-xml-%d-%d", b.asstIndex, b.xmlCalls)
}

// cutUse turns the first <tool> use in the text of the last assistant
// message into a tool call part: its XML, as written, is kept in the
// part's Extra["clineXml"] and cut from the text. A use without its
// closing tag counts only when open is set. It returns the call's id, ""
// when the text holds no such use.
func (b *builder) cutUse(tool string, open bool) string {
	msg := b.asst.Message
	for k := range msg.Content {
		p := &msg.Content[k]
		if p.Type != compact.PartText {
			continue
		}
		x, ok := findXMLCall(p.Text, tool)
		if !ok || !x.closed && !open {
			continue
		}
		id := b.callID()
		call := compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: tool, Arguments: x.args},
			Extra: map[string]json.RawMessage{"clineXml": jsonString(x.xml)}}
		var parts []compact.Part
		parts = append(parts, msg.Content[:k]...)
		if strings.TrimSpace(x.before) != "" {
			before := *p
			before.Text = x.before
			parts = append(parts, before)
		}
		parts = append(parts, call)
		if strings.TrimSpace(x.after) != "" {
			parts = append(parts, compact.Part{Type: compact.PartText, Text: x.after})
		}
		parts = append(parts, msg.Content[k+1:]...)
		msg.Content = parts
		return id
	}
	return ""
}

// leftoverUses turns the XML uses of Cline's tools that no result header
// answered, still in the text of the last assistant message, into tool
// calls, in the order written, and returns them. Cline runs one tool a
// message and answers a further use with "Tool [name] was not
// executed…"; the last message of a history may hold a use nothing
// answered yet (the task stopped there, or the response was
// interrupted). Uses without their closing tag count only when last is
// set (a response cut off).
func (b *builder) leftoverUses(last bool) []*compact.ToolCall {
	if b.asst == nil {
		return nil
	}
	var out []*compact.ToolCall
	for k := 0; k < len(b.asst.Message.Content); k++ {
		p := b.asst.Message.Content[k]
		if p.Type != compact.PartText {
			continue
		}
		tool := b.firstUse(p.Text, last)
		if tool == "" {
			continue
		}
		id := b.cutUse(tool, last)
		// Go on after the call, in the text that followed it.
		for n, q := range b.asst.Message.Content {
			if q.Type == compact.PartToolCall && q.ToolCall.ID == id {
				out = append(out, q.ToolCall)
				k = n
				break
			}
		}
	}
	return out
}

// firstUse returns the tool of the first XML use in text, "" if none: an
// opening tag <name> of one of the tools looked for, followed somewhere
// in text by its closing tag unless last is set.
func (b *builder) firstUse(text string, last bool) string {
	closes := map[string]int{}
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '<')
		if j < 0 {
			return ""
		}
		i += j + 1
		end := strings.IndexByte(text[i:min(len(text), i+129)], '>')
		if end < 0 || !b.tools[text[i:i+end]] {
			continue
		}
		name := text[i : i+end]
		if last {
			return name
		}
		c, ok := closes[name]
		if !ok {
			c = strings.LastIndex(text, "</"+name+">")
			closes[name] = c
		}
		if c > i {
			return name
		}
	}
	return ""
}

// notExecuted takes from results and rest the text with which Cline
// answers a use of tool it did not run ("Tool [name] was not executed
// because a tool has already been used in this message…") and returns it
// as the result of call; nil when there is none.
func notExecuted(call *compact.ToolCall, results []*compact.Message, rest *[]compact.Part, ts int64) *compact.Message {
	prefix := "Tool [" + call.Name + "] was not executed"
	take := func(parts *[]compact.Part) *compact.Message {
		for k, p := range *parts {
			if p.Type == compact.PartText && strings.HasPrefix(strings.TrimSpace(p.Text), prefix) {
				*parts = append((*parts)[:k:k], (*parts)[k+1:]...)
				return &compact.Message{Role: compact.RoleToolResult, ToolCallID: call.ID, ToolName: call.Name,
					IsError: true, Content: []compact.Part{p}, Timestamp: ts}
			}
		}
		return nil
	}
	for _, r := range results {
		if m := take(&r.Content); m != nil {
			return m
		}
	}
	return take(rest)
}

// xmlTools returns the tools of Cline's and Roo Code's XML protocol whose
// uses the reader looks for in assistant text; the names a history's
// result headers give are added to them.
func xmlTools() map[string]bool {
	tools := map[string]bool{}
	for _, name := range [...]string{
		"execute_command", "read_file", "write_to_file", "replace_in_file", "apply_diff", "insert_content",
		"search_and_replace", "search_files", "list_files", "list_code_definition_names", "browser_action",
		"use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion", "new_task",
		"plan_mode_respond", "act_mode_respond", "load_mcp_documentation", "update_todo_list", "switch_mode",
		"codebase_search", "fetch_instructions", "condense", "summarize_task", "new_rule", "report_bug", "web_fetch",
	} {
		tools[name] = true
	}
	return tools
}
