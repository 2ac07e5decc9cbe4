package bytecache_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/cachekit/cachekit/bytecache"
)

func Example() {
	cache, err := bytecache.New(bytecache.Options{MaxBytes: 64 << 20})
	if err != nil {
		panic(err)
	}
	defer cache.Close()

	if err := cache.Set([]byte("greeting"), []byte("hello"), 10*time.Minute); err != nil {
		panic(err)
	}
	buf := make([]byte, 0, 64) // reused between reads: a hit allocates nothing
	buf, ok := cache.Get(buf[:0], []byte("greeting"))
	fmt.Println(string(buf), ok)

	cache.Delete([]byte("greeting"))
	_, ok = cache.Get(buf[:0], []byte("greeting"))
	fmt.Println("after delete:", ok)
	// Output:
	// hello true
	// after delete: false
}

func ExampleTyped() {
	cache := bytecache.Must(bytecache.Options{MaxBytes: 64 << 20})
	defer cache.Close()

	names := bytecache.NewTyped[string, string](cache, bytecache.StringCodec{})
	if err := names.Set("user:1", "Ada", 0); err != nil {
		panic(err)
	}
	name, ok := names.Get("user:1")
	fmt.Println(name, ok)
	// Output: Ada true
}

func ExampleCache_SaveTo() {
	clock := func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
	src := bytecache.Must(bytecache.Options{Now: clock})
	defer src.Close()
	src.Set([]byte("a"), []byte("1"), time.Hour)
	src.Set([]byte("b"), []byte("2"), -1) // never expires

	var snapshot bytes.Buffer
	if err := src.SaveTo(&snapshot); err != nil {
		panic(err)
	}

	dst := bytecache.Must(bytecache.Options{Now: clock})
	defer dst.Close()
	if err := dst.LoadFrom(&snapshot); err != nil {
		panic(err)
	}
	for _, k := range []string{"a", "b"} {
		v, ok := dst.Get(nil, []byte(k))
		fmt.Println(k, string(v), ok)
	}
	// Output:
	// a 1 true
	// b 2 true
}

func ExampleCache_All() {
	cache := bytecache.Must(bytecache.Options{Shards: 1})
	defer cache.Close()
	for _, k := range []string{"x", "y", "z"} {
		cache.Set([]byte(k), []byte("value of "+k), 0)
	}
	cache.Delete([]byte("y"))
	for e := range cache.All() { // oldest first within a shard
		fmt.Printf("%s=%s\n", e.Key, e.Value)
	}
	// Output:
	// x=value of x
	// z=value of z
}
