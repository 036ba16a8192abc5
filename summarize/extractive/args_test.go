package extractive

import (
	"encoding/json"
	"testing"
)

func TestArgString(t *testing.T) {
	keys := []string{"path", "file_path", "command"}
	for _, tt := range []struct{ name, args, want string }{
		{"no array", `{"path":" a.go ","x":1}`, "a.go"},
		{"second key", `{"file_path":"b.go"}`, "b.go"},
		{"array elsewhere", `{"old":"a[0]","path":"c.go"}`, "c.go"},
		{"nested array", `{"opts":{"l":[1,{"path":"no"}]},"path":"d.go"}`, "d.go"},
		{"vector", `{"command":["go","test"]}`, "go test"},
		{"vector before string", `{"command":["ls"],"path":"e.go"}`, "e.go"},
		{"blank string, vector", `{"path":"  ","command":["make"]}`, "make"},
		{"empty vector", `{"command":[],"x":[1]}`, ""},
		{"not strings", `{"command":[1,2]}`, ""},
		{"null", `{"path":null,"x":[]}`, ""},
		{"escaped value", `{"path":"a\"b.go","x":[]}`, `a"b.go`},
		{"escaped quote before end", `{"path":"a\\","x":[]}`, `a\`},
		{"escaped key", `{"p\u0061th":"f.go","x":[]}`, "f.go"},
		{"duplicate key", `{"path":"g.go","path":"h.go","x":[]}`, "h.go"},
		{"invalid", `{"path":"i.go","x":[}`, ""},
		{"not an object", `["path"]`, ""},
		{"invalid UTF-8", "{\"path\":\"j\xff.go\",\"x\":[]}", "j\uFFFD.go"},
		{"blanks", " { \"x\" : [ 1 ] , \"path\" : \"k.go\" } ", "k.go"},
		{"empty", ``, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := argString(json.RawMessage(tt.args), keys...); got != tt.want {
				t.Errorf("argString(%s) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}
