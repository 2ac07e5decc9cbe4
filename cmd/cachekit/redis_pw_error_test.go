package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A --redis URL whose password holds a character that ends the URL's
// authority unescaped ('/', '?', '#') or a bad escape cannot be parsed:
// serve refuses it, and the error it logs must not quote any part of the
// password (url.Parse's errors quote the "port" or the escape they stop
// at, which is the password's beginning).
func TestServeRedisUnparsableURLPasswordNotLogged(t *testing.T) {
	for _, u := range []string{
		"redis://user:s3cretA/rest@127.0.0.1:1",
		"redis://user:s3cretB#rest@127.0.0.1:1",
		"redis://user:s3cretC?rest@127.0.0.1:1",
		"redis://:s3cretD%zz@127.0.0.1:1",
	} {
		var logs bytes.Buffer
		code := serveContext(context.Background(), []string{"--addr", "127.0.0.1:0", "--redis", u},
			func(string) (string, bool) { return "", false }, &logs)
		if code == 0 {
			t.Errorf("--redis %s: accepted", u)
		}
		if strings.Contains(logs.String(), "s3cret") || strings.Contains(logs.String(), "%zz") {
			t.Errorf("--redis %s: the logs show (part of) the password:\n%s", u, logs.String())
		}
	}
}
