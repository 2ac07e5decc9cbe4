package bytecache

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A TTL so long that the expiry instant is past what a Unix nanosecond
// time can hold (year 2262) never ends: All reports such an entry as
// never expiring (the zero Expires), not as expiring in 2262.
func TestHugeTTLNeverExpires(t *testing.T) {
	clk := newClock()
	c := newCache(t, Options{MaxBytes: 1 << 20, Now: clk.Now})
	set(t, c, "k", "v", time.Duration(1<<63-1))
	n := 0
	for e := range c.All() {
		n++
		if !e.Expires.IsZero() {
			t.Errorf("Expires %v, want the zero time (never)", e.Expires.UTC())
		}
	}
	if n != 1 {
		t.Fatalf("All saw %d entries, want 1", n)
	}
}

// After Close, Set returns ErrClosed, whatever it is given: a key or value
// it would refuse as too large too.
func TestSetAfterCloseTooLarge(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20, MaxKeyBytes: 8})
	c.Close()
	if err := c.Set([]byte(strings.Repeat("k", 9)), []byte("v"), 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Set of a too-long key after Close: %v, want ErrClosed", err)
	}
	if err := c.Set([]byte("k"), make([]byte, 1<<20), 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Set of a too-large value after Close: %v, want ErrClosed", err)
	}
}
