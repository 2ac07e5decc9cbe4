package redis

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// heldWrites is a dialer for a go-redis client whose connections pass
// everything through, but for the first write script (EVALSHA of
// writeScript) sent once armed: that connection's outgoing bytes are then
// kept in memory (a segment lost on the way, sent again later by TCP)
// until release, which sends them to Redis. Closing the connection
// meanwhile is deferred until the bytes have gone.
type heldWrites struct {
	mu       sync.Mutex
	armed    bool
	conn     *heldConn // the held connection
	buf      []byte
	released bool
	closeReq bool
	held     chan struct{} // closed when the first bytes are held
}

type heldConn struct {
	net.Conn
	h *heldWrites
}

func newHeldWrites() *heldWrites { return &heldWrites{held: make(chan struct{})} }

func (h *heldWrites) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &heldConn{Conn: c, h: h}, nil
}

func (h *heldWrites) arm() {
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
}

func (c *heldConn) Write(p []byte) (int, error) {
	h := c.h
	h.mu.Lock()
	if h.armed && !h.released && (h.conn == c || (h.conn == nil && bytes.Contains(p, []byte(writeLua.Hash())))) {
		if h.conn == nil {
			h.conn = c
			close(h.held)
		}
		h.buf = append(h.buf, p...)
		h.mu.Unlock()
		return len(p), nil
	}
	h.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *heldConn) Close() error {
	h := c.h
	h.mu.Lock()
	if h.conn == c && !h.released {
		h.closeReq = true
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	return c.Conn.Close()
}

// release sends the held bytes to Redis (and closes their connection
// afterwards if the client has closed it meanwhile, at the test's end).
func (h *heldWrites) release(t *testing.T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil || h.released {
		return
	}
	h.released = true
	_ = h.conn.Conn.SetWriteDeadline(time.Time{})
	if _, err := h.conn.Conn.Write(h.buf); err != nil {
		t.Errorf("sending the held bytes: %v", err)
	}
	if h.closeReq {
		c := h.conn.Conn
		t.Cleanup(func() { _ = c.Close() })
	}
}

// With the client ClientDefaults recommends (ReadTimeout 1s, MaxRetries 1)
// and a Timeout above a second, go-redis gave up on a write's first
// attempt at its socket read timeout and resent the pipeline, but the
// abandoned copy (bytes held on the way) kept the latest time of the whole
// call: it still landed, after the Set had returned success and over the
// next Set of the key. A write's deadline is now no later than the client's
// read and write timeouts from its start, so the call ends, unsent again,
// at the deadline its script's latest time follows.
func TestSocketTimeoutResendDoesNotLandLate(t *testing.T) {
	socketTimeoutLandsLate(t, 0)
}

// Without the resend (MaxRetries -1), a write cut by the socket's
// ReadTimeout (1s) before its deadline (Timeout 10s) failed at once, its
// fate unknown, without waiting until it could no longer land, and the
// held write landed later over the key's next Set.
func TestSocketTimeoutWithoutResendDoesNotLandLate(t *testing.T) {
	socketTimeoutLandsLate(t, -1)
}

func socketTimeoutLandsLate(t *testing.T, maxRetries int) {
	checkLeaks(t)
	srv := private(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	h := newHeldWrites()
	o := ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}, Dialer: h.dial, MaxRetries: maxRetries})
	cl := goredis.NewUniversalClient(o)
	t.Cleanup(func() { _ = cl.Close() })
	t.Cleanup(func() { h.release(t) })
	const timeout = 10 * time.Second
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = timeout })
	_, want, raw, err1 := heldFirstThenSecond(t, bt, admin, h)
	if raw != want {
		t.Errorf("the first Set returned %v, the second Set succeeded after it, and then the first Set's held "+
			"copy landed: Redis holds %.60q, want %.60q (the second Set's)", err1, raw, want)
	}
}

