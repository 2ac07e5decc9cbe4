package hitratio

import (
	"os"
	"path/filepath"
	"testing"
)

// A chart that cannot be drawn must leave the file of the previous run as
// it was: WriteFile truncated it first, then removed it on the error.
func TestChartWriteFileFailureKeepsThePreviousChart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hit-ratio-t.png")
	old := []byte("the previous run's chart")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (Chart{Title: "t"}).WriteFile(path); err == nil {
		t.Fatal("WriteFile of a chart without series succeeded")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the previous chart is gone: %v", err)
	}
	if string(got) != string(old) {
		t.Errorf("the previous chart was overwritten: %q", got)
	}
}
