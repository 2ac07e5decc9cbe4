package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
	"github.com/cachekit/cachekit/service"
)

// slowTier is a second tier (what --redis gives cachekit serve) whose
// second Set is slow: it lasts slow, or, with block set, until release is
// closed (or its context is done), after telling entered.
type slowTier struct {
	abort   bool // the second Set aborts the request: no answer is written
	block   bool
	entered chan struct{}
	release chan struct{}

	mu   sync.Mutex
	sets int
}

func (t *slowTier) Get(ctx context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	return dst, 0, false, nil
}

func (t *slowTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	t.mu.Lock()
	t.sets++
	n := t.sets
	t.mu.Unlock()
	if n != 2 {
		return nil
	}
	if t.block {
		close(t.entered)
		select {
		case <-t.release:
		case <-ctx.Done():
		}
		return nil
	}
	if t.abort {
		// net/http closes the connection without an answer (the
		// service's handler passes this panic on), the write applied.
		panic(http.ErrAbortHandler)
	}
	return nil
}

func (t *slowTier) Delete(ctx context.Context, key []byte) (bool, error) { return false, nil }

func (t *slowTier) setCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sets
}

// serveWithTier runs the service cachekit serve runs (service.New, Serve) on a
// free 127.0.0.1 port, with mut applied to its options. stop shuts it down
// as SIGTERM would and returns Serve's error.
func serveWithTier(t *testing.T, mut func(*service.Options)) (s *service.Server, addr string, stop func() error) {
	t.Helper()
	o := service.DefaultOptions()
	o.MaxBytes = 8 << 20
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	mut(&o)
	s, err := service.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var once sync.Once
	var serveErr error
	stop = func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { stop(); s.Close() })
	return s, ln.Addr().String(), stop
}

// runLoad runs cachekit load with args and its JSON report on stdout.
func runLoad(t *testing.T, args ...string) (load.Report, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := loadContext(context.Background(), append(args, "--json", "-"), &out, &errOut, false)
	var rep load.Report
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
	}
	return rep, code, errOut.String()
}

// TestLoadWriteNotResentAfterAnswerCutOff: cachekit load's built-in client
// sent a write twice when the server had applied it but its answer never
// arrived (the connection closed first): a request failing on a reused
// connection before any byte of the answer was resent whatever its method.
// Load reported 2 requests, 2 writes and no error; the server had stored 3
// entries. A write sent whole is not sent again: it is a failed request.
// (The answer used to be cut off by the server's write timeout behind a
// slow tier, which no longer runs during the tier call; the tier now
// aborts the request after the write, which net/http answers by closing
// the connection that the first PUT left kept alive.)
func TestLoadWriteNotResentAfterAnswerCutOff(t *testing.T) {
	checkLeaks(t)
	tier := &slowTier{abort: true}
	s, addr, _ := serveWithTier(t, func(o *service.Options) {
		o.Tier = tier
		o.TierTimeout = 10 * time.Second
	})
	rep, code, errOut := runLoad(t, "--url", "http://"+addr, "--requests", "2", "--concurrency", "1",
		"--write-ratio", "1", "--write-method", "put", "--seed", "1", "--timeout", "10s")
	if code != 0 {
		t.Fatalf("load exited with %d: %s", code, errOut)
	}
	st := s.Stats()
	puts := st.Requests["entry_put"]["204"]
	if rep.Requests != 2 || rep.Writes != 2 {
		t.Fatalf("load reports %d requests, %d writes; want 2 and 2", rep.Requests, rep.Writes)
	}
	if puts != 1 || st.EntriesStored != uint64(rep.Writes) || tier.setCount() != int(rep.Writes) {
		t.Errorf("load reports %d writes (%d errors %v), but the server answered %d PUTs with 204 (want 1), stored %d entries "+
			"and wrote %d to its tier: load resent the PUT whose answer never came",
			rep.Writes, rep.Errors, rep.ErrorKinds, puts, st.EntriesStored, tier.setCount())
	}
	if rep.Errors != 1 {
		t.Errorf("load reports %d errors %v; want 1: the PUT whose answer never came failed", rep.Errors, rep.ErrorKinds)
	}
}

// TestLoadShutdownMidWriteErrorKind: when cachekit serve shut down while a
// write of cachekit load was in flight, load resent it on a new connection,
// which the closed listener refused, and reported "connection refused", as
// if the write had never reached the server, which had applied it. The
// error is now that of the request sent (the connection closed or reset).
func TestLoadShutdownMidWriteErrorKind(t *testing.T) {
	checkLeaks(t)
	tier := &slowTier{block: true, entered: make(chan struct{}), release: make(chan struct{})}
	_, addr, stop := serveWithTier(t, func(o *service.Options) {
		o.Tier = tier
		o.TierTimeout = time.Minute
		o.ShutdownTimeout = 50 * time.Millisecond
	})
	released := false
	defer func() {
		if !released {
			close(tier.release)
		}
	}()
	type result struct {
		rep    load.Report
		code   int
		errOut string
	}
	resc := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := loadContext(context.Background(), []string{"--url", "http://" + addr, "--requests", "2", "--concurrency", "1",
			"--write-ratio", "1", "--write-method", "put", "--seed", "1", "--timeout", "30s", "--json", "-"}, &out, &errOut, false)
		var rep load.Report
		json.Unmarshal(out.Bytes(), &rep)
		resc <- result{rep, code, errOut.String()}
	}()
	// The second PUT, on the connection the first left kept alive, is in
	// the server's handler.
	select {
	case <-tier.entered:
	case r := <-resc:
		t.Fatalf("load ended before its second PUT reached the tier: exit %d %s", r.code, r.errOut)
	}
	// Shut the server down: the PUT in flight outlasts --shutdown-timeout
	// and its connection is closed.
	if err := stop(); err == nil || !strings.Contains(err.Error(), "graceful shutdown") {
		t.Fatalf("Serve returned %v; want the graceful shutdown's timeout", err)
	}
	close(tier.release)
	released = true
	var r result
	select {
	case r = <-resc:
	case <-time.After(20 * time.Second):
		t.Fatal("load did not end within 20s of the server's shutdown")
	}
	if r.code != 0 {
		t.Fatalf("load exited with %d: %s", r.code, r.errOut)
	}
	rep := r.rep
	if rep.Requests != 2 || rep.Errors != 1 {
		t.Fatalf("load reports %d requests, %d errors %v; want 2 and 1", rep.Requests, rep.Errors, rep.ErrorKinds)
	}
	if tier.setCount() != 2 {
		t.Fatalf("the tier saw %d writes, want 2", tier.setCount())
	}
	for kind, e := range rep.ErrorKinds {
		if kind == "connection refused" || strings.Contains(e.Example, "dial") {
			t.Errorf("the PUT the server received and applied before shutting down is reported as %q (e.g. %s): "+
				"load resent it on a new connection and reported the refused dial instead of the cut-off request",
				kind, e.Example)
		}
	}
}
