//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// continued is what pi did with a session file that compact wrote to.
type continued struct {
	res   runResult
	fake  *fakeupstream.Fake
	file  string
	first string // the body of pi's first model request
}

// piContinue has pi (COMPACT_E2E_PI) continue the session file with one
// scripted shell step against the fake provider, on the Anthropic
// Messages API, and returns what happened.
func piContinue(t *testing.T, file string) continued {
	t.Helper()
	bin := os.Getenv("COMPACT_E2E_PI")
	if bin == "" {
		t.Skip("COMPACT_E2E_PI is not set (scripts/e2e-agents.sh installs pi and sets it)")
	}
	f, url := fakeupstream.Start(t, fakeupstream.Config{Steps: 1, Task: task})
	a := agent{name: "pi", setup: func(t *testing.T, home, base string) ([]string, []string) {
		args, env := setupPi("anthropic-messages")(t, home, base)
		return append([]string{"--session", file}, args...), env
	}}
	res := runAgent(t, a, bin, url)
	logRequests(t, f)
	c := continued{res: res, fake: f, file: file}
	for _, r := range fakeupstream.MainLoop(f.Requests()) {
		c.first = string(r.Body)
		break
	}
	if res.exitCode != 0 || !strings.Contains(res.output(), "DONE after 1 steps") {
		t.Fatalf("pi exit %d, want 0 and the scripted end\nstdout tail:\n%s\nstderr tail:\n%s", res.exitCode, tail(res.stdout, 1500), tail(res.stderr, 1500))
	}
	if c.first == "" {
		t.Fatal("pi sent no model request")
	}
	checkAll(t, f, false)
	return c
}

// compactCmd runs the compact binary (COMPACT_E2E_BIN) and returns its
// standard output.
func compactCmd(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("COMPACT_E2E_BIN")
	if bin == "" {
		t.Skip("COMPACT_E2E_BIN is not set (scripts/e2e-agents.sh builds compact and sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("compact %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// demo copies the shipped example session into a temporary folder, with
// its working directory (which pi requires to exist) set to another one.
func demo(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../examples/sessions/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := json.Marshal(t.TempDir())
	data = []byte(strings.Replace(string(data), `"cwd":"/home/dev/src/ledger"`, `"cwd":`+string(cwd), 1))
	file := filepath.Join(t.TempDir(), "demo.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestAgentsPiContinuesPinned: pi 0.7x reads a session that compact
// pinned messages in and compacted, continues it, and its request carries
// the pinned messages (through the copy in the summary, since pi knows no
// pins); compact reads the file pi appended to.
func TestAgentsPiContinuesPinned(t *testing.T) {
	// The pinned tool result holds the README the agent read first; this
	// line of it appears nowhere else in the session.
	const pinnedLine = ") are not counted."
	const ask, readResult = "949707de", "2d6fd637"

	control := demo(t)
	compactCmd(t, "run", control)
	if body := piContinue(t, control).first; strings.Contains(body, pinnedLine) {
		t.Fatalf("without a pin pi's request already holds %q: the test proves nothing", pinnedLine)
	}

	file := demo(t)
	compactCmd(t, "pin", file, ask)
	compactCmd(t, "pin", file, readResult)
	compactCmd(t, "run", file)
	before, _ := os.ReadFile(file)
	c := piContinue(t, file)
	if !strings.Contains(c.first, pinnedLine) {
		t.Errorf("pi's request does not carry the pinned tool result (%q)", pinnedLine)
	}
	if !strings.Contains(c.first, "I've inherited this small ledger tool") {
		t.Error("pi's request does not carry the pinned first request")
	}
	after, _ := os.ReadFile(file)
	if len(after) <= len(before) || string(after[:len(before)]) != string(before) {
		t.Fatalf("pi did not append to the session (%d -> %d bytes) or changed what was there", len(before), len(after))
	}
	out := compactCmd(t, "context", "--json", file)
	var ctx struct {
		Messages []struct {
			EntryID string `json:"entryId"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &ctx); err != nil {
		t.Fatalf("compact context --json: %v", err)
	}
	ids := make([]string, 0, len(ctx.Messages))
	for _, m := range ctx.Messages {
		ids = append(ids, m.EntryID)
	}
	if len(ids) < 3 || ids[1] != ask || ids[2] == "" {
		t.Errorf("after pi's turn compact's context starts %v, want the summary then the pinned %s", ids[:min(len(ids), 4)], ask)
	}
	t.Logf("pi continued the pinned session: %d requests, %s", len(c.fake.Requests()), fmt.Sprint(len(after)-len(before), " bytes appended"))
}

// imported lists a real file of every other agent's format, as the
// readers' tests use them.
var imported = []struct{ format, file string }{
	{"claude-code", "../agents/claudecode/testdata/tool-heavy.jsonl"},
	{"codex", "../agents/codex/testdata/pomodoro.jsonl"},
	{"cline", "../agents/cline/testdata/native-task/api_conversation_history.json"},
	{"gemini-cli", "../agents/geminicli/testdata/session-2026-03-27-readme.json"},
	{"openhands", "../agents/openhands/testdata/basic.json"},
	{"swe-agent", "../agents/sweagent/testdata/function-calling.traj"},
	{"request-body", "../agents/requestbody/testdata/pi-anthropic.json"},
}

// TestAgentsPiContinuesImported: a session of each other agent,
// converted by compact import, is one pi continues: its request carries
// the imported conversation, with every tool result paired, and compact
// reads the file pi appended to.
func TestAgentsPiContinuesImported(t *testing.T) {
	for _, tc := range imported {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "imported.jsonl")
			compactCmd(t, "import", "--cwd", dir, tc.file, "-o", out)
			var ctx struct {
				Messages []struct {
					Message json.RawMessage `json:"message"`
				} `json:"messages"`
			}
			if err := json.Unmarshal([]byte(compactCmd(t, "context", "--json", out)), &ctx); err != nil {
				t.Fatal(err)
			}
			// A user text of the imported conversation that pi must send;
			// when the kept part has none (a Cline task whose only user
			// turns after its compaction are environment details), the
			// text of a harness note, which pi sends as user text too.
			var want string
			for _, role := range []string{"user", "custom"} {
				if want != "" {
					break
				}
				for _, m := range ctx.Messages {
					var msg struct {
						Role    string          `json:"role"`
						Content json.RawMessage `json:"content"`
					}
					json.Unmarshal(m.Message, &msg)
					var text string
					var blocks []struct {
						Text string `json:"text"`
					}
					if json.Unmarshal(msg.Content, &text) != nil && json.Unmarshal(msg.Content, &blocks) == nil && len(blocks) > 0 {
						text = blocks[0].Text
					}
					if msg.Role == role && len(text) > 20 {
						want = text
						if i := strings.IndexAny(want, "\"\\\n\r\t"); i >= 0 {
							want = want[:i]
						}
						break
					}
				}
			}
			if len(want) < 10 {
				t.Fatalf("no user text to look for in the imported context (%d messages)", len(ctx.Messages))
			}
			before, _ := os.ReadFile(out)
			c := piContinue(t, out)
			if !strings.Contains(c.first, want) {
				t.Errorf("pi's request does not carry the imported user text %q", want)
			}
			after, _ := os.ReadFile(out)
			if len(after) <= len(before) {
				t.Errorf("pi did not append to the imported session")
			}
			compactCmd(t, "inspect", out)
		})
	}
}
