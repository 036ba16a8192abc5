package proxy

import (
	"strings"

	"github.com/compactkit/compact"
)

// decide is the one place that decides whether a request is compacted
// before it goes upstream, and against which trigger. The root policy
// judges its measured size (compact.Check with policyFor's policy), with
// two rules on top, and an overflow reported by the previous answer
// (v.forced) compacts whatever the size:
//
//   - when the system prompt and tools alone pass the trigger, no summary
//     can bring the request under it: only an overflow compacts;
//   - right after a compaction, the next one waits (the root's
//     compact.CompactedRecently, the Guard's rule too).
//
// A count_tokens request is never compacted (its stored compaction still
// applies, see rewrite). When a rule holds a compaction back, x.decision
// says which.
func (s *Server) decide(x *exchange) (reason compact.Reason, threshold int, ok bool) {
	v := x.v
	if strings.HasSuffix(x.r.URL.Path, "/count_tokens") {
		return "", 0, false
	}
	d := compact.Check(s.policyFor(v.info), v.info, compact.ContextUsage{Tokens: v.tokens, UsageTokens: v.usageTokens, TrailingTokens: v.tokens - v.usageTokens}, false)
	if d.Compact && !v.forced && d.Threshold > 0 && d.Threshold <= v.envelope {
		// The system prompt and tools alone pass the trigger: no
		// summary can bring the request under it, so only an overflow
		// (forced, below) is worth a compaction.
		d.Compact = false
		x.decision = "pass (system and tools fill the trigger)"
	}
	if d.Compact && !v.forced && v.cp != nil && d.Threshold > 0 {
		// Compacting again right after a compaction cannot help (an
		// overflow still forces it).
		if compact.CompactedRecently(v.tokens, v.cp.TokensAfter, d.Threshold, v.envelope) {
			d.Compact = false
			x.decision = "pass (compacted recently)"
		}
	}
	if !d.Compact && !v.forced {
		return "", 0, false
	}
	reason = compact.ReasonThreshold
	if v.forced && !d.Compact {
		reason = compact.ReasonOverflow
	}
	threshold = d.Threshold
	if threshold <= 0 {
		threshold, _ = s.policyFor(v.info).Threshold(v.info)
	}
	return reason, threshold, true
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
