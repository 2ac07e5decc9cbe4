package redis

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// noscriptCounter counts the commands of pipelines that Redis refused
// with NOSCRIPT.
type noscriptCounter struct{ n atomic.Int64 }

func (h *noscriptCounter) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *noscriptCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *noscriptCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if c.Err() != nil && strings.HasPrefix(c.Err().Error(), "NOSCRIPT") {
				h.n.Add(1)
			}
		}
		return err
	}
}

// On a cluster each master learns a script when it is first sent to it
// whole. The "script has run" flag was one per script for the whole
// client: after a Set on one master, the first Set on each other master
// went by hash, was refused with NOSCRIPT, and took a second round trip.
// The flag is now per script and node.
func TestScriptSentWholeToEachMasterFirst(t *testing.T) {
	checkLeaks(t)
	c := frozenCluster(t) // its own: the masters' script caches start empty
	cl := clusterClient(t, c)
	hook := &noscriptCounter{}
	cl.OnNewNode(func(n *goredis.Client) { n.AddHook(hook) })
	bt, _ := newByteTier(t, cl, nil)
	ctx := context.Background()
	for m := range c.Nodes {
		k := keyOn(t, c, bt.prefix, m)
		if err := bt.Set(ctx, []byte(k), []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := bt.Delete(ctx, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if n := hook.n.Load(); n != 0 {
		t.Errorf("%d writes refused with NOSCRIPT while each master got its first Set and Delete; want 0", n)
	}
}
