package redis

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// holdCAS holds each EVALSHA/EVAL (a loaded value's compare-and-set)
// until the server's clock has passed the expiry it carries.
type holdCAS struct {
	rc *goredis.Client
}

func (h *holdCAS) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *holdCAS) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if n := cmdName(cmd); n == "evalsha" || n == "eval" {
			args := cmd.Args()
			// ARGV[3], the expiry (ARGV[4] is the latest time the
			// write may apply).
			exp, _ := strconv.ParseInt(fmt.Sprint(args[len(args)-2]), 10, 64)
			for {
				tm, err := h.rc.Time(context.Background()).Result()
				if err != nil || tm.UnixMilli() > exp {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		return next(ctx, cmd)
	}
}
func (h *holdCAS) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// A loaded value's Redis write whose expiry passed while it waited was
// counted in Stats.L2WritesRejected ("lost their compare-and-set: the key
// changed while loading"), though the key never changed; it is a write too
// late to make, counted in L2WritesDropped.
func TestExpiredLoadedWriteCountedDropped(t *testing.T) {
	s := standalone(t)
	b := backend{name: "standalone", addrs: []string{s.Addr()}, nodes: []string{s.Addr()}}
	cl, _ := b.client(t)
	rc := goredis.NewClient(&goredis.Options{Addr: s.Addr()})
	t.Cleanup(func() { _ = rc.Close() })
	h := &holdCAS{rc: rc}
	cl.AddHook(h)
	loader := loading.LoaderFunc[string, string](func(ctx context.Context, k string) (string, error) {
		loading.LimitTTL(ctx, time.Millisecond) // the source says: valid for 1ms
		return "v", nil
	})
	c := newTier(t, cl, loader, nil)
	waitSubscribed(t, c)
	if v, err := c.Get(context.Background(), "k"); err != nil || v != "v" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	eventually(t, 10*time.Second, "the loaded value's write attempted", func() bool {
		st := c.Stats()
		return st.L2Writes+st.L2WritesRejected+st.L2WriteErrors+st.L2WritesDropped > 0
	})
	if _, ok := rawGet(t, cl, testPrefix(t)+"k"); ok {
		t.Fatalf("the key exists in Redis; it never changed")
	}
	st := c.Stats()
	if st.L2WritesRejected != 0 {
		t.Errorf("L2WritesRejected = %d, L2WritesDropped = %d; the key never changed (no compare-and-set was lost): the write expired before it was made, want it in L2WritesDropped", st.L2WritesRejected, st.L2WritesDropped)
	}
}
