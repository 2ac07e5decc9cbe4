package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A --redis value that runs a URL with a password into something else (a
// list of addresses or of URLs, which --redis does not take) parses as a
// URL whose password url.URL.Redacted does not find: an opaque part or a
// path holding "user:password@". serve refuses it, and neither its
// configuration log nor its error shows the password.
func TestServeRedisStrayPasswordNotLogged(t *testing.T) {
	for _, u := range []string{
		"cache1:6379,redis://:s3cretA@127.0.0.1:1",
		"redis://127.0.0.1:1/0,redis://:s3cretB@127.0.0.1:2",
		"redis://:pw@127.0.0.1:1/,redis://:s3cretC@127.0.0.1:2",
	} {
		var logs bytes.Buffer
		code := serveContext(context.Background(), []string{"--addr", "127.0.0.1:0", "--redis", u},
			func(string) (string, bool) { return "", false }, &logs)
		if code == 0 {
			t.Errorf("--redis %s: accepted", u)
		}
		if strings.Contains(logs.String(), "s3cret") {
			t.Errorf("--redis %s: the logs show the password:\n%s", u, logs.String())
		}
	}
}
