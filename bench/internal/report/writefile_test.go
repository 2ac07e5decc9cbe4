package report

import (
	"os"
	"path/filepath"
	"testing"
)

// A WriteFile whose final rename fails (here: the name is a directory)
// must not leave its temporary file behind, as its other failures do not.
func TestWriteFileFailedRenameLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "doc.md")
	if err := os.Mkdir(name, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("# doc\n")); err == nil {
		t.Fatal("WriteFile over a directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "doc.md" {
			t.Errorf("WriteFile left %s in the directory", e.Name())
		}
	}
}
