package throughput

import (
	"strings"
	"testing"
)

// throughput.md was drawn again from throughput.json with a new -note: the
// document showed the new note but the run's command with the run's
// -note, so the command it showed did not give the note it showed.
// Report.SetNote now replaces the command's -note too, as the other
// reports' Header.SetNote does.
func TestSetNoteReplacesTheCommandsNote(t *testing.T) {
	r := &Report{Command: "go run ./bench/cmd/throughput -rounds 5 -md docs/benchmarks/throughput.md -note 'the run'\\''s note'"}
	r.SetNote("redrawn with paired ratios")
	want := "go run ./bench/cmd/throughput -rounds 5 -md docs/benchmarks/throughput.md -note 'redrawn with paired ratios'"
	if r.Command != want || r.Note != "redrawn with paired ratios" {
		t.Fatalf("after SetNote: command\n%s\nnote %q; want command\n%s", r.Command, r.Note, want)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); !strings.Contains(md, "`"+want+"`") {
		t.Errorf("the document does not show the command with the new note:\n%s", md[:min(len(md), 600)])
	}
}
