package proxy

import (
	"bytes"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// verdict is what decide chose for one request.
type verdict struct {
	// compact is set when the request is compacted before it goes
	// upstream, for reason, against the trigger threshold.
	compact   bool
	reason    compact.Reason
	threshold int
	// ahead is set when the conversation passed its early mark
	// (Config.AheadMark) with no summary ready or being written: one is
	// written in the background (see ahead.go) and the request goes on.
	ahead bool
}

// decide is the one place that decides whether a request is compacted
// before it goes upstream, and against which trigger, or has its summary
// written ahead. The root policy judges its measured size (compact.Check
// with policyFor's policy), with rules on top, and an overflow reported by
// the previous answer (v.forced) compacts whatever the size:
//
//   - when the system prompt and tools alone pass the trigger, no summary
//     can bring the request under it: only an overflow compacts;
//   - right after a compaction, the next one waits (the root's
//     compact.CompactedRecently, the Guard's rule too);
//   - over the trigger while this replica writes the summary ahead, the
//     request goes uncompacted ("pass (summary being prepared)") unless
//     it would overflow the window without it: then it is compacted and
//     waits for the summary (another replica's is settled in compactNow);
//   - under the trigger, a conversation idle longer than the provider's
//     cache lifetime with a context above the cold mark is compacted
//     (compact.ReasonIdle: its cache is written again anyway);
//   - past the early mark, the summary is written ahead (verdict.ahead).
//
// A count_tokens request is never compacted (its stored compaction still
// applies, see rewrite). When a rule holds a compaction back, x.decision
// says which.
func (s *Server) decide(x *exchange) verdict {
	v := x.v
	if strings.HasSuffix(x.r.URL.Path, "/count_tokens") {
		return verdict{}
	}
	policy := s.policyFor(v.info)
	d := compact.Check(policy, v.info, compact.ContextUsage{Tokens: v.tokens, UsageTokens: v.usageTokens, TrailingTokens: v.tokens - v.usageTokens}, false)
	threshold := d.Threshold
	if threshold <= 0 {
		threshold, _ = policy.Threshold(v.info)
	}
	held := false // a rule holds the compaction back
	if d.Compact && !v.forced && d.Threshold > 0 && d.Threshold <= v.envelope {
		// The system prompt and tools alone pass the trigger: no
		// summary can bring the request under it, so only an overflow
		// (forced, below) is worth a compaction.
		d.Compact, held = false, true
		x.decision = "pass (system and tools fill the trigger)"
	}
	if d.Compact && !v.forced && v.cp != nil && d.Threshold > 0 {
		// Compacting again right after a compaction cannot help (an
		// overflow still forces it).
		if compact.CompactedRecently(v.tokens, v.cp.TokensAfter, d.Threshold, v.envelope) {
			d.Compact, held = false, true
			x.decision = "pass (compacted recently)"
		}
	}
	switch {
	case v.forced && !d.Compact:
		return verdict{compact: true, reason: compact.ReasonOverflow, threshold: threshold}
	case d.Compact && !v.forced && v.pending == nil && s.aheadRunning(v.id.key) && !overflows(v):
		x.decision = "pass (summary being prepared)"
		s.metrics.ahead(aheadNotReady)
		return verdict{}
	case d.Compact:
		return verdict{compact: true, reason: compact.ReasonThreshold, threshold: threshold}
	case held || threshold <= 0:
		return verdict{}
	case s.idle(x, threshold):
		return verdict{compact: true, reason: compact.ReasonIdle, threshold: threshold}
	case s.aheadMark > 0 && v.pending == nil && float64(v.tokens) >= s.aheadMark*float64(threshold) &&
		(v.cp == nil || !compact.CompactedRecently(v.tokens, v.cp.TokensAfter, threshold, v.envelope)):
		return verdict{ahead: true, reason: compact.ReasonThreshold, threshold: threshold}
	}
	return verdict{}
}

// overflows reports whether the request as it would go now is larger
// than the model's usable input: sent without a compaction, the provider
// would refuse it.
func overflows(v *view) bool {
	limit := v.info.UsableInput()
	return limit > 0 && v.tokens > limit
}

// idle reports whether the request comes after its conversation was idle
// longer than the provider's prompt-cache lifetime (Config.CacheTTL, an
// hour when the request marks its cache "ttl":"1h") with a context above
// the cold mark of threshold: its cache is cold, and compacting it now
// costs no extra cache write.
func (s *Server) idle(x *exchange, threshold int) bool {
	v := x.v
	if s.coldMark <= 0 || v.rec == nil || v.rec.Last == nil || v.rec.Last.At.IsZero() {
		return false
	}
	if s.now().Sub(v.rec.Last.At) <= s.cacheLifetime(x) || float64(v.tokens) < s.coldMark*float64(threshold) {
		return false
	}
	return v.cp == nil || !compact.CompactedRecently(v.tokens, v.cp.TokensAfter, threshold, v.envelope)
}

// maybeCold reports whether a request of the conversation whose last call
// was l, of about est tokens, may be compacted for idleness (see idle),
// before its body is read: the shortest cache lifetime is assumed.
func (s *Server) maybeCold(l *store.LastCall, est int) bool {
	return s.coldMark > 0 && !l.At.IsZero() && l.Threshold > 0 && s.now().Sub(l.At) > s.cacheTTL &&
		float64(est) >= s.coldMark*float64(l.Threshold)
}

// marksHourCache reports whether a request body marks a cache breakpoint
// with the one-hour lifetime: "cache_control": {"type": "ephemeral",
// "ttl": "1h"} (Anthropic's extended prompt caching; the other value is
// "5m", the default).
func marksHourCache(body []byte) bool {
	for rest := body; ; {
		i := bytes.Index(rest, []byte(`"ttl"`))
		if i < 0 {
			return false
		}
		rest = bytes.TrimLeft(rest[i+5:], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			if bytes.HasPrefix(bytes.TrimLeft(rest[1:], " \t\r\n"), []byte(`"1h"`)) {
				return true
			}
		}
	}
}

// decideOverflow is decide for a request the provider refused as too
// long: it is compacted whatever its measure, against the policy's
// trigger (the window when the policy has none), and its measured size is
// raised over the window, since the provider's count was over it whatever
// the estimate said.
func (s *Server) decideOverflow(v *view) (threshold int) {
	threshold, _ = s.policyFor(v.info).Threshold(v.info)
	if threshold <= 0 {
		threshold = v.info.ContextWindow
	}
	if v.tokens <= v.info.ContextWindow {
		v.tokens = v.info.ContextWindow + 1
	}
	return threshold
}

// policyFor returns the trigger policy for a model: Config.Policy, or
// compact.DefaultPolicy, the rule the Guard and the command line share.
func (s *Server) policyFor(compact.ModelInfo) compact.Policy {
	if s.policy != nil {
		return s.policy
	}
	return compact.DefaultPolicy{}
}

// maxRefused bounds the conversations remembered as refusing rewrites.
const maxRefused = 10000

// refuse remembers that the provider refused a conversation's compacted
// request, so that its later requests go through as the client sends them.
func (s *Server) refuse(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refused) >= maxRefused {
		clear(s.refused)
	}
	s.refused[key] = true
}

// refusedKey reports whether refuse was called for key.
func (s *Server) refusedKey(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused[key]
}
