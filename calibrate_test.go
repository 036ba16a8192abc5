package compact

import (
	"encoding/json"
	"strings"
	"testing"
)

func calibrationMessages() []*Message {
	exit := 0
	call := func(name, args string) Part {
		return Part{Type: PartToolCall, ToolCall: &ToolCall{Name: name, Arguments: json.RawMessage(args)}}
	}
	return []*Message{
		{Role: RoleUser},
		TextMessage(RoleUser, "hello"),
		TextMessage(RoleUser, "héllo wörld, 你好, 🙂🙂"),
		TextMessage(RoleToolResult, "bad utf-8: \xff\xfe"),
		{Role: RoleUser, Content: []Part{{Type: PartText, Text: "see"}, {Type: PartImage, Image: &Image{MimeType: "image/png", Data: "AAAA"}}}},
		{Role: RoleToolResult, Content: []Part{{Type: PartImage}, {Type: PartImage}}},
		{Role: RoleUser, Content: []Part{{Type: PartThinking, Thinking: "ignored outside replies"}}},
		{Role: RoleAssistant, Content: []Part{
			{Type: PartThinking, Thinking: "let me think"},
			{Type: PartText, Text: "I will read it."},
			call("read", `{"path": "a.go", "limit": 1e2, "s": "</tag>\u00e9"}`),
			call("bash", ``),
			call("x", `not json`),
			{Type: PartToolCall},
		}},
		{Role: RoleBash, Meta: &MessageMeta{Command: "ls -la", Output: strings.Repeat("file\n", 37), ExitCode: &exit}},
		TextMessage(RoleCompactionSummary, strings.Repeat("summary ", 101)),
		{Role: RoleCustom, Content: []Part{{Type: PartText, Text: "abc"}}},
	}
}

func TestMessageCharsMatchesEstimateTokens(t *testing.T) {
	for i, m := range calibrationMessages() {
		if got, want := (messageChars(m)+3)/4, EstimateTokens(m); got != want {
			t.Errorf("message %d: ceil(%d/4) = %d, EstimateTokens %d", i, messageChars(m), got, want)
		}
		var c Calibrator
		if got, want := c.Estimate("any", m), EstimateTokens(m); got != want {
			t.Errorf("message %d: zero Calibrator estimates %d, EstimateTokens %d", i, got, want)
		}
	}
}

func TestCalibratorDefaults(t *testing.T) {
	var c Calibrator
	if r := c.CharsPerToken("m"); r != DefaultCharsPerToken {
		t.Errorf("unlearned ratio %v, want %v", r, DefaultCharsPerToken)
	}
	if st := c.Stats("m"); st.Learned || st.Observations != 0 {
		t.Errorf("unlearned stats %+v", st)
	}
	c.Default = 3.5
	if r := c.CharsPerToken("m"); r != 3.5 {
		t.Errorf("ratio with Default 3.5: %v", r)
	}
}

func TestCalibratorObserve(t *testing.T) {
	var c Calibrator
	rejected := []struct {
		name         string
		chars, delta int
	}{
		{"too small", DefaultMinCalibrationChars - 1, 100},
		{"no growth", 3000, 0},
		{"shrunk", 3000, -500},
		{"under one char per token", 3000, 3001},
		{"over six chars per token", 6001, 1000},
	}
	for _, r := range rejected {
		if c.Observe("m", r.chars, r.delta) {
			t.Errorf("%s: accepted", r.name)
		}
	}
	if st := c.Stats("m"); st.Learned {
		t.Fatalf("learned from rejected observations: %+v", st)
	}
	for range 20 {
		if !c.Observe("m", 3000, 1000) {
			t.Fatal("a 3 chars/token observation was rejected")
		}
	}
	if r := c.CharsPerToken("m"); r != 3 {
		t.Errorf("ratio %v, want 3", r)
	}
	if r := c.CharsPerToken("other"); r != DefaultCharsPerToken {
		t.Errorf("another model's ratio %v, want the default", r)
	}
	// Older observations fade: after plenty of text at 2.5, the ratio is
	// near 2.5.
	for range 200 {
		c.Observe("m", 10_000, 4000)
	}
	if r := c.CharsPerToken("m"); r < 2.5 || r > 2.52 {
		t.Errorf("ratio after drift %v, want about 2.5", r)
	}
	if st := c.Stats("m"); st.Observations != 220 || !st.Learned {
		t.Errorf("stats %+v", st)
	}
	// Images stay at ImageTokens whatever the ratio.
	m := &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: strings.Repeat("a", 1000)}, {Type: PartImage}}}
	want := int(float64(1000)/c.CharsPerToken("m")+0.999999) + ImageTokens
	if got := c.Estimate("m", m); got != want {
		t.Errorf("estimate %d, want %d", got, want)
	}
}

func reply(model string, prompt, output int, stop StopReason, text string) *Message {
	return &Message{Role: RoleAssistant, Model: model, StopReason: stop,
		Content: []Part{{Type: PartText, Text: text}},
		Usage:   &Usage{Input: 10, CacheRead: prompt - 10, Output: output}}
}

