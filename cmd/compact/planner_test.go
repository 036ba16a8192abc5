package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// keepNothingSession writes before-compaction.jsonl cut after its second
// compaction, made to keep nothing the way pi writes it: its
// firstKeptEntryIndex is its own index (the header counts as 0).
func keepNothingSession(t *testing.T) string {
	t.Helper()
	data := readFile(t, sharedtest.PiSession(t, "before-compaction.jsonl"))
	lines := bytes.SplitAfter(data, []byte("\n"))
	last := -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"compaction"`)) {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("before-compaction.jsonl: no compaction")
	}
	comp := string(lines[last])
	i := strings.Index(comp, `"firstKeptEntryIndex":`)
	if i < 0 {
		t.Fatal("before-compaction.jsonl: the compaction has no firstKeptEntryIndex")
	}
	j := i + len(`"firstKeptEntryIndex":`)
	k := j
	for k < len(comp) && comp[k] >= '0' && comp[k] <= '9' {
		k++
	}
	lines[last] = []byte(comp[:j] + strconv.Itoa(last) + comp[k:])
	file := filepath.Join(t.TempDir(), "keep-nothing.jsonl")
	if err := os.WriteFile(file, bytes.Join(lines[:last+1], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestKeepNothingCompaction runs every command that plans on a real pi
// session whose last compaction keeps nothing: none panics, each says
// there is nothing to compact and why, and the file is left as it was.
func TestKeepNothingCompaction(t *testing.T) {
	file := keepNothingSession(t)
	before := readFile(t, file)
	const reason = "no message after the last compaction"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"inspect", []string{"inspect", file}, "next compaction: nothing to compact: " + reason},
		{"run --dry-run", []string{"run", "--dry-run", file}, "nothing to compact: " + reason},
		{"run", []string{"run", file}, "nothing to compact: " + reason},
		{"bench", []string{"bench", file}, "nothing to compact"},
		{"inspect --json", []string{"inspect", "--json", file}, reason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := newCLI(t).ok(tt.args...)
			contains(t, tt.name, out, tt.want)
			if !bytes.Equal(readFile(t, file), before) {
				t.Fatalf("%s changed the file", tt.name)
			}
		})
	}
}

// panickingSummarizer is a bug in a summarizer.
type panickingSummarizer struct{}

func (panickingSummarizer) Summarize(context.Context, *compact.SummaryRequest) (*compact.Summary, error) {
	var m map[string]int
	m["x"]++ // assignment to entry in nil map
	return nil, nil
}

// TestInternalErrorIsOneLine makes a command panic: the user gets one
// line naming an internal error and exit 1, never a Go stack trace.
func TestInternalErrorIsOneLine(t *testing.T) {
	c := newCLI(t)
	c.summarizer = panickingSummarizer{}
	file := sharedtest.TempCopy(t, demoSession)
	msg := c.failsKeeping(file, "run", "--keep-recent", "100", file)
	contains(t, "error line", msg, "compact: internal error: assignment to entry in nil map (please report)")
	if strings.Contains(msg, "goroutine") {
		t.Errorf("stack trace printed: %q", msg)
	}
}

// TestRunNothingToGain has run write a summary larger than what it
// would replace: nothing is appended, and the output says so with both
// sizes.
func TestRunNothingToGain(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		c := newCLI(t)
		c.summarizer = fixedSummary(strings.Repeat("The summary says a lot. ", 20))
		file := tinySession(t, "claude-sonnet-4-5", 400)
		before := readFile(t, file)
		args := []string{"run", "--keep-recent", "50", file}
		if jsonOut {
			var rep nothingReport
			c.okJSON(&rep, append(args, "--json")...)
			if !rep.NothingToCompact || !rep.NothingToGain || !strings.HasPrefix(rep.Reason, "nothing to gain: the summary would be ~") {
				t.Errorf("--json: %+v", rep)
			}
		} else {
			out := c.ok(args...)
			contains(t, "run", out, "nothing to gain: the summary would be ~", " tokens, the span it replaces ~2;", "nothing was written")
		}
		if !bytes.Equal(readFile(t, file), before) {
			t.Fatalf("json %v: the file changed", jsonOut)
		}
	}
}

// fixedSummary is a summarizer that writes the same text every time.
type fixedSummary string

func (s fixedSummary) Summarize(context.Context, *compact.SummaryRequest) (*compact.Summary, error) {
	return &compact.Summary{Text: string(s), Summarizer: "fixed"}, nil
}

// TestRefusalNumbers checks that inspect and run name the sizes they
// compared when there is nothing to compact.
func TestRefusalNumbers(t *testing.T) {
	file := sharedtest.TempCopy(t, demoSession)
	c := newCLI(t)
	for _, args := range [][]string{{"inspect", file}, {"run", "--dry-run", file}, {"run", file}} {
		out := c.ok(append(args, "--keep-recent", "100000")...)
		contains(t, strings.Join(args[:len(args)-1], " "), out, "nothing to compact: all ", " tokens) fit in the 100,000 tokens kept verbatim")
	}
}
