package cline

import (
	"encoding/json"

	"github.com/compactkit/compact"
)

// mapUsage decides which assistant message each api_req_started measured.
//
// Cline records on every ui message the index of the last api message at
// the time (conversationHistoryIndex). api_req_started is said before the
// request's user message is appended, so a request whose index is k was
// answered by api message k+2 (k+1 is its user message); that message's
// time is also the request's when it stores none. Files without the index
// (Cline before 2025, Roo Code, Kilo Code) are mapped by time when every
// assistant message and request has one (see mapByTime), else by order:
// the n-th request with usage to the n-th assistant message, and only
// when both counts agree. Requests left over stay custom entries.
func (b *builder) mapUsage(reqs []*apiReq) {
	b.usage = map[int]*apiReq{}
	indexed := false
	for _, r := range reqs {
		if r.ui.ConversationHistoryIndex != nil {
			indexed = true
			break
		}
	}
	if indexed {
		for _, r := range reqs {
			ci := r.ui.ConversationHistoryIndex
			if ci == nil {
				continue
			}
			if k := *ci + 1; k >= 0 && k < len(b.msgs) && r.ui.Ts > 0 {
				if _, ok := b.tsOf[k]; !ok {
					b.tsOf[k] = r.ui.Ts
				}
			}
			i := *ci + 2
			if !r.info.hasUsage() || i < 0 || i >= len(b.msgs) || b.usage[i] != nil {
				continue
			}
			if m := b.msgs[i]; m.role == "assistant" && !m.isSummary && !m.isMarker {
				b.usage[i] = r
				r.used = true
			}
		}
		return
	}
	var asst []int
	for i, m := range b.msgs {
		if m.role == "assistant" && !m.isSummary && !m.isMarker {
			asst = append(asst, i)
		}
	}
	if b.mapByTime(reqs, asst) {
		return
	}
	var measured []*apiReq
	for _, r := range reqs {
		if r.info.hasUsage() {
			measured = append(measured, r)
		}
	}
	if len(measured) != len(asst) {
		if len(measured) > 0 {
			b.warn("%s: %d api requests with usage for %d assistant messages; usage kept as custom entries",
				UIMessagesFile, len(measured), len(asst))
		}
		return
	}
	for n, i := range asst {
		b.usage[i] = measured[n]
		measured[n].used = true
	}
}

// mapByTime maps requests to the assistant messages asst (indices into
// the api history) by their times: a request is said after the previous
// assistant message was saved and before its own answer is, so an
// assistant message was measured by the last request said between the
// assistant message before it and itself (a failed attempt said earlier
// is superseded by its retry). This holds where the api history lost
// messages to a condensation that Roo Code wrote over the file, while the
// ui kept every request. It reports false, mapping nothing, when a
// message or a request has no time or the times do not increase.
func (b *builder) mapByTime(reqs []*apiReq, asst []int) bool {
	if len(asst) == 0 || len(reqs) == 0 {
		return false
	}
	for n, i := range asst {
		if ts := b.msgs[i].ts; ts <= 0 || (n > 0 && ts < b.msgs[asst[n-1]].ts) {
			return false
		}
	}
	for n, r := range reqs {
		if r.ui.Ts <= 0 || (n > 0 && r.ui.Ts < reqs[n-1].ui.Ts) {
			return false
		}
	}
	k := 0 // the first request not yet passed
	for _, i := range asst {
		var last *apiReq
		for ; k < len(reqs) && reqs[k].ui.Ts < b.msgs[i].ts; k++ {
			last = reqs[k]
		}
		if last != nil && last.info.hasUsage() {
			b.usage[i] = last
			last.used = true
		}
	}
	return true
}

// reqUsage converts an api_req_started's counts. Cline reports input
// without the cache (tokensIn, cacheReads, cacheWrites apart: its own
// context check adds all four). Roo Code, which adds apiProtocol, counts
// the cache inside tokensIn since late 2025; such a tokensIn is taken as
// inclusive when it is at least the cache counts.
func reqUsage(r *apiReqInfo) *compact.Usage {
	u := &compact.Usage{
		Input:      num(r.TokensIn),
		Output:     num(r.TokensOut),
		CacheRead:  num(r.CacheReads),
		CacheWrite: num(r.CacheWrites),
	}
	if cache := u.CacheRead + u.CacheWrite; r.APIProtocol != "" && cache > 0 && u.Input >= cache {
		u.Input -= cache
	}
	return u
}

// metricsUsage reads the metrics Cline stores on assistant messages since
// 2025: {tokens: {prompt, completion, cached}} where prompt includes the
// cached part, or the SDK's {inputTokens, outputTokens, cacheReadTokens,
// cacheWriteTokens}. nil when there are none.
func metricsUsage(raw json.RawMessage) *compact.Usage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var m struct {
		Tokens *struct {
			Prompt     *float64 `json:"prompt"`
			Completion *float64 `json:"completion"`
			Cached     *float64 `json:"cached"`
		} `json:"tokens"`
		InputTokens      *float64 `json:"inputTokens"`
		OutputTokens     *float64 `json:"outputTokens"`
		CacheReadTokens  *float64 `json:"cacheReadTokens"`
		CacheWriteTokens *float64 `json:"cacheWriteTokens"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if t := m.Tokens; t != nil && (t.Prompt != nil || t.Completion != nil) {
		u := &compact.Usage{Input: num(t.Prompt), Output: num(t.Completion), CacheRead: num(t.Cached)}
		if u.CacheRead <= u.Input {
			u.Input -= u.CacheRead
		}
		return u
	}
	if m.InputTokens != nil || m.OutputTokens != nil {
		return &compact.Usage{Input: num(m.InputTokens), Output: num(m.OutputTokens),
			CacheRead: num(m.CacheReadTokens), CacheWrite: num(m.CacheWriteTokens)}
	}
	return nil
}
