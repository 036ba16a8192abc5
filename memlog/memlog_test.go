package memlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

func record(n int) compact.MemoryRecord {
	return compact.MemoryRecord{
		Time:          time.Date(2026, 11, 23, 7, 30, n, 0, time.FixedZone("CET", 3600)),
		Session:       "work/session.jsonl",
		EntryID:       "e" + strings.Repeat("1", n+1),
		Reason:        compact.ReasonThreshold,
		TokensBefore:  180000,
		TokensAfter:   21000,
		Summarizer:    "extractive",
		Summary:       "## Goal\nShip it.\n\n```md\n# not a heading in code\n```\n#hashtag\n###### six\n\n<read-files>\na.go\n</read-files>",
		ReadFiles:     []string{"a.go"},
		ModifiedFiles: []string{"b`x.go"},
	}
}

func TestSection(t *testing.T) {
	got := Section(record(0))
	want := "## 2026-11-23 06:30:00 UTC · work/session.jsonl · threshold\n\n" +
		"- tokens: 180000 → 21000\n- summarizer: extractive\n- entry: e1\n- read: `a.go`\n- modified: `b'x.go`\n\n" +
		"### Goal\nShip it.\n\n```md\n# not a heading in code\n```\n#hashtag\n###### six\n\n<read-files>\na.go\n</read-files>\n\n"
	if got != want {
		t.Errorf("Section =\n%s\nwant\n%s", got, want)
	}
	// A session name cannot break the heading onto two lines.
	r := record(0)
	r.Session = "a\nb"
	if s := Section(r); !strings.HasPrefix(s, "## 2026-11-23 06:30:00 UTC · a b · threshold\n") {
		t.Errorf("multi-line session: %q", s[:60])
	}
}

// TestRememberAppends: sections are appended, never rewritten, also from
// several goroutines at once, and what was there before stays.
func TestRememberAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := os.WriteFile(path, []byte("# my notes\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(path)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.Remember(context.Background(), record(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.HasPrefix(got, "# my notes\n\n## ") {
		t.Errorf("the existing text was not kept first: %.40q", got)
	}
	if n := strings.Count(got, "\n## 2026-11-23"); n != 8 {
		t.Errorf("%d sections, want 8", n)
	}
	for i := 0; i < 8; i++ {
		if !strings.Contains(got, Section(record(i))) {
			t.Errorf("section %d is missing or torn", i)
		}
	}
}

func TestRememberErrors(t *testing.T) {
	f := New(filepath.Join(t.TempDir(), "no", "such", "dir", "memory.md"))
	if err := f.Remember(context.Background(), record(0)); err == nil || !strings.Contains(err.Error(), "memory.md") {
		t.Errorf("missing folder: %v, want an error naming the file", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := New(filepath.Join(t.TempDir(), "m.md")).Remember(ctx, record(0)); err == nil {
		t.Error("a cancelled context wrote anyway")
	}
}
