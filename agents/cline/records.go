package cline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/jsonrec"
)

// element is one member of a top-level JSON array, with the line it starts
// on (1-based) for error messages.
type element struct {
	raw  json.RawMessage
	line int
}

// decodeArray splits data, a JSON array, into its elements. An array cut
// short after at least one whole element (a write that did not finish) is
// returned with a warning; any other syntax error is an error naming the
// line. what names an element in messages ("message", "ui message").
func decodeArray(data []byte, name, what string) ([]element, string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	t, err := dec.Token()
	if err != nil {
		return nil, "", fmt.Errorf("%s:%d: not a JSON array: %w", name, jsonrec.Line(data, int(dec.InputOffset())), err)
	}
	if t != json.Delim('[') {
		return nil, "", fmt.Errorf("%s:1: not a JSON array (starts with %v)", name, t)
	}
	var out []element
	for dec.More() {
		start := jsonrec.SkipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if cut(err) && len(out) > 0 {
				return out, fmt.Sprintf("%s:%d: file ends inside %s %d; read the %d before it",
					name, jsonrec.Line(data, int(start)), what, len(out)+1, len(out)), nil
			}
			return nil, "", fmt.Errorf("%s:%d: %s %d: %w", name, jsonrec.Line(data, int(start)), what, len(out)+1, err)
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil && buf.Len() < len(raw) {
			raw = buf.Bytes()
		}
		out = append(out, element{raw: raw, line: jsonrec.Line(data, int(start))})
	}
	if _, err := dec.Token(); err != nil {
		if cut(err) && len(out) > 0 {
			return out, fmt.Sprintf("%s:%d: file ends before the array is closed", name, jsonrec.Line(data, len(data))), nil
		}
		return nil, "", fmt.Errorf("%s:%d: %w", name, jsonrec.Line(data, int(dec.InputOffset())), err)
	}
	return out, "", nil
}

// cut reports whether err means the input ended early.
func cut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// apiMessage is one element of the api history.
type apiMessage struct {
	index, line int
	raw         json.RawMessage
	fields      map[string]json.RawMessage
	role        string
	typ         string // "reasoning" for Roo Code's standalone reasoning items
	blocks      []block
	ts          int64
	isSummary   bool // Roo Code condensation summary
	isMarker    bool // Roo Code sliding-window truncation marker
	modelInfo   *modelInfo
}

// decodeMessage decodes element i of the api history.
func decodeMessage(e element, i int) (*apiMessage, error) {
	m := &apiMessage{index: i, line: e.line, raw: e.raw}
	if err := json.Unmarshal(e.raw, &m.fields); err != nil || m.fields == nil {
		return nil, fmt.Errorf("not an object")
	}
	str := func(k string) (string, error) {
		v, ok := m.fields[k]
		if !ok || string(v) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("field %s: not a string", k)
		}
		return s, nil
	}
	var err error
	if m.role, err = str("role"); err != nil {
		return nil, err
	}
	if m.typ, err = str("type"); err != nil {
		return nil, err
	}
	if m.role == "" && m.typ == "" {
		return nil, fmt.Errorf("field role: missing")
	}
	if v, ok := m.fields["ts"]; ok && string(v) != "null" {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return nil, fmt.Errorf("field ts: not a number")
		}
		m.ts = int64(f)
	}
	for k, dst := range map[string]*bool{"isSummary": &m.isSummary, "isTruncationMarker": &m.isMarker} {
		if v, ok := m.fields[k]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, dst); err != nil {
				return nil, fmt.Errorf("field %s: not a boolean", k)
			}
		}
	}
	if v, ok := m.fields["modelInfo"]; ok && string(v) != "null" {
		m.modelInfo = &modelInfo{}
		if err := json.Unmarshal(v, m.modelInfo); err != nil {
			return nil, fmt.Errorf("field modelInfo: %s", fieldError(err))
		}
	}
	if m.role != "" {
		if m.blocks, err = decodeBlocks(m.role, m.fields["content"]); err != nil {
			return nil, fmt.Errorf("field content%w", err)
		}
	}
	return m, nil
}

// uiMessage is the part of a ui_messages.json record this package reads.
type uiMessage struct {
	Ts                              int64           `json:"ts"`
	Type                            string          `json:"type"`
	Say                             string          `json:"say"`
	Text                            string          `json:"text"`
	ConversationHistoryIndex        *int            `json:"conversationHistoryIndex"`
	ConversationHistoryDeletedRange *[2]int         `json:"conversationHistoryDeletedRange"`
	ModelInfo                       *modelInfo      `json:"modelInfo"`
	ContextCondense                 *condenseInfo   `json:"contextCondense"`
	ContextTruncation               *truncationInfo `json:"contextTruncation"`

	raw   json.RawMessage
	line  int
	index int // position in the file, from 0
}

// modelInfo names the model of a request (Cline's modelInfo).
type modelInfo struct {
	ModelID    string `json:"modelId"`
	ProviderID string `json:"providerId"`
}

// condenseInfo is Roo Code's record of a condensation (say
// "condense_context").
type condenseInfo struct {
	PrevContextTokens int    `json:"prevContextTokens"`
	NewContextTokens  int    `json:"newContextTokens"`
	CondenseID        string `json:"condenseId"`
}

