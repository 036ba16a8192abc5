package cline

import (
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/extractive"
	"github.com/compactkit/compact/internal/readertest"
)

// The environment details Cline and Roo Code append to every user message
// are the extension's notes: a summary neither takes them for the user's
// request nor quotes them.
func TestEnvironmentDetailsNotTheUser(t *testing.T) {
	tests := []struct {
		dir, first string
	}{
		{"xml-task", "The sum function in main.go returns the wrong result."},
		{"real-roo-mixed-ops", "Simulate a realistic development workflow"},
		{"real-cline-todo", "Create an impressive HTML 5 website"},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			tr := readertest.ReadTestdata(t, ReadFile, tc.dir)
			var msgs []*compact.Message
			for _, e := range tr.Entries {
				if e.Message != nil {
					msgs = append(msgs, e.Message)
				}
			}
			sum, err := extractive.New(extractive.Options{}).Summarize(context.Background(), &compact.SummaryRequest{Messages: msgs})
			if err != nil {
				t.Fatal(err)
			}
			// The summary indents the task's lines under its bullet.
			if !strings.Contains(sum.Text, "## Goal\n- Initially: <task>\n  "+tc.first) {
				t.Errorf("Goal does not start with the task %q:\n%.600s", tc.first, sum.Text)
			}
			for _, h := range []string{"environment_details", "# Current Working Directory", "# Current Time", "TODO LIST RECOMMENDED"} {
				if strings.Contains(sum.Text, h) {
					t.Errorf("summary quotes the extension's %q:\n%s", h, sum.Text)
				}
			}
		})
	}
}
