package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func anthropicBody(stream bool) string {
	return fmt.Sprintf(`{"model":"claude-x","max_tokens":1024,"stream":%v,"tools":[%s],"messages":[{"role":"user","content":"go"}]}`, stream, anthropicBashTool)
}

func TestAnthropicNonStreamed(t *testing.T) {
	f, url := Start(t, Config{Now: fixedNow})
	body := anthropicBody(false)
	out := postOK(t, url, "/v1/messages", body)
	var msg struct {
		Type       string `json:"type"`
		Role       string `json:"role"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage struct {
			InputTokens              int  `json:"input_tokens"`
			CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
			OutputTokens             int  `json:"output_tokens"`
		} `json:"usage"`
	}
	decode(t, string(out), &msg)
	if msg.Type != "message" || msg.Role != "assistant" || msg.Model != "claude-x" || msg.StopReason != "tool_use" {
		t.Errorf("message shell = %+v", msg)
	}
	if len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "Bash" || !strings.HasPrefix(msg.Content[0].ID, "toolu_") {
		t.Fatalf("content = %+v", msg.Content)
	}
	if got, want := string(msg.Content[0].Input), `{"command":"echo STEP-1; seq 1 1200","description":"Print step 1"}`; got != want {
		t.Errorf("input = %s, want %s", got, want)
	}
	if msg.Usage.InputTokens != CountTokens([]byte(body)) || msg.Usage.OutputTokens < 1 ||
		msg.Usage.CacheCreationInputTokens == nil || *msg.Usage.CacheCreationInputTokens != 0 ||
		msg.Usage.CacheReadInputTokens == nil || *msg.Usage.CacheReadInputTokens != 0 {
		t.Errorf("usage = %+v, input want %d", msg.Usage, CountTokens([]byte(body)))
	}
	if r := f.Requests(); len(r) != 1 || r[0].API != Anthropic || r[0].Step != 1 || len(r[0].Items) != 1 || r[0].Tools != 1 {
		t.Errorf("recorded %+v", r)
	}
}

func TestAnthropicStreamed(t *testing.T) {
	_, url := Start(t, Config{Now: fixedNow})
	body := anthropicBody(true)
	out := postOK(t, url, "/v1/messages?beta=true", body)
	events := parseSSE(t, out)
	var names []string
	var args strings.Builder
	var stop string
	var startUsage, endUsage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
	for _, ev := range events {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Usage json.RawMessage `json:"usage"`
			} `json:"message"`
			ContentBlock struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage json.RawMessage `json:"usage"`
		}
		decode(t, ev.data, &e)
		if e.Type != ev.name {
			t.Errorf("event %q carries type %q", ev.name, e.Type)
		}
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		switch e.Type {
		case "message_start":
			decode(t, string(e.Message.Usage), &startUsage)
		case "content_block_start":
			if e.ContentBlock.Type != "tool_use" || e.ContentBlock.Name != "Bash" {
				t.Errorf("block = %+v", e.ContentBlock)
			}
		case "content_block_delta":
			if e.Delta.Type != "input_json_delta" {
				t.Errorf("delta type %q", e.Delta.Type)
			}
			args.WriteString(e.Delta.PartialJSON)
		case "message_delta":
			stop = e.Delta.StopReason
			decode(t, string(e.Usage), &endUsage)
		}
	}
	want := "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	var input struct{ Command string }
	decode(t, args.String(), &input)
	if input.Command != "echo STEP-1; seq 1 1200" || stop != "tool_use" {
		t.Errorf("command %q stop %q", input.Command, stop)
	}
	if n := CountTokens([]byte(body)); startUsage.InputTokens != n || endUsage.InputTokens != n || endUsage.OutputTokens < 1 {
		t.Errorf("usage start %+v end %+v, input want %d", startUsage, endUsage, n)
	}
}

func chatBody(stream, includeUsage bool) string {
	opts := ""
	if includeUsage {
		opts = `,"stream_options":{"include_usage":true}`
	}
	return fmt.Sprintf(`{"model":"gpt-x","stream":%v%s,"tools":[%s],"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"go"}]}`, stream, opts, chatBashTool)
}

func TestChatNonStreamed(t *testing.T) {
	_, url := Start(t, Config{Now: fixedNow})
	body := chatBody(false, false)
	out := postOK(t, url, "/v1/chat/completions", body)
	var c struct {
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Choices []struct {
			Message struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		} `json:"usage"`
	}
	decode(t, string(out), &c)
	if c.Object != "chat.completion" || c.Created != fixedNow().Unix() || len(c.Choices) != 1 || c.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("completion = %+v", c)
	}
	m := c.Choices[0].Message
	if m.Role != "assistant" || m.Content != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].Type != "function" || m.ToolCalls[0].Function.Name != "bash" {
		t.Fatalf("message = %+v", m)
	}
	if got, want := m.ToolCalls[0].Function.Arguments, `{"command":"echo STEP-1; seq 1 1200","description":"Print step 1"}`; got != want {
		t.Errorf("arguments = %s, want %s", got, want)
	}
	if c.Usage.PromptTokens != CountTokens([]byte(body)) || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
		t.Errorf("usage = %+v", c.Usage)
	}
}

