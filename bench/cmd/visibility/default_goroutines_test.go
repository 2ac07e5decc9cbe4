package main

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// The default -goroutines was built as "1,GOMAXPROCS,4×GOMAXPROCS", which
// on one processor (a one-CPU VM or container) is "1,1,4": the flag refuses
// a count given twice, so the command failed with its defaults before
// measuring anything. It is now "1,4" there.
func TestDefaultGoroutinesOnOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Only the defaults of -goroutines matter; the rest keeps the run tiny.
	args := []string{"-probes", "100", "-rounds", "1", "-caches", "xsync", "-capacity", "16"}
	var stderr bytes.Buffer
	if err := run(args, io.Discard, &stderr); err != nil {
		t.Fatalf("with GOMAXPROCS 1 and the default -goroutines, run(%q) failed: %v", args, err)
	}
}
