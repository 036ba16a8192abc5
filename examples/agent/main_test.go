package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

func TestRunCommand(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	model := &fakeModel{Window: 8000, Steps: 25}
	srv := model.server(t)
	dir := workdir(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "from-env"
		}
		return ""
	}
	args := []string{"--base-url", srv.URL + "/v1", "--model", "fake", "--window", "8000", "--session", file, "--workdir", dir, "--max-steps", "40"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, strings.NewReader("Read the files.\n"), &stdout, &stderr, getenv); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if strings.TrimSpace(stdout.String()) != finalAnswer {
		t.Errorf("stdout %q, want the final answer", stdout.String())
	}
	for _, want := range []string{"window 8000 tokens (compacting above 6000)", "step 1: read_file", "compaction start (threshold)", "compaction end (threshold)", "final answer"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if model.auth != "Bearer from-env" {
		t.Errorf("authorization %q, want the key from $OPENAI_API_KEY", model.auth)
	}
	if _, max, overflows, problems := model.stats(); max > 8000 || len(overflows) > 0 || len(problems) > 0 {
		t.Errorf("largest request %d, overflows %v, problems %v", max, overflows, problems)
	}

	// A second run continues the same session; the task comes from the
	// arguments this time.
	model2 := &fakeModel{Window: 8000, Steps: 2}
	srv2 := model2.server(t)
	args[1] = srv2.URL + "/v1"
	stdout.Reset()
	if err := run(context.Background(), append(args, "Now", "summarize."), strings.NewReader(""), &stdout, &stderr, getenv); err != nil {
		t.Fatalf("second run: %v", err)
	}
	sess, err := session.Open(file, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for _, e := range sess.Entries() {
		if e.Kind == compact.KindMessage && e.Message.Role == compact.RoleUser {
			tasks = append(tasks, e.Message.Text())
		}
	}
	if len(tasks) != 2 || tasks[0] != "Read the files." || tasks[1] != "Now summarize." {
		t.Errorf("user messages in the session: %q", tasks)
	}
	if u := compact.Measure(sess.Context()); u.Tokens > 8000 {
		t.Errorf("context %d tokens after two runs", u.Tokens)
	}
}

func TestRunCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"task"}, "--model is required"},
		{[]string{"--model", "no-such-model-xyz", "--workdir", dir, "task"}, "set --window"},
		{[]string{"--model", "m", "--window", "1000"}, "no task"},
		{[]string{"--model", "m", "--window", "1000", "--reserve", "1000", "task"}, "leaves nothing"},
		{[]string{"--model", "m", "--window", "1000", "--workdir", filepath.Join(dir, "missing"), "task"}, "not a directory"},
		{[]string{"--model", "m", "--max-steps", "0", "task"}, "must be positive"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), tc.args, strings.NewReader(""), &bytes.Buffer{}, &stderr, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

func TestLimitsFor(t *testing.T) {
	t.Parallel()
	big := LimitsFor(200_000)
	if big.Reserve != compact.DefaultReserveTokens || big.KeepRecent != compact.DefaultKeepRecentTokens || big.ToolOutput != DefaultMaxOutput {
		t.Errorf("large window: %+v, want the library defaults", big)
	}
	small := LimitsFor(16384)
	if small.Reserve != 4096 || small.KeepRecent != 4096 || small.SummaryTokens != 2048 || small.ToolOutput != 8192 {
		t.Errorf("16k window: %+v", small)
	}
}
