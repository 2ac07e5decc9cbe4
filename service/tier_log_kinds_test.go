package service

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// writeFailTier is a mapTier whose Set always fails (a Redis refusing
// writes: -OOM at maxmemory with noeviction, or a read-only replica) while
// its Get and Delete work.
type writeFailTier struct{ mapTier }

func (*writeFailTier) Set(context.Context, []byte, []byte, time.Duration) error {
	return errors.New("OOM command not allowed when used memory > 'maxmemory'")
}

// Tier warnings were limited to one a second by a single limiter shared by
// every kind: with a Tier whose writes fail (logged at the write rate), a
// foreign value read as a miss (tier.go: "which is also logged") or a
// failed read was almost never logged. Each kind now has its own limit.
func TestTierWarningKindsLimitedApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs lockedBuffer
		tier := &writeFailTier{mapTier{m: map[string][]byte{"foreign": []byte("\x7fnot ours")}, ttl: map[string]time.Duration{}}}
		s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if w := svcfuzzDo(s, "PUT", "/v1/entries/mine", nil, "v"); w.Code != 204 {
			t.Fatalf("PUT with the tier's writes failing: %d %s", w.Code, w.Body)
		}
		if !strings.Contains(logs.String(), "second tier: set failed") {
			t.Fatalf("the failed tier write was not logged: %q", logs.String())
		}
		if w := svcfuzzDo(s, "GET", "/v1/entries/foreign", nil, ""); w.Code != 404 {
			t.Fatalf("GET of a foreign tier value: %d %s; want 404", w.Code, w.Body)
		}
		if !strings.Contains(logs.String(), "not in the server's format") {
			t.Errorf("a foreign value read from the Tier was not logged (tier.go: \"which is also logged\"): a tier write failure logged just before silenced it; logs: %q", logs.String())
		}
	})
}
