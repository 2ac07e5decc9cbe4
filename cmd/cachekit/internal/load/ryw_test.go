package load

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// A read-back that misses an entry which may have expired (the read
// completed at least TTL after the write was sent) is no read-your-writes
// violation: the service promises read-your-writes "unless the entry was
// evicted or expired". Writes carry a 1s TTL and take 1.5s to be answered,
// so every check is counted as expired, not missing.
func TestRYWExpiredEntryIsNotViolation(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	writes := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		clock.advance(1500 * time.Millisecond) // a slow write: applied at once, answered late
		return reply(r, http.StatusNoContent, ""), nil
	})}
	checks := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		return reply(r, http.StatusNotFound, "expired"), nil // applied+1s < now
	})}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Requests: 10, Concurrency: 1, WriteRatio: 1, WriteMethod: WritePut,
		TTL: time.Second, RYW: true, Seed: 1, Clock: clock, Client: writes, RYWClient: checks,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (RYW{Checks: 10, Expired: 10}); *rep.RYW != want {
		t.Errorf("RYW %+v: want %+v (every entry may have expired: TTL 1s, read 1.5s after the write was sent)", *rep.RYW, want)
	}

	// The same misses within the TTL are violations.
	clock = &fakeClock{now: time.Unix(1000, 0)}
	writes.Transport = funcTransport(func(r *http.Request) (*http.Response, error) {
		clock.advance(500 * time.Millisecond)
		return reply(r, http.StatusNoContent, ""), nil
	})
	rep, err = Run(context.Background(), Options{
		URL: "http://fake.invalid", Requests: 10, Concurrency: 1, WriteRatio: 1, WriteMethod: WritePut,
		TTL: time.Second, RYW: true, Seed: 1, Clock: clock, Client: writes, RYWClient: checks,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (RYW{Checks: 10, Missing: 10}); *rep.RYW != want {
		t.Errorf("RYW %+v: want %+v (read 0.5s after the write was sent, TTL 1s)", *rep.RYW, want)
	}
}

// A read-back that returns the value of a concurrent write to another key
// is a mismatch, not a superseded value: a server that mixes keys up is
// caught. Worker A writes key a, worker B writes key b concurrently; the
// server (which ignores keys) applies B's value after A's, so A's check of
// key a returns the value written to key b while B is still in flight.
func TestRYWValueOfOtherKeyIsMismatch(t *testing.T) {
	var (
		mu       sync.Mutex
		slot     []byte // the server's single slot: it ignores keys
		n        int
		keys     []string
		bArrived = make(chan struct{})
		aApplied = make(chan struct{})
		bApplied = make(chan struct{})
		aChecked = make(chan struct{})
		reads    int
	)
	writes := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID    string          `json:"id"`
			Entry json.RawMessage `json:"entry"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		mu.Lock()
		n++
		first := n == 1
		keys = append(keys, m.ID)
		mu.Unlock()
		if first { // A
			<-bArrived
			mu.Lock()
			slot = m.Entry
			mu.Unlock()
			close(aApplied)
			<-bApplied
		} else { // B
			close(bArrived)
			<-aApplied
			mu.Lock()
			slot = m.Entry
			mu.Unlock()
			close(bApplied)
			<-aChecked // B is still in flight when A checks
		}
		return reply(r, http.StatusOK, ""), nil
	})}
	checks := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		v := string(slot)
		reads++
		first := reads == 1
		mu.Unlock()
		if first {
			defer close(aChecked)
		}
		return reply(r, http.StatusOK, v), nil
	})}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Requests: 2, Concurrency: 2, WriteRatio: 1, Cardinality: 1_000_000,
		RYW: true, Seed: 1, Client: writes, RYWClient: checks,
	})
	if err != nil {
		t.Fatal(err)
	}
	if keys[0] == keys[1] {
		t.Fatalf("both writes went to %s; pick another seed", keys[0])
	}
	if rep.RYW.Checks != 2 || rep.RYW.Mismatch != 1 {
		t.Errorf("RYW %+v: want 2 checks and 1 mismatch (the read of %s returned the value written to %s)", *rep.RYW, keys[0], keys[1])
	}
}

// The read-back keeps the body it reads, within a bound: a server
// announcing a huge body (here 2^62 bytes) makes a failed check, not a
// crash of the generator, whether the body is announced by Content-Length,
// sent in chunks or sent until the connection closes, with the built-in
// client or net/http's.
func TestRYWHugeBodyIsFailedCheck(t *testing.T) {
	checkLeaks(t)
	big := string(make([]byte, 2<<20))
	for _, tc := range []struct{ name, resp string }{
		{"content length", "HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387904\r\n\r\nx"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000000000000000\r\nx"},
		{"chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n" + big[:1<<20] + "\r\n100000\r\n" + big[:1<<20] + "\r\n0\r\n\r\n"},
		{"until close", "HTTP/1.1 200 OK\r\n\r\n" + big},
	} {
		for _, std := range []bool{false, true} {
			name := tc.name
			if std {
				name += " net/http"
			}
			t.Run(name, func(t *testing.T) {
				url := rawServer(t, func(n int, r *http.Request) (string, bool) {
					if r.Method == http.MethodGet {
						return tc.resp, true
					}
					return "HTTP/1.1 204 No Content\r\n\r\n", false
				})
				o := Options{URL: url, Requests: 1, Concurrency: 1, WriteRatio: 1, WriteMethod: WritePut, RYW: true}
				if std {
					tr1, tr2 := &http.Transport{}, &http.Transport{}
					defer tr1.CloseIdleConnections()
					defer tr2.CloseIdleConnections()
					o.Client, o.RYWClient = &http.Client{Transport: tr1}, &http.Client{Transport: tr2}
				}
				rep, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				if want := (RYW{Checks: 1, Errors: 1}); *rep.RYW != want {
					t.Errorf("RYW %+v: want %+v", *rep.RYW, want)
				}
			})
		}
	}
}

// A write answered with a redirect stored nothing (the service stores on
// 2xx only, and the client does not follow a redirect for a PUT): it is a
// failed request, with no read-back, not a success whose read-back then
// counts as a read-your-writes violation.
func TestRedirectedWriteIsError(t *testing.T) {
	writes := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		return reply(r, http.StatusTemporaryRedirect, ""), nil // no Location: not followed
	})}
	checks := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		return reply(r, http.StatusNotFound, ""), nil
	})}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Requests: 10, Concurrency: 1, WriteRatio: 1, WriteMethod: WritePut,
		RYW: true, Seed: 1, Clock: &fakeClock{now: time.Unix(1000, 0)}, Client: writes, RYWClient: checks,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 10 || *rep.RYW != (RYW{}) {
		t.Errorf("errors %d, RYW %+v: want 10 failed writes and no read-back", rep.Errors, *rep.RYW)
	}
}
