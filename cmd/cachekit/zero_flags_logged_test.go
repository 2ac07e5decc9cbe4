package main

import (
	"strings"
	"testing"
)

// An explicit zero given to a serve flag selects the server's default
// (service.Options: "The zero value of each field selects the default"):
// the configuration printed at start must show the value in effect, not
// the zero (--read-timeout 0 reads as "no read timeout", as for net/http,
// while the server cuts requests at 30s), or the zero be refused as a
// usage error as cachekit load refuses its zeros.
func TestServeZeroFlagsLoggedAsInEffect(t *testing.T) {
	checkLeaks(t)
	args := []string{"--addr", "127.0.0.1:0", "--log-format", "json", "--max-bytes", "0", "--default-ttl", "0",
		"--read-timeout", "0", "--write-timeout", "0", "--idle-timeout", "0", "--read-header-timeout", "0",
		"--shutdown-timeout", "0", "--max-ttl", "0", "--max-key-bytes", "0", "--max-body-bytes", "0"}
	addr, logs, stop := runServe(t, args, nil)
	code := stop()
	if addr == "" && code == 2 {
		return // refused as a usage error: fine
	}
	if addr == "" {
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
	for _, want := range []string{`"max-bytes":"256MiB"`, `"default-ttl":"10m0s"`, `"read-timeout":"30s"`, `"write-timeout":"30s"`,
		`"idle-timeout":"2m0s"`, `"read-header-timeout":"5s"`, `"shutdown-timeout":"30s"`, `"max-ttl":"876000h0m0s"`,
		`"max-key-bytes":"1KiB"`, `"max-body-bytes":"8MiB"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the configuration log lacks %s (the value in effect):\n%s", want, logs.String())
		}
	}
}
