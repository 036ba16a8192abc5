package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents"
	"github.com/compactkit/compact/agents/openhands"
	"github.com/compactkit/compact/session"
)

// addFormatFlag gives a command that only reads its file the --format
// flag.
func (a *app) addFormatFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.format, "format", "", "the file's format: "+strings.Join(agents.Names(), ", ")+" (default: detected from the content)")
	cmd.Flags().StringVar(&a.instance, "instance", "", "the instance to read from an OpenHands evaluation or resolver output.jsonl, by instance_id or issue number (default: the only one)")
}

// fileFormat is the format of the file at path: --format when given,
// else the one agents.Detect finds. A file no format recognises fails
// with Detect's description of it, unless it starts like a pi session
// with a missing or damaged header: that one is taken for a pi session,
// so that the session reader's error names the line at fault.
func (a *app) fileFormat(path string) (agents.Format, error) {
	if a.format != "" {
		f, err := agents.ByName(a.format)
		if err != nil {
			return f, usagef("--format %w", err)
		}
		return f, nil
	}
	f, err := agents.Detect(path)
	if u := (*agents.UnknownError)(nil); errors.As(err, &u) && u.MaybePi {
		return agents.Format{Name: agents.Pi, Agent: "pi"}, nil
	}
	return f, err
}

// openRead loads a file for a command that only reads it (inspect,
// context, tree, report, bench, run --dry-run): a pi session, or another
// agent's file converted in memory (see package agents), with its leaf
// moved to leafID when given.
func (a *app) openRead(path, leafID string) (*session.Session, error) {
	f, err := a.fileFormat(path)
	if err != nil {
		return nil, err
	}
	if f.Name == agents.Pi {
		if a.instance != "" {
			return nil, usagef("--instance %s: %s is read as a pi session, which holds one conversation", a.instance, path)
		}
		return a.loadAt(path, leafID, false)
	}
	t, err := a.readTranscript(path, f)
	if err != nil {
		return nil, err
	}
	if t.ContextWindow > 0 {
		if a.recorded == nil {
			a.recorded = make(map[string]int)
		}
		a.recorded[path] = t.ContextWindow
	}
	s, err := session.FromTranscript(t, path, session.Options{Lenient: a.lenient, Warn: a.warn})
	if err != nil {
		return nil, err
	}
	if err := branchTo(s, path, leafID); err != nil {
		return nil, err
	}
	return s, nil
}

// readTranscript reads another agent's file and reports on stderr what
// the reader worked around and which record types it did not know.
func (a *app) readTranscript(path string, f agents.Format) (*compact.Transcript, error) {
	a.logger.Debug("reading another agent's file", "file", path, "format", f.Name)
	t, err := f.Read(path, a.instance)
	// --instance missing, wrong or out of place: a usage error.
	switch {
	case errors.Is(err, openhands.ErrInstance):
		return nil, usagef("%w with --instance", err)
	case errors.Is(err, openhands.ErrNotOutput), errors.Is(err, agents.ErrNoInstances):
		return nil, usagef("--instance %s: %w", a.instance, err)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range t.Warnings {
		a.warn(w)
	}
	if len(t.Unknown) > 0 {
		a.warn(fmt.Sprintf("%s: records of types the %s reader does not know, kept as custom entries: %s", path, f.Name, countList(t.Unknown)))
	}
	a.logger.Debug("read another agent's file", "file", path, "format", f.Name, "entries", len(t.Entries))
	return t, nil
}

// countList formats counts by name as "a ×2, b ×1", largest first.
func countList(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s ×%d", n, m[n])
	}
	return strings.Join(parts, ", ")
}

// notWritable explains that a command which appends cannot take the
// file at path, which the session reader refused: another agent's file,
// or content no format reads (Detect's description of it). It returns nil
// for a file that is, or may be, a pi session: the session reader's error
// says more about it.
func notWritable(path string) error {
	f, err := agents.Detect(path)
	if u := (*agents.UnknownError)(nil); errors.As(err, &u) {
		if u.MaybePi {
			return nil
		}
		return err
	}
	if err != nil || f.Name == agents.Pi {
		return nil
	}
	return fmt.Errorf("%s: this is %s file (format %s), %w: this command appends to pi sessions only; inspect, context, tree, report, bench and run --dry-run read it as it is, and \"compact import %s -o OUT.jsonl\" converts it to a pi session",
		path, article(f.Agent), f.Name, session.ErrNotSession, path)
}

// article puts "a" or "an" before a name.
func article(name string) string {
	if strings.HasPrefix(name, "a ") || strings.HasPrefix(name, "an ") {
		return name
	}
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}
