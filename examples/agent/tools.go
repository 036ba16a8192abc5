package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/openai"
)

// Tool defaults.
const (
	// DefaultShellTimeout bounds one run_shell command.
	DefaultShellTimeout = 30 * time.Second
	// DefaultMaxOutput is the most bytes of a tool's output given to the
	// model.
	DefaultMaxOutput = 32 << 10
)

// Tools runs the agent's three tools inside one directory. read_file and
// list_dir cannot reach outside it (paths are resolved through an
// os.Root, which refuses "..", absolute paths elsewhere and symbolic links
// that lead out); run_shell starts its commands there but is no sandbox.
type Tools struct {
	// Dir is the working directory the tools are confined to.
	Dir string
	// ShellTimeout bounds one command; 0 means DefaultShellTimeout.
	ShellTimeout time.Duration
	// MaxOutput caps each result, in bytes; 0 means DefaultMaxOutput.
	MaxOutput int
}

// Specs returns the tool definitions to offer the model.
func (t *Tools) Specs() []ToolSpec {
	pathSchema := func(what string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"` + what +
			`, relative to the working directory"}},"required":["path"]}`)
	}
	return []ToolSpec{
		{Name: "read_file", Description: "Read a text file in the working directory.", Parameters: pathSchema("The file to read")},
		{Name: "list_dir", Description: "List the entries of a directory in the working directory (\".\" for the working directory itself).",
			Parameters: pathSchema("The directory to list")},
		{Name: "run_shell", Description: "Run a shell command (sh -c) in the working directory and return its combined output and exit status.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The command line"}},"required":["command"]}`)},
	}
}

// Run executes one tool call and returns its result as a tool result
// message; a failure is a result with IsError set, never a Go error, so
// that the model sees it and can react.
func (t *Tools) Run(ctx context.Context, call *compact.ToolCall) *compact.Message {
	out, err := t.run(ctx, call)
	res := &compact.Message{Role: compact.RoleToolResult, ToolCallID: call.ID, ToolName: call.Name,
		Timestamp: time.Now().UnixMilli()}
	if err != nil {
		res.IsError = true
		if out != "" {
			out += "\n"
		}
		out += "error: " + err.Error()
	}
	res.Content = []compact.Part{{Type: compact.PartText, Text: out}}
	return res
}

func (t *Tools) run(ctx context.Context, call *compact.ToolCall) (string, error) {
	var args struct {
		Path    string `json:"path"`
		Command string `json:"command"`
	}
	if raw, ok := openai.WrappedArguments(call.Arguments); ok {
		// The model's text, kept by openai.Arguments under "_raw".
		return "", fmt.Errorf("the arguments are not a JSON object: %s", capText(raw, 200))
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return "", fmt.Errorf("the arguments are not a JSON object: %v", err)
	}
	switch call.Name {
	case "read_file":
		return t.readFile(args.Path)
	case "list_dir":
		return t.listDir(args.Path)
	case "run_shell":
		return t.runShell(ctx, args.Command)
	}
	return "", fmt.Errorf("unknown tool %q (the tools are read_file, list_dir and run_shell)", call.Name)
}

func (t *Tools) maxOutput() int {
	if t.MaxOutput > 0 {
		return t.MaxOutput
	}
	return DefaultMaxOutput
}

// relative turns a path the model gave into one relative to Dir. An
// absolute path is accepted when it lies inside Dir; os.Root checks the
// rest.
func (t *Tools) relative(p string) (string, error) {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		dir, err := filepath.Abs(t.Dir)
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%s is outside the working directory", p)
		}
		p = rel
	}
	return p, nil
}

// open opens a path inside Dir through an os.Root.
func (t *Tools) open(p string) (*os.File, error) {
	rel, err := t.relative(p)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(t.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, cleanPathError(err)
	}
	return f, nil
}

// cleanPathError drops the *os.PathError's operation so that the model
// reads "path: reason".
func cleanPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

func (t *Tools) readFile(p string) (string, error) {
	f, err := t.open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s is a directory; use list_dir", p)
	}
	limit := t.maxOutput()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return "", cleanPathError(err)
	}
	if len(b) > limit {
		st, _ := f.Stat()
		size := int64(-1)
		if st != nil {
			size = st.Size()
		}
		return fmt.Sprintf("%s\n[truncated: showing the first %d of %d bytes]", b[:limit], limit, size), nil
	}
	return string(b), nil
}

func (t *Tools) listDir(p string) (string, error) {
	f, err := t.open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return "", cleanPathError(err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var b strings.Builder
	for _, e := range entries {
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", e.Name())
		case e.Type()&os.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s@\n", e.Name())
		default:
			size := int64(0)
			if info, err := e.Info(); err == nil {
				size = info.Size()
			}
			fmt.Fprintf(&b, "%s\t%d bytes\n", e.Name(), size)
		}
	}
	if b.Len() == 0 {
		return "(empty directory)", nil
	}
	return capText(b.String(), t.maxOutput()), nil
}

func (t *Tools) runShell(ctx context.Context, command string) (string, error) {
	if strings.TrimSpace(command) == "" {
		return "", errors.New("empty command")
	}
	timeout := t.ShellTimeout
	if timeout <= 0 {
		timeout = DefaultShellTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", command)
	cmd.Dir = t.Dir
	cmd.Stdin = nil
	// A command that leaves a child holding the output open is not
	// waited for beyond this.
	cmd.WaitDelay = time.Second
	out := &cappedBuffer{limit: t.maxOutput()}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	text := out.String()
	switch {
	case cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		return text, fmt.Errorf("the command did not finish within %v and was killed", timeout)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return text, fmt.Errorf("exit status %d", ee.ExitCode())
		}
		return text, err
	}
	if text == "" {
		text = "(no output)"
	}
	return text, nil
}

// cappedBuffer keeps the first limit bytes written to it and counts the
// rest.
type cappedBuffer struct {
	buf     bytes.Buffer
	limit   int
	dropped int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return fmt.Sprintf("%s\n[truncated: %d more bytes of output not shown]", c.buf.String(), c.dropped)
}

// capText shortens s to limit bytes with a note.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return fmt.Sprintf("%s\n[truncated: %d more bytes not shown]", s[:limit], len(s)-limit)
}
