package report

import (
	"bytes"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const goldenPage = "testdata/small.golden.html"

// renderSmall renders the report of small.jsonl.
func renderSmall(t *testing.T) []byte {
	t.Helper()
	r, err := Build(smallInput(t))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden compares the page of small.jsonl with the golden file; run
// with -update to rewrite it after a deliberate change, and look at the
// diff.
func TestGolden(t *testing.T) {
	golden.Check(t, goldenPage, renderSmall(t), *update)
}

// TestPageContent checks what the page must hold and must not: the
// session's strings escaped, one SVG point per call and one marker per
// event, cards with their sections open or closed, and no reference to
// anything outside the page.
func TestPageContent(t *testing.T) {
	page := string(renderSmall(t))
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(page, -1)) }
	tests := []struct {
		what string
		re   string
		want int
	}{
		{"points", `<circle class="point[^"]*" data-call=`, 8},
		{"estimated points", `<circle class="point estimated" data-call=`, 2},
		{"markers", `data-marker="`, 5},
		{"automatic markers", `data-marker="automatic"`, 1},
		{"overflow markers", `data-marker="overflow"`, 1},
		{"manual markers", `data-marker="manual"`, 2},
		{"edit markers", `data-marker="edit"`, 1},
		{"cards", `<article class="card`, 4},
		{"open sections", `<details open>`, 6}, // goal, progress, next steps; goal, next steps; goal
		{"window line", `class="hline window"`, 1},
		{"trigger line", `class="hline trigger"`, 1},
		{"the user's script, as text", `&lt;script&gt;alert\(&#39;x&#39;\)&lt;/script&gt;`, 1},
		{"the user's script, as code", `<script>alert`, 0},
		{"scripts", `<script>`, 1},
		{"escaped cwd", `/home/dev/&lt;app&gt; &amp; &#34;tools&#34;`, 1},
		{"external references", `(?i)(src|href)="(https?:)?//`, 0},
		{"imports", `(?i)@import|url\(`, 0},
	}
	for _, tt := range tests {
		if got := count(tt.re); got != tt.want {
			t.Errorf("%s: %d matches of %s, want %d", tt.what, got, tt.re, tt.want)
		}
	}
	for _, s := range []string{"Compaction 1", "Compaction 4", "$0.0123", "anthropic:claude-haiku-4-5", `id="card-2"`, `href="#card-2"`,
		"README.md", "parse.go", "truncate", "+1 on other branches"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}
