package proxy

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize"
)

// TestSummaryTimeoutCoversTheWholeSummary: a model summary is held to
// SummaryTimeout by summarize.Deadline, one limit for all its calls
// together (a split turn's history and prefix), as the command line's
// --total-timeout; each call used to get the whole limit of its own.
func TestSummaryTimeoutCoversTheWholeSummary(t *testing.T) {
	srv, err := New(Config{SummaryTimeout: 42 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	v := &view{p: &Parsed{Model: "claude-sonnet-4-5"}, info: compact.ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000}}
	for _, api := range []API{Anthropic, Chat, Responses} {
		d, ok := srv.summarizerFor(api, http.Header{}, v, nil, nil).(*summarize.Deadline)
		if !ok || d.Limit != 42*time.Second {
			t.Errorf("%v: summarizer %#v, want a summarize.Deadline of 42s", api, d)
		}
	}
}

// TestEstimateRoundsUp: the proxy converts characters to tokens with the
// root's calibrated meter (compact.Calibrator.EstimateChars), which rounds
// up; its own conversion added 0.999 and truncated, so 3,997 characters at
// 4.001 per token (999.00025 tokens) were 999 tokens, not 1,000.
func TestEstimateRoundsUp(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !srv.calib.Observe("m", 4001, 1000) {
		t.Fatal("observation refused")
	}
	for n, want := range map[int]int{0: 0, 1: 1, 3997: 1000, 4001: 1000, 4002: 1001} {
		if got := srv.charsToTokens("m", n); got != want {
			t.Errorf("%d chars: %d tokens, want %d", n, got, want)
		}
	}
}

// TestConfigFollowsTheSettingsRules: the proxy refuses the window and
// kept-part settings the command line refuses (compact.Config.Validate),
// naming the setting. It used to take any window from 1 up and any kept
// part.
func TestConfigFollowsTheSettingsRules(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string // "" means accepted
	}{
		{Config{}, ""},
		{Config{Window: 1024, KeepRecentTokens: 1000}, ""},
		{Config{Window: -1}, "proxy: window: must be at least 1024 tokens, got -1"},
		{Config{Window: 1000}, "proxy: window: must be at least 1024 tokens, got 1000"},
		{Config{KeepRecentTokens: -5}, "proxy: keepRecentTokens: must be a positive number of tokens, got -5"},
		{Config{Window: 8000, KeepRecentTokens: 8000}, "proxy: keepRecentTokens: 8000 tokens must be smaller than the window (8000 tokens)"},
	} {
		srv, err := New(tc.cfg)
		if err == nil {
			srv.Close()
		}
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
