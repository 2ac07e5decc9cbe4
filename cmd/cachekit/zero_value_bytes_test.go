package main

import (
	"context"
	"strings"
	"testing"
)

// --max-value-bytes 0 selects the server's default (1 MiB), which a small
// --max-bytes lowers: that must be reported as for an absent flag (or the
// zero refused), not done silently.
func TestServeZeroMaxValueBytesLoweredReported(t *testing.T) {
	checkLeaks(t)
	addrc := make(chan string, 1)
	serveListening = func(addr string) { addrc <- addr }
	defer func() { serveListening = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0", "--max-bytes", "1MiB", "--max-value-bytes", "0", "--log-format", "json"},
			func(string) (string, bool) { return "", false }, &logs)
	}()
	select {
	case <-addrc:
	case code := <-done:
		if code == 2 {
			return // refused as a usage error: fine
		}
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
	cancel()
	<-done
	if !strings.Contains(logs.String(), "lowered") {
		t.Errorf("--max-value-bytes 0 with --max-bytes 1MiB: the limit in effect (512KiB) is not reported; logs:\n%s", logs.String())
	}
}
