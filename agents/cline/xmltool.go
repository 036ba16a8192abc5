package cline

import (
	"bytes"
	"encoding/json"
	"strings"
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
