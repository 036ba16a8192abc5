package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// Migrate of a copy of each fixture writes a version 3 file that reads
// back to the same entries, ids, parent links, kept ids and context; a
// second Migrate is a no-op.
func TestMigrateFixtures(t *testing.T) {
	sharedtest.EachPiSession(t, func(t *testing.T, name string) {
		p := copyFixture(t, name)
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
		s := mustOpen(t, p, Options{})
		before := takeSnapshot(t, s)
		rewrote, err := s.Migrate()
		if err != nil || !rewrote {
			t.Fatalf("Migrate = %v, %v", rewrote, err)
		}
		if s.NeedsMigration() || s.Header().Version != CurrentVersion {
			t.Errorf("after Migrate the session is version %d", s.Header().Version)
		}
		if got := takeSnapshot(t, s); !reflect.DeepEqual(got, before) {
			t.Error("the migrated session in memory differs from the original")
		}
		again := mustOpen(t, p, Options{})
		if again.Header().Version != 3 || again.NeedsMigration() {
			t.Errorf("re-read header version %d", again.Header().Version)
		}
		after := takeSnapshot(t, again)
		if !reflect.DeepEqual(after.IDs, before.IDs) || !reflect.DeepEqual(after.Parents, before.Parents) ||
			!reflect.DeepEqual(after.FirstKept, before.FirstKept) || !reflect.DeepEqual(after.Kinds, before.Kinds) {
			t.Fatal("ids, parents, kinds or kept ids changed in the migrated file")
		}
		if !reflect.DeepEqual(after.ContextIDs, before.ContextIDs) || !reflect.DeepEqual(after.Context, before.Context) ||
			after.Model != before.Model || after.Thinking != before.Thinking {
			t.Error("the context at the leaf changed")
		}
		for _, l := range fileLines(t, p)[1:] {
			if strings.Contains(l, `"firstKeptEntryIndex"`) {
				t.Errorf("a migrated line still has firstKeptEntryIndex: %.120s", l)
			}
		}
		st, _ := os.Stat(p)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want the original 0600", st.Mode().Perm())
		}
		if dir, _ := os.ReadDir(filepath.Dir(p)); len(dir) != 1 {
			t.Errorf("%d files in the directory, want 1 (temporary file left?)", len(dir))
		}

		// Migrating the version 3 file changes nothing.
		migrated := readFile(t, p)
		rewrote, err = again.Migrate()
		if err != nil || rewrote {
			t.Errorf("second Migrate = %v, %v; want a no-op", rewrote, err)
		}
		if !bytes.Equal(readFile(t, p), migrated) {
			t.Error("the no-op Migrate changed the file")
		}
	})
}

// Migrate refuses when rewriting would lose lines or entries written by
// someone else since the file was read, and leaves the file alone.
func TestMigrateRefuses(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		opts   Options
		modify string // appended to the file after Open
		want   string
	}{
		{"skipped line", v1Header + "\n" + v1MsgLine("user", "a") + "\n" + `{"no":"type"}` + "\n", Options{Lenient: true}, "", "malformed line"},
		{"torn line", v1Header + "\n" + v1MsgLine("user", "a") + "\n" + `{"type":"mess`, Options{}, "", "incomplete line 3"},
		{"changed since read", v1Header + "\n" + v1MsgLine("user", "a") + "\n", Options{}, v1MsgLine("assistant", "b") + "\n", "changed since it was read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeRaw(t, c.data)
			s := mustOpen(t, p, c.opts)
			if c.modify != "" {
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(c.modify)
				f.Close()
			}
			want := readFile(t, p)
			rewrote, err := s.Migrate()
			if err == nil || rewrote || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Migrate = %v, %v; want a refusal mentioning %q", rewrote, err, c.want)
			}
			if !bytes.Equal(readFile(t, p), want) {
				t.Error("the refused Migrate changed the file")
			}
			if dir, _ := os.ReadDir(filepath.Dir(p)); len(dir) != 1 {
				t.Errorf("%d files in the directory, want 1", len(dir))
			}
		})
	}
	t.Run("not from a file", func(t *testing.T) {
		s, err := Read(strings.NewReader(v1Header+"\n"), "mem", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Migrate(); err == nil {
			t.Error("Migrate of a session read from a reader succeeded")
		}
	})
}

