package compact

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// near reports whether two dollar amounts agree to a millionth of a cent.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-8 }

func TestPricesCost(t *testing.T) {
	sonnet := Prices{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}
	gpt5 := Prices{Input: 1.25, Output: 10, CacheRead: 0.125}
	tests := []struct {
		name   string
		prices Prices
		usage  Usage
		want   Cost // computed by hand
	}{
		{"the doc's example", sonnet, Usage{Input: 1000, CacheRead: 100000, CacheWrite: 2000, Output: 500},
			Cost{Input: 0.003, CacheRead: 0.03, CacheWrite: 0.0075, Output: 0.0075}},
		// 10,000 written: 4,000 for an hour at $6, 6,000 for five minutes
		// at $3.75: $0.024 + $0.0225.
		{"one-hour writes", sonnet, Usage{CacheWrite: 10000, CacheWrite1h: 4000},
			Cost{CacheWrite: 0.0465}},
		// Threshold compaction's step (180,000 in, 3,500 out) is billed
		// with the answer (23,000 in, 1,000 out): 203,000 × $3 and 4,500 ×
		// $15.
		{"provider compaction step", sonnet, Usage{Input: 23000, Output: 1000, Compaction: StepUsage{Input: 180000, Output: 3500}},
			Cost{Input: 0.609, Output: 0.0675}},
		// OpenAI reports no writes and sets no write price: writes, if a
		// usage held any, bill as input.
		{"no write price", gpt5, Usage{Input: 2000, CacheRead: 80000, CacheWrite: 1000, Output: 300},
			Cost{Input: 0.0025, CacheRead: 0.01, CacheWrite: 0.00125, Output: 0.003}},
		{"no cache prices at all", Prices{Input: 2, Output: 8}, Usage{CacheRead: 1000000, CacheWrite: 1000000, CacheWrite1h: 500000},
			Cost{CacheRead: 2, CacheWrite: 2}},
		{"nothing used", sonnet, Usage{}, Cost{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.prices.Cost(tc.usage)
			if !near(got.Input, tc.want.Input) || !near(got.CacheRead, tc.want.CacheRead) || !near(got.CacheWrite, tc.want.CacheWrite) || !near(got.Output, tc.want.Output) {
				t.Errorf("Cost = %+v, want %+v", got, tc.want)
			}
			if !near(got.Total(), tc.want.Input+tc.want.CacheRead+tc.want.CacheWrite+tc.want.Output) {
				t.Errorf("Total = %v", got.Total())
			}
		})
	}
}

func TestModelCostUnknownWithoutPrices(t *testing.T) {
	u := Usage{Input: 1000, Output: 100}
	if c, ok := (ModelInfo{ID: "my-local-model", ContextWindow: 32768}).Cost(u); ok || c != (Cost{}) {
		t.Errorf("a model without prices costs %+v, %v; want unknown", c, ok)
	}
	m := ModelInfo{ID: "x", Prices: &Prices{Input: 1, Output: 2}}
	if c, ok := m.Cost(u); !ok || !near(c.Total(), 0.0012) {
		t.Errorf("Cost = %+v, %v; want $0.0012", c, ok)
	}
}

func TestRegistryPrices(t *testing.T) {
	reg, err := LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                          string
		input, output, read, w5m, w1h float64
	}{
		{"claude-sonnet-4-5-20250929", 3, 15, 0.30, 3.75, 6},
		{"anthropic/claude-opus-4-5", 5, 25, 0.50, 6.25, 10},
		{"claude-opus-4-1", 15, 75, 1.50, 18.75, 30},
		{"claude-haiku-4-5", 1, 5, 0.10, 1.25, 2},
		{"gpt-5.1-codex", 1.25, 10, 0.125, 0, 0},
		{"gpt-4o-mini-2024-07-18", 0.15, 0.60, 0.075, 0, 0},
	}
	for _, tc := range tests {
		m, ok := reg.Lookup(tc.name)
		if !ok || m.Prices == nil {
			t.Errorf("%s: no prices (found %v)", tc.name, ok)
			continue
		}
		p := *m.Prices
		if p.Input != tc.input || p.Output != tc.output || p.CacheRead != tc.read || p.CacheWrite != tc.w5m || p.CacheWrite1h != tc.w1h {
			t.Errorf("%s: prices %+v", tc.name, p)
		}
		if !strings.HasPrefix(p.Source, "https://") || len(p.Date) != len("2006-01-02") {
			t.Errorf("%s: prices without their source and date: %q %q", tc.name, p.Source, p.Date)
		}
	}
	// Every priced Anthropic model follows the provider's multipliers:
	// reads 0.1×, five-minute writes 1.25×, one-hour writes 2× input.
	for _, m := range reg.Models() {
		if m.Prices == nil || m.Provider != "anthropic" {
			continue
		}
		p := m.Prices
		rounded := m.ID == "claude-3-haiku" // the page rounds its $0.025 and $0.3125 to $0.03 and $0.30
		if !rounded && (!near(p.CacheRead, p.Input/10) || !near(p.CacheWrite, p.Input*1.25)) || !near(p.CacheWrite1h, p.Input*2) {
			t.Errorf("%s: prices %+v off the provider's multipliers", m.ID, *p)
		}
	}
	// A model the registry prices nothing for has no cost.
	if m, ok := reg.Lookup("gemini-2.5-pro"); !ok || m.Prices != nil {
		t.Errorf("gemini-2.5-pro: %+v, want a window and no prices", m)
	}
}