func TestChatStreamed(t *testing.T) {
	for _, includeUsage := range []bool{true, false} {
		t.Run(fmt.Sprintf("include_usage=%v", includeUsage), func(t *testing.T) {
			_, url := Start(t, Config{Now: fixedNow})
			body := chatBody(true, includeUsage)
			out := postOK(t, url, "/v1/chat/completions", body)
			events := parseSSE(t, out)
			if last := events[len(events)-1]; last.name != "" || last.data != "[DONE]" {
				t.Fatalf("last event %+v, want data: [DONE]", last)
			}
			var args strings.Builder
			var finish string
			var usageChunks int
			for i, ev := range events[:len(events)-1] {
				var c struct {
					Object  string `json:"object"`
					Choices []struct {
						Delta struct {
							ToolCalls []struct {
								Index    int    `json:"index"`
								ID       string `json:"id"`
								Function struct {
									Name      string `json:"name"`
									Arguments string `json:"arguments"`
								} `json:"function"`
							} `json:"tool_calls"`
						} `json:"delta"`
						FinishReason *string `json:"finish_reason"`
					} `json:"choices"`
					Usage *struct {
						PromptTokens int `json:"prompt_tokens"`
					} `json:"usage"`
				}
				decode(t, ev.data, &c)
				_, hasUsageKey := rawKeys(t, ev.data)["usage"]
				if hasUsageKey != includeUsage {
					t.Errorf("chunk %d: usage key present %v, want %v", i, hasUsageKey, includeUsage)
				}
				if c.Object != "chat.completion.chunk" {
					t.Errorf("chunk %d object %q", i, c.Object)
				}
				if c.Usage != nil {
					usageChunks++
					if len(c.Choices) != 0 || i != len(events)-2 || c.Usage.PromptTokens != CountTokens([]byte(body)) {
						t.Errorf("usage chunk %d: %s", i, ev.data)
					}
					continue
				}
				if len(c.Choices) != 1 {
					t.Fatalf("chunk %d: %d choices", i, len(c.Choices))
				}
				for _, tc := range c.Choices[0].Delta.ToolCalls {
					args.WriteString(tc.Function.Arguments)
				}
				if fr := c.Choices[0].FinishReason; fr != nil {
					finish = *fr
				}
			}
			if want := map[bool]int{true: 1, false: 0}[includeUsage]; usageChunks != want {
				t.Errorf("%d usage chunks, want %d", usageChunks, want)
			}
			var input struct{ Command, Description string }
			decode(t, args.String(), &input)
			if input.Command != "echo STEP-1; seq 1 1200" || input.Description == "" || finish != "tool_calls" {
				t.Errorf("args %+v finish %q", input, finish)
			}
		})
	}
}

// rawKeys returns the top-level keys of a JSON object.
func rawKeys(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	decode(t, s, &m)
	return m
}

func responsesBody(stream bool) string {
	return fmt.Sprintf(`{"model":"gpt-y","stream":%v,"tools":[%s],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}]}`, stream, codexExecTool)
}

type responsesUsageJSON struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

type responsesItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Name      string `json:"name"`
	CallID    string `json:"call_id"`
	Arguments string `json:"arguments"`
}

