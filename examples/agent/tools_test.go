package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

func runTool(t *testing.T, tools *Tools, name, args string) *compact.Message {
	t.Helper()
	m := tools.Run(context.Background(), &compact.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
	if m.Role != compact.RoleToolResult || m.ToolCallID != "c" || m.ToolName != name {
		t.Fatalf("result %+v does not answer the call", m)
	}
	return m
}

func TestToolsStayInsideTheWorkdir(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "work")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"work/a.txt": "inside", "work/sub/b.txt": "deeper", "secret.txt": "SECRET-CONTENT"} {
		if err := os.WriteFile(filepath.Join(parent, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	linked := os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(dir, "link.txt")) == nil
	tools := &Tools{Dir: dir}

	for _, args := range []string{`{"path":"a.txt"}`, `{"path":"sub/../a.txt"}`, `{"path":"` + filepath.Join(dir, "a.txt") + `"}`} {
		if m := runTool(t, tools, "read_file", args); m.IsError || m.Text() != "inside" {
			t.Errorf("read_file %s = %q (error %v), want the file", args, m.Text(), m.IsError)
		}
	}
	escapes := []string{`{"path":"../secret.txt"}`, `{"path":"sub/../../secret.txt"}`, `{"path":"` + filepath.Join(parent, "secret.txt") + `"}`}
	if linked {
		escapes = append(escapes, `{"path":"link.txt"}`)
	}
	for _, args := range escapes {
		if m := runTool(t, tools, "read_file", args); !m.IsError || strings.Contains(m.Text(), "SECRET-CONTENT") {
			t.Errorf("read_file %s = %q, want an error without the file", args, m.Text())
		}
	}
	for _, args := range []string{`{"path":".."}`, `{"path":"` + parent + `"}`} {
		if m := runTool(t, tools, "list_dir", args); !m.IsError || strings.Contains(m.Text(), "secret") {
			t.Errorf("list_dir %s = %q, want an error", args, m.Text())
		}
	}
	m := runTool(t, tools, "list_dir", `{"path":"."}`)
	if m.IsError || !strings.Contains(m.Text(), "a.txt\t6 bytes") || !strings.Contains(m.Text(), "sub/") {
		t.Errorf("list_dir . = %q", m.Text())
	}
	if m := runTool(t, tools, "read_file", `{"path":"sub"}`); !m.IsError {
		t.Errorf("reading a directory gave %q", m.Text())
	}
	if m := runTool(t, tools, "read_file", `{"path":"missing.txt"}`); !m.IsError {
		t.Errorf("reading a missing file gave %q", m.Text())
	}
	if m := runTool(t, tools, "delete_all", `{}`); !m.IsError || !strings.Contains(m.Text(), "unknown tool") {
		t.Errorf("unknown tool gave %q", m.Text())
	}
	if m := runTool(t, tools, "read_file", `"{broken"`); !m.IsError {
		t.Errorf("arguments that are not an object gave %q", m.Text())
	}
}

func TestToolOutputIsCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("x", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	tools := &Tools{Dir: dir, MaxOutput: 1000}
	m := runTool(t, tools, "read_file", `{"path":"big.txt"}`)
	if m.IsError || len(m.Text()) > 1100 || !strings.Contains(m.Text(), "first 1000 of 5000 bytes") {
		t.Errorf("read_file of a large file gave %d bytes ending %q", len(m.Text()), m.Text()[max(0, len(m.Text())-80):])
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	m = runTool(t, tools, "run_shell", `{"command":"cat big.txt big.txt"}`)
	if m.IsError || len(m.Text()) > 1100 || !strings.Contains(m.Text(), "9000 more bytes") {
		t.Errorf("run_shell with large output gave %d bytes ending %q", len(m.Text()), m.Text()[max(0, len(m.Text())-80):])
	}
}

func TestRunShell(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	tools := &Tools{Dir: dir, ShellTimeout: 300 * time.Millisecond}
	m := runTool(t, tools, "run_shell", `{"command":"pwd"}`)
	real, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(m.Text()); m.IsError || (got != dir && got != real) {
		t.Errorf("pwd = %q, want %q", got, dir)
	}
	m = runTool(t, tools, "run_shell", `{"command":"echo oops >&2; exit 3"}`)
	if !m.IsError || !strings.Contains(m.Text(), "oops") || !strings.Contains(m.Text(), "exit status 3") {
		t.Errorf("failing command gave %q (error %v)", m.Text(), m.IsError)
	}
	start := time.Now()
	m = runTool(t, tools, "run_shell", `{"command":"sleep 10"}`)
	if !m.IsError || !strings.Contains(m.Text(), "did not finish") || time.Since(start) > 5*time.Second {
		t.Errorf("slow command gave %q after %v", m.Text(), time.Since(start))
	}
	if m := runTool(t, tools, "run_shell", `{"command":"  "}`); !m.IsError {
		t.Errorf("empty command gave %q", m.Text())
	}
}

func TestToolsRefuseArgumentsThatAreNotAnObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools := &Tools{Dir: dir}
	for _, args := range []string{`{"_raw":"{\"path\": \"a.txt"}`, `{"_raw":"[1]"}`, `"{\"path\""`} {
		// Read as keys, {"_raw": ...} would be a list_dir of the workdir.
		m := runTool(t, tools, "list_dir", args)
		if !m.IsError || !strings.Contains(m.Text(), "the arguments are not a JSON object") || strings.Contains(m.Text(), "a.txt\t") {
			t.Errorf("%s: result %q, want an error about the arguments", args, m.Text())
		}
	}
}
