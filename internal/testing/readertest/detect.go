package readertest

import (
	"fmt"
	"testing"
)

// headSize is how much of a file detection reads (agents.HeadSize).
const headSize = 64 << 10

// Head is one case of a detection test: its name, the start of a file,
// and whether the detector takes it. It names an unnamed struct so that a
// table of cases can be written without field names.
type Head = struct {
	Name string
	Head string
	Want bool
}

// CheckDetect asserts, in a subtest for each head, that detect takes the
// heads whose Want is set and refuses the others, each cut to its first
// 64 KiB as detection reads it. Each detector in refuse must refuse every
// head detect takes: a file a format recognises but does not read on its
// own (Cline's ui_messages.json, Gemini CLI's stream-json output) must
// not pass for one it reads.
func CheckDetect(t *testing.T, detect func(head []byte) bool, heads []Head, refuse ...func(head []byte) bool) {
	t.Helper()
	for _, h := range heads {
		t.Run(h.Name, func(t *testing.T) {
			t.Helper()
			head := []byte(h.Head[:min(len(h.Head), headSize)])
			if got := detect(head); got != h.Want {
				t.Errorf("detect = %v, want %v", got, h.Want)
			}
			for i, other := range refuse {
				if h.Want && other(head) {
					t.Errorf("refuse[%d] takes it too", i)
				}
			}
		})
	}
}

// FileHeads returns two heads for each file matching one of patterns, both
// with Want set to want: the first 64 KiB of the file and its first cut
// bytes (a head cut inside the first record). It fails tb when a pattern
// matches nothing or a file cannot be read.
func FileHeads(tb testing.TB, want bool, cut int, patterns ...string) []Head {
	tb.Helper()
	var heads []Head
	for _, pattern := range patterns {
		names, all := Files(tb, pattern)
		for i, data := range all {
			s := string(data)
			heads = append(heads, Head{names[i], s[:min(len(s), headSize)], want},
				Head{fmt.Sprintf("%s cut at %d bytes", names[i], cut), s[:min(len(s), cut)], want})
		}
	}
	return heads
}

// Heads returns a case for each of heads, named by the head itself, with
// Want set to want.
func Heads(want bool, heads ...string) []Head {
	out := make([]Head, len(heads))
	for i, h := range heads {
		out[i] = Head{Name: fmt.Sprintf("%q", h), Head: h, Want: want}
	}
	return out
}
