package main

import "testing"

// Without --max-header-bytes, serve must take the documented default
// (service.Options.MaxHeaderBytes: "64 KiB, or that minimum if larger"),
// so any --max-key-bytes up to the documented 65535 starts.
func TestServeMaxKeyBytesWithoutHeaderFlag(t *testing.T) {
	checkLeaks(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-key-bytes", "65535", "--log-format", "json"}, nil)
	if addr == "" {
		t.Fatalf("serve --max-key-bytes 65535 exited with %d:\n%s", stop(), logs.String())
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
