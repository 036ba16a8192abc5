// Command agentloop plays a coding agent against a provider or a proxy
// in front of one: the scripted agent of the tests
// (internal/testing/agentloop) as a program, for scripts
// (scripts/prometheus.sh). It sends the whole history on every turn,
// echoes signed thinking back, answers each shell call, and marks its
// prompt cache as Claude Code does.
//
//	agentloop -base-url http://127.0.0.1:8787 -api anthropic -stream -thinking adaptive \
//	    -steps 45 -model claude-sonnet-4-5
//
// With -steps N it expects the provider's script of N shell steps (the
// fakeupstream command's -steps) and fails unless the model's last answer
// is "DONE after N steps". On success it prints one JSON object on
// stdout: the turns, the final answer and the turn latencies' median and
// maximum in milliseconds. A failed turn exits 1 with a one-line error
// naming it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/compactkit/compact/internal/testing/agentloop"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	var o agentloop.Options
	api := fs.String("api", string(agentloop.Anthropic), "wire format: anthropic, chat or responses")
	fs.StringVar(&o.BaseURL, "base-url", "", "where requests go, without /v1 (required)")
	fs.BoolVar(&o.Stream, "stream", false, "ask for streamed answers")
	fs.StringVar(&o.Thinking, "thinking", "", "Anthropic extended thinking: adaptive or enabled (off when empty)")
	fs.StringVar(&o.Session, "session", "", "session id sent in the agent's header (default \"agentloop\")")
	fs.StringVar(&o.Model, "model", "", "model asked for (default claude-test or gpt-test)")
	steps := fs.Int("steps", 16, "shell steps of the provider's script; the loop runs one turn more, for the final answer")
	timeout := fs.Duration("timeout", 10*time.Minute, "time the whole conversation may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.BaseURL == "":
		return fmt.Errorf("-base-url is required")
	case *steps < 1:
		return fmt.Errorf("-steps %d: want at least 1", *steps)
	}
	o.API = agentloop.API(*api)
	o.Turns = *steps + 1

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, err := agentloop.Run(ctx, o)
	if err != nil {
		return err
	}
	if want := fmt.Sprintf("DONE after %d steps", *steps); res.Final != want {
		return fmt.Errorf("the model's last answer after %d turns is %q, want %q", len(res.Turns), res.Final, want)
	}
	lat := res.Latencies()
	slices.Sort(lat)
	out := struct {
		Turns int    `json:"turns"`
		Final string `json:"final"`
		P50MS int64  `json:"p50_ms"`
		MaxMS int64  `json:"max_ms"`
	}{Turns: len(res.Turns), Final: res.Final}
	if len(lat) > 0 {
		out.P50MS, out.MaxMS = lat[len(lat)/2].Milliseconds(), lat[len(lat)-1].Milliseconds()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
