package redis

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// After Close, a Delete of a key longer than MaxBulkLen returned
// ErrTooLarge (and counted it) instead of ErrClosed: the length was checked
// before Close, unlike in Set and the ByteTier's methods.
func TestCacheDeleteOfLongKeyAfterCloseIsErrClosed(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	c := newTier(t, cl, newSource(), func(o *Options[string]) { o.MaxBulkLen = 1 << 10 })
	c.Close()
	long := strings.Repeat("k", 1<<10)
	err := c.Delete(context.Background(), long)
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Delete of a %d-byte key after Close: %v; want ErrClosed (as for any other key)", len(long), err)
	}
	if n := c.Stats().L2TooLarge; n != 0 {
		t.Errorf("Stats.L2TooLarge after a Delete refused by Close = %d; want 0", n)
	}
}

// MaxBulkLen bounds every string sent to Redis, but the invalidation
// channel (Prefix and "invalidate", sent with every SUBSCRIBE and PUBLISH)
// was not checked: a Prefix whose channel was too long was accepted, the
// subscription never came up, and every Set failed with Redis's protocol
// error (the connection then closed). New and NewByteTier refuse it.
func TestPrefixWhoseChannelExceedsMaxBulkLen(t *testing.T) {
	cl := smallBulkServer(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	prefix := testPrefix(t)
	// Prefix + "k" fits in MaxBulkLen; Prefix + "invalidate" does not.
	prefix += strings.Repeat("p", testBulkLen-4-len(prefix))
	c, err := New(Options[string]{Client: cl, Loader: newSource(), Prefix: prefix, Timeout: time.Second,
		MaxBulkLen: testBulkLen, Logger: quiet, ResubscribeDelay: time.Hour})
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "MaxBulkLen") {
		t.Errorf("New with an invalidation channel of %d bytes (MaxBulkLen %d): %v; want ErrInvalidOptions naming MaxBulkLen",
			len(prefix)+len("invalidate"), testBulkLen, err)
	}
	bt, err := NewByteTier(ByteTierOptions{Client: cl, Prefix: prefix, Timeout: time.Second,
		MaxBulkLen: testBulkLen, Logger: quiet, ResubscribeDelay: time.Hour})
	if bt != nil {
		bt.Close()
	}
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "MaxBulkLen") {
		t.Errorf("NewByteTier with an invalidation channel of %d bytes (MaxBulkLen %d): %v; want ErrInvalidOptions naming MaxBulkLen",
			len(prefix)+len("invalidate"), testBulkLen, err)
	}
	// One byte shorter, the channel fits: both start.
	prefix = prefix[:testBulkLen-len("invalidate")]
	c, err = New(Options[string]{Client: cl, Loader: newSource(), Prefix: prefix, Timeout: time.Second,
		MaxBulkLen: testBulkLen, Logger: quiet, ResubscribeDelay: time.Hour})
	if err != nil {
		t.Errorf("New with an invalidation channel of exactly MaxBulkLen bytes: %v", err)
	} else {
		c.Close()
	}
}
