package redis

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// New panicked when Options.Codec was a typed nil (an uninitialised
// *StringCodec or *JSONCodec[T]): the fingerprint called its Name. It now
// returns an error wrapping ErrInvalidOptions, as for a typed-nil Client.
func TestTypedNilCodecRefused(t *testing.T) {
	dead := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = dead.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("New with a typed-nil Codec panicked: %v; want an error wrapping ErrInvalidOptions", p)
			}
		}()
		var c *Cache[string]
		c, err = New(Options[string]{Client: dead, Loader: newSource(), Prefix: testPrefix(t),
			Codec: (*StringCodec)(nil), Timeout: 20 * time.Millisecond, ResubscribeDelay: time.Hour, Logger: quiet})
		if c != nil {
			c.Close()
		}
	}()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New with a typed-nil Codec: %v; want an error wrapping ErrInvalidOptions", err)
	}
}
