package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize"
)

// Exit codes of the program.
const (
	exitOK      = 0 // success, "nothing to compact" included
	exitFailure = 1 // the command failed; nothing was written, except the passes a failed "prune" names
	exitUsage   = 2 // the command line was wrong
)

// usageError marks an error in the command line (exit code 2).
type usageError struct{ err error }

// Error returns the message of the wrapped error.
func (e *usageError) Error() string { return e.err.Error() }

// Unwrap returns the wrapped error.
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// app is one invocation of the program: its streams, environment and
// global flags. Nothing in it outlives the call to run.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	// summarizer, when set, replaces the summarizer chosen by the flags
	// and the configuration in "compact run". Tests use it to make the
	// summarizer fail.
	summarizer compact.Summarizer
	// tuneSummarize, when set, adjusts the options of a model summarizer
	// before it is built. Tests use it to replace the waits between
	// retries with instant fakes.
	tuneSummarize func(*summarize.Options)
	// wrapLog, when set, wraps the session that "compact prune" appends
	// to. Tests use it to make an append fail part-way.
	wrapLog func(compact.Log) compact.Log
	// progress, when set, overrides the terminal check that decides
	// whether progress lines go to stderr.
	progress *bool
	// beforeAppend, when set, runs before run and prune append an entry
	// to the session file. Tests use it to write to the file the way an
	// agent would between the load and the append.
	beforeAppend func(file string)
	// loaded, when set, runs after a session file of size bytes is
	// loaded. main sets it to bound the heap (heapBound); tests leave it
	// nil, so that they change nothing process-wide.
	loaded func(size int64)
	// now, when set, is the clock of the output that says how long ago
	// something happened ("compact proxy status"); nil means time.Now.
	now func() time.Time

	// Global flags.
	jsonOut    bool
	lenient    bool
	verbose    bool
	configPath string
	// format is the --format of the commands that read other agents'
	// files; "" detects it.
	format string
	// instance is their --instance: which conversation of a file that
	// holds several (an OpenHands output.jsonl) to read; "" for the only
	// one.
	instance string

	logger *slog.Logger
	// apiKeys are the keys configured for this run, taken out of every
	// message printed (see app.redact).
	apiKeys []string
	// ran is set once a command's own code starts: an error before that
	// came from parsing the command line.
	ran bool
	// recorded holds, by path, the context window that another agent's
	// file recorded for its model (compact.Transcript.ContextWindow), for
	// the files openRead converted; fitModel prefers it to the registry.
	recorded map[string]int
}

// newApp returns the command line reading stdin and getenv and writing
// to stdout and stderr.
func newApp(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *app {
	return &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, logger: slog.New(slog.DiscardHandler)}
}

// execute runs the command line and turns an error into one line on
// stderr and an exit code. A panic, which is a bug of the program, is
// turned into one line too ("compact: internal error: ... (please
// report)", exit 1) instead of a Go stack trace.
func (a *app) execute(ctx context.Context, args []string) (code int) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(a.stderr, "compact: internal error: %s (please report)\n", hideTempNames(oneLine(a.redact(fmt.Sprint(v)))))
			code = exitFailure
		}
	}()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code = exitFailure
	var ue *usageError
	if errors.As(err, &ue) || !a.ran {
		code = exitUsage
	}
	msg := err.Error()
	// A configError names its file, line and key (or flag): the help has
	// nothing to add. Its parts are redacted one by one, so that a key
	// named like a credential label ("apiKey: want text") keeps the
	// problem that follows it.
	var ce *configError
	isConfig := errors.As(err, &ce)
	if isConfig && msg == ce.Error() {
		msg = ce.redacted(a.redact)
	} else {
		msg = a.redact(msg)
	}
	msg = hideTempNames(oneLine(msg))
	if code == exitUsage && !strings.Contains(msg, "--help") && !isConfig {
		msg += " (see compact --help)"
	}
	fmt.Fprintf(a.stderr, "compact: %s\n", msg)
	return code
}

