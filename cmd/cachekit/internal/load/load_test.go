package load

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/internal/leaktest"
)

// checkLeaks fails the test if goroutines started during it are still
// running once it and its cleanups are over (see leaktest.Check). The
// package's other test files call it too.
var checkLeaks = leaktest.Check

// apiServer is a minimal in-memory implementation of the service API,
// with request counters and switchable faults.
type apiServer struct {
	mu      sync.Mutex
	entries map[string][]byte
	gets    atomic.Int64
	posts   atomic.Int64
	puts    atomic.Int64
	// Faults.
	staleReads  bool // GET returns a value that was never written
	forgetWrite bool // writes are acknowledged and dropped
	keepFirst   bool // writes of a key already there are acknowledged and dropped
}

func newAPIServer(t *testing.T) (*apiServer, *httptest.Server) {
	s := &apiServer{entries: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/entries/{key}", func(w http.ResponseWriter, r *http.Request) {
		s.gets.Add(1)
		s.mu.Lock()
		v, ok := s.entries[r.PathValue("key")]
		s.mu.Unlock()
		switch {
		case !ok:
			http.NotFound(w, r)
		case s.staleReads:
			w.Write([]byte(`{"seq":0}`))
		default:
			w.Write(v)
		}
	})
	mux.HandleFunc("PUT /v1/entries/{key}", func(w http.ResponseWriter, r *http.Request) {
		s.puts.Add(1)
		v, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.store(r.PathValue("key"), v)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/entries", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		if r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want JSON", http.StatusUnsupportedMediaType)
			return
		}
		type msg struct {
			ID    string          `json:"id"`
			Entry json.RawMessage `json:"entry"`
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msgs []msg
		if bytes.HasPrefix(body, []byte("[")) {
			err = json.Unmarshal(body, &msgs)
		} else {
			msgs = make([]msg, 1)
			err = json.Unmarshal(body, &msgs[0])
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, m := range msgs {
			s.store(m.ID, m.Entry)
		}
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *apiServer) store(key string, v []byte) {
	if s.forgetWrite {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[key]; ok && s.keepFirst {
		return
	}
	s.entries[key] = v
}

func TestCountsAndReadYourWrites(t *testing.T) {
	checkLeaks(t)
	for _, method := range []string{WritePost, WritePut} {
		t.Run(method, func(t *testing.T) {
			s, srv := newAPIServer(t)
			rep, err := Run(context.Background(), Options{
				URL: srv.URL, Requests: 2000, Concurrency: 8, Cardinality: 50, Group: 3,
				WriteRatio: 0.3, WriteMethod: method, RYW: true, Seed: 7, ValueSize: 100,
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != 2000 || rep.Reads+rep.Writes != 2000 || rep.Errors != 0 {
				t.Fatalf("requests %d = %d reads + %d writes, %d errors; want 2000, no errors %v",
					rep.Requests, rep.Reads, rep.Writes, rep.Errors, rep.ErrorKinds)
			}
			if rep.Writes < 400 || rep.Writes > 800 {
				t.Errorf("%d writes of 2000 at ratio 0.3", rep.Writes)
			}
			if rep.Hits+rep.Misses != rep.Reads || rep.Hits == 0 || rep.Misses == 0 {
				t.Errorf("reads %d: %d hits, %d misses", rep.Reads, rep.Hits, rep.Misses)
			}
			if rep.RYW == nil || rep.RYW.Checks != rep.Writes || rep.RYW.Missing+rep.RYW.Mismatch+rep.RYW.Errors != 0 {
				t.Errorf("read-your-writes: %+v after %d writes", rep.RYW, rep.Writes)
			}
			writes := s.posts.Load() + s.puts.Load()
			if writes != rep.Writes || s.gets.Load() != rep.Reads+rep.RYW.Checks {
				t.Errorf("server saw %d writes and %d reads; report: %d writes, %d reads + %d checks",
					writes, s.gets.Load(), rep.Writes, rep.Reads, rep.RYW.Checks)
			}
			if rep.Latency.Count != 2000 || rep.Latency.Max <= 0 || rep.Latency.P50 > rep.Latency.P99 {
				t.Errorf("latency %+v", rep.Latency)
			}
			s.mu.Lock()
			for k, v := range s.entries {
				if len(v) != 100 || !strings.HasPrefix(k, "key-") {
					t.Errorf("entry %q = %q: want a 100-byte value under key-N", k, v)
					break
				}
			}
			s.mu.Unlock()
			var text, js bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"p99.999", "read-your-writes  ", "throughput"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text report lacks %q:\n%s", want, text.String())
				}
			}
			var back Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Requests != 2000 || back.RYW.Checks != rep.RYW.Checks {
				t.Errorf("JSON report does not round-trip (%v):\n%s", err, js.String())
			}
		})
	}
}

func TestReadYourWritesFailuresAreCounted(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		name                  string
		stale, drop, first    bool
		cardinality           int
		wantMissing, wantMism int64
	}{
		{name: "never written", stale: true, cardinality: 1000, wantMism: 300},
		{name: "dropped", drop: true, cardinality: 1000, wantMissing: 300},
		// One key, one worker: every write but the first reads back the first value.
		{name: "overwrite ignored", first: true, cardinality: 1, wantMism: 299},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newAPIServer(t)
			s.staleReads, s.forgetWrite, s.keepFirst = tc.stale, tc.drop, tc.first
			rep, err := Run(context.Background(), Options{
				URL: srv.URL, Requests: 300, Concurrency: 1, WriteRatio: 1, RYW: true, Seed: 3,
				Cardinality: tc.cardinality,
			})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.RYW
			if r.Checks != 300 || r.Errors != 0 || r.Superseded != 0 || r.Missing != tc.wantMissing || r.Mismatch != tc.wantMism {
				t.Errorf("%+v: want 300 checks, %d missing, %d mismatched", r, tc.wantMissing, tc.wantMism)
			}
		})
	}
}