// truncationInfo is Roo Code's record of a sliding-window truncation (say
// "sliding_window_truncation").
type truncationInfo struct {
	TruncationID      string `json:"truncationId"`
	MessagesRemoved   int    `json:"messagesRemoved"`
	PrevContextTokens int    `json:"prevContextTokens"`
	NewContextTokens  int    `json:"newContextTokens"`
}

// apiReqInfo is the JSON text of an api_req_started message
// (ClineApiReqInfo): the request's usage once it finished.
type apiReqInfo struct {
	TokensIn     *float64 `json:"tokensIn"`
	TokensOut    *float64 `json:"tokensOut"`
	CacheWrites  *float64 `json:"cacheWrites"`
	CacheReads   *float64 `json:"cacheReads"`
	Cost         *float64 `json:"cost"`
	CancelReason string   `json:"cancelReason"`
	APIProtocol  string   `json:"apiProtocol"`
}

// hasUsage reports whether the request recorded token counts.
func (r *apiReqInfo) hasUsage() bool {
	return r.TokensIn != nil || r.TokensOut != nil || r.CacheWrites != nil || r.CacheReads != nil
}

// total is the request's whole context as Cline's own context check sums it.
func (r *apiReqInfo) total() int {
	return num(r.TokensIn) + num(r.TokensOut) + num(r.CacheWrites) + num(r.CacheReads)
}

func num(f *float64) int {
	if f == nil || *f < 0 || *f > 1e15 {
		return 0
	}
	return int(*f)
}

// apiReq is one api_req_started message with its parsed text.
type apiReq struct {
	ui   *uiMessage
	info apiReqInfo
	used bool // mapped onto an assistant message
}

// decodeUI reads ui_messages.json. The file only adds to the api history
// (usage, truncation ranges, times), so a malformed record does not fail
// the read: it is skipped with a warning naming its line and field.
func decodeUI(data []byte, name string) (msgs []*uiMessage, warnings []string) {
	elems, warn, err := decodeArray(data, name, "ui message")
	if err != nil {
		return nil, []string{fmt.Sprintf("%v (ui messages not used)", err)}
	}
	if warn != "" {
		warnings = append(warnings, warn)
	}
	for i, e := range elems {
		m := &uiMessage{raw: e.raw, line: e.line, index: i}
		if err := json.Unmarshal(e.raw, m); err != nil {
			warnings = append(warnings, fmt.Sprintf("%s:%d: ui message %d: %s (skipped)", name, e.line, i+1, fieldError(err)))
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, warnings
}

// fieldError words a JSON decoding error as "field X: ...".
func fieldError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return fmt.Sprintf("field %s: %s is not a %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// apiRequests returns the api_req_started messages with their parsed
// text. A text that is not JSON is kept with no usage.
func apiRequests(msgs []*uiMessage) []*apiReq {
	var out []*apiReq
	for _, m := range msgs {
		if m.Type != "say" || m.Say != "api_req_started" {
			continue
		}
		r := &apiReq{ui: m}
		_ = json.Unmarshal([]byte(m.Text), &r.info)
		out = append(out, r)
	}
	return out
}

// block is one content block of a stored message and what the one
// mapping of the Messages API makes of it: apart from Roo Code's own
// blocks, Cline's history holds Anthropic messages, which the proxy and
// the other readers map with the same functions.
type block struct {
	anthropic.Block
	// part is the block as a part (anthropic.Part; Roo Code's reasoning
	// by reasoningPart). A tool_result of a user message is result
	// instead (anthropic.ToolResult), and a block of Roo Code's that
	// holds nothing to read (thoughtSignature) is neither: kept is true,
	// and it is kept as stored.
	part   compact.Part
	result *compact.Message
	kept   bool
}

// decodeBlocks reads the content of a message of role (a string, one
// text block, or an array of blocks) and, for a user or an assistant
// message, maps each block (see block). Errors start with the path below
// content ("[2].text: want a string, have 5").
func decodeBlocks(role string, content json.RawMessage) ([]block, error) {
	list, err := anthropic.Blocks(content)
	if err != nil {
		return nil, err
	}
	out := make([]block, len(list))
	for j, x := range list {
		out[j].Block = x
		if role != "user" && role != "assistant" {
			continue
		}
		switch {
		case x.Type == "tool_result" && role == "user":
			out[j].result, err = anthropic.ToolResult(x)
		case x.Type == "reasoning":
			out[j].part = reasoningPart(x)
		case x.Type == "thoughtSignature":
			out[j].kept = true
		default:
			out[j].part, err = anthropic.Part(x)
		}
		if err != nil {
			return nil, fmt.Errorf("[%d]%w", j, err)
		}
	}
	return out, nil
}

// reasoningPart maps the reasoning block Roo Code stores for providers
// other than Anthropic ({type: "reasoning", text, summary,
// encrypted_content}) onto a thinking part holding its text.
func reasoningPart(x anthropic.Block) compact.Part {
	text, _ := jsonrec.OptString(x.Fields, "text")
	return compact.Part{Type: compact.PartThinking, Thinking: text, Extra: jsonrec.Extras(x.Fields, "type", "text")}
}
