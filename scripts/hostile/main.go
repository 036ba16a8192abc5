// Command hostile drives a built "compact proxy" with hostile traffic and
// prints what it cost the proxy process: peak RSS (VmHWM from
// /proc/<pid>/status), open descriptors and the status codes the clients
// got. It starts its own fake upstream on loopback and the proxy as a child
// process; nothing leaves the machine. scripts/hostile.sh builds and runs
// it.
//
// The phases:
//
//	flood    -n concurrent bodies of -mb MiB each (one Anthropic
//	         conversation of many large messages per body; with -gzip
//	         each is sent compressed to a few KiB)
//	tiny     one body of -tiny tiny messages
//	trickle  -slow connections that send their body one byte a second
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("compact", "./compact", "path of the built compact binary")
	n := flag.Int("n", 40, "concurrent large bodies")
	mb := flag.Int("mb", 30, "size of each large body, MiB")
	tiny := flag.Int("tiny", 1000000, "messages in the tiny-messages body")
	slow := flag.Int("slow", 1000, "trickling connections")
	bodyTimeout := flag.Duration("body-timeout", 10*time.Second, "the proxy's --body-timeout; 0 passes none (for builds without it)")
	delay := flag.Duration("upstream-delay", time.Second, "how long the fake upstream takes to answer a model request")
	extra := flag.String("proxy-args", "", "more arguments for compact proxy, space separated")
	gz := flag.Bool("gzip", false, "send the large bodies gzip-compressed (a few KiB each that decode to -mb MiB)")
	flag.Parse()
	if err := run(*bin, *n, *mb, *tiny, *slow, *gz, *bodyTimeout, *delay, strings.Fields(*extra)); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

func run(bin string, n, mb, tiny, slow int, gz bool, bodyTimeout, delay time.Duration, extra []string) error {
	var upstreamCalls atomic.Int64
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		upstreamCalls.Add(1)
		if !bytes.Contains(b, []byte("summar")) {
			// A model request (not a summary) takes a provider's time.
			time.Sleep(delay)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"## Goal\nsummary"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":5}}`)
	})}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go up.Serve(uln)
	defer up.Close()

	args := []string{"proxy", "--listen", "127.0.0.1:0", "--store", "memory",
		"--anthropic-upstream", "http://" + uln.Addr().String(), "--window", "200000"}
	if bodyTimeout > 0 {
		args = append(args, "--body-timeout", bodyTimeout.String())
	} else {
		// A proxy without the flag (an older build): wait as long as the
		// default would.
		bodyTimeout = 2 * time.Minute
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("proxy did not start: %w", err)
	}
	base := strings.TrimSpace(strings.TrimPrefix(line, "compact proxy listening on "))
	pid := cmd.Process.Pid
	fmt.Printf("proxy pid %d at %s: compact %s\n", pid, base, strings.Join(args, " "))
	fmt.Printf("idle: VmHWM %s, fds %d\n", vm(pid, "VmHWM"), fds(pid))

	client := &http.Client{Timeout: 10 * time.Minute}
	post := func(body []byte, enc string) (int, time.Duration) {
		req, _ := http.NewRequest("POST", base+"/v1/messages", bytes.NewReader(body))
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		req.Header.Set("X-Api-Key", "sk-ant-hostile-test")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, time.Since(start)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}

	// flood
	if n > 0 {
		body, enc, kind := bigBody(mb<<20), "", ""
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(body)
			_ = zw.Close()
			body, enc, kind = buf.Bytes(), "gzip", fmt.Sprintf(" (gzip, %d KiB each)", buf.Len()>>10)
		}
		before := upstreamCalls.Load()
		codes := newCounter()
		var wg sync.WaitGroup
		start := time.Now()
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, _ := post(body, enc)
				codes.add(code)
			}()
		}
		wg.Wait()
		fmt.Printf("flood: %d × %d MiB%s in %s: status %s, %d upstream calls (summaries included); VmHWM %s\n",
			n, mb, kind, time.Since(start).Round(time.Millisecond), codes, upstreamCalls.Load()-before, vm(pid, "VmHWM"))
	}

	// tiny
	if tiny > 0 {
		before := upstreamCalls.Load()
		code, took := post(tinyBody(tiny), "")
		fmt.Printf("tiny: one body of %d messages: status %d in %s, %d upstream calls (summaries included); VmHWM %s\n",
			tiny, code, took.Round(time.Millisecond), upstreamCalls.Load()-before, vm(pid, "VmHWM"))
	}

	// trickle
	if slow > 0 {
		host := strings.TrimPrefix(base, "http://")
		codes := newCounter()
		var wg sync.WaitGroup
		start := time.Now()
		var opened atomic.Int64
		for range slow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.Dial("tcp", host)
				if err != nil {
					codes.add(-1)
					return
				}
				defer c.Close()
				opened.Add(1)
				fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Api-Key: sk-ant-hostile-test\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
				_ = c.SetDeadline(time.Now().Add(bodyTimeout + time.Minute))
				done := make(chan struct{})
				go func() {
					t := time.NewTicker(time.Second)
					defer t.Stop()
					for {
						select {
						case <-done:
							return
						case <-t.C:
							if _, err := c.Write([]byte(" ")); err != nil {
								return
							}
						}
					}
				}()
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				close(done)
				if err != nil {
					codes.add(0)
					return
				}
				resp.Body.Close()
				codes.add(resp.StatusCode)
			}()
		}
		time.Sleep(bodyTimeout / 2)
		held := fds(pid)
		wg.Wait()
		time.Sleep(500 * time.Millisecond)
		fmt.Printf("trickle: %d connections at 1 byte/s: proxy fds %d while trickling, %d after %s; status %s\n",
			opened.Load(), held, fds(pid), time.Since(start).Round(time.Second), codes)
	}
	fmt.Printf("peak RSS of the proxy (VmHWM): %s\n", vm(pid, "VmHWM"))
	return nil
}

// bigBody is an Anthropic request of about size bytes: alternating user
// and assistant messages of 32 KiB.
func bigBody(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[`)
	text := strings.Repeat("all work and no play makes a dull log line ", 32<<10/43)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":"%d %s"}`, role, i, text)
	}
	b.WriteString(`,{"role":"user","content":"go on"}]}`)
	return b.Bytes()
}

// tinyBody is an Anthropic request of n tiny messages.
func tinyBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":"m%d"}`, role, i)
	}
	if n%2 == 0 {
		b.WriteString(`,{"role":"user","content":"go on"}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// vm returns a field of /proc/pid/status ("VmHWM"), "?" when unreadable.
func vm(pid int, field string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

// fds counts the open descriptors of pid, -1 when unreadable.
func fds(pid int) int {
	e, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return -1
	}
	return len(e)
}

// counter counts status codes (0: no answer, -1: could not connect).
type counter struct {
	mu sync.Mutex
	m  map[int]int
}

func newCounter() *counter { return &counter{m: map[int]int{}} }

func (c *counter) add(code int) {
	c.mu.Lock()
	c.m[code]++
	c.mu.Unlock()
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []int
	for k := range c.m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", c.m[k], k))
	}
	return strings.Join(parts, " ")
}
