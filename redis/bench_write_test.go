package redis

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkWrite measures a ByteTier's Set and Delete (each one round
// trip: the write's script and the invalidation's PUBLISH, pipelined)
// against the shared standalone server, one goroutine, over 1,000 keys.
func BenchmarkWrite(b *testing.B) {
	srv := standaloneB(b)
	client, _ := backend{addrs: []string{srv.Addr()}}.clientB(b)
	bt, err := NewByteTier(ByteTierOptions{Client: client, Prefix: fmt.Sprintf("benchw:%d:", runID), Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(bt.Close)
	ctx := context.Background()
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", i)
	}
	value := make([]byte, 100)
	b.Run("op=set", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := bt.Set(ctx, keys[i%len(keys)], value, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=delete", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := bt.Delete(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
