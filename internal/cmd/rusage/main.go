// Command rusage runs a command and writes what it cost to a file: wall,
// user and system seconds to the millisecond, and the peak resident set
// in KiB, on one line. scripts/bench-scale.sh uses it instead of
// /usr/bin/time, whose seconds have two decimals: a command on a 50 MB
// session takes 0.2 s, which two decimals give to ±5 %.
//
//	rusage -o cost.txt compact inspect s50.jsonl
//
// The command's standard streams are its own; its exit status is passed
// on. Linux reports the peak resident set (ru_maxrss) in KiB.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "", "file to write the cost to (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: rusage -o FILE COMMAND [ARG...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(*out, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// run runs args, writes the cost line to out and returns the command's
// exit code.
func run(out string, args []string) (int, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, err
	}
	st := cmd.ProcessState
	peak := int64(0)
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss
	}
	line := fmt.Sprintf("%.3f %.3f %.3f %d\n", wall.Seconds(), st.UserTime().Seconds(), st.SystemTime().Seconds(), peak)
	if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
		return 0, err
	}
	return st.ExitCode(), nil
}