func TestBatchWrites(t *testing.T) {
	checkLeaks(t)
	s, srv := newAPIServer(t)
	rep, err := Run(context.Background(), Options{
		URL: srv.URL, Requests: 10, Concurrency: 2, WriteRatio: 1, Batch: 10, Sequential: true,
		Cardinality: 100, RYW: true, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 || rep.RYW.Mismatch+rep.RYW.Missing != 0 {
		t.Fatalf("%+v %+v", rep.ErrorKinds, rep.RYW)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) != 100 || s.posts.Load() != 10 {
		t.Errorf("10 batches of 10 sequential keys stored %d distinct keys in %d POSTs, want 100 in 10", len(s.entries), s.posts.Load())
	}
}

func TestGetModeAnyURL(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.RawQuery]++
		mu.Unlock()
		if r.URL.Path != "/hello" || r.Method != http.MethodGet {
			http.NotFound(w, r)
		}
		w.Write([]byte("hi"))
	}))
	defer srv.Close()
	rep, err := Run(context.Background(), Options{
		URL: srv.URL + "/hello?name={key}&x=1", Mode: ModeGet, Requests: 500, Concurrency: 4,
		Cardinality: 25, Sequential: true, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 500 || rep.Errors != 0 || rep.Hits != 500 {
		t.Fatalf("%d requests, %d hits, errors %v", rep.Requests, rep.Hits, rep.ErrorKinds)
	}
	if len(seen) != 25 || seen["name=key-0&x=1"] != 20 {
		t.Errorf("%d distinct URLs, %d requests for key-0; want 25 and 20", len(seen), seen["name=key-0&x=1"])
	}
}

func TestErrorsByKind(t *testing.T) {
	checkLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rep, err := Run(context.Background(), Options{URL: srv.URL + "/x", Mode: ModeGet, Requests: 20, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 20 || rep.ErrorKinds["status 503"] == nil || rep.ErrorKinds["status 503"].Count != 20 {
		t.Errorf("errors %d %v, want 20 of kind status 503", rep.Errors, rep.ErrorKinds)
	}

	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rep, err = Run(context.Background(), Options{URL: "http://" + addr, Requests: 5, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.ErrorKinds["connection refused"]; rep.Errors != 5 || e == nil || e.Count != 5 || e.Example == "" {
		t.Errorf("errors %d %v, want 5 refused connections", rep.Errors, rep.ErrorKinds)
	}
}

// fakeClock is a manual clock: SleepUntil jumps to the wake-up time, or
// late after it, as a real timer wakes a little late.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	late time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t = t.Add(c.late); t.After(c.now) {
		c.now = t
	}
	return ctx.Err() == nil
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// slowTransport answers every request after advancing the clock by delay.
type slowTransport struct {
	clock *fakeClock
	delay time.Duration
}

func (s slowTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.clock.advance(s.delay)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

// funcTransport is an http.RoundTripper made of a function.
type funcTransport func(*http.Request) (*http.Response, error)

func (f funcTransport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reply returns a response to r with the given status and body.
func reply(r *http.Request, status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Request: r}
}

// TestOpenLoopLatency checks the accounting against coordinated omission:
// 10 requests due every 1 ms to a server that takes 5 ms, one worker.
// Request i is due at i ms and completes at 5(i+1) ms, so its open-loop
// latency is 4i+5 ms; measured from when it was sent it would be 5 ms. The
// run is bounded by a number of requests, so every one is sent, however
// late (with Duration, those not sent by then are not sent: see
// TestNotSentAccounting).
func TestOpenLoopLatency(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * 1e6) }
	near := func(got float64, want time.Duration) bool { // HDR: 3 significant digits
		w := want.Seconds() * 1000
		return got >= w*0.999 && got <= w*1.001
	}
	for _, closed := range []bool{false, true} {
		clock := &fakeClock{now: time.Unix(1000, 0)}
		rep, err := Run(context.Background(), Options{
			URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Requests: 10,
			Warmup: 2 * time.Millisecond, Closed: closed, Concurrency: 1, Clock: clock,
			Client: &http.Client{Transport: slowTransport{clock: clock, delay: 5 * time.Millisecond}},
		})
		if err != nil {
			t.Fatal(err)
		}
		// 10 requests due in [0, 10ms); the 2 due in the warm-up are not counted.
		if rep.Requests != 8 || rep.WarmupRequests != 2 {
			t.Fatalf("closed=%v: %d requests and %d in the warm-up, want 8 and 2", closed, rep.Requests, rep.WarmupRequests)
		}
		l := rep.Latency
		if !closed {
			// Latencies 13, 17, ..., 41 ms (i = 2..9).
			if rep.Loop != "open" || !near(l.Max, ms(41)) || !near(l.Mean, ms(27)) || !near(l.P50, ms(25)) {
				t.Errorf("open loop: %+v; want max 41ms, mean 27ms, p50 25ms", l)
			}
		} else if rep.Loop != "closed" || !near(l.Max, ms(5)) || !near(l.P50, ms(5)) {
			t.Errorf("closed loop: %+v, want 5ms", l)
		}
		// Send lag 4i ms: 8..36 ms.
		if rep.SendLag == nil || !near(rep.SendLag.Max, ms(36)) {
			t.Errorf("closed=%v: send lag %+v, want max 36ms", closed, rep.SendLag)
		}
		// The open-loop report also gives the time from the send: 5 ms.
		if !closed && (rep.ResponseTime == nil || !near(rep.ResponseTime.Max, ms(5)) || !near(rep.ResponseTime.P50, ms(5))) {
			t.Errorf("open loop: response time %+v, want 5ms", rep.ResponseTime)
		}
		// The run lasted 5*10 = 50 ms, of which 2 were the warm-up.
		if rep.Seconds != 0.048 {
			t.Errorf("closed=%v: %.4fs measured, want 0.048s", closed, rep.Seconds)
		}
	}
}

func TestScheduler(t *testing.T) {
	o, err := Options{URL: "http://x", Cardinality: 1000, Group: 4, Requests: 40, Seed: 9}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	s := newScheduler(&o, time.Unix(0, 0))
	var keys []uint64
	for {
		j, ok := s.next(time.Unix(0, 0))
		if !ok {
			break
		}
		keys = append(keys, j.key)
	}
	if len(keys) != 40 {
		t.Fatalf("%d jobs, want 40", len(keys))
	}
	distinct := map[uint64]bool{}
	for i := 0; i < 40; i += 4 {
		for k := i + 1; k < i+4; k++ {
			if keys[k] != keys[i] {
				t.Fatalf("group of 4 starting at %d has keys %v", i, keys[i:i+4])
			}
		}
		distinct[keys[i]] = true
	}
	if len(distinct) < 8 {
		t.Errorf("only %d distinct keys in 10 groups of 1000 uniform keys (seed 9)", len(distinct))
	}

	// Zipf: key 0 is the most frequent.
	o, _ = Options{URL: "http://x", Cardinality: 1000, Zipf: 1.2, Requests: 10000, Seed: 9}.withDefaults()
	s = newScheduler(&o, time.Unix(0, 0))
	hist := map[uint64]int{}
	for range 10000 {
		j, _ := s.next(time.Unix(0, 0))
		hist[j.key]++
	}
	for k, n := range hist {
		if n > hist[0] {
			t.Fatalf("Zipf: key %d drawn %d times, more than key 0 (%d)", k, n, hist[0])
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, o := range []Options{
		{},
		{URL: "ftp://x"},
		{URL: "http://"},
		{URL: "http://x", Mode: "post"},
		{URL: "http://x?a=1"},
		{URL: "http://x", Rate: -1},
		{URL: "http://x", Rate: math.Inf(1)},
		{URL: "http://x", Rate: math.NaN()},
		{URL: "http://x", Rate: 1e-11}, // one request every 3 000 years
		{URL: "http://x", Concurrency: -1},
		{URL: "http://x", Zipf: 0.5},
		{URL: "http://x", Zipf: 1.1, Sequential: true},
		{URL: "http://x", WriteRatio: 1.5},
		{URL: "http://x", Mode: ModeGet, WriteRatio: 0.5},
		{URL: "http://x", Mode: ModeGet, RYW: true},
		{URL: "http://x", RYW: true}, // no writes: nothing to check
		{URL: "http://x", WriteMethod: "patch"},
		{URL: "http://x", WriteMethod: WritePut, Batch: 2},
		{URL: "http://x", Batch: 20, Cardinality: 10},
		{URL: "http://x", KeyPrefix: "a/b"},
		{URL: "http://x", TTL: -time.Second},
	} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// liveWriter signals its first write.
type liveWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan struct{}
}

func (w *liveWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		close(w.first)
	}
	return w.buf.Write(p)
}

func TestLiveLine(t *testing.T) {
	checkLeaks(t)
	live := &liveWriter{first: make(chan struct{})}
	// Every request waits for the first live line, so the run outlasts it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-live.first
	}))
	defer srv.Close()
	rep, err := Run(context.Background(), Options{
		URL: srv.URL, Mode: ModeGet, Requests: 3, Concurrency: 1, Live: live, LiveInterval: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if rep.Requests != 3 || !strings.Contains(live.buf.String(), "req/s") {
		t.Errorf("%d requests, live output %q", rep.Requests, live.buf.String())
	}
}

func TestCancel(t *testing.T) {
	checkLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 10 {
			cancel()
		}
	}))
	defer srv.Close()
	rep, err := Run(ctx, Options{URL: srv.URL, Mode: ModeGet, Duration: time.Hour, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests < 10 || rep.Requests > 11 || rep.Errors != 0 {
		t.Errorf("cancelled after the 10th request: %d requests, %d errors (%v)", rep.Requests, rep.Errors, rep.ErrorKinds)
	}
}

func TestPreciseSleeper(t *testing.T) {
	checkLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := newPreciseSleeper(ctx)
	if err != nil {
		t.Skipf("no precise sleeper here: %v", err)
	}
	defer s.close()
	due := time.Now().Add(5 * time.Millisecond)
	if !s.sleepUntil(ctx, due) || time.Now().Before(due) {
		t.Fatal("woke before the due time")
	}
	if !s.sleepUntil(ctx, time.Now().Add(-time.Second)) {
		t.Fatal("a past due time did not return at once")
	}
	done := make(chan bool)
	go func() { done <- s.sleepUntil(ctx, time.Now().Add(time.Hour)) }()
	cancel()
	if <-done {
		t.Fatal("an hour's sleep ended with true after the context was cancelled")
	}
}

func TestPacedRun(t *testing.T) {
	checkLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	start := time.Now()
	rep, err := Run(context.Background(), Options{URL: srv.URL, Mode: ModeGet, Rate: 2000, Requests: 200, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	// The last request is due 199/2000 s after the start.
	if rep.Requests != 200 || rep.Errors != 0 || time.Since(start) < 99*time.Millisecond || rep.SendLag == nil {
		t.Errorf("%d requests, %d errors in %v; send lag %+v", rep.Requests, rep.Errors, time.Since(start), rep.SendLag)
	}
}
