package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadsNoWorkloadRuns: a -reads share that no workload runs (7 for
// 75) is refused, as it is alone; next to a share that some workload runs
// it was dropped without a word and the run went ahead without it.
func TestReadsNoWorkloadRuns(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run([]string{"-duration", "1ms", "-rounds", "1", "-caches", "xsync", "-workloads", "getput",
		"-reads", "100,7", "-mults", "1"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "7% reads") {
		t.Fatalf("run -reads 100,7 = %v, want an error naming 7%% reads", err)
	}
	if strings.Contains(stderr.String(), "round 1/1") {
		t.Errorf("-reads 100,7 measured: %s", stderr.String())
	}
}
