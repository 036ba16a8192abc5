package jsontext

import (
	"encoding/json"
	"testing"
)

func TestStringifyLen(t *testing.T) {
	for _, tt := range []struct {
		name, raw string
		want      int
	}{
		// JSON.stringify keeps key order, drops white space, does not escape <>&.
		{"as JavaScript prints it", `{ "z": "<&>", "a" : [1, 2.50, true, null] }`, len(`{"z":"<&>","a":[1,2.5,true,null]}`)},
		{"escapes", `{"t":"line\nnext \"q\" \u00e9 \/"}`, len(`{"t":"line\nnext \"q\" é /"}`) - 1},
		{"utf-16 units", `"é😀"`, 2 + 1 + 2},
		{"empty is null", ``, 4},
		{"blank is null", " \n", 4},
		{"cut short counts its raw length", `{"a":`, len(`{"a":`)},
		{"an invalid escape counts its raw length", `{ "a" : "bad \q escape" }`, len(`{ "a" : "bad \q escape" }`)},
	} {
		if got := StringifyLen([]byte(tt.raw)); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestStringifyLenFastMatchesDecoder(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `{"a":1}`, `{"a":"b","c":[1,2,{"d":null}]}`, ` { "x" : -0.5e3 } `,
		`{"s":"\u0001\u001f\b\t\u2028😀"}`, `{"n":1e21,"m":0.000001,"k":1e-7,"big":12345678901234567890}`,
		`{"pair":"\ud83d\ude00","lone":"\ud800x"}`, `"just a string"`, `true`, `[false,null]`,
	}
	for _, c := range cases {
		fast, ok := stringifyLenFast([]byte(c))
		slow, ok2 := decoderLen([]byte(c))
		if !ok || !ok2 || fast != slow {
			t.Errorf("%s: fast %d (%v), decoder %d (%v)", c, fast, ok, slow, ok2)
		}
	}
}

func TestJSNumber(t *testing.T) {
	for in, want := range map[string]string{
		"1": "1", "2.50": "2.5", "-0": "0", "-0.5e3": "-500", "1e21": "1e+21", "1e-7": "1e-7",
		"0.000001": "0.000001", "12345678901234567890": "12345678901234567000", "x": "x",
	} {
		if got := jsNumber(in); got != want {
			t.Errorf("jsNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

func FuzzStringifyLen(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `[1,2.0,"\u00e9"]`, `{"x":{"y":[true,false,null]}}`, `"\ud83d\ude00"`,
		`{"long":"abcdefghijklmnop\"qrstuvwxyz\\u00e9abcdefgh\nxyz0123456789é😀0123456789\u0007tail"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			StringifyLen([]byte(s)) // must not panic
			return
		}
		fast, ok := stringifyLenFast([]byte(s))
		slow, ok2 := decoderLen([]byte(s))
		if ok && ok2 && fast != slow {
			t.Fatalf("%q: fast %d, decoder %d", s, fast, slow)
		}
	})
}
