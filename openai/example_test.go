package openai_test

import (
	"context"
	"fmt"
	"os"

	"github.com/compactkit/compact/openai"
	"github.com/compactkit/compact/summarize"
)

// The key and base URL come from OPENAI_API_KEY and OPENAI_BASE_URL.
func ExampleConfigFromEnv() {
	cfg := openai.ConfigFromEnv(os.Getenv)
	cfg.Model = "gpt-4.1-mini"
	c, err := openai.New(cfg)
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

// A local server such as Ollama needs no key; only the base URL changes.
func ExampleNew_local() {
	c, err := openai.New(openai.Config{
		BaseURL: "http://localhost:11434/v1",
		Model:   "qwen2.5:7b",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = c // use c.Complete as with any summarize.Completer
}
