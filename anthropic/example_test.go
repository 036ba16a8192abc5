package anthropic_test

import (
	"context"
	"fmt"
	"os"

	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/summarize"
)

// The key comes from ANTHROPIC_API_KEY (and the base URL, if set, from
// ANTHROPIC_BASE_URL).
func ExampleConfigFromEnv() {
	cfg := anthropic.ConfigFromEnv(os.Getenv)
	cfg.Model = "claude-sonnet-4-5"
	c, err := anthropic.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Complete(context.Background(), &summarize.Request{
		System:    "You write short summaries.",
		Prompt:    "Summarize: the build failed twice, then passed.",
		MaxTokens: 200,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text)
}

// With a thinking budget the model reasons first; the budget is added to
// the request's output limit.
func ExampleNew_thinking() {
	cfg := anthropic.ConfigFromEnv(os.Getenv)
	cfg.Model = "claude-sonnet-4-5"
	cfg.ThinkingBudget = 4096
	c, err := anthropic.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = c // use c.Complete as with any summarize.Completer
}
