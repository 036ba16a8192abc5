package decoders

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	goccy "github.com/goccy/go-json"

	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// benchFiles returns the files the benchmarks parse: the two real
// sessions, and the large one named by $COMPACT_BIG_SESSION when set
// (made with internal/cmd/bigsession).
func benchFiles(b *testing.B) []string {
	b.Helper()
	files := sharedtest.PiSessionPaths(b)
	if big := os.Getenv("COMPACT_BIG_SESSION"); big != "" {
		files = append(files, big)
	}
	return files
}

// BenchmarkParse parses a session held in memory with each candidate, as
// session's BenchmarkParse does with the hand decoder: parse and migrate,
// the work pi's parseSessionEntries and migrateSessionEntries do. Beside
// time and allocations it reports live-B, the heap the parsed session
// keeps beyond the file's buffer (measured once, after a GC).
func BenchmarkParse(b *testing.B) {
	for _, p := range benchFiles(b) {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range Candidates() {
			b.Run("file="+filepath.Base(p)+"/decoder="+c.Name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				cpu := startCPU(b)
				for b.Loop() {
					if _, err := session.ParseWith(data, "f.jsonl", session.Options{}, c.Unmarshal); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report()
				b.StopTimer()
				live, err := liveHeap(data, c)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(live), "live-B")
			})
		}
	}
}

// cpuClock measures the CPU time (user and system, all threads, the
// garbage collector's included) a benchmark's loop takes. On a machine
// shared with other work it varies much less than the wall-clock time,
// which also counts the time spent waiting for a core.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuClock { return cpuClock{b, cpuTime(b)} }

// report adds cpu-ns/op to the benchmark's results.
func (c cpuClock) report() {
	c.b.ReportMetric(float64(cpuTime(c.b)-c.start)/float64(c.b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveHeap returns the heap that a session parsed from data keeps, beyond
// data itself.
func liveHeap(data []byte, c Candidate) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := session.ParseWith(data, "f.jsonl", session.Options{}, c.Unmarshal)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	runtime.KeepAlive(data)
	if after.HeapAlloc < before.HeapAlloc {
		return 0, nil
	}
	return after.HeapAlloc - before.HeapAlloc, nil
}

// BenchmarkPeakRSS runs a fresh process per candidate and file that reads
// the file and parses it, and reports the growth of its resident set
// from before the read to the peak (peak-RSS-B) and that growth over the
// file size (peak/file): the memory goal is at most 2. Run it with
// -benchtime 1x.
func BenchmarkPeakRSS(b *testing.B) {
	for _, p := range benchFiles(b) {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		for i, c := range Candidates() {
			b.Run("file="+filepath.Base(p)+"/decoder="+c.Name, func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$", "-test.count=1")
					cmd.Env = append(os.Environ(), "DECODERS_RSS_CHILD="+strconv.Itoa(i)+":"+p)
					out, err := cmd.CombinedOutput()
					if err != nil {
						b.Fatalf("child: %v\n%s", err, out)
					}
					_, v, ok := strings.Cut(string(out), "peak-growth ")
					if !ok {
						b.Fatalf("child printed no peak:\n%s", out)
					}
					n, err := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
					if err != nil {
						b.Fatal(err)
					}
					peak = max(peak, n)
				}
				b.ReportMetric(float64(peak), "peak-RSS-B")
				b.ReportMetric(float64(peak)/float64(st.Size()), "peak/file")
			})
		}
	}
}

// TestPeakRSSChild is the process BenchmarkPeakRSS starts; it does nothing
// unless $DECODERS_RSS_CHILD names a candidate and a file.
func TestPeakRSSChild(t *testing.T) {
	spec := os.Getenv("DECODERS_RSS_CHILD")
	if spec == "" {
		t.Skip("run by BenchmarkPeakRSS")
	}
	is, path, _ := strings.Cut(spec, ":")
	i, err := strconv.Atoi(is)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	base := procStatus(t, "VmRSS")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.ParseWith(data, path, session.Options{}, Candidates()[i].Unmarshal)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(s)
	fmt.Printf("peak-growth %d\n", procStatus(t, "VmHWM")-base)
}

// procStatus returns a field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) uint64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			f := strings.Fields(v) // "1234 kB"
			n, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkParseFloor is BenchmarkParse with a decoder that costs next to
// nothing: each line's wire structs are decoded once, before the timing,
// and each call copies them out. What it measures is everything but the
// JSON decoding (line split, mapping to entries, the scan for extras,
// migration and indexing), a floor that no library used through the wire
// structs can go below.
func BenchmarkParseFloor(b *testing.B) {
	for _, p := range benchFiles(b) {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("file="+filepath.Base(p)+"/decoder=floor", func(b *testing.B) {
			unmarshal := replay()
			if _, err := session.ParseWith(data, "f.jsonl", session.Options{}, unmarshal); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			cpu := startCPU(b)
			for b.Loop() {
				if _, err := session.ParseWith(data, "f.jsonl", session.Options{}, unmarshal); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report()
		})
	}
}

// replay returns an unmarshal function that decodes each line (told apart
// by where it starts in memory, and by the type decoded into) with
// goccy/go-json the first time and replays that result afterwards, as a
// shallow copy. Safe only while the same buffer is parsed again and the
// decoded values are not modified, which holds for ParseWith.
func replay() func([]byte, any) error {
	type key struct {
		at  *byte
		n   int
		typ reflect.Type
	}
	type result struct {
		v   reflect.Value
		err error
	}
	var mu sync.Mutex
	seen := map[key]result{}
	return func(data []byte, v any) error {
		rv := reflect.ValueOf(v)
		k := key{unsafe.SliceData(data), len(data), rv.Type()}
		mu.Lock()
		r, ok := seen[k]
		mu.Unlock()
		if !ok {
			r.v = reflect.New(rv.Type().Elem())
			r.err = goccy.Unmarshal(data, r.v.Interface())
			mu.Lock()
			seen[k] = r
			mu.Unlock()
		}
		rv.Elem().Set(r.v.Elem())
		return r.err
	}
}
