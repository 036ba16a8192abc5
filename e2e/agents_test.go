//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// task is what every agent is asked to do; the fake's script does the rest
// (see internal/testing/fakeupstream). It must not mention summaries or STEP
// markers.
const task = "Run the shell steps the tool results ask for until told you are done."

// steps is the length of the scripted task; each step's tool output is
// "STEP-n" and seq 1 1200 (about 1.6k tokens a step once in the history).
const steps = fakeupstream.DefaultSteps

// agent describes how to run one CLI headless against a base URL.
type agent struct {
	name string
	// envVar names the variable holding the CLI's path.
	envVar string
	// window is the fake's context window for this agent, in fake tokens
	// (bytes/4). Each is chosen so that the 16-step task overflows it
	// without the proxy at about step 10-12, with at least 500 tokens
	// between the window and the nearest request size either side, and
	// so that the agent's fixed part (system prompt, tools) leaves room
	// for several steps of history with compaction. Numbers measured with
	// claude-code 2.1.330, codex 0.169.0, opencode 1.18.33 and
	// pi-coding-agent 0.73.1 (the windows still hold for the current pins,
	// claude-code 2.1.332 and codex 0.171.0), per request: first main-loop
	// request, then growth per step:
	//   claude:   12.3k, +1.6k  -> window 29000, overflow at request 12
	//   codex:     9.9k, +1.6k  -> window 24000, overflow at request 10
	//   opencode:  7.7k, +1.6k  -> window 23000, overflow at request 12
	//                               (after a 0.6k title request)
	//   pi:        1.4k, +1.6k  -> window 18000, overflow at request 12
	//                               (18.8k; request 11 is 17.2k), the
	//                               same on all three of its APIs
	window int
	// responses is true for an agent on the Responses API, which also
	// runs the direct test with the overflow reported inside a 200 stream
	// (response.failed), as some OpenAI deployments do.
	responses bool
	// setup writes the agent's configuration under home and returns its
	// arguments and extra environment for a provider at base (the
	// fake's or the proxy's URL: scheme, host and port, no /v1).
	setup func(t *testing.T, home, base string) (args, env []string)
}

func agents() []agent {
	return []agent{
		{name: "claude", envVar: "COMPACT_E2E_CLAUDE", window: 29000, setup: setupClaude},
		{name: "codex", envVar: "COMPACT_E2E_CODEX", window: 24000, responses: true, setup: setupCodex},
		{name: "opencode", envVar: "COMPACT_E2E_OPENCODE", window: 23000, setup: setupOpencode},
		{name: "pi-anthropic", envVar: "COMPACT_E2E_PI", window: 18000, setup: setupPi("anthropic-messages")},
		{name: "pi-openai", envVar: "COMPACT_E2E_PI", window: 18000, setup: setupPi("openai-completions")},
		{name: "pi-responses", envVar: "COMPACT_E2E_PI", window: 18000, responses: true, setup: setupPi("openai-responses")},
	}
}

// setupClaude: Claude Code appends /v1/messages to ANTHROPIC_BASE_URL.
// Its own compaction (automatic and on "prompt is too long") is turned off
// so that only the proxy can keep it inside the window, and its output
// reservation is kept small (it asks for max_tokens 128000 otherwise).
// As root, --dangerously-skip-permissions is refused; --allowedTools Bash
// is enough for -p.
func setupClaude(t *testing.T, home, base string) ([]string, []string) {
	return []string{"-p", task, "--allowedTools", "Bash"}, []string{
		"ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=sk-e2e-fake",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_COMPACT=1",
		"DISABLE_AUTO_COMPACT=1",
		"CLAUDE_CODE_MAX_OUTPUT_TOKENS=4096",
	}
}

