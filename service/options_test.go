package service

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"512", 512}, {"512B", 512}, {"64KiB", 64 << 10}, {"64k", 64 << 10}, {"1MiB", 1 << 20},
		{"2gib", 2 << 30}, {"1TiB", 1 << 40}, {"1KB", 1000}, {"5MB", 5e6}, {"3GB", 3e9}, {" 7 MiB ", 7 << 20},
	} {
		if got, err := ParseSize(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1.5GiB", "10 apples", "99999999999TiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
	for _, n := range []int64{0, 1, 1000, 1024, 3 << 20, 6 << 30} {
		if got, err := ParseSize(FormatSize(n)); err != nil || got != n {
			t.Errorf("FormatSize(%d) = %q does not parse back: %d, %v", n, FormatSize(n), got, err)
		}
	}
}

func TestFlagsAndEnvironment(t *testing.T) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.RegisterFlags(fs)
	if err := fs.Parse([]string{"--max-bytes", "1GiB", "--default-ttl", "1m"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"CACHEKIT_MAX_BYTES":       "2GiB", // the flag wins
		"CACHEKIT_MAX_VALUE_BYTES": "4KiB",
		"CACHEKIT_ADDR":            ":9999",
		"OTHER":                    "x",
	}
	if err := ApplyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if o.MaxBytes != 1<<30 || o.DefaultTTL != time.Minute || o.MaxValueBytes != 4<<10 || o.Addr != ":9999" || o.MaxKeyBytes != DefaultMaxKeyBytes {
		t.Errorf("options %+v", o)
	}
	var attrs []string
	for _, a := range FlagAttrs(fs) {
		attrs = append(attrs, a.(slog.Attr).String())
	}
	if !slices.Contains(attrs, "max-bytes=1GiB") || !slices.Contains(attrs, "addr=:9999") {
		t.Errorf("attributes %v lack max-bytes=1GiB and addr=:9999", attrs)
	}

	err := ApplyEnv(fs, func(k string) (string, bool) {
		if k == "CACHEKIT_IDLE_TIMEOUT" {
			return "soon", true
		}
		return "", false
	})
	if err == nil || !strings.Contains(err.Error(), "CACHEKIT_IDLE_TIMEOUT") {
		t.Errorf("a bad variable: %v", err)
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, o := range []Options{
		{MaxBytes: -1},
		{Shards: -2},
		{MaxTTL: -time.Second},
		{MaxTTL: 200 * 365 * 24 * time.Hour},
		{DefaultTTL: 2 * time.Hour, MaxTTL: time.Hour},
		{MaxKeyBytes: 70000},
		{MaxValueBytes: -5},
		{MaxBodyBytes: -5},
		{ReadTimeout: -time.Second},
		{MaxBytes: 1 << 20, MaxValueBytes: 1 << 30}, // does not fit a shard
	} {
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}
	// A bad shard count is reported as such, not as a value limit that
	// does not fit.
	if _, err := New(Options{Shards: 3}); err == nil || !strings.Contains(err.Error(), "shards must be") || strings.Contains(err.Error(), "max-value-bytes") {
		t.Errorf("Shards 3: %v", err)
	}
	// An explicit value limit gets shards large enough for it when the
	// store's default number of shards (64 per GOMAXPROCS: 1 MiB each at
	// most here) would be too small; with the shards given, it is refused.
	big, err := New(Options{MaxBytes: 64 << 20, MaxValueBytes: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	if v := big.Options().MaxValueBytes; v != 1<<20 {
		t.Errorf("max value %d bytes; want 1 MiB", v)
	}
	if err := big.Store().Set(make([]byte, DefaultMaxKeyBytes), make([]byte, 1<<20+maxValueHeader), 0); err != nil {
		t.Errorf("the store refuses the largest entry: %v", err)
	}
	if _, err := New(Options{MaxBytes: 64 << 20, Shards: 128, MaxValueBytes: 1 << 20}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("1 MiB values in 512 KiB shards: %v", err)
	}

	// The default value limit shrinks to fit a small budget's shards.
	s, err := New(Options{MaxBytes: 64 << 10, Shards: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := s.Options().MaxValueBytes; v >= 4<<10 || v < 1024 {
		t.Errorf("max value %d bytes with 4 KiB shards", v)
	}
}
