package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzOpenRecord: OpenRecord never panics; with a key it returns a value
// only when that value was sealed with the key under the name, and then
// returns exactly the sealed bytes.
func FuzzOpenRecord(f *testing.F) {
	key := []byte("fuzz-record-key-0123456789")
	f.Add([]byte(`{"checkpoints":[]}`), "c:1", 0, byte(0))
	f.Add(SealRecord(key, "c:1", []byte(`{"last":{}}`)), "c:1", 10, byte(1))
	f.Add([]byte("cmac1:"), "c:1", 0, byte(0))
	f.Add([]byte("cmac1:zz\n{}"), "c:2", 3, byte(7))
	f.Fuzz(func(t *testing.T, val []byte, name string, at int, flip byte) {
		// Arbitrary stored bytes, with and without a key.
		if got, err := OpenRecord(key, name, val); err == nil {
			if !bytes.Equal(SealRecord(key, name, got), val) {
				t.Fatalf("accepted %q, which is not a seal of what it returned", val)
			}
		} else if !errors.Is(err, ErrUnauthenticated) || !errors.Is(err, ErrNotFound) {
			t.Fatalf("error %v does not wrap ErrUnauthenticated and ErrNotFound", err)
		}
		_, _ = OpenRecord(nil, name, val)

		// A sealed value round-trips; altered, it is refused.
		sealed := SealRecord(key, name, val)
		got, err := OpenRecord(key, name, sealed)
		if err != nil || !bytes.Equal(got, val) {
			t.Fatalf("round trip: %q, %v", got, err)
		}
		if got, err := OpenRecord(nil, name, sealed); err != nil || !bytes.Equal(got, val) {
			t.Fatalf("without the key: %q, %v", got, err)
		}
		if flip != 0 && len(sealed) > 0 {
			if at < 0 {
				at = -at
			}
			altered := bytes.Clone(sealed)
			altered[at%len(altered)] ^= flip
			if _, err := OpenRecord(key, name, altered); err == nil {
				t.Fatalf("an altered record was accepted (byte %d)", at%len(altered))
			}
		}
		if _, err := OpenRecord(key, name+"x", sealed); err == nil {
			t.Fatal("a record moved to another name was accepted")
		}
	})
}

// EncodeRecord and EncodeLast refuse a bad key and a nil value, and what
// they return opens under the same seal key and name (the store key, or
// LastName of it) to the value's JSON, and under no other name.
func TestEncodeRecord(t *testing.T) {
	sealKey := []byte("0123456789abcdef0123456789abcdef")
	rec := &Record{Checkpoints: []Checkpoint{{Covered: 3, Chain: "ab"}}}
	last := &LastCall{Units: 4, Chain: "cd"}
	for _, tc := range []struct {
		name   string
		encode func(key string, nilValue bool) ([]byte, error)
		value  any
		seal   func(key string) string // the name the value is sealed under
	}{
		{"record", func(key string, nilValue bool) ([]byte, error) {
			if nilValue {
				return EncodeRecord(sealKey, key, nil)
			}
			return EncodeRecord(sealKey, key, rec)
		}, rec, func(key string) string { return key }},
		{"last call", func(key string, nilValue bool) ([]byte, error) {
			if nilValue {
				return EncodeLast(sealKey, key, nil)
			}
			return EncodeLast(sealKey, key, last)
		}, last, LastName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.encode("Bad Key", false); err == nil {
				t.Error("a key outside [0-9a-z:] was accepted")
			}
			if _, err := tc.encode("k1", true); err == nil {
				t.Error("a nil value was accepted")
			}
			b, err := tc.encode("k1", false)
			if err != nil {
				t.Fatal(err)
			}
			val, err := OpenRecord(sealKey, tc.seal("k1"), b)
			if err != nil {
				t.Fatalf("OpenRecord: %v", err)
			}
			want, _ := json.Marshal(tc.value)
			if string(val) != string(want) {
				t.Errorf("opened %s, want %s", val, want)
			}
			for _, other := range []string{tc.seal("k2"), "k1", LastName("k1")} {
				if other == tc.seal("k1") {
					continue
				}
				if _, err := OpenRecord(sealKey, other, b); !errors.Is(err, ErrUnauthenticated) {
					t.Errorf("opened under the name %q: %v, want ErrUnauthenticated", other, err)
				}
			}
		})
	}
}
