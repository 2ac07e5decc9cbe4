package redis

import (
	"context"
	"errors"
	"testing"
)

// sloppyCodec's Append returns a fresh slice: every Set with it is a codec
// error. After Close, Set must return ErrClosed (as its doc says, and as
// ByteTier.Set does whatever it is given), not the codec's error.
func TestSetAfterCloseIsErrClosed(t *testing.T) {
	c := newTier(t, standaloneClient(t), newSource(), func(o *Options[string]) { o.Codec = sloppyCodec{} })
	if err := c.Set(context.Background(), "k", "v"); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("Set with a failing codec before Close: %v; want the codec's error", err)
	}
	c.Close()
	if err := c.Set(context.Background(), "k", "v"); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v; want ErrClosed", err)
	}
}
