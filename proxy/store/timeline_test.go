package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A packed timeline reads back as it was written, in a record too, and
// takes far fewer bytes than the marks as objects.
func TestTimelineRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 30, 0, 123456789, time.UTC)
	var long Timeline
	for i := range MaxRecent {
		long = AppendRecent(long, Mark{At: at.Add(time.Duration(i) * 7 * time.Second), Prompt: 40000 + 2800*i, CacheRead: 39000 + 2800*i,
			Output: 120, Client: 40100 + 2800*i, Applied: i > 20, Compaction: i == 21})
	}
	for _, tt := range []struct {
		name string
		tl   Timeline
	}{
		{"nil", nil},
		{"empty", Timeline{}},
		{"one", Timeline{{At: at, Prompt: 109, Output: 11, Client: 102}}},
		{"flags and a zero time", Timeline{{At: at, Overflow: true}, {Prompt: 5}, {At: at.Add(time.Hour), Applied: true, Compaction: true, Prompt: 1 << 40}}},
		{"out of order and negative", Timeline{{At: at.Add(time.Minute), Prompt: -1}, {At: at, Client: -7}}},
		{"fifty", long},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.tl)
			if err != nil {
				t.Fatal(err)
			}
			var got Timeline
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if len(tt.tl) == 0 && len(got) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.tl) {
				t.Errorf("read back\n%+v\nwant\n%+v", got, tt.tl)
			}
		})
	}
	packed, _ := json.Marshal(long)
	objects, _ := json.Marshal([]Mark(long))
	if len(packed)*4 > len(objects) {
		t.Errorf("50 marks packed in %d bytes, as objects %d: want a quarter or less", len(packed), len(objects))
	}
	t.Logf("50 marks: %d bytes packed, %d as objects", len(packed), len(objects))

	last := LastCall{Model: "m", Recent: long}
	b, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	var back LastCall
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Recent, long) {
		t.Errorf("a last call's timeline does not read back: %v", err)
	}
}

// Records written before the packing hold the marks as objects: they
// read as they were.
func TestTimelineReadsObjects(t *testing.T) {
	old := `{"model":"m","recent":[{"at":"2026-11-27T09:31:00Z","prompt":2893,"cacheRead":100,"output":11,"client":2900,"applied":true},{"at":"2026-11-27T09:31:30Z","prompt":5677,"compaction":true,"overflow":true}]}`
	var last LastCall
	if err := json.Unmarshal([]byte(old), &last); err != nil {
		t.Fatal(err)
	}
	want := Timeline{
		{At: time.Date(2026, 11, 27, 9, 31, 0, 0, time.UTC), Prompt: 2893, CacheRead: 100, Output: 11, Client: 2900, Applied: true},
		{At: time.Date(2026, 11, 27, 9, 31, 30, 0, time.UTC), Prompt: 5677, Compaction: true, Overflow: true},
	}
	if !reflect.DeepEqual(last.Recent, want) {
		t.Errorf("read %+v\nwant %+v", last.Recent, want)
	}
}

// A damaged timeline is an error naming what is wrong, never a panic.
func TestTimelineDamaged(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"!!"`, "illegal base64"},
		{`""`, "unknown packing"},
		{`"Ag"`, "unknown packing"},
		{`"AR8"`, "bad flags"},
		{`"AQAC"`, "cut short"},
		{`"AQACgKjWuQcAAAAA"`, "bad nanoseconds"},
		{`3`, "want a string or an array"},
		{`[{"at":1}]`, ""},
	} {
		var tl Timeline
		err := json.Unmarshal([]byte(tt.in), &tl)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.in, err, tt.want)
		}
		if tt.in[0] == '"' && !errors.Is(err, errTimeline) {
			t.Errorf("%s: %v is not a timeline error", tt.in, err)
		}
	}
}

// FuzzTimeline: whatever the bytes, reading a timeline ends in marks or
// an error, and marks read from a packing pack back to the same marks.
func FuzzTimeline(f *testing.F) {
	b, _ := json.Marshal(Timeline{{At: time.Unix(1800000000, 5).UTC(), Prompt: 3, Applied: true}, {Client: 9}})
	f.Add(b)
	f.Add([]byte(`[{"at":"2026-11-27T09:31:00Z","prompt":1}]`))
	f.Add([]byte(`"AQ"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var tl Timeline
		if err := tl.UnmarshalJSON(in); err != nil {
			return
		}
		out, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		var again Timeline
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%s packs to %s, which does not read: %v", in, out, err)
		}
		for i := range tl {
			tl[i].At = tl[i].At.UTC() // the packing keeps the instant, not the zone
		}
		if len(tl) > 0 && !reflect.DeepEqual(again, tl) {
			t.Fatalf("%s: %+v packs and reads back as %+v", in, tl, again)
		}
	})
}
