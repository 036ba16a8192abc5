package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// sessionLog is the session as run and prune hand it to the engine and
// the ladder: it remembers the entries it appended, so that a command
// interrupted by a change of the file can say which of them are in it,
// and runs the app's beforeAppend hook.
type sessionLog struct {
	*session.Session
	before   func(file string)
	appended []*compact.Entry
}

// sessionLog wraps s for the engine or the ladder.
func (a *app) sessionLog(s *session.Session) *sessionLog {
	return &sessionLog{Session: s, before: a.beforeAppend}
}

// Append appends e to the session and remembers it.
func (l *sessionLog) Append(ctx context.Context, e *compact.Entry) error {
	if l.before != nil {
		l.before(l.Name())
	}
	if err := l.Session.Append(ctx, e); err != nil {
		return err
	}
	l.appended = append(l.appended, e)
	return nil
}

// changedWarning is the warning printed when the file changed between
// loading and writing, before the command reads it again and plans anew
// (once). kept are the entries the command appended before it noticed.
func changedWarning(file, doing string, kept []*compact.Entry) string {
	msg := fmt.Sprintf("%s changed while %s (another process wrote to it); reading it again and planning anew", file, doing)
	if len(kept) > 0 {
		msg += "; already appended: " + describeEntries(kept)
	}
	return msg
}

// changedAgain is the error when the file changed a second time: the
// command gives up rather than chase a file someone keeps writing.
func changedAgain(file, doing string, kept []*compact.Entry) error {
	written := "nothing was written"
	if len(kept) > 0 {
		written = "nothing was written but " + describeEntries(kept)
	}
	return fmt.Errorf("%s: %w while %s, and again after it was read anew: another process keeps writing to it (an agent at work?), so %s; try again when it is idle",
		file, session.ErrChanged, doing, written)
}

// describeEntries lists entries as "ID (strategy)" for context edits and
// "ID (type)" otherwise.
func describeEntries(entries []*compact.Entry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		what := string(e.Kind)
		if e.Edit != nil && e.Edit.Strategy != "" {
			what = e.Edit.Strategy
		}
		parts[i] = fmt.Sprintf("%s (%s)", e.ID, what)
	}
	return strings.Join(parts, ", ")
}
