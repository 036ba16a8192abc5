package fakeupstream

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// anthropicTurns builds an Anthropic body whose history holds one call and
// result per marker, in order.
func anthropicTurns(tools string, results ...string) string {
	msgs := []string{`{"role":"user","content":"go"}`}
	for i, r := range results {
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"x"}}]}`, id),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}`, id, r))
	}
	return fmt.Sprintf(`{"model":"m","max_tokens":10,"tools":[%s],"messages":[%s]}`, tools, strings.Join(msgs, ","))
}

func TestScript(t *testing.T) {
	cases := []struct {
		name     string
		api      API
		body     string
		wantStep int
		wantText string
		wantArgs string
	}{
		{"first request", Anthropic, anthropicTurns(anthropicBashTool), 1, "", `{"command":"echo STEP-1; seq 1 1200","description":"Print step 1"}`},
		{"step from the last result", Anthropic, anthropicTurns(anthropicBashTool, "STEP-6\n1\n2", "STEP-7\n1\n2"), 8, "", ""},
		// A proxy may have summarized older results: only the last counts,
		// and the number of results plays no part.
		{"older results ignored", Anthropic, anthropicTurns(anthropicBashTool, "STEP-15", "STEP-3"), 4, "", ""},
		{"highest marker in the last result", Anthropic, anthropicTurns(anthropicBashTool, "STEP-2 then STEP-9 then STEP-4"), 10, "", ""},
		{"done", Anthropic, anthropicTurns(anthropicBashTool, "STEP-16"), 0, "DONE after 16 steps", ""},
		{"no marker stops", Anthropic, anthropicTurns(anthropicBashTool, "command not found"), 0, "STOPPED: the last tool result has no STEP marker", ""},
		{"no tools: title", Anthropic, `{"model":"m","messages":[{"role":"user","content":"Name this conversation"}]}`, 0, TitleText, ""},
		{"summary asked with tools", Anthropic, `{"model":"m","tools":[` + anthropicBashTool + `],"messages":[{"role":"user","content":[{"type":"text","text":"Respond with TEXT ONLY. Write a summary."}]}]}`, 0, SummaryText, ""},
		{"conversation-form summary request", Anthropic, `{"model":"m","tools":[` + anthropicBashTool + `],"messages":[{"role":"user","content":"Fix the flaky test in pkg/x"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"x"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"STEP-1"},{"type":"text","text":"Write the hand-over notes for the conversation above.\n\nUse these headings, in this order, and no others:\n\n## Goal\nWhat the user wants."}]}]}`,
			0, Handover("<transcript>\n[user]\nFix the flaky test in pkg/x\n\n</transcript>\n"), ""},
		// A last message that holds hand-over headings (a summary the proxy
		// put in) but not the task asking for them is a turn.
		{"hand-over headings without the task", Anthropic, `{"model":"m","tools":[` + anthropicBashTool + `],"messages":[{"role":"user","content":"## Goal\n- Fix it\n\n## Progress\n- None."}]}`,
			1, "", ""},
		{"no shell tool", Anthropic, `{"model":"m","tools":[{"name":"Read","input_schema":{}}],"messages":[{"role":"user","content":"go"}]}`, 0, "fakeupstream: no shell tool among Read", ""},
		{"chat bash with description", Chat,
			`{"model":"m","tools":[` + chatBashTool + `],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"STEP-4\n1"}]}`,
			5, "", `{"command":"echo STEP-5; seq 1 1200","description":"Print step 5"}`},
		{"codex exec_command cmd", Responses,
			`{"model":"m","tools":[` + codexExecTool + `],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"Output:\nSTEP-11\n1"}]}`,
			12, "", `{"cmd":"echo STEP-12; seq 1 1200"}`},
		{"array command", Responses,
			`{"model":"m","tools":[{"type":"function","name":"shell","parameters":{"properties":{"command":{"type":"array"}}}}],"input":"go"}`,
			1, "", `{"command":["bash","-lc","echo STEP-1; seq 1 1200"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := New(Config{})
			b, err := parseBody(c.api, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			a := f.next(c.api, b)
			if a.step != c.wantStep || a.text != c.wantText {
				t.Errorf("step %d text %q, want step %d text %q", a.step, a.text, c.wantStep, c.wantText)
			}
			if c.wantArgs != "" && a.args != c.wantArgs {
				t.Errorf("args %s, want %s", a.args, c.wantArgs)
			}
		})
	}
}

func TestScriptConfig(t *testing.T) {
	f := New(Config{Steps: 3, OutputLines: 10, ToolNames: []string{"run"}})
	body := `{"model":"m","tools":[` + anthropicBashTool + `,{"name":"run","input_schema":{"properties":{"command":{"type":"string"}}}}],"messages":[{"role":"user","content":"go"}]}`
	b, _ := parseBody(Anthropic, []byte(body))
	if a := f.next(Anthropic, b); a.tool != "run" || a.args != `{"command":"echo STEP-1; seq 1 10"}` {
		t.Errorf("answer = %+v", a)
	}
	b, _ = parseBody(Anthropic, []byte(anthropicTurns(`{"name":"run","input_schema":{}}`, "STEP-3")))
	if a := f.next(Anthropic, b); a.text != "DONE after 3 steps" {
		t.Errorf("answer = %+v", a)
	}
}

func TestOverflow(t *testing.T) {
	big := strings.Repeat("x", 4000) // 1000+ tokens with the envelope
	cases := []struct {
		api    API
		path   string
		body   string
		stream bool
		check  func(t *testing.T, out []byte, tokens int)
	}{
		{Anthropic, "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + big + `"}]}`, true, func(t *testing.T, out []byte, tokens int) {
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			decode(t, string(out), &e)
			want := fmt.Sprintf("prompt is too long: %d tokens > 1000 maximum", tokens)
			if e.Type != "error" || e.Error.Type != "invalid_request_error" || e.Error.Message != want || !strings.HasPrefix(e.RequestID, "req_") {
				t.Errorf("error body %s, want message %q", out, want)
			}
		}},
		{Chat, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"` + big + `"}]}`, false, func(t *testing.T, out []byte, tokens int) {
			var e struct {
				Error struct{ Message, Type, Param, Code string } `json:"error"`
			}
			decode(t, string(out), &e)
			if e.Error.Code != "context_length_exceeded" || e.Error.Type != "invalid_request_error" || e.Error.Param != "messages" ||
				!strings.HasPrefix(e.Error.Message, "This model's maximum context length is 1000 tokens. However, your messages resulted in "+fmt.Sprint(tokens)+" tokens.") {
				t.Errorf("error body %s", out)
			}
		}},
		{Responses, "/v1/responses", `{"model":"m","stream":true,"input":"` + big + `"}`, true, func(t *testing.T, out []byte, tokens int) {
			var e struct {
				Error struct{ Message, Type, Param, Code string } `json:"error"`
			}
			decode(t, string(out), &e)
			if e.Error.Code != "context_length_exceeded" || e.Error.Type != "invalid_request_error" || e.Error.Param != "input" || e.Error.Message == "" {
				t.Errorf("error body %s", out)
			}
		}},
	}
	for _, c := range cases {
		t.Run(string(c.api), func(t *testing.T) {
			f, url := Start(t, Config{Window: 1000})
			status, out := post(t, url, c.path, c.body)
			if status != 400 {
				t.Fatalf("status %d, want 400: %s", status, out)
			}
			c.check(t, out, CountTokens([]byte(c.body)))
			if want := OverflowBody(c.api, CountTokens([]byte(c.body)), 1000); string(out) != want {
				t.Errorf("refusal %s, OverflowBody %s", out, want)
			}
			r := f.Requests()
			if len(r) != 1 || !r[0].Rejected || !r[0].Overflow || len(f.Overflows()) != 1 {
				t.Errorf("recorded %+v", r)
			}
			if p := f.Check(r[0]); len(p) != 1 || !strings.Contains(p[0], "> window 1000") {
				t.Errorf("Check = %q", p)
			}
			// Just under the window passes.
			status, _ = post(t, url, c.path, `{"model":"m","messages":[],"input":[]}`)
			if status != 200 {
				t.Errorf("small request: status %d", status)
			}
		})
	}
}

func TestOverflowInStream(t *testing.T) {
	f, url := Start(t, Config{Window: 10, OverflowInStream: true})
	out := postOK(t, url, "/v1/responses", `{"model":"m","stream":true,"input":"`+strings.Repeat("y", 100)+`"}`)
	events := parseSSE(t, out)
	if len(events) != 2 || events[0].name != "response.created" || events[1].name != "response.failed" {
		t.Fatalf("events %+v", events)
	}
	var e struct {
		SequenceNumber int `json:"sequence_number"`
		Response       struct {
			Status string `json:"status"`
			Error  struct{ Code, Message string }
		} `json:"response"`
	}
	decode(t, events[1].data, &e)
	if e.SequenceNumber != 1 || e.Response.Status != "failed" || e.Response.Error.Code != "context_length_exceeded" {
		t.Errorf("failed event %s", events[1].data)
	}
	if r := f.Requests(); !r[0].Overflow || r[0].Status != 200 {
		t.Errorf("recorded %+v", r[0])
	}
	// A non-streamed request still gets the 400.
	if status, _ := post(t, url, "/v1/responses", `{"model":"m","input":"`+strings.Repeat("y", 100)+`"}`); status != 400 {
		t.Errorf("non-streamed status %d", status)
	}
}

func TestUnpairedRejected(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"gone","content":"x"}]}]}`
	_, url := Start(t, Config{})
	if status, out := post(t, url, "/v1/messages", body); status != 400 || !strings.Contains(string(out), "tool_result gone has no tool_use") {
		t.Errorf("status %d body %s", status, out)
	}
	f, url := Start(t, Config{AllowUnpaired: true})
	if status, _ := post(t, url, "/v1/messages", body); status != 200 {
		t.Errorf("AllowUnpaired: status %d", status)
	}
	if r := f.Requests()[0]; len(r.Problems) != 1 || len(f.Check(r)) != 1 {
		t.Errorf("problems %q, Check %q", r.Problems, f.Check(r))
	}
}

