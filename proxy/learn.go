package proxy

import (
	"strconv"
	"strings"

	"github.com/compactkit/compact"
)

// windowFromError reads the real context window out of a provider's
// overflow message, 0 when it names none:
//
//   - Anthropic: "prompt is too long: 209303 tokens > 200000 maximum"
//   - OpenAI and compatible servers: "This model's maximum context length
//     is 128000 tokens", "Input tokens exceed the configured limit of
//     272000 tokens"
func windowFromError(body string) int {
	b := strings.ToLower(body)
	if i := strings.Index(b, " tokens > "); i >= 0 {
		if n := leadingInt(b[i+len(" tokens > "):]); n > 0 && strings.HasPrefix(strings.TrimLeft(b[i+len(" tokens > "):], "0123456789"), " maximum") {
			return n
		}
	}
	for _, key := range []string{"maximum context length is ", "configured limit of ", "context window of ", "context length of "} {
		if i := strings.Index(b, key); i >= 0 {
			if n := leadingInt(b[i+len(key):]); n > 0 {
				return n
			}
		}
	}
	return 0
}

// leadingInt parses the digits at the start of s (commas allowed between
// them), 0 when there are none.
func leadingInt(s string) int {
	var digits []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == ',' && len(digits) > 0 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
		default:
			i = len(s)
		}
	}
	n, _ := strconv.Atoi(string(digits))
	return n
}

// learnWindow remembers a window smaller than the one configured for a
// model, as an overflow error revealed it, so that later requests of every
// conversation of that model are measured against the real limit rather
// than overflowing again.
func (s *Server) learnWindow(model string, body []byte) {
	w := windowFromError(string(body))
	if w < 1024 || model == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.learned[model]; ok && old <= w {
		return
	}
	if s.learned == nil {
		s.learned = map[string]int{}
	}
	s.learned[model] = w
	s.log.Info("learned a smaller window from an overflow error", "model", model, "window", w)
}

// learnedInfo lowers info's window to the learned one, when smaller.
func (s *Server) learnedInfo(info compact.ModelInfo) compact.ModelInfo {
	s.mu.Lock()
	w, ok := s.learned[info.ID]
	s.mu.Unlock()
	if ok && (info.ContextWindow == 0 || w < info.ContextWindow) {
		info.ContextWindow = w
		if info.InputLimit > w {
			info.InputLimit = 0
		}
	}
	return info
}
