package redis

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// A Get whose probe passed read's check for Close just before Close, and
// reached the coalesced reads after it (reads.get returns ErrClosed
// without sending anything), was counted in Stats.L2Reads and L2ReadTime:
// read called observeRead before it looked at the error. L2Reads counts
// "reads of Redis"; ByteTier.Get returned on ErrClosed before counting.
func TestReadRefusedByCloseNotCounted(t *testing.T) {
	s := private(t)
	client := goredis.NewUniversalClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{s.Addr()}}))
	t.Cleanup(func() { _ = client.Close() })
	src := newSource()
	src.set("k", "v")
	c := newTier(t, client, src, nil)

	before := c.Stats()
	g := &gateContext{Context: context.Background(), entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(g, "k")
		done <- err
	}()
	<-g.entered // the probe is inside read, past its check for Close
	c.Close()   // returns: L1's Close does not wait for probes, nor reads.wait for a read not started
	close(g.release)
	<-done
	after := c.Stats()
	if after.L2Reads != before.L2Reads || after.L2ReadTime != before.L2ReadTime {
		t.Fatalf("a read refused by Close (never sent) was counted: L2Reads %d -> %d, L2ReadTime %v -> %v",
			before.L2Reads, after.L2Reads, before.L2ReadTime, after.L2ReadTime)
	}
}
