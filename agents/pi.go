package agents

import (
	"errors"
	"fmt"

	"github.com/compactkit/compact/session"
)

// OpenSession opens the pi session at path with session.Open. When the
// file is not a pi session but another agent's file, the error says
// which, from the same detection as Detect (so the two never disagree),
// and points at compact import: "this looks like a Claude Code file
// (format claude-code), not a pi session file (…)". The error is still
// a *session.LineError wrapping session.ErrNotSession.
func OpenSession(path string, opts session.Options) (*session.Session, error) {
	s, err := session.Open(path, opts)
	if err == nil || !errors.Is(err, session.ErrNotSession) {
		return s, err
	}
	var le *session.LineError
	if !errors.As(err, &le) {
		return nil, err
	}
	head, herr := readHead(path)
	if herr != nil {
		return nil, err
	}
	f, ok := detectHead(head)
	if !ok || f.Name == Pi {
		return nil, err
	}
	return nil, &session.LineError{File: le.File, Line: le.Line,
		Err: fmt.Errorf("this looks like %s file (format %s), %w (compact import converts it to one; package agents reads it)", article(f.Agent), f.Name, session.ErrNotSession)}
}

// article puts "a" before an agent's name unless it has one.
func article(agent string) string {
	if len(agent) > 2 && (agent[:2] == "a " || agent[:3] == "an ") {
		return agent
	}
	return "a " + agent
}
