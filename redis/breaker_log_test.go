package redis

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Changes of the breaker's state were logged under one limit (one line a
// second): when a probe succeeded right after the breaker went half-open,
// "to=closed" was dropped, and the log's last word about the breaker said
// half-open while it was closed. Each state changed to has its own limit.
func TestBreakerLogShowsTheClosingAfterHalfOpen(t *testing.T) {
	var buf bytes.Buffer
	c := &core{log: slog.New(slog.NewTextHandler(&buf, nil))}
	c.breakerChanged("", BreakerClosed, BreakerOpen)
	c.breakerChanged("", BreakerOpen, BreakerHalfOpen)
	c.breakerChanged("", BreakerHalfOpen, BreakerClosed)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "to="+BreakerClosed.String()) {
		t.Errorf("log of closed → open → half-open → closed:\n%s\nwant three lines, the last to=%s", buf.String(), BreakerClosed)
	}
}