// setupCodex: a custom provider speaking Responses over plain HTTP
// (supports_websockets = false, or Codex tries a WebSocket first), with
// analytics, feedback and update checks off. Its own auto-compaction is
// pushed out of reach so that only the proxy compacts.
func setupCodex(t *testing.T, home, base string) ([]string, []string) {
	config := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
model_auto_compact_token_limit = 100000000

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "COMPACT_E2E_API_KEY"
supports_websockets = false
`, base+"/v1")
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), config)
	return []string{"exec", "--skip-git-repo-check", task}, []string{"COMPACT_E2E_API_KEY=sk-e2e-fake"}
}

// setupOpencode: an @ai-sdk/openai-compatible provider (bundled in the
// binary). opencode also tries to npm-install @opencode-ai/plugin into its
// config folder in the background; pointing npm at a closed loopback port
// in offline mode makes that fail at once, which opencode tolerates. Its
// own compaction and pruning are off; limit.context is set high so that it
// never acts on the window itself.
func setupOpencode(t *testing.T, home, base string) ([]string, []string) {
	config := fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "permission": {"bash": "allow"},
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake",
      "options": {"baseURL": %q, "apiKey": "sk-e2e-fake"},
      "models": {"fake-model": {"name": "Fake", "limit": {"context": 1000000, "output": 4096}}}
    }
  }
}
`, base+"/v1")
	writeFile(t, filepath.Join(home, ".config", "opencode", "opencode.json"), config)
	return []string{"run", task}, []string{
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_AUTOCOMPACT=1",
		"OPENCODE_DISABLE_PRUNE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"npm_config_registry=http://127.0.0.1:9/",
		"npm_config_offline=true",
	}
}

