package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// cachekit load used to start its --cpuprofile (creating, so truncating,
// the file) before load.Run checked the options: a usage error (no URL,
// --write-ratio 2, --zipf 0.5) exited 2 having replaced an earlier run's
// profile with an empty one. The options are now checked first.
func TestLoadUsageErrorKeepsProfile(t *testing.T) {
	for _, args := range [][]string{
		{}, // no URL
		{"--url", "http://127.0.0.1:1", "--write-ratio", "2"},
		{"--url", "http://127.0.0.1:1", "--zipf", "0.5"},
	} {
		prof := filepath.Join(t.TempDir(), "cpu.prof")
		const earlier = "the profile of an earlier run"
		if err := os.WriteFile(prof, []byte(earlier), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := loadContext(context.Background(), append([]string{"--cpuprofile", prof}, args...), &out, &errOut, false)
		if code != 2 {
			t.Fatalf("%q: exit %d, want 2 (a usage error); stderr %q", args, code, errOut.String())
		}
		got, err := os.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != earlier {
			t.Errorf("%q: a usage error (%s) replaced the earlier --cpuprofile file with %d bytes of an empty profile",
				args, bytes.TrimSpace(errOut.Bytes()), len(got))
		}
	}
}
