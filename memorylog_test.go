package compact

import (
	"context"
	"errors"
	"testing"
	"time"
)

// memoryRecorder is a MemoryLog that keeps what it is given.
type memoryRecorder struct {
	recs []MemoryRecord
	err  error
}

func (m *memoryRecorder) Remember(ctx context.Context, rec MemoryRecord) error {
	m.recs = append(m.recs, rec)
	return m.err
}

// TestEngineMemory: every compaction reaches the memory log once it is in
// the session, with what the log needs; a memory log that fails is
// reported and leaves the compaction in place.
func TestEngineMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{{"ok", nil}, {"failing", errors.New("disk full")}} {
		t.Run(tc.name, func(t *testing.T) {
			log := NewSliceLog(splitSession().path()...)
			mem := &memoryRecorder{err: tc.err}
			at := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
			eng := &Engine{Summarizer: &recorder{}, Memory: mem, Now: func() time.Time { return at }}
			res, err := eng.Compact(context.Background(), log, Request{Reason: ReasonThreshold, Session: "s.jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			if len(mem.recs) != 1 {
				t.Fatalf("%d records, want 1", len(mem.recs))
			}
			r := mem.recs[0]
			c := res.Entry.Compaction
			if r.Session != "s.jsonl" || r.EntryID != res.Entry.ID || r.EntryID == "" || r.Reason != ReasonThreshold ||
				r.Summary != c.Summary || r.TokensBefore != res.TokensBefore || r.TokensAfter != res.TokensAfter ||
				r.Summarizer != "test" || !r.Time.Equal(at) || len(r.ModifiedFiles) != 1 {
				t.Errorf("record %+v does not match the compaction %+v", r, res)
			}
			if got := log.Path()[len(log.Path())-1]; got != res.Entry {
				t.Error("the compaction is not the session's leaf")
			}
			if tc.err == nil && res.MemoryErr != nil {
				t.Errorf("MemoryErr %v", res.MemoryErr)
			}
			if tc.err != nil && !errors.Is(res.MemoryErr, tc.err) {
				t.Errorf("MemoryErr %v, want it to wrap %v", res.MemoryErr, tc.err)
			}
		})
	}
	// A manual compaction without a reason is recorded as manual.
	mem := &memoryRecorder{}
	eng := &Engine{Summarizer: &recorder{}, Memory: mem}
	if _, err := eng.Compact(context.Background(), NewSliceLog(splitSession().path()...), Request{}); err != nil {
		t.Fatal(err)
	}
	if len(mem.recs) != 1 || mem.recs[0].Reason != ReasonManual {
		t.Errorf("records %+v", mem.recs)
	}
}
