package report

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile through a symbolic link replaced the link with a file (the
// document it pointed to stayed stale), and it set 0644 whatever the
// replaced file's permissions were. It now writes through
// atomicfile.WriteFile, as the cachekit command does.
func TestWriteFileThroughLinkKeepsLinkAndMode(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.md")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "doc.md")
	if err := os.Symlink("real.md", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", st.Mode(), err)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "new" {
		t.Fatalf("the link's target holds %q, %v; want new", b, err)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode is %v; want 0600 kept", st.Mode().Perm())
	}
	// A new file in a directory that does not exist yet.
	if err := WriteFile(filepath.Join(dir, "a", "b", "c.md"), []byte("x")); err != nil {
		t.Errorf("WriteFile into a new directory: %v", err)
	}
}
