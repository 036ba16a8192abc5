package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A session that branches at every turn (a retry after each answer)
// prints lines of bounded width: past shownLevels levels the lines stop
// moving in and name their level, so the output grows with the entries,
// not with the square of the branch points. Every entry is still printed
// once.
func TestTreeIndentBounded(t *testing.T) {
	const shownLevels = 24 // as "compact tree --help" says
	for _, points := range []int{3, shownLevels + 1, 400} {
		t.Run(fmt.Sprint(points), func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}` + "\n")
			line := func(id, parent, role string) {
				p := "null"
				if parent != "" {
					p = `"` + parent + `"`
				}
				fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":%q,"content":[{"type":"text","text":"hi"}],"timestamp":1}}`+"\n", id, p, role)
			}
			parent := ""
			for i := range points {
				u := fmt.Sprintf("u%05d", i)
				line(u, parent, "user")
				line(fmt.Sprintf("x%05d", i), u, "user") // the abandoned retry
				parent = fmt.Sprintf("a%05d", i)
				line(parent, u, "user")
			}
			path := filepath.Join(t.TempDir(), "branchy.jsonl")
			writeFile(t, path, b.String())

			out := newCLI(t).ok("tree", path)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 3*points {
				t.Fatalf("%d lines, want one per entry, %d", len(lines), 3*points)
			}
			// The star column, the indentation, a "(level N) " of at most
			// 4 digits: then the id.
			limit := 2 + 2*shownLevels + len("(level 9999) ")
			deepest := 0
			for _, l := range lines {
				at := strings.IndexAny(l, "uxa")
				if at < 0 || at > limit {
					t.Fatalf("id at column %d (limit %d): %q", at, limit, l)
				}
				var level int
				if _, err := fmt.Sscanf(l[strings.Index(l+"(level ", "(level "):], "(level %d)", &level); err == nil {
					deepest = max(deepest, level)
				}
			}
			if want := points; points > shownLevels && deepest != want {
				t.Errorf("deepest level named %d, want %d", deepest, want)
			}
			if points <= shownLevels && strings.Contains(out, "(level ") {
				t.Errorf("a shallow tree names levels:\n%s", out)
			}
		})
	}
}