// tempName matches the temporary files that session writes beside their
// target (".NAME.tmp-123456") and then renames into place.
var tempName = regexp.MustCompile(`((?:[^\s:]*/)?)\.([^/\s:]+)\.tmp-[0-9*]+`)

// hideTempNames replaces, in an error message, the name of a temporary
// file with the file it stands for: "open /d/.s.jsonl.tmp-123: ..."
// becomes "open a temporary file beside /d/s.jsonl: ...". The user never
// sees that name anywhere else, and the file is gone by the time the
// error is printed.
func hideTempNames(msg string) string {
	return tempName.ReplaceAllString(msg, "a temporary file beside $1$2")
}

// oneLine folds an error message onto a single line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// warn prints a warning line on stderr.
func (a *app) warn(msg string) {
	fmt.Fprintf(a.stderr, "compact: warning: %s\n", oneLine(a.redact(msg)))
}

// showProgress reports whether progress lines should be written: only
// when stderr is a terminal, so that redirected output stays clean.
func (a *app) showProgress() bool {
	if a.progress != nil {
		return *a.progress
	}
	f, ok := a.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressf writes a progress line when stderr is a terminal.
func (a *app) progressf(format string, args ...any) {
	if a.showProgress() {
		fmt.Fprintf(a.stderr, format+"\n", args...)
	}
}

// action wraps a command's body: it marks the command line as accepted,
// so that later errors count as failures rather than usage errors.
func (a *app) action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.ran = true
		return fn(cmd, args)
	}
}

// commandName is the command's path without the program's name ("run",
// not "compact run"): execute already starts every error line with
// "compact: ".
func commandName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// exactFile is the argument check of the commands that take one session
// file.
func exactFile(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("%s: missing the session FILE argument", commandName(cmd))
	case len(args) > 1:
		return usagef("%s: takes one session FILE, got %d arguments", commandName(cmd), len(args))
	}
	return nil
}

// open loads a session file with the global --lenient setting, for a
// command that may append to it: another agent's file is refused with a
// pointer to compact import. Warnings go to stderr as they occur.
func (a *app) open(path string) (*session.Session, error) {
	return a.load(path, true)
}

// openChecked is open for a command that uses none of the settings
// (fork, migrate): it still loads them first, so that a bad configuration
// file is refused as every other command refuses it.
func (a *app) openChecked(cmd *cobra.Command, path string) (*session.Session, error) {
	if _, err := a.loadSettings(cmd, nil); err != nil {
		return nil, err
	}
	return a.open(path)
}

// load is open; writing says whether the command appends to the file.
func (a *app) load(path string, writing bool) (*session.Session, error) {
	a.logger.Debug("loading session", "file", path, "lenient", a.lenient)
	s, err := agents.OpenSession(path, session.Options{Lenient: a.lenient, Warn: a.warn})
	if err != nil {
		if fi, serr := os.Stat(path); writing && (errors.Is(err, session.ErrNotSession) || serr == nil && fi.IsDir()) {
			if nw := notWritable(path); nw != nil {
				return nil, nw
			}
		}
		return nil, err
	}
	a.logger.Debug("loaded session", "file", path, "entries", s.Len(), "version", s.Header().Version)
	if a.loaded != nil {
		if fi, err := os.Stat(path); err == nil {
			a.loaded(fi.Size())
		}
	}
	return s, nil
}

// openAt loads a session for a command that may append to it (see open)
// and moves its leaf to leafID when given.
func (a *app) openAt(path, leafID string) (*session.Session, error) {
	return a.loadAt(path, leafID, true)
}

// loadAt is openAt; writing says whether the command appends.
func (a *app) loadAt(path, leafID string, writing bool) (*session.Session, error) {
	s, err := a.load(path, writing)
	if err != nil {
		return nil, err
	}
	if err := branchTo(s, path, leafID); err != nil {
		return nil, err
	}
	return s, nil
}

