package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// A sender whose clock was never set (at the Unix epoch) makes each of its
// invalidations decades late: a handful of them must not wrap the total lag
// to a negative Duration.
func TestInvalidationLagFromUnsetClockSaturates(t *testing.T) {
	c := &core{id: "receiver", invalidate: func(string) {}}
	c.brk = newBreaker(1, time.Second, nil, nil)
	m := []byte{msgVersion}
	m = binary.BigEndian.AppendUint64(m, 0) // sent at 1970-01-01
	m = append(m, byte(len("sender")))
	m = append(m, "sender"...)
	m = append(m, "key"...)
	for range 8 {
		c.onMessage(string(m))
	}
	st := c.stats()
	if st.InvalidationsReceived != 8 {
		t.Fatalf("InvalidationsReceived = %d, want 8", st.InvalidationsReceived)
	}
	if st.InvalidationLag < st.InvalidationLagMax || st.InvalidationLagMax < 50*365*24*time.Hour {
		t.Fatalf("InvalidationLag = %v, InvalidationLagMax = %v: the total wrapped", st.InvalidationLag, st.InvalidationLagMax)
	}
}

// With a TTL of a nanosecond and a jitter, no L1 lifetime fits within TTL
// once stretched: the default Local.TTL must not come out as zero, which L1
// reads as "never stale" (values kept for ever, while Redis drops them).
func TestTinyTTLWithJitterLeavesNoEternalL1(t *testing.T) {
	cl := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer cl.Close()
	o := Options[string]{
		Client: cl,
		Loader: loading.LoaderFunc[string, string](func(context.Context, string) (string, error) { return "", nil }),
		TTL:    time.Nanosecond,
	}
	o.Local.TTLJitter = 0.5
	err := o.resolve()
	if err == nil && o.Local.TTL <= 0 {
		t.Fatalf("resolve accepted TTL %v with Local.TTLJitter %v and left Local.TTL at %v (never stale in L1)",
			o.TTL, o.Local.TTLJitter, o.Local.TTL)
	}
	if err != nil && !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("error %v does not wrap ErrInvalidOptions", err)
	}
}

// A nil client of a go-redis type in Options.Client (a typed nil: the
// interface is not nil) is a missing client: New and NewByteTier return an
// error wrapping ErrInvalidOptions, rather than panicking.
func TestTypedNilClientRefused(t *testing.T) {
	ld := loading.LoaderFunc[string, string](func(context.Context, string) (string, error) { return "", nil })
	for name, cl := range map[string]goredis.UniversalClient{
		"*Client":        (*goredis.Client)(nil),
		"*ClusterClient": (*goredis.ClusterClient)(nil),
		"*Ring":          (*goredis.Ring)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			check := func(what string, f func() error) {
				t.Helper()
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("%s panicked: %v", what, p)
						}
					}()
					err = f()
				}()
				if !errors.Is(err, ErrInvalidOptions) {
					t.Fatalf("%s: error %v, want one wrapping ErrInvalidOptions", what, err)
				}
			}
			check("New", func() error {
				c, err := New(Options[string]{Client: cl, Loader: ld})
				if err == nil {
					c.Close()
				}
				return err
			})
			check("NewByteTier", func() error {
				bt, err := NewByteTier(ByteTierOptions{Client: cl})
				if err == nil {
					bt.Close()
				}
				return err
			})
		})
	}
}
