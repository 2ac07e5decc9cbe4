package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
	"github.com/cachekit/cachekit/internal/leaktest"
)

// checkLeaks fails the test if goroutines started during it are still
// running once it and its cleanups are over (see leaktest.Check). The
// package's other test files call it too.
var checkLeaks = leaktest.Check

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runServe starts serveContext with args (lookup answers for the
// environment; nil: an empty one) and waits until it listens. It returns
// the address, the server's logs, and stop, which stops the server as
// SIGTERM would and returns its exit code. If serve exits before it
// listens, addr is "" and stop returns that exit code.
func runServe(t *testing.T, args []string, lookup func(string) (string, bool)) (addr string, logs *syncBuffer, stop func() int) {
	t.Helper()
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	addrc := make(chan string, 1)
	serveListening = func(addr string) { addrc <- addr }
	defer func() { serveListening = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- serveContext(ctx, args, lookup, logs) }()
	select {
	case addr = <-addrc:
		return addr, logs, func() int { cancel(); return <-done }
	case code := <-done:
		cancel()
		return "", logs, func() int { return code }
	}
}

// TestServeAndLoad runs cachekit serve (configured by a flag and an
// environment variable) and cachekit load against it, then stops the
// server as SIGTERM would.
func TestServeAndLoad(t *testing.T) {
	checkLeaks(t)
	env := map[string]string{"CACHEKIT_MAX_BYTES": "4MiB", "CACHEKIT_ADDR": "127.0.0.1:1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-value-bytes", "64KiB", "--log-format", "json"}, lookup)
	if addr == "" {
		t.Fatalf("serve exited with %d:\n%s", stop(), logs.String())
	}
	for _, want := range []string{`"max-bytes":"4MiB"`, `"addr":"127.0.0.1:0"`, `"max-value-bytes":"64KiB"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the configuration log lacks %s:\n%s", want, logs.String())
		}
	}

	var out, errOut bytes.Buffer
	code := loadContext(context.Background(), []string{"--url", "http://" + addr, "--requests", "1000", "--concurrency", "4",
		"--write-ratio", "0.5", "--ryw", "--value-size", "450", "--cardinality", "100", "--seed", "5", "--json", "-"}, &out, &errOut, false)
	if code != 0 {
		t.Fatalf("load exited with %d: %s", code, errOut.String())
	}
	var rep load.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if rep.Requests != 1000 || rep.Errors != 0 || rep.RYW.Checks != rep.Writes || rep.RYW.Missing+rep.RYW.Mismatch+rep.RYW.Errors != 0 {
		t.Errorf("report: %s", out.String())
	}

	// Plain GETs of any URL, text report.
	out.Reset()
	if code := loadContext(context.Background(), []string{"--mode", "get", "--requests", "50", "http://" + addr + "/healthz"}, &out, &errOut, false); code != 0 {
		t.Fatalf("load --mode get exited with %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "requests     50 ") || !strings.Contains(out.String(), "errors       0") {
		t.Errorf("report:\n%s", out.String())
	}

	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d after the signal:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Errorf("no graceful stop in the logs:\n%s", logs.String())
	}
}

func TestServeBadConfiguration(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{args: []string{"--max-bytes", "lots"}},
		{args: []string{"--max-bytes", "1MiB"}, env: map[string]string{"CACHEKIT_DEFAULT_TTL": "soon"}},
		{args: []string{"--log-level", "loud"}},
		{args: []string{"--log-format", "xml"}},
		{args: []string{"extra"}},
	} {
		var errOut bytes.Buffer
		lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		if code := serveContext(context.Background(), tc.args, lookup, &errOut); code != 2 {
			t.Errorf("%v %v: exit %d, want 2", tc.args, tc.env, code)
		}
	}
	// Valid flags the service refuses: exit 1 with the reason.
	var errOut bytes.Buffer
	code := serveContext(context.Background(), []string{"--addr", "127.0.0.1:0", "--max-value-bytes", "1GiB", "--max-bytes", "1MiB"},
		func(string) (string, bool) { return "", false }, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "max-value-bytes") {
		t.Errorf("exit %d, %s", code, errOut.String())
	}
}

func TestLoadBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--url", "http://x", "--write-ratio", "2"},
		{"--url", "http://x", "extra"},
		{"--bogus"},
	} {
		var out, errOut bytes.Buffer
		if code := loadContext(context.Background(), args, &out, &errOut, false); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// Without --max-value-bytes, serve starts with any budget and any number
// of cores: the server's default value limit (1 MiB) gets shards large
// enough for it (the store's default number of shards grows with
// GOMAXPROCS; at 64 MiB and 2 cores it gives 512 KiB shards), and a budget
// too small for it lowers it, with a warning.
func TestServeDefaultValueLimit(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		maxBytes, warn string
	}{
		{"64MiB", ""},
		{"1MiB", `"msg":"cachekit serve: max-value-bytes lowered to fit max-bytes","max-value-bytes":"512KiB"`},
	} {
		addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", tc.maxBytes, "--log-format", "json"}, nil)
		if addr == "" {
			t.Fatalf("--max-bytes %s: serve exited with %d:\n%s", tc.maxBytes, stop(), logs.String())
		}
		if code := stop(); code != 0 {
			t.Errorf("--max-bytes %s: exit %d", tc.maxBytes, code)
		}
		lowered := strings.Contains(logs.String(), "lowered")
		if tc.warn != "" && !strings.Contains(logs.String(), tc.warn) || tc.warn == "" && lowered {
			t.Errorf("--max-bytes %s: logs:\n%s", tc.maxBytes, logs.String())
		}
	}
}

// A password in the --redis URL never reaches the logs: the configuration
// log prints the URL redacted.
func TestServeRedisPasswordNotLogged(t *testing.T) {
	checkLeaks(t)
	closed := closedAddr(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json",
		"--redis", "redis://user:s3cret-pw@" + closed, "--redis-timeout", "50ms"}, nil)
	if addr == "" {
		t.Fatalf("serve exited with %d:\n%s", stop(), logs.String())
	}
	stop()
	if strings.Contains(logs.String(), "s3cret") || !strings.Contains(logs.String(), "redis://user:xxxxx@") {
		t.Errorf("the logs show the password, or not the redacted URL:\n%s", logs.String())
	}
	if code := serveContext(context.Background(), []string{"--redis", "redis://user:s3cret-pw@[::1"},
		func(string) (string, bool) { return "", false }, logs); code == 0 || strings.Contains(logs.String(), "s3cret") {
		t.Errorf("an unparsable URL: exit %d, logs:\n%s", code, logs.String())
	}
}

// --redis URLs whose parts the tier would drop are refused at start.
func TestServeRedisURLRefused(t *testing.T) {
	for _, u := range []string{"unix:///tmp/redis.sock", "redis://127.0.0.1:1/0?dial_timeout=1s", "redis://127.0.0.1:1/3"} {
		args := []string{"--addr", "127.0.0.1:0", "--redis", u}
		if strings.HasSuffix(u, "/3") {
			args = append(args, "--redis-cluster")
		}
		var logs syncBuffer
		if code := serveContext(context.Background(), args, func(string) (string, bool) { return "", false }, &logs); code != 1 {
			t.Errorf("--redis %s: exit %d; want 1\n%s", u, code, logs.String())
		}
	}
}

// closedAddr returns a loopback address nothing listens on (a port just
// freed).
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
