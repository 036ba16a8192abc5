package cline

import (
	"encoding/json"
	"fmt"
)

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