// A config's models entry that sets the window alone keeps the registry's
// prices; one that sets prices replaces them; an unknown model priced in
// the config has a cost.
func TestConfigModelPrices(t *testing.T) {
	reg, err := LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(`{"models": [
		{"id": "claude-sonnet-4-5", "contextWindow": 1000000},
		{"id": "gpt-5", "contextWindow": 400000, "prices": {"input": 1, "output": 8}},
		{"id": "my-local-model", "contextWindow": 32768, "prices": {"input": 0.1, "output": 0.2, "source": "our invoice", "date": "2026-11-01"}}
	]}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m := cfg.ResolveModel(reg, "claude-sonnet-4-5")
	if m.ContextWindow != 1000000 || m.Prices == nil || m.Prices.Input != 3 {
		t.Errorf("window override: %+v, prices %+v; want the 1M window and the registry's prices", m, m.Prices)
	}
	if m := cfg.ResolveModel(reg, "gpt-5"); m.Prices == nil || m.Prices.Input != 1 || m.Prices.CacheRead != 0 {
		t.Errorf("price override: %+v", m.Prices)
	}
	if c, ok := cfg.ResolveModel(reg, "my-local-model").Cost(Usage{Input: 1000000, Output: 1000000}); !ok || !near(c.Total(), 0.3) {
		t.Errorf("configured model: %+v %v", c, ok)
	}
	// The registry itself is unchanged.
	if m, _ := reg.Lookup("gpt-5"); m.Prices.Input != 1.25 {
		t.Errorf("registry changed: %+v", m.Prices)
	}
}

func TestConfigRefusesBadPrices(t *testing.T) {
	for _, body := range []string{
		`{"models": [{"id": "m", "contextWindow": 8192, "prices": {"input": -1, "output": 2}}]}`,
		`{"models": [{"id": "m", "contextWindow": 8192, "prices": {"input": 1, "output": 2, "cacheWrite1h": -0.5}}]}`,
	} {
		var cfg Config
		if err := json.Unmarshal([]byte(body), &cfg); err != nil {
			t.Fatal(err)
		}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "models[0]") || !strings.Contains(err.Error(), `"m"`) {
			t.Errorf("%s: %v, want an error naming models[0] and the model", body, err)
		}
	}
}

func TestUsagePlusAndShare(t *testing.T) {
	a := Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Total: 10, CacheWrite1h: 1, Compaction: StepUsage{Input: 5}, Stored: `{"cost":1}`}
	b := Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Total: 100, CacheWrite1h: 2, Compaction: StepUsage{Output: 7}}
	want := Usage{Input: 11, Output: 22, CacheRead: 33, CacheWrite: 44, Total: 110, CacheWrite1h: 3, Compaction: StepUsage{Input: 5, Output: 7}}
	if got := a.Plus(b); got != want {
		t.Errorf("Plus = %+v, want %+v", got, want)
	}
	if s, ok := (Usage{Input: 10, CacheRead: 80, CacheWrite: 10}).CacheReadShare(); !ok || !near(s, 0.8) {
		t.Errorf("share %v %v, want 0.8", s, ok)
	}
	if _, ok := (Usage{Output: 5}).CacheReadShare(); ok {
		t.Error("a usage without a prompt has a cache read share")
	}
}

// The new counts are left out of a usage's JSON when zero, so stored
// records that never had them keep their form.
func TestUsageJSONOmitsNewZeroCounts(t *testing.T) {
	b, err := json.Marshal(Usage{Input: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Input":1,"Output":0,"CacheRead":0,"CacheWrite":0,"Total":0,"Stored":""}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back Usage
	full := Usage{Input: 1, CacheWrite: 5, CacheWrite1h: 2, Compaction: StepUsage{Input: 9, CacheRead: 3}}
	b, _ = json.Marshal(full)
	if err := json.Unmarshal(b, &back); err != nil || back != full {
		t.Errorf("round trip %s: %+v %v", b, back, err)
	}
}

func TestPricesCacheSavings(t *testing.T) {
	sonnet := Prices{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}
	for _, tc := range []struct {
		name   string
		prices Prices
		usage  Usage
		want   float64 // by hand
	}{
		// 100,000 read at $0.30 instead of $3 saves $0.27; 2,000 written
		// at $3.75 instead of $3 costs $0.0015 more; input and output
		// change nothing.
		{"reads and writes", sonnet, Usage{Input: 1000, CacheRead: 100000, CacheWrite: 2000, Output: 500}, 0.2685},
		// A cold start writes it all: the cache costs $0.75 × 0.1 more.
		{"writes only", sonnet, Usage{CacheWrite: 100000}, -0.075},
		{"one-hour writes cost twice the input", sonnet, Usage{CacheWrite: 1000000, CacheWrite1h: 1000000}, -3},
		{"OpenAI: reads at a tenth, no write premium", Prices{Input: 1.25, Output: 10, CacheRead: 0.125}, Usage{Input: 2000, CacheRead: 80000}, 0.09},
		{"no cache prices: nothing saved", Prices{Input: 2, Output: 8}, Usage{CacheRead: 1000000}, 0},
	} {
		if got := tc.prices.CacheSavings(tc.usage); !near(got, tc.want) {
			t.Errorf("%s: CacheSavings = %v, want %v", tc.name, got, tc.want)
		}
	}
}
