package proxy

import (
	"github.com/compactkit/compact"
)

// policyFor returns the trigger policy for a model: Config.Policy, or
// the proxy's default, proxyPolicy.
func (s *Server) policyFor(info compact.ModelInfo) compact.Policy {
	if s.policy != nil {
		return s.policy
	}
	r := compact.DefaultReserveTokens
	if w := info.ContextWindow / 5; w > 0 && w < r {
		r = w
	}
	return proxyPolicy{compact.Reserve{Tokens: r}}
}

// proxyPolicy is compact.Reserve, whose trigger already respects a
// model's input limit (OpenAI's GPT-5 models take 400,000 tokens in all
// but only 272,000 of input), with one proxy rule on top: its target is
// never above half the threshold.
type proxyPolicy struct{ compact.Reserve }

// Target implements compact.Policy: the reserve policy's target, never
// above half the threshold.
func (p proxyPolicy) Target(m compact.ModelInfo) int {
	t := p.Reserve.Target(m)
	if th, ok := p.Threshold(m); ok && t > th/2 {
		t = th / 2
	}
	return t
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
