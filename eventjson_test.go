package compact

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// An event's JSON names its fields in camelCase, gives durations in
// milliseconds and errors as their messages, and leaves out what the
// event does not carry.
func TestEventJSON(t *testing.T) {
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{Event{Type: EventStart, Reason: ReasonThreshold, TokensBefore: 9000, MessagesSummarized: 12,
			ContextUsage: ContextUsage{Tokens: 9000, UsageTokens: 8000, TrailingTokens: 1000, LastUsageIndex: 7}},
			`{"type":"compaction_start","reason":"threshold","tokensBefore":9000,"tokensAfter":0,"messagesSummarized":12,` +
				`"contextUsage":{"tokens":9000,"usageTokens":8000,"trailingTokens":1000,"lastUsageIndex":7}}`},
		{Event{Type: EventEnd, Reason: ReasonOverflow, TokensBefore: 9000, TokensAfter: 2000, Duration: 1500 * time.Millisecond,
			Summarizer: "extractive", FallbackErr: errors.New("model timed out"), Strategies: []string{"clear"}},
			`{"type":"compaction_end","reason":"overflow","tokensBefore":9000,"tokensAfter":2000,"durationMs":1500,"summarizer":"extractive",` +
				`"fallbackError":"model timed out","strategies":["clear"]}`},
		{Event{Type: EventEnd, Err: errors.New("nothing to compact")},
			`{"type":"compaction_end","tokensBefore":0,"tokensAfter":0,"error":"nothing to compact"}`},
	} {
		got, err := json.Marshal(tc.ev)
		if err != nil || string(got) != tc.want {
			t.Errorf("json.Marshal(%+v)\n got %s (%v)\nwant %s", tc.ev, got, err, tc.want)
		}
	}
}
