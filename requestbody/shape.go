package requestbody

import (
	"bytes"
	"encoding/json"
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
	fields, err := topLevel(data)
	if err != nil {
		return ""
	}
	for _, f := range fields {
		if f.key == "messages" {
			msgs, err := elements(f.value, f.off)
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
func shapeOf(fields []field, msgs []record) Shape {
	anthropic, chat := 0, 0
	for _, f := range fields {
		switch f.key {
		case "system", "anthropic_version", "stop_sequences", "top_k", "anthropic_beta", "container", "mcp_servers":
			anthropic++
		case "thinking":
			if bytes.HasPrefix(bytes.TrimSpace(f.value), []byte("{")) {
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
			_ = json.Unmarshal(f.value, &tools)
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
		if json.Unmarshal(m.raw, &msg) != nil {
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
	dec := json.NewDecoder(bytes.NewReader(head))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return false
	}
	model, request := false, false
	for {
		tok, err := dec.Token()
		if err != nil {
			// Cut inside the object: judge on the keys seen so far.
			return model && request
		}
		key, ok := tok.(string)
		if !ok {
			// The end of the object: the whole body was seen without messages.
			return false
		}
		switch key {
		case "messages":
			tok, err := dec.Token()
			d, ok := tok.(json.Delim)
			return err == nil && ok && d == '['
		case "model":
			model = true
		case "system", "tools", "max_tokens", "max_completion_tokens", "stream", "temperature", "tool_choice", "thinking", "metadata", "stream_options", "top_p":
			request = true
		case "type", "trajectory", "history", "input", "events", "info":
			return false
		}
		if !skipValue(dec) {
			return model && request
		}
	}
}

// skipValue reads past one JSON value; false when the input ends or is
// not JSON there.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return true
		}
	}
}
