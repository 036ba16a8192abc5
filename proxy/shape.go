package proxy

import (
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// RequestShape sets a conversation's latest request as the client sent
// it beside the request that went upstream in its place: what was
// replaced, by what, and from where on the two are the same.
type RequestShape struct {
	// At is when its answer ended.
	At time.Time `json:"at"`
	// ClientMessages counts the messages (tool calls with their results
	// count as one) the client sent after its head (system prompt, tools);
	// 0 when the request was passed through unread. ClientTokens is their
	// estimated size (calibrated on the provider's counts), ClientBytes
	// the size of the body the client sent.
	ClientMessages int `json:"clientMessages"`
	ClientTokens   int `json:"clientTokens,omitempty"`
	ClientBytes    int `json:"clientBytes"`
	// UpstreamTokens is the prompt size the provider reported for what
	// went upstream (compacted or not); 0 when it reported none.
	UpstreamTokens int `json:"upstreamTokens"`
	// Replaced is how many of the client's first messages went upstream
	// as one summary message instead (0: the request went as it came).
	// The two requests differ from the first message to message Replaced;
	// from message Replaced+1 on they carry the same messages.
	Replaced int `json:"replaced"`
	// UpstreamMessages counts the messages sent upstream after the head:
	// the summary and the messages kept after it.
	UpstreamMessages int `json:"upstreamMessages"`
	// SummaryTokens is the estimated size of the summary message.
	SummaryTokens int `json:"summaryTokens,omitempty"`
	// Native names the provider compaction that replaced the messages
	// ("anthropic", "responses"); "" for a summary of compact's own.
	Native string `json:"native,omitempty"`
}

// requestShape describes rec's latest request; nil before the first
// answer was recorded.
func (s *Server) requestShape(rec *store.Record) *RequestShape {
	last := rec.Last
	if last == nil {
		return nil
	}
	sh := &RequestShape{At: last.At, ClientMessages: last.Units, ClientBytes: last.Bytes,
		UpstreamTokens: last.Usage.PromptTokens(), UpstreamMessages: last.Units}
	if n := len(last.Recent); n > 0 && last.Recent[n-1].At.Equal(last.At) {
		sh.ClientTokens = last.Recent[n-1].Client
	}
	if last.Applied == "" {
		return sh
	}
	for i := range rec.Checkpoints {
		cp := &rec.Checkpoints[i]
		if cp.Chain != last.Applied {
			continue
		}
		sh.Replaced, sh.Native = cp.Covered, cp.Native
		sh.UpstreamMessages = 1 + max(last.Units-cp.Covered, 0)
		s.mu.Lock()
		sh.SummaryTokens = s.calib.EstimateChars(last.Model, len(cp.Summary))
		s.mu.Unlock()
		break
	}
	return sh
}
