package main

import (
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// Entry ids of the demo session: its first request, and a read result
// whose call asked for two files.
const (
	demoAsk      = "949707de"
	demoCall     = "a6974133"
	demoResult   = "2d6fd637"
	demoResult2  = "69fc1ce2"
	demoModelChg = "0a6aceec"
)

func TestPinCommand(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	out := c.ok("pin", file, demoResult)
	if !strings.Contains(out, "pinned entry "+demoResult+" with "+demoCall+", "+demoResult2) {
		t.Errorf("pin output %q does not name the call and its other result", out)
	}
	var r pinReport
	c.okJSON(&r, "pin", file, demoAsk, "--json")
	if !r.Pinned || !r.Changed || strings.Join(r.Group, ",") != demoAsk {
		t.Errorf("pin --json = %+v", r)
	}
	c.okJSON(&r, "pin", file, demoAsk, "--json")
	if r.Changed {
		t.Error("pinning a pinned entry wrote something")
	}

	// The compaction keeps them after the summary; pi's reader sees the
	// label entries as labels.
	var run planReport
	c.okJSON(&run, "run", file, "--json")
	if got := strings.Join(run.PinnedEntryIDs, ","); got != strings.Join([]string{demoAsk, demoCall, demoResult, demoResult2}, ",") {
		t.Errorf("run --json plan.pinnedEntryIds = %s", got)
	}
	s, err := session.Open(file, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Label(demoAsk) != compact.PinLabel {
		t.Errorf("label of %s = %q", demoAsk, s.Label(demoAsk))
	}
	ctx := s.Context()
	if got := strings.Join(ctx.EntryIDs[1:5], ","); got != strings.Join([]string{demoAsk, demoCall, demoResult, demoResult2}, ",") {
		t.Errorf("context after the summary: %s", got)
	}
	out = c.ok("context", file)
	if !strings.Contains(out, "(entry "+demoAsk) {
		t.Errorf("compact context does not show the pinned request:\n%s", out[:min(len(out), 2000)])
	}

	out = c.ok("pin", "--unpin", file, demoCall)
	if !strings.Contains(out, "unpinned entry "+demoCall) {
		t.Errorf("unpin output %q", out)
	}
	s, _ = session.Open(file, session.Options{})
	if s.Label(demoResult) != "" {
		t.Errorf("after unpinning the call, its result is still labelled %q", s.Label(demoResult))
	}
	if got := s.Context().EntryIDs[1]; got != demoAsk {
		t.Errorf("after unpinning, the context continues with %s", got)
	}
}

func TestPinCommandErrors(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	before, _ := os.ReadFile(file)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"pin"}, 2, "missing the session FILE and entry ID"},
		{[]string{"pin", file}, 2, "missing the entry ID"},
		{[]string{"pin", file, "a", "b"}, 2, "got 3 arguments"},
		{[]string{"pin", file, "nope"}, 1, `entry "nope": no such entry`},
		{[]string{"pin", file, demoModelChg}, 1, "is a model_change entry: not a message entry"},
		{[]string{"pin", file, demoResult, "--leaf", demoAsk}, 1, "not on the current branch"},
		{[]string{"pin", file + ".missing", demoAsk}, 1, "no such file"},
	}
	for _, tt := range tests {
		r := c.run(tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("compact %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.code, tt.want)
		}
	}
	after, _ := os.ReadFile(file)
	if string(before) != string(after) {
		t.Error("a failed pin changed the file")
	}
}
