package redis

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// A type graph where each level refers to the next one twice (a DAG, no
// cycle): describe expands it as a tree, 2^depth times the leaf.
type fpL0 struct{ A, B int }
type fpL1 struct{ A, B fpL0 }
type fpL2 struct{ A, B fpL1 }
type fpL3 struct{ A, B fpL2 }
type fpL4 struct{ A, B fpL3 }
type fpL5 struct{ A, B fpL4 }
type fpL6 struct{ A, B fpL5 }
type fpL7 struct{ A, B fpL6 }
type fpL8 struct{ A, B fpL7 }
type fpL9 struct{ A, B fpL8 }
type fpL10 struct{ A, B fpL9 }
type fpL11 struct{ A, B fpL10 }
type fpL12 struct{ A, B fpL11 }
type fpL13 struct{ A, B fpL12 }
type fpL14 struct{ A, B fpL13 }
type fpL15 struct{ A, B fpL14 }
type fpL16 struct{ A, B fpL15 }

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n++; return len(p), nil }

// The fingerprint's work grows with the number of types, not with the
// number of paths through the type graph (17 small struct types used to
// cost 2^17 expansions, and a few more levels hung New).
func TestFingerprintSharedTypesLinear(t *testing.T) {
	w := &countingWriter{}
	describe(w, reflect.TypeFor[fpL16](), map[reflect.Type]int{})
	if w.n > 10_000 {
		t.Fatalf("describe of 17 struct types (each with 2 fields) made %d writes", w.n)
	}
}

// A Set whose context has already ended (the caller gave up) fails before
// anything reaches Redis, and changes L1 no more than Redis: this instance
// must not serve a value that Redis and every other instance never saw.
func TestSetCancelledContextChangesNothing(t *testing.T) {
	cl := standaloneClient(t)
	a := newTier(t, cl, newSource(), nil)
	b := newTier(t, cl, newSource(), nil)
	waitSubscribed(t, a, b)
	ctx := context.Background()
	if err := a.Set(ctx, "k", "v0"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err := a.Set(cctx, "k", "v1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Set with a cancelled context: %v, want context.Canceled", err)
	}
	if raw, _ := rawGet(t, cl, testPrefix(t)+"k"); len(raw) < headerSize || raw[headerSize:] != "v0" {
		t.Fatalf("Redis holds %q, want v0", raw)
	}
	mustGet(t, b, "k", "v0")
	mustGet(t, a, "k", "v0")
}

// Binary keys (NUL, invalid UTF-8, newline, a key that looks like a
// message header) round-trip across instances and invalidate.
func TestBinaryKeysAcrossInstances(t *testing.T) {
	cl := standaloneClient(t)
	src := newSource()
	a := newTier(t, cl, src, nil)
	b := newTier(t, cl, src, nil)
	waitSubscribed(t, a, b)
	ctx := context.Background()
	keys := []string{"", "\x00", "\xff\xfe", "a\nb", "\x01\x00\x00\x00\x00\x00\x00\x00\x00\x10", "{tag}x", "invalidate"}
	for i, k := range keys {
		if err := a.Set(ctx, k, "a"); err != nil {
			t.Fatal(err)
		}
		mustGet(t, b, k, "a")
		if err := a.Set(ctx, k, "b"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "invalidation", func() bool { return b.Stats().InvalidationsReceived == uint64(2*(i+1)) })
		mustGet(t, b, k, "b")
	}
}

// After Close the subscription is gone, and Stats says so.
func TestNotSubscribedAfterClose(t *testing.T) {
	cl := standaloneClient(t)
	a := newTier(t, cl, newSource(), nil)
	waitSubscribed(t, a)
	a.Close()
	if a.Stats().Subscribed {
		t.Error("Cache: Stats().Subscribed is true after Close")
	}
	bt, _ := newByteTier(t, cl, nil)
	waitTierSubscribed(t, bt)
	bt.Close()
	if bt.Stats().Subscribed {
		t.Error("ByteTier: Stats().Subscribed is true after Close")
	}
}

// A cluster client that reads from replicas is refused: an instance
// re-reads a key as soon as another's invalidation arrives, and a replica
// that has not yet copied the write would give it the old value, kept in
// L1 with no further message to drop it.
func TestReplicaReadingClientRefused(t *testing.T) {
	ld := loading.LoaderFunc[string, string](func(context.Context, string) (string, error) { return "", nil })
	for name, o := range map[string]goredis.ClusterOptions{
		"ReadOnly":       {ReadOnly: true},
		"RouteByLatency": {RouteByLatency: true},
		"RouteRandomly":  {RouteRandomly: true},
	} {
		o.Addrs, o.ContextTimeoutEnabled = []string{"127.0.0.1:1"}, true
		cl := goredis.NewClusterClient(&o)
		if _, err := New(Options[string]{Client: cl, Loader: ld}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New with %s: err %v, want ErrInvalidOptions", name, err)
		}
		if _, err := NewByteTier(ByteTierOptions{Client: cl}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewByteTier with %s: err %v, want ErrInvalidOptions", name, err)
		}
		cl.Close()
	}
}

// signalCodec is the default codec that calls on with every value it
// encodes.
type signalCodec struct {
	Codec[string]
	on func(v string)
}

func (s signalCodec) Append(dst []byte, v string) ([]byte, error) {
	s.on(v)
	return s.Codec.Append(dst, v)
}

// A Set that waits for its turn (another Set of the key holds it) stamps
// the Redis entry's expiry when it writes L1, not when it began: otherwise
// the L1 copy, whose lifetime starts then, would outlive the Redis entry
// by the wait.
func TestSetExpiryCountsFromItsTurn(t *testing.T) {
	client := standaloneClient(t)
	base := time.Now()
	var off atomic.Int64
	wallClock = func() time.Time { return base.Add(time.Duration(off.Load())) }
	defer func() { wallClock = time.Now }()
	encoded := make(chan string, 2)
	c := newTier(t, client, newSource(), func(o *Options[string]) {
		o.TTL = time.Minute
		o.Codec = signalCodec{DefaultCodec[string](), func(v string) { encoded <- v }}
	})
	h := newPipeHold("set")
	client.AddHook(h)
	ctx := context.Background()
	first := make(chan error, 1)
	go func() { first <- c.Set(ctx, "k", "v1") }()
	<-encoded
	<-h.entered // v1's write holds the key's turn
	second := make(chan error, 1)
	go func() { second <- c.Set(ctx, "k", "v2") }()
	<-encoded // v2 encoded at base; it waits for its turn
	off.Store(int64(10 * time.Second))
	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	raw, _ := rawGet(t, client, c.prefix+"k")
	e := parseEntry(raw)
	if want := base.Add(10*time.Second + time.Minute).UnixMilli(); e.kind != kindValue || e.exp < want {
		t.Fatalf("v2's entry expires at %d, want at least %d (TTL counted from its turn)", e.exp, want)
	}
}
