package service

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hangingSetTier is a Tier whose Set hangs until its context (bounded
// by TierTimeout) is done: a slow second tier.
type hangingSetTier struct{ mapTier }

func (h *hangingSetTier) Set(ctx context.Context, _, _ []byte, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

// slowBodyPut sends a PUT's headers and half its body on a new
// connection, waits pause, sends the rest (unless pause is negative: then
// it never does) and returns the response, or the error reading it.
func slowBodyPut(t *testing.T, ts *testServer, key string, pause time.Duration) (*http.Response, error) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, "PUT /v1/entries/"+key+" HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello"); err != nil {
		t.Fatal(err)
	}
	if pause >= 0 {
		time.Sleep(pause) // only to exceed a timeout: a lower bound, not synchronisation
		if _, err := io.WriteString(conn, "world"); err != nil {
			t.Fatal(err)
		}
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// WriteTimeout bounds the response, from when the handler starts writing
// it (Options). Serve handed WriteTimeout to http.Server unchanged, whose
// write deadline starts when the request's headers have been read: it
// bounded the body's upload, the handler (Tier calls included) and the
// response together. So a PUT whose body arrived well within ReadTimeout
// but after WriteTimeout was stored while the client got no response;
// with ReadTimeout equal to WriteTimeout (as the defaults are), a body
// finishing near ReadTimeout followed by a slow Tier write lost its
// response the same way; and the 408 of a body not received within
// ReadTimeout was never delivered when WriteTimeout was shorter. The
// handler now moves the write deadline when it starts its response. The
// sleeps only exceed a timeout (lower bounds), they synchronise nothing.
// (Found by a review helper.)
func TestWriteTimeoutCountsFromTheResponse(t *testing.T) {
	t.Run("BodyWithinReadTimeout", func(t *testing.T) {
		ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, ReadTimeout: 5 * time.Second, WriteTimeout: 200 * time.Millisecond})
		resp, err := slowBodyPut(t, ts, "slow", 500*time.Millisecond)
		if err != nil {
			t.Fatalf("PUT whose body arrived 0.5s into a 5s ReadTimeout (WriteTimeout 200ms, the response written at once): no response (%v); yet GET answers %d",
				err, ts.req(t, "GET", "/v1/entries/slow", nil, "").status)
		}
		if resp.StatusCode != 204 {
			t.Fatalf("PUT: %d, want 204", resp.StatusCode)
		}
	})
	t.Run("EqualTimeoutsSlowTier", func(t *testing.T) {
		tier := &hangingSetTier{mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}}
		ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
			Tier: tier, TierTimeout: 1500 * time.Millisecond})
		resp, err := slowBodyPut(t, ts, "slow", time.Second)
		if err != nil {
			t.Fatalf("PUT whose body arrived 1s into a 2s ReadTimeout, with a Tier write failing after TierTimeout: no response (%v); yet GET answers %d (tier errors %d)",
				err, ts.req(t, "GET", "/v1/entries/slow", nil, "").status, ts.Stats().Tier.Errors)
		}
		if resp.StatusCode != 204 {
			t.Fatalf("PUT: %d, want 204 (a tier error does not fail the request)", resp.StatusCode)
		}
	})
	t.Run("Lost408", func(t *testing.T) {
		ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, ReadTimeout: time.Second, WriteTimeout: 200 * time.Millisecond})
		resp, err := slowBodyPut(t, ts, "never", -1)
		if err != nil {
			t.Fatalf("body never finished: no response (%v), though /v1/stats counts %v", err, ts.Stats().Requests["entry_put"])
		}
		if resp.StatusCode != 408 {
			t.Fatalf("body never finished: %d, want 408", resp.StatusCode)
		}
	})
}
