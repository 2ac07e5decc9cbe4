package service

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// When the store refused the options for a reason other than the value limit
// (a shard over 1 GiB, a budget under 1 KiB), New halved the default
// max-value-bytes down to 1 and then blamed "max-value-bytes 1", a value the
// user never set, advising to raise max-bytes even where that made things
// worse.
func TestNewErrorNamesStoreNotValueLimit(t *testing.T) {
	for _, o := range []Options{
		{MaxBytes: 2 << 30, Shards: 1}, // 2 GiB in one shard: a shard holds at most 1 GiB
		{MaxBytes: 512},                // below the store's 1 KiB shard minimum
	} {
		o.Logger = slog.New(slog.DiscardHandler)
		s, err := New(o)
		if err == nil {
			s.Close()
			t.Fatalf("MaxBytes %d, Shards %d: New succeeded", o.MaxBytes, o.Shards)
		}
		if !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("MaxBytes %d, Shards %d: %v, want ErrInvalidOptions", o.MaxBytes, o.Shards, err)
		}
		if strings.Contains(err.Error(), "max-value-bytes 1 ") {
			t.Errorf("MaxBytes %d, Shards %d: the error reports a max-value-bytes of 1 that was never given (the default is 1 MiB): %v", o.MaxBytes, o.Shards, err)
		}
	}
}

// Server.Options is documented to return the options in effect with
// defaults filled in, and Options.Now's default is time.Now, but
// Options().Now stayed nil (calling it panicked).
func TestOptionsNowDefaultFilledIn(t *testing.T) {
	s, err := New(Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Options().Now == nil {
		t.Errorf("Options().Now is nil; want the default clock (time.Now) filled in")
	}
}