func TestResponsesNonStreamed(t *testing.T) {
	_, url := Start(t, Config{Now: fixedNow})
	body := responsesBody(false)
	out := postOK(t, url, "/v1/responses", body)
	var r struct {
		Object string              `json:"object"`
		Status string              `json:"status"`
		Output []responsesItem     `json:"output"`
		Usage  *responsesUsageJSON `json:"usage"`
	}
	decode(t, string(out), &r)
	if r.Object != "response" || r.Status != "completed" || len(r.Output) != 1 || r.Usage == nil {
		t.Fatalf("response = %+v", r)
	}
	if it := r.Output[0]; it.Type != "function_call" || it.Name != "exec_command" || it.CallID == "" || it.Arguments != `{"cmd":"echo STEP-1; seq 1 1200"}` {
		t.Errorf("item = %+v", it)
	}
	if r.Usage.InputTokens != CountTokens([]byte(body)) || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Errorf("usage = %+v", r.Usage)
	}
}

func TestResponsesStreamed(t *testing.T) {
	_, url := Start(t, Config{Now: fixedNow})
	body := responsesBody(true)
	out := postOK(t, url, "/v1/responses", body)
	events := parseSSE(t, out)
	var names []string
	var deltas, doneArgs string
	var added, done responsesItem
	var usage *responsesUsageJSON
	for i, ev := range events {
		var e struct {
			Type           string          `json:"type"`
			SequenceNumber *int            `json:"sequence_number"`
			Item           responsesItem   `json:"item"`
			Delta          string          `json:"delta"`
			Arguments      string          `json:"arguments"`
			Response       json.RawMessage `json:"response"`
		}
		decode(t, ev.data, &e)
		if e.Type != ev.name || e.SequenceNumber == nil || *e.SequenceNumber != i {
			t.Errorf("event %d %q: type %q sequence_number %v", i, ev.name, e.Type, e.SequenceNumber)
		}
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		switch e.Type {
		case "response.output_item.added":
			added = e.Item
		case "response.function_call_arguments.delta":
			deltas += e.Delta
		case "response.function_call_arguments.done":
			doneArgs = e.Arguments
		case "response.output_item.done":
			done = e.Item
		case "response.completed":
			var r struct {
				Status string              `json:"status"`
				Usage  *responsesUsageJSON `json:"usage"`
			}
			decode(t, string(e.Response), &r)
			if r.Status != "completed" {
				t.Errorf("completed status %q", r.Status)
			}
			usage = r.Usage
		}
	}
	want := "response.created response.in_progress response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if added.Type != "function_call" || added.Status != "in_progress" || added.CallID != done.CallID || added.ID != done.ID || done.Status != "completed" {
		t.Errorf("added %+v done %+v", added, done)
	}
	if deltas != doneArgs || doneArgs != done.Arguments || done.Arguments != `{"cmd":"echo STEP-1; seq 1 1200"}` {
		t.Errorf("deltas %q done %q item %q", deltas, doneArgs, done.Arguments)
	}
	if usage == nil || usage.InputTokens != CountTokens([]byte(body)) {
		t.Errorf("usage = %+v", usage)
	}
}

func TestResponsesTextStreamed(t *testing.T) {
	_, url := Start(t, Config{Now: fixedNow})
	out := postOK(t, url, "/v1/responses", `{"model":"m","stream":true,"input":"name this"}`)
	var text, doneText string
	for _, ev := range parseSSE(t, out) {
		var e struct {
			Delta string `json:"delta"`
			Text  string `json:"text"`
		}
		decode(t, ev.data, &e)
		switch ev.name {
		case "response.output_text.delta":
			text += e.Delta
		case "response.output_text.done":
			doneText = e.Text
		}
	}
	if text != TitleText || doneText != TitleText {
		t.Errorf("deltas %q done %q, want %q", text, doneText, TitleText)
	}
}

func TestCountTokensAndModels(t *testing.T) {
	_, url := Start(t, Config{})
	body := `{"model":"m","messages":[{"role":"user","content":"hello"}]}`
	status, out := post(t, url, "/v1/messages/count_tokens", body)
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	decode(t, string(out), &ct)
	if status != 200 || ct.InputTokens != CountTokens([]byte(body)) || ct.InputTokens != (len(body)+3)/4 {
		t.Errorf("count_tokens: %d %s", status, out)
	}
	for _, anthropic := range []bool{true, false} {
		req, _ := http.NewRequest("GET", url+"/v1/models", nil)
		if anthropic {
			req.Header.Set("anthropic-version", "2023-06-01")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(list.Data) == 0 || list.Data[0].ID != DefaultModel || (anthropic && list.Data[0].Type != "model") || (!anthropic && list.Object != "list") {
			t.Errorf("models (anthropic=%v) = %+v", anthropic, list)
		}
	}
}
