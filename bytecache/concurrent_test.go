package bytecache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrent runs writers, readers and whole-cache operations at once
// (meant for -race). Every value names its key, so a read that returns
// another key's value, or a torn value, is caught.
func TestConcurrent(t *testing.T) {
	clk := newClock()
	c := newCache(t, withChunkShift(Options{MaxBytes: 64 << 10, Shards: 4, Now: clk.Now}, 8))
	const keys = 300
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	valid := func(key, v []byte) error {
		if !bytes.HasPrefix(v, append(key, '=')) || !bytes.HasSuffix(v, []byte{'.'}) {
			return fmt.Errorf("key %q has value %q", key, v)
		}
		return nil
	}
	var workers sync.WaitGroup
	for g := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			var dst []byte
			for i := range 4000 {
				key := []byte(fmt.Sprintf("key%d", r.IntN(keys)))
				switch op := r.IntN(10); {
				case op < 4:
					v := fmt.Sprintf("%s=%d%s.", key, i, strings.Repeat("x", r.IntN(600)))
					ttl := time.Duration(-1)
					if op == 0 {
						ttl = time.Duration(r.IntN(3)) * time.Millisecond
					}
					if err := c.Set(key, []byte(v), ttl); err != nil {
						report(err)
						return
					}
				case op < 9:
					var ok bool
					if dst, ok = c.Get(dst[:0], key); ok {
						if err := valid(key, dst); err != nil {
							report(err)
							return
						}
					}
				default:
					c.Delete(key)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // whole-cache operations and the clock
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			clk.Advance(time.Millisecond)
			switch i % 4 {
			case 0:
				c.Len()
				c.Stats()
			case 1:
				for e := range c.All() {
					if err := valid(e.Key, e.Value); err != nil {
						report(err)
						return
					}
				}
			case 2:
				var buf bytes.Buffer
				if err := c.SaveTo(&buf); err != nil {
					report(err)
					return
				}
				if err := c.LoadFrom(&buf); err != nil {
					report(err)
					return
				}
			case 3:
				if i%40 == 3 {
					c.Clear()
				}
			}
		}
	}()
	workers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustCheck(t, c)
}
