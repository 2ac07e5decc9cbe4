package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/cachekit/cachekit"
)

// demo replays a skewed (Zipf) stream of reads through a bounded cache that
// loads missing keys, and prints the statistics.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr)
	capacity := fs.Int("capacity", 1000, "maximum number of entries")
	keys := fs.Uint64("keys", 100_000, "number of distinct keys")
	requests := fs.Int("requests", 1_000_000, "number of reads")
	seed := fs.Uint64("seed", 1, "random seed of the key stream")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cachekit demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *capacity <= 0 || *keys < 2 || *requests <= 0 {
		fmt.Fprintln(stderr, "cachekit demo: -capacity, -requests must be positive and -keys at least 2")
		return 2
	}
	c, err := cachekit.New(cachekit.Options[uint64, string]{
		MaxEntries: *capacity,
		DefaultTTL: time.Hour,
	})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer c.Close()

	zipf := rand.NewZipf(rand.New(rand.NewPCG(*seed, *seed)), 1.01, 1, *keys-1)
	start := time.Now()
	for range *requests {
		k := zipf.Uint64()
		if _, ok := c.Get(k); !ok {
			c.Set(k, fmt.Sprint("value of ", k))
		}
	}
	elapsed := time.Since(start)
	s := c.Stats()
	fmt.Fprintf(stdout, "%d reads of %d Zipf(1.01) keys through a cache of %d entries in %v\n",
		*requests, *keys, *capacity, elapsed.Round(time.Millisecond))
	fmt.Fprintf(stdout, "hits %d, misses %d, hit ratio %.2f%%\n", s.Hits, s.Misses, 100*s.HitRatio())
	fmt.Fprintf(stdout, "entries %d, evicted %d, expired %d\n", s.Entries, s.Evicted, s.Expired)
	return 0
}
