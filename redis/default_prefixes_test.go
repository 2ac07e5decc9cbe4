package redis

import (
	"context"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// The default prefixes nested (DefaultBytePrefix was "cachekit:bytes:",
// which starts with DefaultPrefix "cachekit:"): a Cache and a ByteTier left
// at their defaults on one Redis shared keys, a Cache's Set of "bytes:k"
// overwrote the ByteTier's entry "k", and the ByteTier's readers were not
// told (the Cache publishes on its own channel).
func TestDefaultPrefixesKeepKeysApart(t *testing.T) {
	s := private(t)
	ctx := context.Background()
	cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{s.Addr()}}).Simple())
	t.Cleanup(func() { _ = cl.Close() })
	bt, err := NewByteTier(ByteTierOptions{Client: cl}) // the cachekit service's default --redis-prefix
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bt.Close)
	ld := loading.LoaderFunc[string, string](func(context.Context, string) (string, error) { return "", loading.ErrNotFound })
	c, err := New(Options[string]{Client: cl, Loader: ld}) // Options.Prefix left at its default
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	if err := bt.Set(ctx, []byte("k"), []byte("service value"), time.Hour); err != nil {
		t.Fatal(err)
	}
	// An unrelated key of the Go program's Cache.
	if err := c.Set(ctx, "bytes:k", "cache value"); err != nil {
		t.Fatal(err)
	}
	v, _, ok, err := bt.Get(ctx, nil, []byte("k"))
	if err != nil || !ok || string(v) != "service value" {
		t.Fatalf("ByteTier.Get(k) = %q, found %v, %v after a Cache's Set of an unrelated key \"bytes:k\"; want \"service value\" (the defaults %q and %q overlap: Redis key %q is both)",
			v, ok, err, DefaultPrefix, DefaultBytePrefix, DefaultBytePrefix+"k")
	}
}
