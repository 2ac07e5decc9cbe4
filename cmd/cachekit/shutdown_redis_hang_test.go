package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hangProxy forwards TCP connections to a Redis until hang is set; from
// then on it forwards nothing to Redis (a Redis that stopped answering:
// SIGSTOP, a partition) and closes sent once it has swallowed bytes that
// hold marker: a call for that key is on the wire.
type hangProxy struct {
	ln      net.Listener
	backend string
	marker  []byte
	hang    atomic.Bool
	sent    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

func startHangProxy(t *testing.T, backend, marker string) *hangProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hangProxy{ln: ln, backend: backend, marker: []byte(marker), sent: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, b)
			p.mu.Unlock()
			p.wg.Add(2)
			go p.pipe(b, c, true)
			go p.pipe(c, b, false)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *hangProxy) pipe(dst, src net.Conn, toRedis bool) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.hang.Load() {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			} else if toRedis && bytes.Contains(buf[:n], p.marker) {
				p.once.Do(func() { close(p.sent) })
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// TestShutdownTimeoutBoundsRedisCalls: with a Redis that stopped
// answering, serve exited only after --redis-timeout (8s here), not within
// --shutdown-timeout (200ms): Serve cut the request off at 200ms, but the
// deferred tier close (ByteTier.Close) then waited for its Redis call,
// which went on detached from the request. A service manager allowing
// --shutdown-timeout plus a margin would kill it.
func TestShutdownTimeoutBoundsRedisCalls(t *testing.T) {
	checkLeaks(t)
	redisAddr := startRedis(t)
	proxy := startHangProxy(t, redisAddr, "hung-key")
	in := partServe(t, proxy.ln.Addr().String(), "--redis-timeout", "8s", "--shutdown-timeout", "200ms")
	partWaitSubscribers(t, redisAddr, 1)
	// A write while Redis answers leaves a pooled connection, which the
	// read below reuses (a new one would hang in its handshake).
	if r := partDo(t, "PUT", in.url+"/v1/entries/warm", "v"); r.code != 204 {
		t.Fatalf("PUT: %+v", r)
	}
	if m := partMetrics(t, in); m["cachekit_tier_errors_total"] != 0 {
		t.Fatalf("the PUT did not reach Redis: %v", m)
	}
	proxy.hang.Store(true) // Redis stops answering
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	got := make(chan error, 1)
	go func() {
		resp, err := client.Get(in.url + "/v1/entries/hung-key")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		got <- err
	}()
	select {
	case <-proxy.sent: // the GET's tier read is on its way to the hung Redis
	case <-time.After(20 * time.Second):
		t.Fatal("the GET never reached Redis")
	}
	start := time.Now()
	code := in.stop() // as SIGTERM
	took := time.Since(start)
	<-got
	t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
	// --shutdown-timeout is 200ms; allow 3s more (a guard in the safe
	// direction: the Redis call in flight ends only after 8s).
	if took > 3200*time.Millisecond {
		t.Errorf("cachekit serve took %v to exit after SIGTERM with --shutdown-timeout 200ms: it waited for the hung Redis call "+
			"of a request it had already cut off (--redis-timeout 8s)", took.Round(time.Millisecond))
	}
}
