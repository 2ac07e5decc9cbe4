package service

import (
	"flag"
	"io"
	"log/slog"
	"testing"
)

// DefaultOptions is the pairing RegisterFlags' doc points to: limits that
// New fits to the others (MaxValueBytes to MaxBytes, MaxHeaderBytes to
// MaxKeyBytes) must still be fitted when only the others are given.
func TestDefaultOptionsFlagsFitDerivedLimits(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		check func(o Options) bool
		want  string
	}{
		{[]string{"--max-key-bytes", "32KiB"},
			func(o Options) bool { return o.MaxHeaderBytes >= 3*(32<<10)+4<<10 },
			"max-header-bytes raised to hold a percent-encoded key of 32 KiB"},
		{[]string{"--max-bytes", "1MiB"},
			func(o Options) bool { return o.MaxValueBytes < DefaultMaxValueBytes && o.MaxValueBytes > 0 },
			"max-value-bytes halved to fit max-bytes"},
		{nil,
			func(o Options) bool {
				return o.MaxValueBytes == DefaultMaxValueBytes && o.MaxHeaderBytes == 64<<10
			},
			"the defaults"},
	} {
		o := DefaultOptions()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o.Logger = slog.New(slog.DiscardHandler)
		s, err := New(o)
		if err != nil {
			t.Errorf("%v: New: %v", tc.args, err)
			continue
		}
		if got := s.Options(); !tc.check(got) {
			t.Errorf("%v: max-value-bytes %d, max-header-bytes %d: want %s", tc.args, got.MaxValueBytes, got.MaxHeaderBytes, tc.want)
		}
		s.Close()
	}
}
