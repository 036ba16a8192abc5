package openhands

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/openai"
)

// rawEvent is one event as stored, with where it was read for errors.
type rawEvent struct {
	raw  json.RawMessage
	name string
	line int
}

// event is the part of an event the reader looks at.
type event struct {
	rawEvent
	f           map[string]json.RawMessage
	id          int64
	hasID       bool
	source      string
	action      string
	observation string
	timestamp   string
	cause       int64
	hasCause    bool
	args        map[string]json.RawMessage
	meta        *toolMeta
}

// toolMeta is an event's tool_call_metadata.
type toolMeta struct {
	FunctionName  string          `json:"function_name"`
	ToolCallID    string          `json:"tool_call_id"`
	ModelResponse json.RawMessage `json:"model_response"`
}

// modelResponse is the part of a LiteLLM response the reader uses.
type modelResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *liteLLMUsage `json:"usage"`
}

// liteLLMUsage is the usage of a LiteLLM response: a Chat Completions
// usage object with, from an Anthropic model, the cache counts as
// Anthropic names them.
type liteLLMUsage struct {
	openai.ChatUsage
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// usage maps u as openai.ChatUsage.Usage does, with Anthropic's cache
// read count, when given, as the cached tokens, and the cache-written
// tokens (which prompt_tokens includes as well) moved from Input to
// CacheWrite.
func (u *liteLLMUsage) usage() compact.Usage {
	c := u.ChatUsage
	if u.CacheReadInputTokens != 0 {
		c.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	}
	out := c.Usage()
	out.Input = max(0, out.Input-u.CacheCreationInputTokens)
	out.CacheWrite = u.CacheCreationInputTokens
	return out
}

// Action and observation types of the V0 event model
// (openhands/core/schema).
var (
	knownActions = set("message", "system", "start", "read", "write", "edit", "run", "run_ipython", "browse",
		"browse_interactive", "call_tool_mcp", "delegate", "think", "finish", "reject", "null", "pause", "resume", "stop",
		"change_agent_state", "push", "send_pr", "recall", "condensation", "condensation_request", "task_tracking", "loop_recovery")
	knownObservations = set("read", "write", "edit", "browse", "run", "run_ipython", "chat", "delegate", "message", "error",
		"success", "null", "think", "agent_state_changed", "user_rejected", "condense", "recall", "mcp", "download",
		"task_tracking", "loop_detection")
	// hiddenObservations never reach the model without tool_call_metadata.
	hiddenObservations = set("null", "agent_state_changed", "recall", "user_rejected", "loop_detection", "success")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// parseEvent reads the fields of an event the reader uses. Errors start
// with the path inside the event.
func parseEvent(r rawEvent) (*event, error) {
	f, err := jsonrec.Fields(r.raw)
	if err != nil {
		return nil, err
	}
	ev := &event{rawEvent: r, f: f}
	if raw, ok := f["id"]; ok && !jsonrec.IsNull(raw) {
		if err := json.Unmarshal(raw, &ev.id); err != nil {
			return nil, fmt.Errorf(".id: not an integer")
		}
		ev.hasID = true
	}
	if raw, ok := f["cause"]; ok && !jsonrec.IsNull(raw) {
		if err := json.Unmarshal(raw, &ev.cause); err != nil {
			return nil, fmt.Errorf(".cause: not an integer")
		}
		ev.hasCause = true
	}
	for key, dst := range map[string]*string{"source": &ev.source, "action": &ev.action, "observation": &ev.observation, "timestamp": &ev.timestamp} {
		if err := jsonrec.String(f, key, dst); err != nil {
			return nil, err
		}
	}
	if raw, ok := f["args"]; ok && !jsonrec.IsNull(raw) {
		if ev.args, err = jsonrec.Fields(raw); err != nil {
			return nil, fmt.Errorf(".args%w", err)
		}
	}
	if raw, ok := f["tool_call_metadata"]; ok && !jsonrec.IsNull(raw) {
		ev.meta = &toolMeta{}
		if err := json.Unmarshal(raw, ev.meta); err != nil {
			return nil, fmt.Errorf(".tool_call_metadata: %v", err)
		}
		if ev.meta.ToolCallID == "" {
			return nil, fmt.Errorf(".tool_call_metadata.tool_call_id: missing")
		}
	}
	return ev, nil
}

// contentText reads a LiteLLM message content: a string, null, or a list
// of parts whose text parts are joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
