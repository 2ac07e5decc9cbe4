package cachekit_test

import (
	"fmt"
	"time"

	"github.com/cachekit/cachekit"
)

// The quick start: a cache of at most 10,000 entries that expire after
// five minutes.
func Example() {
	cache, err := cachekit.New(cachekit.Options[string, int]{
		MaxEntries: 10_000,
		DefaultTTL: 5 * time.Minute,
	})
	if err != nil {
		panic(err)
	}
	defer cache.Close()

	cache.Set("answer", 42)
	if v, ok := cache.Get("answer"); ok {
		fmt.Println("answer:", v)
	}
	cache.Delete("answer")
	_, ok := cache.Get("answer")
	fmt.Println("found after delete:", ok)
	// Output:
	// answer: 42
	// found after delete: false
}
