package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// slowPTTLReply is a go-redis hook that, for the first pipeline holding a
// PTTL, lets Redis answer and then holds the reply until the key it read
// has expired in Redis (checked through rc): a reply that takes its time
// to reach the caller (a distant Redis, a busy client), well within
// Timeout.
type slowPTTLReply struct {
	rc   goredis.UniversalClient
	key  string
	held chan struct{}
}

func (h *slowPTTLReply) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *slowPTTLReply) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *slowPTTLReply) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if cmdName(c) != "pttl" {
				continue
			}
			select {
			case <-h.held:
				return err
			default:
			}
			close(h.held)
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if n, e := h.rc.Exists(context.Background(), h.key).Result(); e == nil && n == 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
			break
		}
		return err
	}
}

// With ExactTTL, the L1 copy of an L2 hit was given the PTTL that Redis
// measured when it ran the command, counted from when the reply had been
// processed: Cache.read did not deduct the time since the read was sent,
// so the copy outlived its Redis entry by the reply's latency (up to
// Timeout), against "a hit fills L1 with a TTL no longer than the entry's
// remaining TTL in Redis". Without ExactTTL the TTL is counted from the
// read's end, and the same slow reply leaves the copy stale at once.
func TestExactTTLCopyDoesNotOutliveSlowReply(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		wcl, _ := b.client(t)
		writer := newTier(t, wcl, newSource(), func(o *Options[string]) { o.TTL = 300 * time.Millisecond })
		rcl, _ := b.client(t)
		h := &slowPTTLReply{rc: wcl, key: writer.prefix + "k", held: make(chan struct{})}
		rcl.AddHook(h)
		clock := &fakeClock{t: time.Unix(1e9, 0)}
		src := newSource()
		src.set("k", "from source")
		reader := newTier(t, rcl, src, func(o *Options[string]) {
			o.ExactTTL = true
			o.Clock = clock
			o.TTL = time.Hour
			o.Local.TTL = time.Hour
			o.Timeout = 10 * time.Second
		})
		waitSubscribed(t, writer, reader)
		if err := writer.Set(ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
		// The Set's invalidation, which would drop the reader's load.
		eventually(t, 10*time.Second, "the invalidation received", func() bool { return reader.Stats().InvalidationsReceived == 1 })
		mustGet(t, reader, "k", "v") // in Redis when Redis read it
		if n, err := wcl.Exists(ctx, writer.prefix+"k").Result(); err != nil || n != 0 {
			t.Fatalf("EXISTS = %d, %v; want the key expired", n, err)
		}
		// Not a nanosecond of the reader's clock has passed, but the
		// Redis entry is gone: L1 must not serve it as fresh.
		if v, hit := l1Answer(t, reader, "k"); hit {
			t.Errorf("L1 serves %q as fresh after its Redis entry expired (read with ExactTTL; the reply took longer than the entry had left)", v)
		}
	})
}
