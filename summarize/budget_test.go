package summarize

import (
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestBudgets(t *testing.T) {
	tests := []struct {
		name      string
		info      compact.ModelInfo
		edit      func(*Options)
		kind      compact.SummaryKind
		engineMax int
		wantMax   int // max tokens sent
		wantInput int // input budget
	}{
		// 0.8 × 16384 = 13107 < 8% × 200000 = 16000; margin 5% = 10000.
		{"200k window", model200k, nil, compact.SummaryHistory, 0, 13107, 200000 - 13107 - 10000},
		// 8% × 32768 = 2621; margin 5% = 1638.
		{"32k window: 8% rule", model32k, nil, compact.SummaryHistory, 0, 2621, 32768 - 2621 - 1638},
		// 8% × 8192 = 655; margin floor 1024.
		{"8k window: 8% rule", model8k, nil, compact.SummaryHistory, 0, 655, 8192 - 655 - 1024},
		// 8% × 4096 = 327 → floor 500.
		{"4k window: floor 500", compact.ModelInfo{ID: "m", ContextWindow: 4096}, nil, compact.SummaryHistory, 0, 500, 4096 - 500 - 1024},
		{"max output bounds", compact.ModelInfo{ID: "m", ContextWindow: 200000, MaxOutput: 4096}, nil, compact.SummaryHistory, 0, 4096, 200000 - 4096 - 10000},
		{"unknown max output", compact.ModelInfo{ID: "m", ContextWindow: 200000}, nil, compact.SummaryHistory, 0, 13107, 200000 - 13107 - 10000},
		{"smaller reserve", model200k, func(o *Options) { o.Reserve = 4000 }, compact.SummaryHistory, 0, 3200, 200000 - 3200 - 10000},
		{"engine bound", model200k, nil, compact.SummaryHistory, 8000, 8000, 200000 - 8000 - 10000},
		{"engine bound above own", model200k, nil, compact.SummaryHistory, 50000, 13107, 200000 - 13107 - 10000},
		{"input limit", compact.ModelInfo{ID: "m", ContextWindow: 200000, MaxOutput: 64000, InputLimit: 100000}, nil,
			compact.SummaryHistory, 0, 13107, 100000 - 10000},
		{"explicit margin", model32k, func(o *Options) { o.SafetyMargin = 500 }, compact.SummaryHistory, 0, 2621, 32768 - 2621 - 500},
		{"prefix: half", model200k, nil, compact.SummaryTurnPrefix, 0, 6553, 200000 - 6553 - 10000},
		{"prefix: half of the engine's", model200k, nil, compact.SummaryTurnPrefix, 3000, 3000, 200000 - 3000 - 10000},
		{"prefix: floor on 8k", model8k, nil, compact.SummaryTurnPrefix, 0, 500, 8192 - 500 - 1024},
		{"thinking below budget: unchanged", model200k, func(o *Options) { o.ThinkingBudget = 10000 }, compact.SummaryHistory, 0, 13107, 200000 - 13107 - 10000},
		{"thinking above budget: raised", model200k, func(o *Options) { o.ThinkingBudget = 16000 }, compact.SummaryHistory, 0, 16500, 200000 - 16500 - 10000},
		{"thinking on 32k: raised within max output", model32k, func(o *Options) { o.ThinkingBudget = 4000 }, compact.SummaryHistory, 0, 4500, 32768 - 4500 - 1638},
		{"thinking over the engine bound", model200k, func(o *Options) { o.ThinkingBudget = 2048 }, compact.SummaryHistory, 1000, 2548, 200000 - 2548 - 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTest(t, &fake{}, tt.info, tt.edit)
			got, err := s.MaxTokens(tt.kind, tt.engineMax)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantMax {
				t.Errorf("max tokens = %d, want %d", got, tt.wantMax)
			}
			if tb := s.Options().ThinkingBudget; tb > 0 && got <= tb {
				t.Errorf("max tokens %d not above thinking budget %d", got, tb)
			}
			if in := s.InputBudget(got); in != tt.wantInput {
				t.Errorf("input budget = %d, want %d", in, tt.wantInput)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		is      error
		message string
	}{
		{"no completer", Options{Info: model200k}, nil, "Completer is required"},
		{"no model", Options{Completer: &fake{}, Info: compact.ModelInfo{ContextWindow: 1000}}, nil, "Model"},
		{"unknown window", Options{Completer: &fake{}, Model: "mystery"}, compact.ErrUnknownWindow,
			`context window of the summarizer model "mystery" must be given`},
		{"thinking budget beyond max output", Options{Completer: &fake{}, Info: model32k, ThinkingBudget: 8000},
			ErrThinkingBudget, "max output of 8192"},
		{"window too small", Options{Completer: &fake{}, Info: compact.ModelInfo{ID: "m", ContextWindow: 2048}},
			ErrWindowTooSmall, "leave"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q lacks %q", err, tt.message)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	s, err := New(Options{Completer: &fake{}, Info: model200k})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options()
	if o.Model != "big-200k" || o.Reserve != DefaultReserve || o.ToolResultChars != DefaultToolResultChars ||
		o.CharsPerToken != DefaultCharsPerToken || o.MaxTries != DefaultMaxTries || o.MaxSplits != DefaultMaxSplits ||
		o.SafetyMargin != 10000 || o.Sleep == nil || o.Rand == nil {
		t.Errorf("defaults: %+v", o)
	}
	if s.Name() != "big-200k" {
		t.Errorf("name %q", s.Name())
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		cpt          float64
		system, text string
		want         int
	}{
		{3, "abc", "abc", 2 + framingTokens},
		{3, "", strings.Repeat("x", 3000), 1000 + framingTokens},
		{3, "", strings.Repeat("x", 3001), 1001 + framingTokens},
		{4, "", strings.Repeat("x", 4000), 1000 + framingTokens},
		{3, "", strings.Repeat("é", 300), 200 + framingTokens}, // 600 bytes
	}
	for _, tt := range tests {
		s, _ := newTest(t, &fake{}, model200k, func(o *Options) { o.CharsPerToken = tt.cpt })
		if got := s.EstimateTokens(tt.system, tt.text); got != tt.want {
			t.Errorf("cpt %v, %d bytes: %d, want %d", tt.cpt, len(tt.system)+len(tt.text), got, tt.want)
		}
	}
}

// TestReserveBudget: the summary may use 0.8 of the reserve, the rule the
// command line's output budget and OutputBudget share.
func TestReserveBudget(t *testing.T) {
	for reserve, want := range map[int]int{0: 0, 1000: 800, compact.DefaultReserveTokens: 13107, 50000: 40000} {
		if got := ReserveBudget(reserve); got != want {
			t.Errorf("ReserveBudget(%d) = %d, want %d", reserve, got, want)
		}
	}
}
