package main

import (
	"context"
	"testing"
)

// Without --max-header-bytes, serve must take the documented default
// (service.Options.MaxHeaderBytes: "64 KiB, or that minimum if larger"),
// so any --max-key-bytes up to the documented 65535 starts.
func TestServeMaxKeyBytesWithoutHeaderFlag(t *testing.T) {
	checkLeaks(t)
	addrc := make(chan string, 1)
	serveListening = func(addr string) { addrc <- addr }
	defer func() { serveListening = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0", "--max-key-bytes", "65535", "--log-format", "json"},
			func(string) (string, bool) { return "", false }, &logs)
	}()
	select {
	case <-addrc:
	case code := <-done:
		t.Fatalf("serve --max-key-bytes 65535 exited with %d:\n%s", code, logs.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
