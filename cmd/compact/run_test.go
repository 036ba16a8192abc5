package main

import (
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// A dry run shows the kept part the real run will keep, and says why it
// is smaller than --keep-recent: with a 32k window the demo's 20,000-token
// kept part would leave no room for the summary under the target.
func TestDryRunShowsAdjustments(t *testing.T) {
	file := sharedtest.TempCopy(t, demoSession)
	c := newCLI(t)
	out := c.ok("run", "--dry-run", "--window", "32768", file)
	contains(t, "run --dry-run", out, "adjusted: kept part reduced from ~19,945 to ~", "fits under 13,107")
	var rep struct {
		KeptTokens  int      `json:"keptTokens"`
		Adjustments []string `json:"adjustments"`
	}
	c.okJSON(&rep, "--json", "run", "--dry-run", "--window", "32768", file)
	if len(rep.Adjustments) != 1 || rep.KeptTokens > 16384/2 {
		t.Errorf("--json: kept %d, adjustments %q; want the reduced kept part and one adjustment", rep.KeptTokens, rep.Adjustments)
	}
	after := c.ok("run", "--window", "32768", file)
	keeps := func(s string) string { return strings.SplitN(strings.SplitN(s, "keeps entry ", 2)[1], " ", 2)[0] }
	if keeps(after) != keeps(out) {
		t.Errorf("the dry run keeps from %s, the run from %s", keeps(out), keeps(after))
	}
}

// A read-only session file is refused before the model is asked for a
// summary that could not be recorded.
func TestRunReadOnlyBeforeModel(t *testing.T) {
	file := sharedtest.TempCopy(t, demoSession)
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	m := newFakeModel(t, summarizerOpenAI)
	c := newCLI(t)
	msg := c.fails(1, modelArgs(m, file, "--summary-window", "32768")...)
	contains(t, "run on a read-only file", msg, file+": append: the file is read-only (mode 0444)")
	if n := len(m.seen()); n != 0 {
		t.Errorf("the model was asked %d times for a summary that could not be recorded", n)
	}
}