// heldFirstThenSecond writes k through bt: "before" (an estimate of the
// clock, the script known), then "first" with its bytes held on the way by
// h, then "second"; it then releases the held bytes (a lost segment
// arriving, within the first Set's Timeout) and waits until Redis has run
// them. It returns the first Set's time, what Redis held after the second
// Set (want), what it holds at the end, and the first Set's error.
func heldFirstThenSecond(t *testing.T, bt *ByteTier, admin *goredis.Client, h *heldWrites) (took time.Duration, want, got string, err1 error) {
	t.Helper()
	ctx := context.Background()
	if err := bt.Set(ctx, []byte("k"), []byte("before"), time.Hour); err != nil {
		t.Fatal(err)
	}
	h.arm()
	start := time.Now()
	err1 = bt.Set(ctx, []byte("k"), []byte("first"), time.Hour)
	took = time.Since(start)
	select {
	case <-h.held:
	default:
		t.Fatal("the write was not held")
	}
	if err := bt.Set(ctx, []byte("k"), []byte("second"), time.Hour); err != nil {
		t.Fatalf("second Set: %v", err)
	}
	want, _ = rawGet(t, admin, bt.prefix+"k")
	calls := commandCalls(t, admin, "evalsha")
	h.release(t)
	eventually(t, 10*time.Second, "Redis ran the held write", func() bool { return commandCalls(t, admin, "evalsha") > calls })
	got, _ = rawGet(t, admin, bt.prefix+"k")
	return took, want, got, err1
}

// On a cluster the write's estimate is picked by the master that the
// client's map of the slots names, but the write goes where Redis
// redirects it (MOVED, after a reshard): the answer of the slot's new
// master, whose clock is ahead, was refused as late while in time and
// reset the old master's estimate to the new master's offset. The next
// write to the old master then carried a latest time that far past its
// deadline while settle still ended a few ms after it: a timed-out Set to
// the old master, held while it hung, landed after the Set had returned.
// An answer now bounds only the write sent again, never raising an
// estimate. (Master 1's clock runs an hour ahead, simulated with a hook on
// its node client; master 2 hangs.)
func TestClusterRedirectedWriteKeepsOldMastersClock(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	const ahead = int64(time.Hour / time.Millisecond)
	prefix := channelOn(t, c, 0)
	// kept and moved live on master 2, in different slots.
	admin2 := c.Nodes[2].Client()
	t.Cleanup(func() { _ = admin2.Close() })
	var kept, moved string
	for i := 0; kept == "" || moved == ""; i++ {
		k := "k" + strconv.Itoa(i)
		if keyOwner(t, c, prefix+k) != 2 {
			continue
		}
		if kept == "" {
			kept = k
		} else if admin2.ClusterKeySlot(ctx, prefix+k).Val() != admin2.ClusterKeySlot(ctx, prefix+kept).Val() {
			moved = k
		}
	}
	cl := skewedCluster(t, c, 1, ahead, nil)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Prefix = prefix; o.Timeout = 200 * time.Millisecond })
	// Writes answered: master 2's estimate, and the script known.
	for _, k := range []string{kept, moved} {
		if err := bt.Set(ctx, []byte(k), []byte("before"), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin2.Del(ctx, prefix+moved).Err(); err != nil {
		t.Fatal(err)
	}
	// moved's slot (now empty) goes to master 1; the client's map still
	// names master 2.
	moveEmptySlot(t, c, admin2.ClusterKeySlot(ctx, prefix+moved).Val(), 2, 1)
	if err := bt.Set(ctx, []byte(moved), []byte("after the move"), time.Hour); err != nil {
		t.Fatalf("Set redirected to the slot's new master: %v", err)
	}

	before, _ := rawGet(t, admin2, prefix+kept)
	returned := writeHeldByHungServer(t, c.Nodes[2], admin2, func() error { return bt.Set(ctx, []byte(kept), []byte("late"), time.Hour) })
	if raw, _ := rawGet(t, admin2, prefix+kept); raw != before {
		t.Errorf("a Set to master 2 returned its error after %v (Timeout 200ms), yet master 2 ran it when it "+
			"resumed and it landed: it holds %.40q, want %.40q as before (its estimate was reset from master 1's answer)",
			returned.Round(time.Millisecond), raw, before)
	}
}