// branchTo moves the leaf of s, read from path, to leafID (--leaf) when
// one is given.
func branchTo(s *session.Session, path, leafID string) error {
	if leafID == "" {
		return nil
	}
	if s.Entry(leafID) == nil {
		return fmt.Errorf("%s: --leaf %q: %w", path, leafID, compact.ErrNoEntry)
	}
	return s.Branch(leafID)
}

const helpFooter = `
Configuration file:
  Read from --config PATH, else $COMPACT_CONFIG, else
  $XDG_CONFIG_HOME/compact/config.json (or ~/.config/compact/config.json)
  when that file exists, else config.yaml or config.yml there. It is one
  JSON object, or YAML (a .yaml or .yml name) with the same keys plus the
  block compaction: {enabled, context_window, reserve_tokens,
  keep_recent_tokens} and a top-level context_window; every key is
  optional and unknown keys are an error:
    policy            trigger policy: "default" (the reserve, at most a
                      fifth of the window, under the input limit),
                      "reserve" (pi's rule), "ratio" or "input"
    reserveTokens     tokens kept free by the default and reserve policies
                      (16384); the summary may use 0.8 x this
    triggerRatio      share of the window that triggers the ratio policy
                      (0.9); in (0, 1]
    targetRatio       share of the window to compact down to (0.5); in
                      (0, 1], and not above the trigger
    outputCap         cap on the output reserve of the input policy (32000)
    keepRecentTokens  newest tokens kept verbatim by a compaction (20000)
    window            context window in tokens, overriding the registry;
                      at least 1,024, and larger than reserveTokens and
                      keepRecentTokens
    model             model name used for the registry lookup
    disableAuto       switch automatic compaction off (false)
    models            extra registry entries: [{"id", "provider",
                      "contextWindow", "maxOutput", "inputLimit", "aliases"}]
    memoryLog         Markdown file every summary of "compact run" is also
                      appended to (--memory-log)
  Summarizer of "compact run":
    summarizer        "extractive" (default), "openai" or "anthropic"
    summaryModel      the model that writes summaries
    baseURL           API root of its server (e.g. http://localhost:11434/v1)
    apiKey            API key; prefer OPENAI_API_KEY / ANTHROPIC_API_KEY,
                      which override it
    summaryWindow     context window of the summary model, for models the
                      registry lacks
    summaryMaxOutput  most output tokens of the summary model
    timeout           time limit of one request, e.g. "90s" (default "10m")
    totalTimeout      time limit of the whole summary, retries and waits
                      included, e.g. "30m" (default "20m")
    fallback          "none" (default) or "extractive": write the offline
                      summary when the model fails
  summaryModel, baseURL and apiKey need "summarizer" and apply only to it.
  Command-line flags override the file.

Environment:
  COMPACT_CONFIG          path of the configuration file
  COMPACT_DISABLE_AUTO=1  switch automatic compaction off ("inspect" reports
                          it; "run" still compacts, since you asked for it);
                          =0 switches it on over the config's disableAuto
  XDG_CONFIG_HOME, HOME   where the default configuration file is looked for
  OPENAI_API_KEY          key of --summarizer openai
  OPENAI_BASE_URL         API root of --summarizer openai (default
                          https://api.openai.com/v1)
  ANTHROPIC_API_KEY       key of --summarizer anthropic
  ANTHROPIC_BASE_URL      API root of --summarizer anthropic, without /v1
                          (default https://api.anthropic.com)

Exit codes:
  0  success, including "nothing to compact"
  1  failure (a missing or malformed file, a failed summary, an
     interruption, ...); the session file is left as it was, except
     that "prune" keeps the passes it recorded before the failure and
     names them in the error; also a bug of the program, reported as
     "compact: internal error: ... (please report)"
  2  usage error: unknown command or flag, missing or extra argument, a
     mistake in the configuration file (named with its line and key) or
     in COMPACT_CONFIG or COMPACT_DISABLE_AUTO, a setting out of range
     (flag or configuration key)
`

// commandFooter ends the help of each command.
const commandFooter = `
The configuration file, the environment and the exit codes are described
in "compact --help".
`