func TestRecordRedactsCredentials(t *testing.T) {
	f, url := Start(t, Config{})
	req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("x-api-key", "sk-secret")
	req.Header.Set("Authorization", "Bearer sk-secret")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := f.Requests()[0]
	if r.Header.Get("X-Api-Key") != "[redacted]" || r.Header.Get("Authorization") != "[redacted]" || r.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("headers %v", r.Header)
	}
	if strings.Contains(fmt.Sprint(r.Header), "sk-secret") {
		t.Errorf("secret recorded: %v", r.Header)
	}
}

func TestConcurrent(t *testing.T) {
	f, url := Start(t, Config{Window: 100000})
	const n = 24
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var body string
			switch i % 3 {
			case 0:
				body = anthropicTurns(anthropicBashTool, fmt.Sprintf("STEP-%d", i%16))
				post(t, url, "/v1/messages", strings.Replace(body, `"model":"m"`, `"model":"m","stream":true`, 1))
			case 1:
				post(t, url, "/v1/chat/completions", chatBody(true, true))
			default:
				post(t, url, "/v1/responses", responsesBody(true))
			}
		}(i)
	}
	wg.Wait()
	reqs := f.Requests()
	if len(reqs) != n {
		t.Fatalf("%d requests recorded, want %d", len(reqs), n)
	}
	seen := map[int]bool{}
	for _, r := range reqs {
		if seen[r.Seq] || r.Status != 200 || r.Step == 0 {
			t.Errorf("request %+v", r)
		}
		seen[r.Seq] = true
	}
	if f.ToolCalls() != n || f.MaxTokens() == 0 {
		t.Errorf("ToolCalls %d MaxTokens %d", f.ToolCalls(), f.MaxTokens())
	}
	if len(reqs[0].Items) == 0 {
		t.Error("items not recorded")
	}
}

