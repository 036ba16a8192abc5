package store

import "time"

// MissCause is why a request missed the provider's prompt cache, as the
// proxy explains it from what it recorded itself (see CacheMiss).
type MissCause string

// The causes of a cache miss, the first that holds in this order.
const (
	// MissCompaction: the request carried a compaction the previous one
	// did not (a new summary, or another one swapped in): the summary
	// replaced the start of the list, so the prefix after it is new.
	// Expected, and paid once.
	MissCompaction MissCause = "compaction"
	// MissIdle: the conversation was idle longer than the prompt cache
	// lives (the proxy's cache TTL, an hour when the request marks its
	// cache "ttl":"1h").
	MissIdle MissCause = "idle"
	// MissPrefix: what the proxy sent upstream changed before the end of
	// the previous request (the model, the system prompt or tools, or a
	// message: CacheMiss.DivergedAt says where).
	MissPrefix MissCause = "prefix"
	// MissProvider: the prefix sent was the same and the cache fresh;
	// the provider did not reuse it (an eviction, a prefix below its
	// minimum, another region).
	MissProvider MissCause = "provider"
	// MissUnknown: neither a compaction nor idleness, and the proxy
	// cannot tell a changed prefix from the provider's doing: the
	// previous request went through another replica (or this one was
	// passed through unread), so there is no record of what was sent to
	// compare with. The provider's own reason may still be known.
	MissUnknown MissCause = "unknown"
)

// CacheMiss explains one request that missed the prompt cache: the
// provider read much less of its prompt from the cache than the previous
// request of the conversation had sent. It never holds conversation
// text, so it is shown without the proxy's token too.
type CacheMiss struct {
	// At is when the request's answer ended; Request is its place in the
	// conversation (LastCall.Totals.Requests when it was recorded, 1 for
	// the first).
	At      time.Time `json:"at"`
	Request int       `json:"request"`
	// Cause is the first cause that holds; Detail says it in one
	// sentence (positions and counts, never message text).
	Cause  MissCause `json:"cause"`
	Detail string    `json:"detail"`
	// Expected is the previous request's prompt (the tokens that could
	// have been read from the cache), Read what the provider read.
	Expected int `json:"expected"`
	Read     int `json:"read"`
	// DivergedAt is where what was sent changed: the number of the first
	// message that differs (1 for the first of the list, as sent
	// upstream: a summary counts as one message), 0 for what comes
	// before the list (the model, the system prompt, the tools); nil when
	// not known or not the cause. Role is that message's role ("" when
	// unknown; "summary" for compact's summary).
	DivergedAt *int   `json:"divergedAt,omitempty"`
	Role       string `json:"role,omitempty"`
	// Idle is the time since the previous answer, set when it exceeded
	// the cache lifetime (Cause MissIdle).
	Idle time.Duration `json:"idle,omitempty"`
	// ProviderReason and ProviderMissed are the provider's own word, when
	// the answer carried it (Anthropic's cache diagnostics,
	// cache_miss_reason.type and cache_missed_input_tokens).
	ProviderReason string `json:"providerReason,omitempty"`
	ProviderMissed int    `json:"providerMissed,omitempty"`
}
