package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// holdProxy forwards TCP connections to a backend. Once a chunk on its
// way to the backend holds marker, it holds that chunk (and whatever
// follows on that connection) until release is closed, then delivers it:
// a connection whose packets are delayed in the network (a lost segment
// waiting for its retransmission) while the client's other connections go
// through. held is closed when it starts holding; landed when the backend
// has answered the delivered bytes.
type holdProxy struct {
	*relay
	marker  []byte
	held    chan struct{}
	release chan struct{}
	landed  chan struct{}
	holdOne sync.Once
	landOne sync.Once
}

func startHoldProxy(t *testing.T, backend, marker string) *holdProxy {
	t.Helper()
	p := &holdProxy{marker: []byte(marker),
		held: make(chan struct{}), release: make(chan struct{}), landed: make(chan struct{})}
	p.relay = startRelay(t, backend, func(r *relay, c, b net.Conn) {
		held := new(atomic.Bool)
		r.run(func() { p.toBackend(b, c, held) })
		r.run(func() { p.toClient(c, b, held) })
	})
	// Registered after the relay's cleanup, so run before it: the held
	// bytes go (or the goroutine holding them ends) before it waits.
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
	})
	return p
}

func (p *holdProxy) toBackend(dst, src net.Conn, held *atomic.Bool) {
	buf := make([]byte, 64<<10)
	var pending []byte // held bytes
	isHolding := false
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !isHolding && bytes.Contains(buf[:n], p.marker) {
				first := false
				p.holdOne.Do(func() { first = true })
				if first {
					isHolding = true
					held.Store(true)
					close(p.held)
				}
			}
			if isHolding {
				pending = append(pending, buf[:n]...)
			} else if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			break
		}
	}
	if isHolding {
		// The client has gone (it gave up on the call): the bytes are
		// still in the network, and arrive later.
		<-p.release
		if _, err := dst.Write(pending); err == nil {
			// Let the backend answer them, then close.
			select {
			case <-p.landed:
			case <-time.After(10 * time.Second):
			}
		}
	}
	dst.Close()
}

func (p *holdProxy) toClient(dst, src net.Conn, held *atomic.Bool) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if held.Load() {
				p.landOne.Do(func() { close(p.landed) }) // the answer to the delivered bytes
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// A PUT whose Redis write timed out (answered 204, counted as a tier
// error) landed in Redis later, after a newer PUT of the same key on the
// same instance had succeeded: Redis, and every other instance, ended with
// the older value, while the writer kept the newer one (it ignores the
// invalidation it published itself) until its TTL ran out. The fence
// (service/fence.go) waits for ByteTier.Set to return, but a Set that gave
// up at its deadline still had its bytes on the wire. The tier's writes
// are now scripts that do nothing past their deadline by the server's
// clock.
func TestTimedOutPutDoesNotLandAfterNewerPut(t *testing.T) {
	checkLeaks(t)
	redisAddr := startRedis(t)
	proxy := startHoldProxy(t, redisAddr, "late-v1")
	a := partServe(t, proxy.ln.Addr().String(), "--redis-timeout", "200ms")
	b := partServe(t, redisAddr, "--redis-timeout", "5s")
	partWaitSubscribers(t, redisAddr, 2)
	ea, eb := a.url+"/v1/entries/k", b.url+"/v1/entries/k"

	if r := partDo(t, "PUT", ea, "v0"); r.code != 204 {
		t.Fatalf("PUT A v0: %+v", r)
	}
	if m := partMetrics(t, a); m["cachekit_tier_errors_total"] != 0 {
		t.Fatalf("A's first write did not reach Redis: %v", m)
	}
	// A's SET of late-v1 is delayed in the network past --redis-timeout.
	if r := partDo(t, "PUT", ea, "late-v1"); r.code != 204 {
		t.Fatalf("PUT A late-v1: %+v", r)
	}
	select {
	case <-proxy.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the write of late-v1 never reached the proxy")
	}
	if m := partMetrics(t, a); m["cachekit_tier_errors_total"] != 1 {
		t.Fatalf("A's late-v1 write should have failed at its deadline: %v", m)
	}
	// A newer write of the key, answered after late-v1's: it reaches Redis.
	if r := partDo(t, "PUT", ea, "v2"); r.code != 204 {
		t.Fatalf("PUT A v2: %+v", r)
	}
	if m := partMetrics(t, a); m["cachekit_tier_errors_total"] != 1 {
		t.Fatalf("A's v2 write did not reach Redis: %v", m)
	}
	var rb partResp
	if !partPoll(10*time.Second, func() bool { rb = partDo(t, "GET", eb, ""); return rb.code == 200 && rb.body == "v2" }) {
		t.Fatalf("B never served v2: %+v", rb)
	}
	// The delayed packets arrive.
	close(proxy.release)
	select {
	case <-proxy.landed:
	case <-time.After(10 * time.Second):
		t.Fatal("Redis never answered the delayed bytes")
	}
	rc := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer rc.Close()
	raw, err := rc.Get(context.Background(), "cachekit-bytes:k").Result()
	if err != nil {
		t.Fatal(err)
	}
	inRedis := raw
	if i := strings.LastIndexByte(raw, 0); i >= 0 {
		inRedis = raw[i+1:]
	}
	// Once quiet, both instances and Redis must agree, on the last write
	// answered: v2.
	var ra partResp
	agree := partPoll(3*time.Second, func() bool {
		ra, rb = partDo(t, "GET", ea, ""), partDo(t, "GET", eb, "")
		return ra.body == "v2" && rb.body == "v2"
	})
	if !agree || !strings.HasSuffix(raw, "v2") {
		t.Errorf("after PUT late-v1 (tier write timed out) then PUT v2 (succeeded), both on A: A serves %q, B serves %q, Redis holds %q; want v2 everywhere",
			ra.body, rb.body, inRedis)
	}
}