// Round trip over every line of both fixtures: each written line, as
// JSON, equals the line read plus only the id and parentId migration
// added, with firstKeptEntryId in place of firstKeptEntryIndex.
func TestRoundTripFixtures(t *testing.T) {
	sharedtest.EachPiSession(t, func(t *testing.T, name string) {
		p := fixture(t, name)
		s := mustOpen(t, p, Options{})
		var out bytes.Buffer
		n, err := s.WriteTo(&out)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(out.Len()) {
			t.Errorf("WriteTo returned %d, wrote %d", n, out.Len())
		}
		in := fileLines(t, p)
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(got) != len(in) {
			t.Fatalf("%d lines written, %d read", len(got), len(in))
		}
		entries := s.Entries()
		for i := range in {
			want := canonical(t, []byte(in[i]))
			have := canonical(t, []byte(got[i]))
			if i == 0 {
				want["version"] = json.Number("3")
			} else {
				e := entries[i-1]
				var parent any
				if e.ParentID != "" {
					parent = e.ParentID
				}
				want["id"], want["parentId"] = e.ID, parent
				if idx, ok := want["firstKeptEntryIndex"]; ok {
					delete(want, "firstKeptEntryIndex")
					k, _ := idx.(json.Number).Int64()
					want["firstKeptEntryId"] = entries[k-1].ID
				}
			}
			if !reflect.DeepEqual(have, want) {
				t.Fatalf("line %d differs:\n got %.300s\nwant %.300s", i+1, got[i], in[i])
			}
		}
	})
}

// A version 3 file with unknown entry types and unknown fields at every
// level, in any key order and spacing, is written back byte for byte.
func TestRoundTripV3Identical(t *testing.T) {
	data := strings.Join([]string{
		`{"type":"session","version":3,"id":"s3","timestamp":"t","cwd":"/p","parentSession":"/x.jsonl","futureHeaderField":{"a":[1,2]}}`,
		`{"type":"message","id":"00000001","parentId":null,"timestamp":"t","extraTop":true,"message":{"role":"user","content":[{"type":"text","text":"hi","cache":{"ttl":5}}],"timestamp":1,"novel":[null]}}`,
		`{ "message" : {"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{"path":"a.go"},"partialJson":"{"},{"type":"redacted_thinking","data":"xyz"}],"api":"x","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"toolUse","timestamp":2} , "parentId":"00000001","id":"00000002","type":"message","timestamp":"t"}`,
		`{"type":"brand_new_kind","id":"00000003","parentId":"00000002","timestamp":"t","payload":{"deep":{"deeper":["x"]}},"summary":{"not":"text"}}`,
		`{"type":"compaction","id":"00000004","parentId":"00000003","timestamp":"t","summary":"s","firstKeptEntryId":"00000002","firstKeptEntryIndex":2,"tokensBefore":10,"details":{"readFiles":["a.go"],"modifiedFiles":[],"artifact":{"k":1}},"fromHook":true}`,
		`{"type":"message","id":"00000005","parentId":"00000004","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"kept as stored in v3","display":false}}`,
		`{"type":"custom","id":"00000006","parentId":"00000005","timestamp":"t","customType":"ext","data":{"state":[1,2,3]}}`,
		`{"type":"custom_message","id":"00000007","parentId":"00000006","timestamp":"t","customType":"ext","content":[{"type":"text","text":"injected"}],"display":false,"details":{"d":1}}`,
		`{"type":"label","id":"00000008","parentId":"00000007","timestamp":"t","targetId":"00000001","label":"start"}`,
		`{"type":"session_info","id":"00000009","parentId":"00000008","timestamp":"t","name":"named","color":"blue"}`,
		`{"type":"branch_summary","id":"0000000a","parentId":"00000002","timestamp":"t","fromId":"00000009","summary":"b","details":{},"fromHook":false}`,
	}, "\n") + "\n"
	p := writeRaw(t, data)
	s := mustOpen(t, p, Options{})
	if len(s.Entries()) != 10 {
		t.Fatalf("%d entries", len(s.Entries()))
	}
	var out bytes.Buffer
	if _, err := s.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != data {
		t.Errorf("WriteTo changed a version 3 file:\n got %s\nwant %s", out.String(), data)
	}
	// A header from a newer pi is not turned into version 3 either.
	future := strings.Replace(data, `"version":3`, `"version":4`, 1)
	s = mustOpen(t, writeRaw(t, future), Options{})
	out.Reset()
	if _, err := s.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != future {
		t.Errorf("WriteTo changed a version 4 file:\n%s", out.String())
	}
	if rewrote, err := s.Migrate(); rewrote || err != nil {
		t.Errorf("Migrate of a version 4 file = %v, %v", rewrote, err)
	}
}

