// Command compact inspects and compacts the session files of LLM coding
// agents (pi's JSONL format): it shows what the model sees and how full its
// context window is, compacts a session with the offline extractive
// summarizer (or a model), frees tokens with the cheap strategies of
// "compact prune", and forks, migrates and draws session trees. "compact
// proxy" serves an HTTP proxy that does the same for any agent in flight.
//
// Run "compact --help" for the commands, their flags, the configuration
// file and the exit codes.
//
// The command line is built with github.com/spf13/cobra: the tool has
// several subcommands that share global flags, users expect flags to be
// accepted before or after the file argument ("compact run --dry-run x"
// and "compact run x --dry-run"), and cobra generates the help and usage
// text from the same definitions that parse the flags, so the two cannot
// drift apart. The standard flag package offers none of the three.
//
// The program has no package-level state: main wires the process's
// standard streams, arguments and environment into run, which tests call
// in-process with buffers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
