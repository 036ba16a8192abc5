package agents

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents/claudecode"
	"github.com/compactkit/compact/agents/cline"
	"github.com/compactkit/compact/agents/codex"
	"github.com/compactkit/compact/agents/geminicli"
	"github.com/compactkit/compact/agents/openhands"
	"github.com/compactkit/compact/agents/requestbody"
	"github.com/compactkit/compact/agents/sweagent"
)

// Pi is the name of pi's own session format.
const Pi = "pi"

// Format is one agent's file format.
type Format struct {
	// Name is the format's name on the command line and in
	// compact.Transcript.Format ("claude-code", "codex", ...).
	Name string
	// Agent is the agent's name for people ("Claude Code").
	Agent string
	// What describes the files, for help texts.
	What string
	// Detect reports whether head, the start of a file, is this format.
	Detect func(head []byte) bool
	// DetectDir, when set, reports whether the folder at path holds a
	// conversation in this format.
	DetectDir func(path string) bool
	// ReadFile reads the conversation at path (a file, or a folder when
	// DetectDir accepts it).
	ReadFile func(path string) (*compact.Transcript, error)
	// ReadInstance, when set, reads one conversation of a file that may
	// hold several (an OpenHands evaluation output.jsonl, one instance a
	// line): the one whose id is id, or with id "" the only one.
	ReadInstance func(path, id string) (*compact.Transcript, error)
	// Provider is the provider of the models the agent names, when its
	// files do not say ("" when it varies).
	Provider string
}

// ErrNoInstances means an instance was named for a format whose files
// hold one conversation each.
var ErrNoInstances = errors.New("the file holds one conversation, no instances to pick from")

// Read reads the conversation at path in format f: f.ReadFile, or
// f.ReadInstance when instance is not "" or the format has it, with the
// transcript's provider filled in from f.Provider when the reader left it
// empty. Naming an instance for a format without ReadInstance is an
// error wrapping ErrNoInstances.
func (f Format) Read(path, instance string) (*compact.Transcript, error) {
	var t *compact.Transcript
	var err error
	switch {
	case f.ReadInstance != nil:
		t, err = f.ReadInstance(path, instance)
	case instance != "":
		return nil, fmt.Errorf("%s: %w (format %s)", path, ErrNoInstances, f.Name)
	default:
		t, err = f.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if t.Provider == "" && t.Model != "" {
		t.Provider = f.Provider
	}
	if t.Format == "" {
		t.Format = f.Name
	}
	return t, nil
}

// ErrUnknownFormat means no reader recognised a file, or a format name
// is not known.
var ErrUnknownFormat = errors.New("unknown session format")

// Formats returns the formats of other agents, in detection order: the
// most specific first, the plain request body last.
func Formats() []Format {
	return []Format{
		{Name: geminicli.Format, Agent: "Gemini CLI", What: "Gemini CLI chat recordings (~/.gemini/tmp/*/chats/session-*.json or .jsonl) and /chat save checkpoints",
			Detect: geminicli.Detect, ReadFile: geminicli.ReadFile, Provider: "google"},
		{Name: claudecode.Format, Agent: "Claude Code", What: "Claude Code project transcripts (~/.claude/projects/*/*.jsonl)",
			Detect: claudecode.Detect, ReadFile: claudecode.ReadFile, Provider: "anthropic"},
		{Name: codex.Format, Agent: "Codex", What: "Codex rollouts (~/.codex/sessions/**/rollout-*.jsonl)",
			Detect: codex.Detect, ReadFile: codex.ReadFile, Provider: "openai"},
		{Name: cline.Format, Agent: "Cline", What: "Cline, Roo Code and Kilo Code tasks (api_conversation_history.json with ui_messages.json beside it, or the task folder)",
			Detect: cline.Detect, DetectDir: clineDir, ReadFile: cline.ReadFile},
		{Name: openhands.Format, Agent: "OpenHands", What: "OpenHands event streams (a trajectory JSON array, a session's events folder, or an evaluation or resolver output.jsonl)",
			Detect: openhands.Detect, DetectDir: openhands.DetectDir, ReadFile: openhands.ReadFile, ReadInstance: openhands.ReadFileInstance},
		{Name: sweagent.Format, Agent: "SWE-agent", What: "SWE-agent trajectories (*.traj)",
			Detect: sweagent.Detect, ReadFile: sweagent.ReadFile},
		{Name: requestbody.Format, Agent: "a chat API request", What: `an OpenAI Chat Completions or Anthropic Messages request body ({"messages": [...]})`,
			Detect: requestbody.Detect, ReadFile: requestbody.ReadFile},
	}
}

// Names returns the names --format accepts: "pi" and every format's.
func Names() []string {
	names := []string{Pi}
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	sort.Strings(names[1:])
	return names
}

// ByName returns the format called name. It fails with an error wrapping
// ErrUnknownFormat, listing the names known, for any other name. "pi"
// returns the zero Format and true.
func ByName(name string) (Format, error) {
	if name == Pi {
		return Format{Name: Pi, Agent: "pi"}, nil
	}
	for _, f := range Formats() {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("%q: %w (known: %s)", name, ErrUnknownFormat, strings.Join(Names(), ", "))
}
