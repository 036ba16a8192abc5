package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/compactkit/compact"
)

// minLearnedWindow is the floor of a learned window when the registry
// knows no window at all.
const minLearnedWindow = 1024

// maxLearned bounds how many learned windows a Server keeps; when it is
// full the next one replaces an arbitrary older one.
const maxLearned = 4096

// learnScope names the tenant a learned window belongs to: the request's
// namespace (its upstream, and the query-string credential or tenant
// header when there is one; see namespace) and a hash of its credential
// header (never the credential itself). An overflow error seen by one
// tenant only ever changes the windows used for that tenant's requests to
// the same upstream.
func (s *Server) learnScope(api API, r *http.Request) string {
	sum := sha256.Sum256([]byte("compact-learned-window-v1\x00" + s.namespace(api, r) + "\x00" + credential(r.Header)))
	return hex.EncodeToString(sum[:16])
}

// windowFloor is the smallest window a learned one may be: the smallest
// context window in the registry, or minLearnedWindow when it has none.
func (s *Server) windowFloor() int {
	floor := 0
	for _, m := range s.registry.Models() {
		if m.ContextWindow > 0 && (floor == 0 || m.ContextWindow < floor) {
			floor = m.ContextWindow
		}
	}
	if floor == 0 {
		floor = minLearnedWindow
	}
	return floor
}

// learnWindow remembers, for model in scope (see learnScope), the window
// that a provider's overflow error body states (see
// compact.OverflowWindow), so that the tenant's later requests are
// measured against the real limit rather than overflowing again. The
// window is raised to windowFloor when under it, and kept only when it is
// smaller than the one in use (--window, the config's or the registry's):
// learning only ever lowers a window, never below the floor, and an
// explicit window under the floor stays as it is. Each change is logged,
// with conv, the short hash of the conversation that saw the error ("" when
// unknown); the scope itself is not.
func (s *Server) learnWindow(scope, model, conv string, body []byte) {
	w := compact.OverflowWindow(string(body))
	if w <= 0 || model == "" {
		return
	}
	stated := w
	floor := s.windowFloor()
	if w < floor {
		w = floor
	}
	base, known := s.modelInfo("", model)
	if known && base.ContextWindow > 0 && w >= base.ContextWindow {
		return
	}
	key := scope + "\x00" + model
	s.mu.Lock()
	old, ok := s.learned[key]
	if ok && old <= w {
		s.mu.Unlock()
		return
	}
	if s.learned == nil {
		s.learned = map[string]int{}
	}
	if !ok && len(s.learned) >= maxLearned {
		for k := range s.learned {
			delete(s.learned, k)
			break
		}
	}
	s.learned[key] = w
	s.mu.Unlock()
	s.log.Info("learned a smaller window from an overflow error", "model", model, "window", w,
		"stated", stated, "floor", floor, "previous", max(old, base.ContextWindow), "conversation", conv)
}

// learnedInfo lowers info's window to the one learned for info.ID in
// scope, when smaller. The empty scope has none.
func (s *Server) learnedInfo(scope string, info compact.ModelInfo) compact.ModelInfo {
	if scope == "" {
		return info
	}
	s.mu.Lock()
	w, ok := s.learned[scope+"\x00"+info.ID]
	s.mu.Unlock()
	if ok && (info.ContextWindow == 0 || w < info.ContextWindow) {
		info.ContextWindow = w
		if info.InputLimit > w {
			info.InputLimit = 0
		}
	}
	return info
}
