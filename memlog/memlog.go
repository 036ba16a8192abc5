// Package memlog keeps compact's memory log as a Markdown file: one dated
// section per compaction, with the session, the reason, the tokens before
// and after, the files read and modified, and the summary itself. The file
// is only ever appended to, each section in one write followed by an
// fsync, so that a summary a later compaction drops from the context stays
// on disk even if the process dies right after.
//
// It is a compact.MemoryLog:
//
//	eng := &compact.Engine{Summarizer: s, Memory: memlog.New("memory.md")}
//
// The standard library is all it needs: appending with O_APPEND is atomic
// per write on a local file system, so several processes may share one
// log without locking.
package memlog

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/compactkit/compact"
)

// File is a memory log in the Markdown file at Path, created on the first
// compaction (its folder must exist). It is safe for concurrent use.
type File struct {
	// Path is the file appended to.
	Path string
}

// New returns the memory log at path.
func New(path string) *File { return &File{Path: path} }

// Remember implements compact.MemoryLog: it appends rec's section and
// syncs the file.
func (f *File) Remember(ctx context.Context, rec compact.MemoryRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fh, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := fh.Write([]byte(Section(rec))); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return fmt.Errorf("sync %s: %w", f.Path, err)
	}
	return fh.Close()
}

// Section renders one compaction as the log writes it: a second-level
// heading with the time (UTC), the session and the reason, a short list
// of figures, and the summary with its own headings one level down.
func Section(rec compact.MemoryRecord) string {
	var b strings.Builder
	b.WriteString("## " + rec.Time.UTC().Format("2006-01-02 15:04:05 UTC"))
	if rec.Session != "" {
		b.WriteString(" · " + oneLine(rec.Session))
	}
	b.WriteString(" · " + string(rec.Reason) + "\n\n")
	fmt.Fprintf(&b, "- tokens: %d → %d\n", rec.TokensBefore, rec.TokensAfter)
	if rec.Summarizer != "" {
		fmt.Fprintf(&b, "- summarizer: %s\n", oneLine(rec.Summarizer))
	}
	if rec.EntryID != "" {
		fmt.Fprintf(&b, "- entry: %s\n", oneLine(rec.EntryID))
	}
	if len(rec.ReadFiles) > 0 {
		fmt.Fprintf(&b, "- read: %s\n", strings.Join(quoted(rec.ReadFiles), ", "))
	}
	if len(rec.ModifiedFiles) > 0 {
		fmt.Fprintf(&b, "- modified: %s\n", strings.Join(quoted(rec.ModifiedFiles), ", "))
	}
	b.WriteString("\n")
	b.WriteString(demote(strings.TrimSpace(rec.Summary)))
	b.WriteString("\n\n")
	return b.String()
}

// demote moves the summary's own Markdown headings one level down, so
// that they sit under the section's heading; lines inside fenced code are
// left alone.
func demote(s string) string {
	lines := strings.Split(s, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		case heading(l):
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "\n")
}

// heading reports whether l is an ATX heading of level 1 to 5 (one that
// can go a level down).
func heading(l string) bool {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	return n >= 1 && n <= 5 && (len(l) == n || l[n] == ' ' || l[n] == '\t')
}

// quoted puts each path in backticks.
func quoted(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = "`" + strings.ReplaceAll(oneLine(p), "`", "'") + "`"
	}
	return out
}

// oneLine keeps a value on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
