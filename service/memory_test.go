package service

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestTenMillionEntries stores 10M entries and checks that memory stays
// within the budget plus the documented overhead, and that the entries are
// served over HTTP.
//
// The bulk fill calls the store directly (Server.Store, values in the
// server's stored form): ten million HTTP requests would take minutes under
// the race detector and test net/http rather than memory. The checks then
// go through HTTP: /v1/stats, and GETs of a random sample of keys.
//
// Under the race detector (about 90 s for 10M entries on 2 cores) and with
// -short it stores 1M entries; make test also runs the suite without -race
// (GOARCH=386 and the previous Go release), where it stores all 10M.
func TestTenMillionEntries(t *testing.T) {
	checkLeaks(t)
	n := 10_000_000
	if testing.Short() || raceEnabled {
		n = 1_000_000
		t.Logf("%d entries only under -race or -short; run without them for 10M", n)
	}
	const maxBytes = 512 << 20
	ts := startServer(t, Options{MaxBytes: maxBytes, MaxValueBytes: 1024, DefaultTTL: 10 * time.Minute})
	store := ts.Store()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore, rssOK := residentBytes()

	start := time.Now()
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var key, body, val []byte
			for i := w; i < n; i += workers {
				key = strconv.AppendInt(append(key[:0], "key-"...), int64(i), 10)
				body = strconv.AppendInt(append(body[:0], "value-"...), int64(i), 10)
				val, _ = EncodeValue(val[:0], "", body)
				if err := store.Set(key, val, 10*time.Minute); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fill := time.Since(start)

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter, _ := residentBytes()

	// Through HTTP: the statistics.
	r := ts.req(t, "GET", "/v1/stats", nil, "")
	var st Stats
	if err := json.Unmarshal([]byte(r.body), &st); err != nil {
		t.Fatal(err)
	}
	s := st.Store
	t.Logf("%d entries in %v: chunks %d MiB (budget %d MiB, live %d MiB), index %d MiB, heap %d MiB (%d objects) before %d MiB (%d objects), resident %d MiB before %d MiB",
		s.Entries, fill.Round(time.Millisecond), s.ChunkBytes>>20, maxBytes>>20, s.BytesLive>>20, s.IndexBytes>>20,
		after.HeapAlloc>>20, after.HeapObjects, before.HeapAlloc>>20, before.HeapObjects, rssAfter>>20, rssBefore>>20)
	if s.Entries != uint64(n) || s.Evictions != 0 {
		t.Fatalf("%d entries, %d evictions; want %d and none", s.Entries, s.Evictions, n)
	}
	if s.ChunkBytes > maxBytes {
		t.Errorf("chunks %d bytes, over the budget %d", s.ChunkBytes, maxBytes)
	}
	// The documented overhead: the index (at most 22 bytes per entry), and
	// a few MiB for the server and the runtime.
	if s.IndexBytes > 22*int64(n) {
		t.Errorf("index %d bytes, over 22 per entry", s.IndexBytes)
	}
	// The chunks are on the Go heap or mapped outside it, depending on
	// the platform and the race detector: the heap holds at most the
	// chunks, the index and the fixed overhead, and so does the process's
	// resident memory (measured on Linux, without the race detector, whose
	// shadow memory would count).
	const fixed = 64 << 20
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > s.ChunkBytes+s.IndexBytes+fixed {
		t.Errorf("the heap grew by %d bytes, more than chunks %d + index %d + %d", grown, s.ChunkBytes, s.IndexBytes, fixed)
	}
	if rssOK && !raceEnabled {
		if grown := rssAfter - rssBefore; grown > maxBytes+s.IndexBytes+fixed {
			t.Errorf("resident memory grew by %d bytes, more than the budget %d + index %d + %d", grown, maxBytes, s.IndexBytes, fixed)
		}
	}
	// The number of heap objects does not grow with the entries: one per
	// 64 KiB chunk, and the shards' indexes.
	if objs := int64(after.HeapObjects) - int64(before.HeapObjects); objs > maxBytes/(64<<10)+10_000 {
		t.Errorf("%d more heap objects for %d entries", objs, n)
	}

	// Through HTTP: a sample of entries.
	seed := uint64(time.Now().UnixNano())
	t.Logf("sample seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for range 500 {
		i := rng.IntN(n)
		r := ts.req(t, "GET", fmt.Sprintf("/v1/entries/key-%d", i), nil, "")
		if want := fmt.Sprintf("value-%d", i); r.status != 200 || r.body != want {
			t.Fatalf("key-%d: %d %q, want %q", i, r.status, r.body, want)
		}
	}
	if r := ts.req(t, "GET", fmt.Sprintf("/v1/entries/key-%d", n), nil, ""); r.status != 404 {
		t.Errorf("key-%d was never written: %d", n, r.status)
	}
}

// residentBytes returns the process's resident memory (VmRSS), where
// /proc is available.
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
