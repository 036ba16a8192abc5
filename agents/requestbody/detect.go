package requestbody

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact/internal/jsonrec"
)

// Shape names the API a request body is written for.
type Shape string

// The shapes Read knows.
const (
	// ShapeChat is OpenAI's Chat Completions API and the many servers
	// that speak it.
	ShapeChat Shape = "openai-chat"
	// ShapeAnthropic is Anthropic's Messages API.
	ShapeAnthropic Shape = "anthropic-messages"
)

// DetectShape returns the shape of the request body in data, "" when
// data is not a chat request body (no top-level "messages" array).
func DetectShape(data []byte) Shape {
	fields, err := jsonrec.Object(data)
	if err != nil {
		return ""
	}
	for _, f := range fields {
		if f.Key == "messages" {
			msgs, err := jsonrec.Array(data, f.Key, f.Value, f.Off)
			if err != nil {
				return ""
			}
			return shapeOf(fields, msgs)
		}
	}
	return ""
}

// shapeOf weighs the marks each API leaves in a body: top-level fields
// only one of them has, the form of tools, the roles and the block types
// of the messages. A body with none of them (plain text messages only)
// reads the same either way and is taken as Chat.
func shapeOf(fields []jsonrec.Member, msgs []jsonrec.Element) Shape {
	anthropic, chat := 0, 0
	for _, f := range fields {
		switch f.Key {
		case "system", "anthropic_version", "stop_sequences", "top_k", "anthropic_beta", "container", "mcp_servers":
			anthropic++
		case "thinking":
			if bytes.HasPrefix(bytes.TrimSpace(f.Value), []byte("{")) {
				anthropic++
			}
		case "max_completion_tokens", "response_format", "stream_options", "n", "logprobs", "top_logprobs",
			"frequency_penalty", "presence_penalty", "reasoning_effort", "parallel_tool_calls", "functions", "logit_bias", "seed":
			chat++
		case "tools":
			var tools []struct {
				InputSchema json.RawMessage `json:"input_schema"`
				Function    json.RawMessage `json:"function"`
			}
			_ = json.Unmarshal(f.Value, &tools)
			for _, t := range tools {
				if t.InputSchema != nil {
					anthropic++
				}
				if t.Function != nil {
					chat++
				}
			}
		}
	}
	for _, m := range msgs {
		var msg struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		}
		if json.Unmarshal(m.Raw, &msg) != nil {
			continue
		}
		switch msg.Role {
		case "system", "developer", "tool", "function":
			chat++
		}
		if msg.ToolCalls != nil {
			chat++
		}
		var blocks []struct {
			Type   string          `json:"type"`
			Source json.RawMessage `json:"source"`
		}
		_ = json.Unmarshal(msg.Content, &blocks)
		for _, b := range blocks {
			switch b.Type {
			case "tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use":
				anthropic++
			case "image":
				if b.Source != nil {
					anthropic++
				}
			case "image_url", "input_audio", "file", "refusal":
				chat++
			}
		}
	}
	if anthropic > chat {
		return ShapeAnthropic
	}
	return ShapeChat
}

// Detect reports whether head, the first bytes of a file (possibly cut
// anywhere), is a chat request body: a JSON object with a top-level
// "messages" array, or, when the head ends before "messages" comes, with
// a "model" and a field only request bodies have. Objects of other
// agents' formats (a top-level "type", "trajectory" or "history") are
// not.
func Detect(head []byte) bool {
	model, request, messages, other := false, false, false, false
	isObject := jsonrec.Keys(head, func(key string, first byte) bool {
		switch key {
		case "messages":
			messages = first == '['
			return false
		case "model":
			model = true
		case "system", "tools", "max_tokens", "max_completion_tokens", "stream", "temperature", "tool_choice", "thinking", "metadata", "stream_options", "top_p":
			request = true
		case "type", "trajectory", "history", "input", "events", "info":
			other = true
			return false
		}
		return true
	})
	if !isObject || other {
		return false
	}
	return messages || (model && request && !complete(head))
}

// complete reports whether head holds a whole JSON value: then a body
// without "messages" is not a request body, however request-like its
// other fields.
func complete(head []byte) bool {
	return json.Valid(bytes.TrimSpace(head))
}
