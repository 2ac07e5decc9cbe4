package replay

import (
	"strings"
	"testing"
	"time"
)

// replay.md always said "The unbounded `xsync` map is the reference", even
// when xsync was not replayed (-caches cachekit,otter); the sentence now
// needs xsync among the caches.
func TestXsyncReferenceWithoutXsync(t *testing.T) {
	r := &Report{
		Rounds: 1, Goroutines: []int{2}, Caches: []string{"cachekit", "otter"}, Configs: []string{"c", "o"},
		Traces: []TraceInfo{{Trace: Trace{"t", 10}, Requests: 100, Unique: 20}},
		Results: []Result{
			{Trace: "t", Capacity: 10, Cache: "cachekit", Goroutines: 2, Gets: 100, Hits: 50, GetTime: 10 * time.Microsecond, Wall: time.Millisecond},
			{Trace: "t", Capacity: 10, Cache: "otter", Goroutines: 2, Gets: 100, Hits: 40, GetTime: 12 * time.Microsecond, Wall: time.Millisecond},
		},
	}
	if md := r.Markdown(""); strings.Contains(md, "The unbounded `xsync` map is the reference") {
		t.Errorf("the document names xsync as the reference though it was not replayed")
	}
	r.Caches = append(r.Caches, "xsync")
	if md := r.Markdown(""); !strings.Contains(md, "The unbounded `xsync` map is the reference") {
		t.Errorf("the document does not name xsync as the reference though it was replayed")
	}
}