// oddKeyInputs are files whose migration must patch members that appear
// twice, or also under another case (Go decoders match names regardless
// of case, and take the last of repeated members, as pi's JSON.parse
// does).
var oddKeyInputs = []struct{ name, data string }{
	{"repeated parentId", v1Header + "\n" +
		`{"type":"message","parentId":null,"parentId":null,"message":{"role":"user","content":"a"}}` + "\n" +
		`{"type":"message","parentId":null,"parentId":null,"message":{"role":"user","content":"b"}}` + "\n"},
	{"repeated empty id", v1Header + "\n" + `{"type":"message","id":"","id":"","message":{"role":"user","content":"a"}}` + "\n"},
	{"repeated version", `{"type":"session","version":1,"id":"x","version":1}` + "\n" + v1MsgLine("user", "a") + "\n"},
	{"repeated role", `{"type":"session","version":2,"id":"x"}` + "\n" +
		`{"type":"message","id":"1","parentId":null,"message":{"role":"hookMessage","role":"hookMessage","content":"a"}}` + "\n"},
	{"id in capitals", v1Header + "\n" + `{"type":"message","ID":"","message":{"role":"user","content":"a"}}` + "\n"},
	{"parentId in another case", v1Header + "\n" + v1MsgLine("user", "a") + "\n" +
		`{"type":"message","ParentID":null,"message":{"role":"user","content":"b"}}` + "\n"},
	{"role in capitals", `{"type":"session","version":2,"id":"x"}` + "\n" +
		`{"type":"message","id":"1","parentId":null,"message":{"Role":"hookMessage","content":"a"}}` + "\n"},
	{"version in capitals", `{"type":"session","VERSION":1,"id":"x"}` + "\n" + v1MsgLine("user", "a") + "\n"},
	{"name that is not UTF-8", `{"type":"session","id":"0"}` + "\n" + `{"type":"message","message":{"` + "\xa1" + `":"","role":"hookMessage"}}` + "\n"},
	{"escaped names", v1Header + "\n" + `{"type":"message","\u0074imestamp":"t","message":{"role":"user","content":"a","x\"y":1,"\ud83d\ude00":2}}` + "\n"},
	{"kept index twice", v1Header + "\n" + v1MsgLine("user", "a") + "\n" + v1MsgLine("user", "b") + "\n" +
		`{"type":"compaction","summary":"s","firstKeptEntryIndex":1,"firstKeptEntryIndex":2,"FirstKeptEntryId":"zz","tokensBefore":1}` + "\n"},
}

// Migration patches such members so that the written file reads back
// with the same ids, parents and kept ids (the fuzz target's property).
func TestMigrateOddKeys(t *testing.T) {
	for _, c := range oddKeyInputs {
		t.Run(c.name, func(t *testing.T) {
			s, err := Read(strings.NewReader(c.data), "odd", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !s.NeedsMigration() {
				t.Fatal("the input needs no migration; the case tests nothing")
			}
			checkRead(t, []byte(c.data), false)
		})
	}
}