// probeWriter checks, on the first byte of the answer, that the request is
// already recorded.
type probeWriter struct {
	*httptest.ResponseRecorder
	f      *Fake
	seenAt int // len(f.Requests()) at the first write, -1 before
}

func (p *probeWriter) WriteHeader(status int) {
	if p.seenAt < 0 {
		p.seenAt = len(p.f.Requests())
	}
	p.ResponseRecorder.WriteHeader(status)
}

func (p *probeWriter) Write(b []byte) (int, error) {
	if p.seenAt < 0 {
		p.seenAt = len(p.f.Requests())
	}
	return p.ResponseRecorder.Write(b)
}

// A client that has its answer must find its request recorded: the record
// is made before the first byte goes out, not after the handler returns.
func TestRecordedBeforeAnswer(t *testing.T) {
	for _, body := range []string{anthropicBody(true), anthropicBody(false), `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`} {
		f := New(Config{})
		w := &probeWriter{ResponseRecorder: httptest.NewRecorder(), f: f, seenAt: -1}
		f.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(body)))
		if w.seenAt != 1 {
			t.Errorf("%d requests recorded when the answer started, want 1", w.seenAt)
		}
	}
}

func TestHighestStep(t *testing.T) {
	cases := []struct {
		text  string
		want  int
		found bool
	}{
		{"", 0, false},
		{"STEP-", 0, false},
		{"STEP-x STEP-", 0, false},
		{"STEP-0", 0, true},
		{"Output:\nSTEP-12\n1\n2", 12, true},
		{"STEP-3 STEP-12abc STEP-7", 12, true},
	}
	for _, c := range cases {
		if n, ok := highestStep(c.text); n != c.want || ok != c.found {
			t.Errorf("highestStep(%q) = %d, %v, want %d, %v", c.text, n, ok, c.want, c.found)
		}
	}
}

