package compact

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Append gives an entry without an id the next free one of the form
// "m1", "m2", ...: it steps over ids of that form given from outside,
// whether at NewSliceLog or by an earlier Append, and refuses a repeated id.
func TestMemoryGeneratedIDs(t *testing.T) {
	ctx := context.Background()
	msg := func() *Message { return TextMessage(RoleUser, "hi") }
	cases := []struct {
		name  string
		base  []string // ids given to NewSliceLog
		given string   // an id appended before the generated ones
		want  []string // the ids of the next three appends without one
	}{
		{"empty", nil, "", []string{"m1", "m2", "m3"}},
		{"other form", []string{"a", "b7"}, "x", []string{"m1", "m2", "m3"}},
		{"taken at start", []string{"m1", "m2"}, "", []string{"m3", "m4", "m5"}},
		{"taken by an append", []string{"a"}, "m2", []string{"m1", "m3", "m4"}},
		{"leading zero is another id", nil, "m01", []string{"m1", "m2", "m3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base []*Entry
			parent := ""
			for _, id := range c.base {
				base = append(base, &Entry{ID: id, ParentID: parent, Kind: KindMessage, Message: msg()})
				parent = id
			}
			m := NewSliceLog(base...)
			if c.given != "" {
				if err := m.Append(ctx, &Entry{ID: c.given, Kind: KindMessage, Message: msg()}); err != nil {
					t.Fatal(err)
				}
				if err := m.Append(ctx, &Entry{ID: c.given, Kind: KindMessage, Message: msg()}); err == nil {
					t.Fatalf("a second entry %q was accepted", c.given)
				}
			}
			for _, want := range c.want {
				e, err := m.AppendMessage(ctx, msg())
				if err != nil {
					t.Fatal(err)
				}
				if e.ID != want {
					t.Errorf("generated id %q, want %q", e.ID, want)
				}
			}
			if p := m.Path(); len(p) != len(c.base)+len(c.want)+min(len(c.given), 1) {
				t.Errorf("path of %d entries, want every entry on one branch", len(p))
			}
			// Generated ids are found like the others.
			if err := m.Branch(c.want[0]); err != nil {
				t.Fatal(err)
			}
			e, err := m.AppendMessage(ctx, msg())
			if err != nil {
				t.Fatal(err)
			}
			if e.ParentID != c.want[0] {
				t.Errorf("after Branch(%q), parent %q", c.want[0], e.ParentID)
			}
			if err := m.Branch("m999"); !errors.Is(err, ErrNoEntry) {
				t.Errorf("Branch to an unknown generated id: %v, want ErrNoEntry", err)
			}
			if err := m.Append(ctx, &Entry{ID: c.want[1], Kind: KindMessage, Message: msg()}); err == nil {
				t.Errorf("an entry named %q like a generated one was accepted", c.want[1])
			}
		})
	}
}

// TestStamperMatchesRFC3339Nano: the stamper writes what
// time.RFC3339Nano writes, for whole seconds and every fraction width.
func TestStamperMatchesRFC3339Nano(t *testing.T) {
	var s stamper
	for i := 0; i < 2000; i++ {
		before := time.Now().UTC()
		got := s.now()
		ts, err := time.Parse(time.RFC3339Nano, got)
		if err != nil || ts.Before(before.Truncate(time.Second)) || ts.Format(time.RFC3339Nano) != got {
			t.Fatalf("stamp %q: parse %v, round trip %q", got, err, ts.Format(time.RFC3339Nano))
		}
	}
	for _, ns := range []int{0, 1, 10, 120000000, 999999999, 500} {
		tm := time.Date(2026, 11, 27, 17, 0, 0, ns, time.UTC)
		var st stamper
		st.sec, st.prefix = tm.Unix(), tm.AppendFormat(nil, "2006-01-02T15:04:05")
		if got, want := st.format(tm), tm.Format(time.RFC3339Nano); got != want {
			t.Errorf("%d ns: %q, want %q", ns, got, want)
		}
	}
}
