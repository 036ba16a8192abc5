// Command agent is a small tool-using agent for any server that speaks
// the OpenAI Chat Completions API (Ollama, the llama.cpp server, vLLM,
// OpenAI, ...). It gives the model three tools (read_file, list_dir,
// run_shell) confined to a working directory, records the conversation
// in a pi-format session file, and sends every model call through a
// compact.Guard, so that long tool loops are compacted to fit the
// model's context window instead of failing.
//
// Usage:
//
//	go run ./examples/agent --model qwen2.5-coder:7b --window 32768 \
//	    --session run.jsonl --workdir . "Summarize what this repository does"
//
// See README.md for running it against Ollama or llama.cpp.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/compactkit/compact"
)

// systemPrompt is sent before the context on every call.
const systemPrompt = "You are a careful assistant working in a directory through tools. " +
	"Use list_dir, read_file and run_shell to look at the files before answering; call one tool at a time when the next step depends on the result. " +
	"When the task is done, answer in plain text without calling a tool."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return // the usage was printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// options are the parsed command line.
type options struct {
	baseURL, model, apiKey, sessionFile, workdir string
	window, reserve, maxSteps                    int
	timeout                                      time.Duration
	task                                         string
}

// parseFlags reads the command line. The task is the arguments left after
// the flags, joined with spaces, or else all of stdin.
func parseFlags(args []string, stdin io.Reader, stderr io.Writer, getenv func(string) string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.baseURL, "base-url", "http://localhost:11434/v1", "API root of the OpenAI-compatible server")
	fs.StringVar(&o.model, "model", "", "model name (required)")
	fs.StringVar(&o.apiKey, "api-key", getenv("OPENAI_API_KEY"), "bearer token; default $OPENAI_API_KEY, none for local servers")
	fs.StringVar(&o.sessionFile, "session", "agent-session.jsonl", "session file to record the run in; created when missing, continued when present")
	fs.IntVar(&o.window, "window", 0, "context window in tokens; default: the model registry's, if it knows the model")
	fs.IntVar(&o.reserve, "reserve", 0, "tokens kept free for the answer; default min(16384, window/4)")
	fs.IntVar(&o.maxSteps, "max-steps", 50, "most model calls for the task")
	fs.StringVar(&o.workdir, "workdir", ".", "directory the tools work in")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "bound on one model call")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: agent [flags] [task...]   (without a task argument the task is read from stdin)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.model == "" {
		return nil, errors.New("--model is required")
	}
	if o.maxSteps <= 0 {
		return nil, errors.New("--max-steps must be positive")
	}
	o.task = strings.TrimSpace(strings.Join(fs.Args(), " "))
	if o.task == "" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read the task from stdin: %w", err)
		}
		o.task = strings.TrimSpace(string(b))
	}
	if o.task == "" {
		return nil, errors.New("no task: give it as arguments or on stdin")
	}
	return o, nil
}

// contextWindow returns the context window: the flag, else the registry's.
func (o *options) contextWindow() (int, error) {
	if o.window > 0 {
		return o.window, nil
	}
	reg, err := compact.LoadRegistry()
	if err != nil {
		return 0, err
	}
	if m, ok := reg.Lookup(o.model); ok && m.ContextWindow > 0 {
		return m.ContextWindow, nil
	}
	return 0, fmt.Errorf("the context window of %q is unknown: set --window to the size the server runs the model with", o.model)
}

// run is the whole command: the final answer goes to stdout, progress
// and compaction events to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	o, err := parseFlags(args, stdin, stderr, getenv)
	if err != nil {
		return err
	}
	window, err := o.contextWindow()
	if err != nil {
		return err
	}
	lim := LimitsFor(window)
	if o.reserve > 0 {
		if o.reserve >= window {
			return fmt.Errorf("--reserve %d leaves nothing of the %d-token window", o.reserve, window)
		}
		lim.Reserve = o.reserve
	}
	workdir, err := filepath.Abs(o.workdir)
	if err != nil {
		return err
	}
	if st, err := os.Stat(workdir); err != nil || !st.IsDir() {
		return fmt.Errorf("--workdir %s is not a directory", o.workdir)
	}
	sess, err := OpenSession(o.sessionFile, workdir, time.Now())
	if err != nil {
		return err
	}
	tools := &Tools{Dir: workdir, MaxOutput: lim.ToolOutput}
	chat := &Chat{BaseURL: o.baseURL, Model: o.model, APIKey: o.apiKey, System: systemPrompt,
		Tools: tools.Specs(), Timeout: o.timeout}
	guard := NewGuard(sess, o.model, lim, func(ev compact.Event) { fmt.Fprintln(stderr, formatEvent(ev)) })
	fmt.Fprintf(stderr, "session %s, window %d tokens (compacting above %d), workdir %s\n",
		o.sessionFile, window, window-lim.Reserve, workdir)
	agent := &Agent{Guard: guard, Model: chat.Complete, Tools: tools, MaxSteps: o.maxSteps, Progress: stderr}
	answer, err := agent.Run(ctx, o.task)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, answer)
	return nil
}