// TestAnswer: Fake.Answer writes the reply a test chose in the API's wire
// format, streamed when the body asks for it (and as JSON when the body
// does not parse), and records nothing.
func TestAnswer(t *testing.T) {
	call := Reply{Tool: "Bash", Args: `{"command":"seq 1 3"}`}
	cases := []struct {
		name  string
		api   API
		body  string
		reply Reply
		want  []string
	}{
		{"anthropic call", Anthropic, `{"model":"m"}`, call, []string{`"type":"tool_use"`, `"name":"Bash"`, `"input":{"command":"seq 1 3"}`, `"stop_reason":"tool_use"`, `"input_tokens":42`}},
		{"chat call", Chat, `{"model":"m"}`, call, []string{`"name":"Bash"`, `"arguments":"{\"command\":\"seq 1 3\"}"`, `"finish_reason":"tool_calls"`, `"prompt_tokens":42`}},
		{"responses text streamed", Responses, `{"model":"m","stream":true}`, Reply{Text: "## Goal\nsummary"}, []string{"event: response.completed", `"text":"## Goal\nsummary"`}},
		{"body that does not parse", Anthropic, `{`, Reply{Text: "hi"}, []string{`"text":"hi"`, `"model":"fake-model"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := New(Config{Now: fixedNow})
			w := httptest.NewRecorder()
			f.Answer(w, c.api, []byte(c.body), 42, c.reply)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			for _, s := range c.want {
				if !strings.Contains(w.Body.String(), s) {
					t.Errorf("answer lacks %s:\n%s", s, w.Body)
				}
			}
			if n := len(f.Requests()); n != 0 {
				t.Errorf("Answer recorded %d requests", n)
			}
		})
	}
}

// TestConversationSummaryAfterASummary: a summary asked on the
// conversation when an earlier compaction's summary opens it carries the
// request that summary's Goal names, as a model reading it would, not the
// summary's first line.
func TestConversationSummaryAfterASummary(t *testing.T) {
	body := `{"model":"m","tools":[` + anthropicBashTool + `],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"The conversation so far, summarized:\n\n## Goal\n- Initially: fix the flaky test in pkg/x\n\n## Progress\n- Ran it."}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"x"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"STEP-3"},{"type":"text","text":"Write the hand-over notes. Do not call any tool.\n\nUse these headings, in this order, and no others:\n\n## Goal\nWhat the user wants."}]}]}`
	b, err := parseBody(Anthropic, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	a := New(Config{}).next(Anthropic, b)
	if !a.summary || !strings.HasPrefix(a.text, "## Goal\n- Initially: fix the flaky test in pkg/x\n") {
		t.Errorf("hand-over %q does not carry the earlier summary's goal", a.text)
	}
	// An earlier summary of a split turn only: its Turn Request.
	body = strings.Replace(body, `## Goal\n- Initially: fix the flaky test in pkg/x\n\n## Progress\n- Ran it.`, `No earlier history.\n\n## Turn Request\n- fix the flaky test in pkg/x\n\n## Work So Far in This Turn\n- Ran it.`, 1)
	if b, err = parseBody(Anthropic, []byte(body)); err != nil {
		t.Fatal(err)
	}
	if a := New(Config{}).next(Anthropic, b); !strings.HasPrefix(a.text, "## Goal\n- fix the flaky test in pkg/x\n") {
		t.Errorf("hand-over %q does not carry the earlier summary's turn request", a.text)
	}
}
