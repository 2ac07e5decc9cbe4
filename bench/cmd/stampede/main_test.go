package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	md := filepath.Join(t.TempDir(), "loading.md")
	var out, errs bytes.Buffer
	err := run([]string{"-rounds", "1", "-callers", "20", "-load", "1ms", "-caches", "cachekit,singleflight", "-md", md, "-note", "a test"}, &out, &errs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errs.String())
	}
	for _, want := range []string{"## Cold key", "## Expired hot key", "| cachekit | 1 |", "| singleflight"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errs.String(), "round 1/1") {
		t.Errorf("no progress on stderr: %q", errs.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{
		"go run ./bench/cmd/stampede -rounds 1 -callers 20 -load 1ms -caches cachekit,singleflight -md " + md + " -note 'a test'",
		"> **Note:** a test", "## Cold key", "## Expired hot key", "## What the numbers show", "| cachekit |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q:\n%s", want, doc)
		}
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-callers", "0"}, {"-caches", "nope"}, {"-cases", "warm"}, {"-cases", "cold,cold"}, {"extra"},
	} {
		var out, errs bytes.Buffer
		if err := run(args, &out, &errs); err == nil {
			t.Errorf("run(%q): no error", args)
		}
	}
}
