package service

import (
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDeleteRacingCloseAnswers503 checks the Tier contract (tier.go):
//
//	"DELETE removes the key from both. If the tier's delete fails, the
//	DELETE answers 503 (the key is gone from this instance, but a read
//	could bring it back from the tier)"
//
// and Server.Close: "a request served after Close (one still running when
// the graceful shutdown timed out) answers 503".
//
// del deletes the key from the in-memory store and only then looks at
// s.closed; if Close began in between (a DELETE still running when the
// graceful shutdown timed out), it skips the Tier's delete. It once
// reported the key found all the same, and the DELETE answered 204 while
// the shared Tier still held the key; it now answers 503.
//
// The interleaving is made deterministic with the store's injectable clock,
// which the store reads (under the shard's lock) while deleting an entry
// with a TTL: at that instant the test starts Close and waits until it has
// marked the server closed.
func TestDeleteRacingCloseAnswers503(t *testing.T) {
	checkLeaks(t)
	clock := newFakeClock()
	var arm atomic.Bool
	var s *Server
	closeDone := make(chan struct{})
	now := func() time.Time {
		if arm.CompareAndSwap(true, false) {
			go func() { s.Close(); close(closeDone) }()
			for !s.closed.Load() { // Close's first step; it then waits for this shard's lock
				runtime.Gosched()
			}
		}
		return clock.now()
	}
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}
	var err error
	s, err = New(Options{MaxBytes: 1 << 20, Shards: 1, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	do := statusOf(s)
	if code := do("PUT", "/v1/entries/k", "v"); code != 204 {
		t.Fatalf("PUT: %d", code)
	}
	arm.Store(true)
	code := do("DELETE", "/v1/entries/k", "")
	<-closeDone
	if arm.Load() {
		t.Fatal("the store did not read its clock while deleting: the race was not set up")
	}
	tier.mu.Lock()
	_, inTier := tier.m["k"]
	tier.mu.Unlock()
	if code == 204 && inTier {
		t.Errorf("DELETE racing Close answered 204, but the key is still in the shared Tier (its delete was skipped); want 503 or the key deleted from the Tier")
	}
}

// TestHeadersOverMaxHeaderBytesRefused checks the package
// documentation (doc.go): "A request that net/http refuses before the
// server sees it gets net/http's plain-text answer instead: ... and headers
// over MaxHeaderBytes a 431", and Options.MaxHeaderBytes: "MaxHeaderBytes
// bounds the request line and headers".
//
// net/http reads up to MaxHeaderBytes + 4096 bytes of headers ("bufio
// slop", its initialReadLimitSize): Serve takes that slop off what it
// hands to http.Server, so that headers over the documented bound are
// refused.
func TestHeadersOverMaxHeaderBytesRefused(t *testing.T) {
	checkLeaks(t)
	const maxHeader = 16 << 10
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, MaxKeyBytes: 1024, MaxHeaderBytes: maxHeader})
	if got := ts.Options().MaxHeaderBytes; got != maxHeader {
		t.Fatalf("MaxHeaderBytes in effect %d, want %d", got, maxHeader)
	}
	// Headers 2 KiB over the bound: the pad alone exceeds it.
	pad := strings.Repeat("p", maxHeader+2048)
	r := ts.req(t, "GET", "/healthz", map[string]string{"X-Pad": pad}, "")
	if r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("GET /healthz with %d bytes of headers (MaxHeaderBytes %d): %d, want 431", len(pad), maxHeader, r.status)
	}
}
