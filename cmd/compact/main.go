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
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Getenv("COMPACT_CPUPROFILE"), os.Stderr)
	a := newApp(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	a.loaded = heapBound(os.Getenv, debug.SetMemoryLimit, heapInUse)
	code := a.execute(ctx, os.Args[1:])
	stopProfile()
	writeMemProfile(os.Getenv("COMPACT_MEMPROFILE"), os.Stderr)
	stop()
	os.Exit(code)
}

// startProfile writes a CPU profile of the whole run to path (read it
// with go tool pprof) and returns the function that ends it; with path
// "" it does nothing. A profile that cannot be started is reported on
// stderr and the command runs anyway.
func startProfile(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "compact: COMPACT_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "compact: COMPACT_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// writeMemProfile writes the allocation profile of the whole run to path
// (go tool pprof -sample_index=alloc_space shows where the bytes were
// allocated, inuse_space what was still live at the end); with path ""
// it does nothing. A failure is reported on stderr only.
func writeMemProfile(path string, stderr io.Writer) {
	if path == "" {
		return
	}
	runtime.GC() // the profile counts allocations up to the last collection
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "compact: COMPACT_MEMPROFILE: %v\n", err)
	}
}