func TestMeterCalibrated(t *testing.T) {
	var zero Meter
	if u := zero.Usage(); u != (ContextUsage{LastUsageIndex: -1}) {
		t.Errorf("zero meter: %+v", u)
	}
	cal := &Calibrator{}
	p := &Meter{Cal: cal}
	// Without a report, the whole context is estimated.
	p.Add(TextMessage(RoleUser, strings.Repeat("a", 400)))
	if got := p.Tokens(); got != 100 {
		t.Errorf("tokens before any report %d, want 100", got)
	}
	p.Add(reply("m", 5000, 100, StopToolUse, "ok"))
	if got := p.Usage(); got.Tokens != 5100 || got.UsageTokens != 5100 || got.LastUsageIndex != 1 {
		t.Errorf("after the first report: %+v", got)
	}
	if prompt, ok := p.LastPrompt(); !ok || prompt != 5000 {
		t.Errorf("last prompt %d %v", prompt, ok)
	}
	// 3000 chars of tool output, predicted at four chars per token.
	p.Add(TextMessage(RoleToolResult, strings.Repeat("b", 3000)))
	if got := p.Tokens(); got != 5100+750 {
		t.Errorf("prediction %d, want %d", got, 5100+750)
	}
	// A failed reply is neither counted nor a report.
	p.Add(reply("m", 9999, 5, StopAborted, strings.Repeat("c", 4000)))
	if got := p.Tokens(); got != 5850 {
		t.Errorf("prediction after an aborted reply %d, want 5850", got)
	}
	// The call reports 1000 new tokens: the ratio becomes 3.
	p.Add(reply("m", 6100, 50, StopToolUse, "done"))
	if r := cal.CharsPerToken("m"); r != 3 {
		t.Errorf("learned ratio %v, want 3", r)
	}
	p.Add(TextMessage(RoleToolResult, strings.Repeat("d", 3000)))
	if got := p.Tokens(); got != 6150+1000 {
		t.Errorf("calibrated prediction %d, want %d", got, 6150+1000)
	}
	// A call by another model teaches nothing.
	p.Add(reply("n", 8000, 10, StopToolUse, "x"))
	if st := cal.Stats("n"); st.Learned {
		t.Errorf("learned across a model change: %+v", st)
	}
	if st := cal.Stats("m"); st.Observations != 1 {
		t.Errorf("observations of m: %d, want 1", st.Observations)
	}
	if p.Model() != "n" {
		t.Errorf("model %q, want n", p.Model())
	}
}

func TestMeterCalibratedReset(t *testing.T) {
	cal := &Calibrator{}
	cal.Observe("m", 3000, 1000)
	c := &Context{Model: "m", Messages: []*Message{
		TextMessage(RoleUser, "hi"),
		reply("m", 2000, 100, StopToolUse, "ok"),
		TextMessage(RoleToolResult, strings.Repeat("x", 300)),
		reply("m", 9000, 5, StopError, strings.Repeat("y", 600)),
	}}
	p := &Meter{Cal: cal}
	p.Reset(c)
	want := ContextUsage{Tokens: 2100 + 100, UsageTokens: 2100, TrailingTokens: 100, LastUsageIndex: 1}
	if got := p.Usage(); got != want {
		t.Errorf("after reset %+v, want %+v", got, want)
	}
	if st := cal.Stats("m"); st.Observations != 1 {
		t.Errorf("Reset taught the calibrator: %+v", st)
	}
	// The same context appended message by message gives the same
	// prediction.
	q := &Meter{Cal: &Calibrator{}}
	q.Cal.Observe("m", 3000, 1000)
	for _, m := range c.Messages {
		q.Add(m)
	}
	if got := q.Usage(); got != want {
		t.Errorf("appended %+v, want %+v", got, want)
	}
	// A compacted context has no usable report: the whole estimate.
	comp := &Context{Model: "m", Messages: c.Messages, FirstAfterCompaction: len(c.Messages)}
	p.Reset(comp)
	if got := p.Usage(); got.UsageTokens != 0 || got.LastUsageIndex != -1 || got.Tokens != 102 { // 1 + 1 + 300/3: the failed reply is left out
		t.Errorf("compacted %+v", got)
	}
}

func BenchmarkCalibratorEstimate(b *testing.B) {
	cal := &Calibrator{}
	cal.Observe("m", 3000, 1000)
	m := TextMessage(RoleToolResult, strings.Repeat("func main() { fmt.Println(\"hi\") }\n", 100))
	b.SetBytes(int64(len(m.Content[0].Text)))
	b.ReportAllocs()
	for b.Loop() {
		cal.Estimate("m", m)
	}
}

// TestEstimateChars: text outside messages is converted at the model's
// ratio, rounded up, as Estimate converts a message's characters.
func TestEstimateChars(t *testing.T) {
	cal := &Calibrator{}
	if !cal.Observe("m", 3000, 1000) {
		t.Fatal("observation refused")
	}
	for _, tc := range []struct {
		model string
		chars int
		want  int
	}{
		{"new", 0, 0}, {"new", 1, 1}, {"new", 4, 1}, {"new", 5, 2}, {"new", 4001, 1001},
		{"m", 3, 1}, {"m", 4, 2}, {"m", 3000, 1000},
	} {
		if got := cal.EstimateChars(tc.model, tc.chars); got != tc.want {
			t.Errorf("%s, %d chars: %d tokens, want %d", tc.model, tc.chars, got, tc.want)
		}
	}
}

// TestObserveMessages: the characters of the messages sent, against the
// growth less ImageTokens per image; a failed reply teaches nothing.
func TestObserveMessages(t *testing.T) {
	img := &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: strings.Repeat("a", 3000)}, {Type: PartImage}}}
	failed := &Message{Role: RoleAssistant, StopReason: StopAborted, Content: []Part{{Type: PartText, Text: strings.Repeat("b", 9000)}}}
	var c Calibrator
	if !c.ObserveMessages("m", []*Message{failed, img}, 1000+ImageTokens) {
		t.Fatal("observation refused")
	}
	if r := c.CharsPerToken("m"); r != 3 {
		t.Errorf("ratio %v, want 3", r)
	}
	if c.ObserveMessages("m", []*Message{TextMessage(RoleUser, "hi")}, 1) {
		t.Error("an addition under MinChars was accepted")
	}
}
