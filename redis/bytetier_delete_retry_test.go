package redis

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// replyCutter is a go-redis Dialer whose connections, once armed, lose
// the reply to the first write carrying one of the command names: the command
// reaches Redis and runs, then the connection breaks before its answer
// comes back (a network failure after the server has acted).
type replyCutter struct {
	names [][]byte
	armed atomic.Bool
	once  sync.Once
	cuts  atomic.Int32
}

func newReplyCutter(cmds ...string) *replyCutter {
	r := &replyCutter{}
	for _, cmd := range cmds {
		r.names = append(r.names, []byte("\r\n"+cmd+"\r\n"))
	}
	return r
}

// carries reports whether p holds one of r's command names.
func (r *replyCutter) carries(p []byte) bool {
	p = bytes.ToLower(p)
	for _, name := range r.names {
		if bytes.Contains(p, name) {
			return true
		}
	}
	return false
}

func (r *replyCutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	cn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: cn, r: r}, nil
}

type cutConn struct {
	net.Conn
	r    *replyCutter
	cut  bool
	done bool
}

func (c *cutConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && c.r.armed.Load() && c.r.carries(p) {
		c.r.once.Do(func() { c.cut = true })
	}
	return n, err
}

func (c *cutConn) Read(p []byte) (int, error) {
	if !c.cut {
		return c.Conn.Read(p)
	}
	if c.done {
		return 0, io.EOF
	}
	c.done = true
	// Wait for Redis's answer (the command has run), drop it, and break
	// the connection.
	_, _ = c.Conn.Read(p)
	_ = c.Conn.Close()
	c.r.cuts.Add(1)
	return 0, io.EOF
}

// ByteTier.Delete reported false (and no error) for a key that Redis held
// and that it removed, when the reply to its DEL was lost: with the client
// that ClientDefaults recommends (MaxRetries 1), go-redis sends the whole
// DEL+PUBLISH pipeline again on a fresh connection, and the second DEL,
// finding the key already gone, answered 0. Delete now leaves a tombstone
// marked with the call, whose second attempt repeats the first's answer.
func TestByteTierDeleteAnswerSurvivesRetry(t *testing.T) {
	checkLeaks(t)
	srv := standalone(t)
	cut := newReplyCutter("del", "eval", "evalsha")
	o := ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple()
	o.Dialer = cut.dial
	cl := goredis.NewClient(o)
	t.Cleanup(func() { _ = cl.Close() })
	bt, _ := newByteTier(t, cl, nil)
	waitTierSubscribed(t, bt)
	ctx := context.Background()
	if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	cut.armed.Store(true)
	found, err := bt.Delete(ctx, []byte("k"))
	if cut.cuts.Load() != 1 {
		t.Fatalf("the Delete's reply was cut %d times; want 1", cut.cuts.Load())
	}
	if err != nil || !found {
		t.Errorf("Delete of a key Redis held (and removed) = %v, %v; want true, nil", found, err)
	}
	if raw, ok := rawGet(t, cl, bt.prefix+"k"); ok && (len(raw) < headerSize || raw[3] != kindTomb) {
		t.Fatalf("Redis holds %q after Delete; want no key or a tombstone", raw)
	}
	if _, _, hit, err := bt.Get(ctx, nil, []byte("k")); hit || err != nil {
		t.Errorf("Get after Delete = hit %v, %v; want a miss", hit, err)
	}
}

// Delete's answers around the tombstone it leaves: a value (of ours or
// not, of any type) is one that Redis held; no key, or a tombstone already
// there (another Delete's, or a Cache's), is none, and a tombstone not of
// this call is left as it was. The tombstone lives twice Timeout.
func TestByteTierDeleteTombstone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		cl, _ := b.client(t)
		bt, _ := newByteTier(t, cl, nil)
		must := func(found bool, err error, want bool, what string) {
			t.Helper()
			if err != nil || found != want {
				t.Errorf("Delete of %s = %v, %v; want %v, nil", what, found, err, want)
			}
		}
		found, err := bt.Delete(ctx, []byte("absent"))
		must(found, err, false, "an absent key")
		if n, err := cl.Exists(ctx, bt.prefix+"absent").Result(); err != nil || n != 0 {
			t.Errorf("EXISTS after Delete of an absent key = %d, %v; want 0 (no tombstone)", n, err)
		}

		if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		found, err = bt.Delete(ctx, []byte("k"))
		must(found, err, true, "a value")
		raw, ok := rawGet(t, cl, bt.prefix+"k")
		if !ok || len(raw) != headerSize || raw[3] != kindTomb {
			t.Fatalf("Redis holds %q (%v) after Delete; want a tombstone", raw, ok)
		}
		if pttl, err := cl.PTTL(ctx, bt.prefix+"k").Result(); err != nil || pttl <= 0 || pttl > 2*time.Second {
			t.Errorf("the tombstone's PTTL = %v, %v; want within twice Timeout (2s)", pttl, err)
		}
		found, err = bt.Delete(ctx, []byte("k"))
		must(found, err, false, "a key holding another Delete's tombstone")
		if again, _ := rawGet(t, cl, bt.prefix+"k"); again != raw {
			t.Errorf("a second Delete changed the tombstone from %q to %q; want it left", raw, again)
		}

		if err := cl.HSet(ctx, bt.prefix+"h", "f", "x").Err(); err != nil {
			t.Fatal(err)
		}
		found, err = bt.Delete(ctx, []byte("h"))
		must(found, err, true, "a hash")
		if _, _, hit, err := bt.Get(ctx, nil, []byte("h")); hit || err != nil {
			t.Errorf("Get after Delete of a hash = hit %v, %v; want a miss", hit, err)
		}
		if st := bt.Stats(); st.L2Incompatible != 0 {
			t.Errorf("L2Incompatible = %d; want 0 (a tombstone is a miss)", st.L2Incompatible)
		}
	})
}

// On a Ring, Delete's script goes to the shard of its key, where the value
// is: keys on both shards are found and deleted.
func TestByteTierDeleteOnRing(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srvA, srvB := private(t), private(t)
	ring := stableRing(t, srvA, srvB)
	bt, _ := newByteTier(t, ring, nil)
	for _, srv := range []*redistest.Server{srvA, srvB} {
		k, _ := keyOnShard(t, ring, bt.prefix, srv, 0)
		if err := bt.Set(ctx, []byte(k), []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if found, err := bt.Delete(ctx, []byte(k)); !found || err != nil {
			t.Errorf("Delete of %s (on %s) = %v, %v; want true, nil", k, srv.Addr(), found, err)
		}
		if _, _, hit, err := bt.Get(ctx, nil, []byte(k)); hit || err != nil {
			t.Errorf("Get of %s after Delete = hit %v, %v; want a miss", k, hit, err)
		}
	}
}
