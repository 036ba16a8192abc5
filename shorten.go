package compact

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact/internal/jsontext"
)

// ShortenSummary shortens a Markdown summary to about maxTokens (chars/4)
// while keeping every heading: each section keeps its first lines in
// proportion to its size, and a marker line says how many lines it lost.
// A summary that already fits is returned unchanged. The result can still
// exceed maxTokens when the headings and markers alone do not fit.
func ShortenSummary(summary string, maxTokens int) string {
	if (jsontext.UTF16Len(summary)+3)/4 <= maxTokens {
		return summary
	}
	type section struct {
		heading string // "" for text before the first heading
		lines   []string
	}
	var secs []section
	cur := section{}
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, "#") {
			secs = append(secs, cur)
			cur = section{heading: line}
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	secs = append(secs, cur)

	budget := maxTokens * 4
	fixed, body := 0, 0
	for _, s := range secs {
		if s.heading != "" {
			fixed += jsontext.UTF16Len(s.heading) + 1
		}
		for _, l := range s.lines {
			body += jsontext.UTF16Len(l) + 1
		}
	}
	// Room for the bodies, after the headings and one marker per section.
	room := budget - fixed - 40*len(secs)
	if room < 0 {
		room = 0
	}
	var b strings.Builder
	for _, s := range secs {
		if s.heading != "" {
			b.WriteString(s.heading)
			b.WriteByte('\n')
		}
		size := 0
		for _, l := range s.lines {
			size += jsontext.UTF16Len(l) + 1
		}
		share := 0
		if body > 0 {
			share = int(float64(room) * float64(size) / float64(body))
		}
		used, dropped, full := 0, 0, false
		for _, l := range s.lines {
			n := jsontext.UTF16Len(l) + 1
			if !full && used+n <= share {
				b.WriteString(l)
				b.WriteByte('\n')
				used += n
				continue
			}
			// A line longer than what is left of the share (a model's
			// answer may be one huge line) keeps its head when the rest
			// of the share is worth it.
			if !full && share-used >= 200 {
				b.WriteString(jsontext.CutUTF16(l, share-used-10))
				b.WriteString(" […]\n")
				full = true // the cut line is not counted as left out
				continue
			}
			full = true
			if strings.TrimSpace(l) != "" {
				dropped++
			}
		}
		if dropped > 0 {
			fmt.Fprintf(&b, "- [… %d line(s) left out to fit the context]\n\n", dropped)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