// rootCommand builds the command tree for one invocation.
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "compact",
		Short: "Inspect and compact LLM agent session files",
		Long: `compact keeps an agent's conversation inside its model's context window.

It reads pi coding-agent session files (JSONL, versions 1 to 3), shows what
the model sees and how full the window is, and compacts a session: the older
part of the history is replaced by a summary, and the newest messages are
kept verbatim. The summary is written offline by the extractive summarizer,
or by a model (OpenAI-compatible or Anthropic) with "run --summarizer". A
compaction is appended to the file as one entry; nothing else in the file
changes. "compact prune" frees tokens more cheaply, without a summary: it
shortens old tool output, images and long texts, recording each pass as a
context_edit entry (pi ignores them; nothing stored is deleted).

"compact proxy" does the same for any agent without touching its files: an
HTTP proxy for the Anthropic and OpenAI APIs that the agent's base URL
points at, which compacts each conversation in flight.

The read-only commands (inspect, context, tree, report, bench and run
--dry-run) also read other agents' sessions as they are: Claude Code,
Codex, Cline (and Roo Code, Kilo Code), Gemini CLI, OpenHands, SWE-agent,
and chat API request bodies; "compact import" converts one into a pi
session. "compact pin" keeps a message word for word through every
compaction.

The context window of a model comes from the registry built into the
program (models.json), from --window or from the configuration file, or
from another agent's file that records it (Codex rollouts). When it is
unknown, automatic compaction never triggers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("no command given")
		},
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			level := slog.LevelWarn
			if a.verbose {
				level = slog.LevelDebug
			}
			a.logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
			return nil
		},
	}
	root.Version = version(debug.ReadBuildInfo)
	root.SetVersionTemplate("compact {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.BoolVar(&a.jsonOut, "json", false, "print the result as one JSON object on stdout")
	pf.BoolVar(&a.lenient, "lenient", false, "skip malformed lines (a cut-short line before the last included) and allow repeated ids, with warnings, instead of failing")
	pf.StringVar(&a.configPath, "config", "", "configuration file, JSON or YAML (default $COMPACT_CONFIG, else $XDG_CONFIG_HOME/compact/config.json or config.yaml if present)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "write debug logs to stderr")

	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			// Named like a setting out of range: "--window: "abc" is not
			// a whole number", without the parser's words.
			return keyErrorf("--"+bad.GetFlag().Name, "%q is not %s", bad.GetValue(), flagKind(bad.GetFlag().Value.Type()))
		}
		if !cmd.HasParent() {
			return &usageError{err}
		}
		return &usageError{fmt.Errorf("%s: %w", commandName(cmd), err)}
	})
	base := root.UsageTemplate()
	root.SetUsageTemplate(base + helpFooter)

	root.AddCommand(
		a.inspectCommand(),
		a.contextCommand(),
		a.reportCommand(),
		a.runCommand(),
		a.pruneCommand(),
		a.treeCommand(),
		a.forkCommand(),
		a.pinCommand(),
		a.importCommand(),
		a.migrateCommand(),
		a.proxyCommand(),
		a.benchCommand(),
	)
	// The configuration, environment and exit codes are described once,
	// in "compact --help"; each command's help points there.
	for _, c := range root.Commands() {
		c.SetUsageTemplate(base + commandFooter)
	}
	return root
}

// version describes the build for --version: the module version ("(devel)"
// for a build from a work tree) and, when the build recorded it, the
// commit and whether the tree had local changes. read is
// debug.ReadBuildInfo; tests pass fakes.
func version(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok {
		return "(devel)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var commit string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit == "" {
		return v
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if dirty {
		commit += ", modified"
	}
	return fmt.Sprintf("%s (commit %s)", v, commit)
}

// flagKind says in words what a flag of the pflag type typ takes.
func flagKind(typ string) string {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "duration":
		return `a duration such as "90s" or "2m"`
	}
	return "a " + typ
}