// setupPi returns the setup of pi (@mariozechner/pi-coding-agent) on the
// given API kind: a custom provider "fake" in ~/.pi/agent/models.json (the
// Anthropic SDK appends /v1/messages to baseUrl, the OpenAI SDK only
// /chat/completions or /responses, hence the /v1 there), run in print
// mode. settings.json turns off pi's own compaction (which would
// otherwise also act on an overflow error) so that only the proxy
// compacts, and its agent-level retries so that a refused request shows
// at once. PI_OFFLINE stops the startup update check and install ping;
// the --no-* flags keep it from loading extensions, skills, prompt
// templates, themes and AGENTS.md/CLAUDE.md files found on the disk.
func setupPi(api string) func(t *testing.T, home, base string) ([]string, []string) {
	return func(t *testing.T, home, base string) ([]string, []string) {
		baseURL := base + "/v1"
		if api == "anthropic-messages" {
			baseURL = base
		}
		models := fmt.Sprintf(`{
  "providers": {
    "fake": {
      "baseUrl": %q,
      "api": %q,
      "apiKey": "sk-e2e-fake",
      "models": [{"id": "fake-model", "reasoning": false, "contextWindow": 1000000, "maxTokens": 4096}]
    }
  }
}
`, baseURL, api)
		writeFile(t, filepath.Join(home, ".pi", "agent", "models.json"), models)
		writeFile(t, filepath.Join(home, ".pi", "agent", "settings.json"), `{
  "defaultProvider": "fake",
  "defaultModel": "fake-model",
  "enableInstallTelemetry": false,
  "compaction": {"enabled": false},
  "retry": {"enabled": false}
}
`)
		return []string{
				"--provider", "fake", "--model", "fake-model",
				"--no-extensions", "--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files",
				"-p", task,
			}, []string{
				"PI_OFFLINE=1",
				"PI_SKIP_VERSION_CHECK=1",
				"PI_TELEMETRY=0",
			}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runResult is what an agent run produced.
type runResult struct {
	exitCode       int
	stdout, stderr string
}

// output is stdout and stderr together, for looking for the final text.
func (r runResult) output() string { return r.stdout + "\n" + r.stderr }

// runAgent runs the agent's CLI at bin against base with a fresh HOME and
// working folder, no inherited environment but PATH, and a time limit.
func runAgent(t *testing.T, a agent, bin, base string) runResult {
	t.Helper()
	home := t.TempDir()
	work := t.TempDir()
	args, extra := a.setup(t, home, base)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = work
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + t.TempDir(),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"NO_PROXY=127.0.0.1,localhost",
	}, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = nil // /dev/null: codex exec otherwise reads more input from stdin
	err := cmd.Run()
	res := runResult{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.exitCode = exitErr.ExitCode()
	default:
		t.Fatalf("%s: %v", a.name, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out after 5 minutes\nstderr tail:\n%s", a.name, tail(res.stderr, 2000))
	}
	return res
}

// headerNames lists a request's header names, sorted.
func headerNames(h http.Header) string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// logRequests writes one line per recorded request: the numbers the
// windows above were chosen from.
func logRequests(t *testing.T, f *fakeupstream.Fake) {
	t.Helper()
	for _, r := range f.Requests() {
		what := fmt.Sprintf("step %d", r.Step)
		if r.Step == 0 {
			what = fmt.Sprintf("text %q", tail(r.Text, 40))
		}
		if r.Overflow {
			what = "OVERFLOW"
		} else if r.Rejected {
			what = fmt.Sprintf("REJECTED %d %q", r.Status, r.Problems)
		}
		t.Logf("  #%d %s %s: %d bytes, %d tokens, %d items, %d tools -> %s", r.Seq, r.Method, r.Path, len(r.Body), r.Tokens, len(r.Items), r.Tools, what)
	}
}

func TestAgents(t *testing.T) {
	for _, a := range agents() {
		t.Run(a.name, func(t *testing.T) {
			bin := os.Getenv(a.envVar)
			if bin == "" {
				t.Skipf("%s is not set (scripts/e2e-agents.sh installs the CLIs and sets it)", a.envVar)
			}
			// The script itself, with no window: the agent can finish the
			// task at all, so a failure below is the window's or the proxy's.
			t.Run("unbounded", func(t *testing.T) {
				f, url := fakeupstream.Start(t, fakeupstream.Config{})
				res := runAgent(t, a, bin, url)
				logRequests(t, f)
				want := fmt.Sprintf("DONE after %d steps", steps)
				if res.exitCode != 0 || !strings.Contains(res.output(), want) {
					t.Fatalf("exit %d, want 0 and %q in the output\nstdout tail:\n%s\nstderr tail:\n%s", res.exitCode, want, tail(res.stdout, 1500), tail(res.stderr, 1500))
				}
				if got := f.ToolCalls(); got != steps {
					t.Errorf("%d tool calls, want %d", got, steps)
				}
				checkAll(t, f, false)
				if loop := fakeupstream.MainLoop(f.Requests()); len(loop) > 0 {
					t.Logf("%s request headers: %s", a.name, headerNames(loop[0].Header))
				}
			})
			// (a) Without the proxy the task overflows the window: the
			// fake rejects a request with the provider's overflow error.
			direct := func(cfg fakeupstream.Config) func(t *testing.T) {
				return func(t *testing.T) {
					f, url := fakeupstream.Start(t, cfg)
					res := runAgent(t, a, bin, url)
					logRequests(t, f)
					over := f.Overflows()
					if len(over) == 0 {
						t.Fatalf("no request overflowed the %d-token window (largest %d tokens); the test proves nothing", a.window, f.MaxTokens())
					}
					t.Logf("%s direct: first overflow at request #%d (%d tokens > %d) after %d tool calls; agent exit %d, finished: %v",
						a.name, over[0].Seq, over[0].Tokens, a.window, f.ToolCalls(), res.exitCode,
						strings.Contains(res.output(), fmt.Sprintf("DONE after %d steps", steps)))
				}
			}
			t.Run("direct", direct(fakeupstream.Config{Window: a.window}))
			if a.responses {
				t.Run("direct_in_stream", direct(fakeupstream.Config{Window: a.window, OverflowInStream: true}))
			}
			// (b) Through the proxy the same task fits: with the offline
			// summarizer, and with the default one (the agent's own model
			// through the same upstream and credentials).
			through := func(summarizer string) func(t *testing.T) {
				return func(t *testing.T) {
					compactBin := os.Getenv("COMPACT_E2E_BIN")
					if compactBin == "" {
						t.Skip("COMPACT_E2E_BIN is not set (scripts/e2e-agents.sh builds compact and sets it)")
					}
					requireProxyCommand(t, compactBin)
					f, url := fakeupstream.Start(t, fakeupstream.Config{Window: a.window})
					p := startProxy(t, compactBin, url, a.window, summarizer)
					res := runAgent(t, a, bin, p.url)
					logRequests(t, f)
					want := fmt.Sprintf("DONE after %d steps", steps)
					if res.exitCode != 0 || !strings.Contains(res.output(), want) {
						t.Errorf("exit %d, want 0 and %q in the output\nstdout tail:\n%s\nstderr tail:\n%s\nproxy log tail:\n%s",
							res.exitCode, want, tail(res.stdout, 1500), tail(res.stderr, 1500), tail(p.log.String(), 3000))
					}
					if got := f.ToolCalls(); got < steps-1 {
						t.Errorf("%d tool calls, want at least %d", got, steps-1)
					} else if got > steps {
						// The fake restarts its count when the request no
						// longer shows the last step's result: the
						// compaction lost the agent's place and work was
						// done twice.
						t.Errorf("%d tool calls for %d steps: work was repeated after a compaction", got, steps)
					}
					checkAll(t, f, true)
					drops := checkPrefixes(t, f)
					compactions := p.compactions(t)
					t.Logf("%s proxy: %d tool calls, largest upstream request %d tokens (window %d), %d compactions seen upstream, compact_proxy_compactions_total %v",
						a.name, f.ToolCalls(), f.MaxTokens(), a.window, drops, compactions)
					if drops == 0 && compactions <= 0 {
						t.Errorf("no compaction: the upstream never saw a rewritten list and compact_proxy_compactions_total is %v", compactions)
					}
					p.checkLiveView(t)
					if summarizer == "upstream" {
						// Quoting a transcript or asked on the
						// conversation itself, as the fake tells them.
						asked := len(f.Summaries())
						if asked == 0 {
							t.Error("no summary request reached the upstream")
						}
						// The model's hand-overs passed the review and
						// stood for the history: none fell back to the
						// offline summary, and a later request carries one.
						if fb := p.metric(t, "compact_proxy_fallbacks_total"); fb != 0 {
							t.Errorf("compact_proxy_fallbacks_total = %v: a model summary failed or was refused\nproxy log tail:\n%s", fb, tail(p.log.String(), 3000))
						}
						used := false
						for _, r := range f.Requests() {
							used = used || bytes.Contains(r.Body, []byte(fakeupstream.HandoverMark))
						}
						if !used {
							t.Error("no request upstream carries the model's hand-over")
						}
						// Written ahead of time (the default with a model
						// summarizer) and swapped in when the trigger was
						// crossed.
						if swapped := p.metric(t, `compact_proxy_summaries_ahead_total{outcome="swapped"}`); swapped < 1 {
							t.Errorf("no summary written ahead was swapped in (compact_proxy_summaries_ahead_total{outcome=\"swapped\"} = %v)", swapped)
						}
						t.Logf("%s proxy: %d summary requests written by the upstream model", a.name, asked)
					}
				}
			}
			t.Run("proxy", through("extractive"))
			t.Run("proxy_model_summary", through("upstream"))
			// (c) A proxy with a token of its own: the agent presents it
			// in the header its documented settings add, keeps its
			// provider key where it was, and the upstream never sees
			// the proxy's token.
			if withToken := tokenSetup(a); withToken != nil {
				t.Run("proxy_token", func(t *testing.T) {
					compactBin := os.Getenv("COMPACT_E2E_BIN")
					if compactBin == "" {
						t.Skip("COMPACT_E2E_BIN is not set (scripts/e2e-agents.sh builds compact and sets it)")
					}
					requireProxyCommand(t, compactBin)
					const token = "e2e-proxy-token-0123456789"
					tokenFile := filepath.Join(t.TempDir(), "token")
					writeFile(t, tokenFile, token+"\n")
					f, url := fakeupstream.Start(t, fakeupstream.Config{Window: a.window})
					p := startProxy(t, compactBin, url, a.window, "extractive", "--auth-token-file", tokenFile)
					res := runAgent(t, withToken(token), bin, p.url)
					want := fmt.Sprintf("DONE after %d steps", steps)
					if res.exitCode != 0 || !strings.Contains(res.output(), want) {
						t.Fatalf("exit %d, want 0 and %q in the output\nstdout tail:\n%s\nstderr tail:\n%s\nproxy log tail:\n%s",
							res.exitCode, want, tail(res.stdout, 1500), tail(res.stderr, 1500), tail(p.log.String(), 3000))
					}
					if strings.Contains(p.log.String(), "refused (proxy token") {
						t.Error("the proxy refused a request of the agent")
					}
					for _, r := range f.Requests() {
						if r.Header.Get("X-Compact-Token") != "" || strings.Contains(fmt.Sprint(r.Header), token) {
							t.Fatalf("request #%d reached the upstream with the proxy's token", r.Seq)
						}
					}
					if compactions := p.compactions(t); compactions <= 0 && checkPrefixes(t, f) == 0 {
						t.Errorf("no compaction through the proxy with a token")
					}
				})
			}
		})
	}
}

// tokenSetup returns a, set up to send the proxy token in the header its
// documented settings add (Claude Code: ANTHROPIC_CUSTOM_HEADERS; Codex:
// the provider's http_headers; opencode: the provider's options.headers),
// or nil for agents without such a setting here.
func tokenSetup(a agent) func(token string) agent {
	setup := a.setup
	switch a.name {
	case "claude":
		return func(token string) agent {
			a.setup = func(t *testing.T, home, base string) ([]string, []string) {
				args, env := setup(t, home, base)
				return args, append(env, "ANTHROPIC_CUSTOM_HEADERS=X-Compact-Token: "+token)
			}
			return a
		}
	case "codex":
		return func(token string) agent {
			a.setup = func(t *testing.T, home, base string) ([]string, []string) {
				args, env := setup(t, home, base)
				// [model_providers.fake] is the file's last table.
				cfg := filepath.Join(home, ".codex", "config.toml")
				b, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, cfg, string(b)+fmt.Sprintf("http_headers = { \"X-Compact-Token\" = %q }\n", token))
				return args, env
			}
			return a
		}
	case "opencode":
		return func(token string) agent {
			a.setup = func(t *testing.T, home, base string) ([]string, []string) {
				args, env := setup(t, home, base)
				cfg := filepath.Join(home, ".config", "opencode", "opencode.json")
				b, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				with := strings.Replace(string(b), `"options": {`, fmt.Sprintf(`"options": {"headers": {"X-Compact-Token": %q}, `, token), 1)
				if with == string(b) {
					t.Fatal("opencode's configuration has no provider options to add the header to")
				}
				writeFile(t, cfg, with)
				return args, env
			}
			return a
		}
	}
	return nil
}

// checkAll fails on every recorded request a real provider would have
// refused (over the window, unpaired tool results or calls). With
// strictWindow false only pairing is checked.
func checkAll(t *testing.T, f *fakeupstream.Fake, strictWindow bool) {
	t.Helper()
	for _, r := range f.Requests() {
		if r.API == "" {
			continue
		}
		for _, p := range f.Check(r) {
			if strictWindow || !strings.Contains(p, "> window") {
				t.Error(p)
			}
		}
	}
}
