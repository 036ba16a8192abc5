package memlog_test

import (
	"fmt"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/memlog"
)

// Section is what the memory log appends for one compaction.
func ExampleSection() {
	fmt.Print(memlog.Section(compact.MemoryRecord{
		Time:         time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC),
		Session:      "session.jsonl",
		EntryID:      "a1b2c3d4",
		Reason:       compact.ReasonThreshold,
		TokensBefore: 150000,
		TokensAfter:  24000,
		Summarizer:   "extractive",
		Summary:      "## Goal\nPort the parser.\n\n## Next steps\n1. Run the tests.",
		ReadFiles:    []string{"parse.go"},
	}))
	// Output:
	// ## 2026-11-23 09:00:00 UTC · session.jsonl · threshold
	//
	// - tokens: 150000 → 24000
	// - summarizer: extractive
	// - entry: a1b2c3d4
	// - read: `parse.go`
	//
	// ### Goal
	// Port the parser.
	//
	// ### Next steps
	// 1. Run the tests.
}
