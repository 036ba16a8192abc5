package claudecode

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRead reads every test file; the bytes per second are the
// reader's throughput.
func BenchmarkRead(b *testing.B) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	var all [][]byte
	size := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data)
		size += len(data)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for i, data := range all {
			if _, err := Read(data, files[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
