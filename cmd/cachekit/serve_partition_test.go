package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// partInstance is one running `cachekit serve`.
type partInstance struct {
	url  string
	logs *syncBuffer
	stop func() int
}

func partServe(t *testing.T, redisAddr string, extra ...string) *partInstance {
	t.Helper()
	args := append([]string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--max-value-bytes", "64KiB",
		"--redis", redisAddr, "--log-level", "warn"}, extra...)
	addr, logs, stop := runServe(t, args, nil)
	if addr == "" {
		t.Fatalf("serve exited with %d:\n%s", stop(), logs.String())
	}
	var once sync.Once
	code := 0
	st := func() int { once.Do(func() { code = stop() }); return code }
	t.Cleanup(func() { st() })
	return &partInstance{url: "http://" + addr, logs: logs, stop: st}
}

type partResp struct {
	code int
	body string
	ct   string
}

func partDo(t *testing.T, method, url, body string, hdr ...string) partResp {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return partResp{resp.StatusCode, string(b), resp.Header.Get("Content-Type")}
}

// partPoll calls f until it returns true, for at most d.
func partPoll(d time.Duration, f func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // polling, not an assertion
	}
}

var partMetricRE = regexp.MustCompile(`(?m)^(cachekit_tier_(?:hits|misses|errors)_total) (\S+)$`)

func partMetrics(t *testing.T, in *partInstance) map[string]float64 {
	t.Helper()
	r := partDo(t, "GET", in.url+"/metrics", "")
	m := map[string]float64{}
	for _, sm := range partMetricRE.FindAllStringSubmatch(r.body, -1) {
		v, _ := strconv.ParseFloat(sm[2], 64)
		m[sm[1]] = v
	}
	return m
}

// partWaitSubscribers waits until n instances listen on the invalidation
// channel of the default prefix.
func partWaitSubscribers(t *testing.T, redisAddr string, n int64) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer c.Close()
	var got int64
	ok := partPoll(15*time.Second, func() bool {
		m, err := c.PubSubNumSub(context.Background(), "cachekit-bytes:invalidate").Result()
		got = m["cachekit-bytes:invalidate"]
		return err == nil && got == n
	})
	if !ok {
		t.Fatalf("subscribers: %d, want %d", got, n)
	}
}

// relay forwards TCP connections from a loopback listener to a backend:
// serve gets each pair (the client's connection and the backend's) and
// starts its goroutines with r.run (the caller's proxy may not hold r yet
// when serve first runs). The test's cleanup closes the listener and every
// connection, and waits for the goroutines.
type relay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startRelay(t *testing.T, backend string, serve func(r *relay, client, server net.Conn)) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	r.run(func() {
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
			r.mu.Lock()
			r.conns = append(r.conns, c, b)
			r.mu.Unlock()
			serve(r, c, b)
		}
	})
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		for _, c := range r.conns {
			c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
	return r
}

// run runs f on a goroutine that the cleanup waits for.
func (r *relay) run(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// partProxy forwards TCP connections to a backend until partitioned is
// set; from then on it drops every byte both ways (and forwards nothing
// for new connections) without closing anything: a network partition, a
// middlebox that dropped an idle connection silently, or a backend that
// stopped answering. Given a marker, it closes sent once it has dropped
// bytes on their way to the backend that hold it (a call for that key was
// on the wire).
type partProxy struct {
	*relay
	partitioned atomic.Bool
	marker      []byte
	sent        chan struct{}
	once        sync.Once
}

// partStartProxy starts a proxy to backend; marker may be "" (sent is then
// never closed).
func partStartProxy(t *testing.T, backend, marker string) *partProxy {
	t.Helper()
	p := &partProxy{marker: []byte(marker), sent: make(chan struct{})}
	p.relay = startRelay(t, backend, func(r *relay, c, b net.Conn) {
		r.run(func() { p.pipe(b, c, true) })
		r.run(func() { p.pipe(c, b, false) })
	})
	return p
}

func (p *partProxy) pipe(dst, src net.Conn, toBackend bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.partitioned.Load() {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			} else if toBackend && len(p.marker) > 0 && bytes.Contains(buf[:n], p.marker) {
				p.once.Do(func() { close(p.sent) })
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// A serve instance whose subscription's connection went silent (a
// partition, a middlebox dropping the idle connection) noticed the loss
// only after the ByteTier's default 5s HealthCheck and as long again for
// the ping, and only then started clearing its store every
// --redis-degraded-ttl: with --redis-degraded-ttl 1s it served an
// overwritten value for 11s. serve now sets HealthCheck to a quarter of
// --redis-degraded-ttl (--redis-timeout at least), and its help gives the
// bound: about 1.5 times --redis-degraded-ttl (here 1.5s; 4s allowed).
func TestServePartitionedInstanceStaleness(t *testing.T) {
	checkLeaks(t)
	redisAddr := startRedis(t)
	proxy := partStartProxy(t, redisAddr, "")
	// A's Redis calls get a generous deadline: its writes must reach Redis
	// on a loaded machine too, where the default 100ms is sometimes too
	// short. B keeps the default, which its HealthCheck and ping follow.
	a := partServe(t, redisAddr, "--redis-degraded-ttl", "1s", "--redis-timeout", "10s")
	b := partServe(t, proxy.ln.Addr().String(), "--redis-degraded-ttl", "1s")
	partWaitSubscribers(t, redisAddr, 2)
	ea, eb := a.url+"/v1/entries/", b.url+"/v1/entries/"
	if got := partDo(t, "PUT", ea+"k", "v1"); got.code != 204 {
		t.Fatalf("PUT A: %+v", got)
	}
	// B's read of Redis may miss its 100ms deadline on a loaded machine
	// (answered as a 404): B asks again until it holds v1.
	var got partResp
	if !partPoll(10*time.Second, func() bool { got = partDo(t, "GET", eb+"k", ""); return got.code == 200 && got.body == "v1" }) {
		t.Fatalf("GET B: %+v", got)
	}
	proxy.partitioned.Store(true)
	if got := partDo(t, "PUT", ea+"k", "v2"); got.code != 204 {
		t.Fatalf("PUT A v2: %+v", got)
	}
	if m := partMetrics(t, a); m["cachekit_tier_errors_total"] != 0 {
		t.Fatalf("A's write did not reach Redis: %v", m)
	}
	start := time.Now()
	// The documented bound is about 1.5 × --redis-degraded-ttl; allow 4s.
	var last partResp
	if !partPoll(4*time.Second, func() bool { last = partDo(t, "GET", eb+"k", ""); return last.body != "v1" }) {
		t.Errorf("B still serves the overwritten value v1 %v after A's write reached Redis, with --redis-degraded-ttl 1s (invalidations cannot reach B)", time.Since(start).Round(time.Millisecond))
	}
	t.Logf("B served v1 for %v after the partition", time.Since(start).Round(100*time.Millisecond))
}
