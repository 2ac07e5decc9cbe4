package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A name whose directory part holds ".." after a link to a directory
// (A/link/../out, with A/link → B/c) reaches B/out, as the kernel resolves
// it. Resolve returned such a name untouched when its last element was not
// a link, and WriteFile made its temporary file in filepath.Dir(name),
// which cleans A/link/.. to A as text: the rename then crossed
// directories (and failed across filesystems, where os.WriteFile of the
// same name works). Resolve now resolves that directory part. (Found by a
// review helper.)
func TestDotDotAfterLinkedDirResolvedAsTheKernelDoes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(root, "A"), filepath.Join(root, "B")
	for _, d := range []string{a, filepath.Join(b, "c")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(b, "c"), filepath.Join(a, "link")); err != nil {
		t.Fatal(err)
	}
	name := a + "/link/../out"
	want := filepath.Join(b, "out")
	for _, exists := range []bool{false, true} {
		if exists {
			os.Remove(want) // the first round's, made 0644
			if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
				t.Fatalf("os.WriteFile(%s): %v", name, err)
			}
		}
		if got, err := Resolve(name); err != nil || filepath.Dir(got) != b {
			t.Fatalf("Resolve(%s) (target exists: %v) = %q, %v; want a name in %s", name, exists, got, err, b)
		}
		if err := WriteFile(name, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(want); err != nil || string(got) != "new" {
			t.Fatalf("%s holds %q, %v; want \"new\"", want, got, err)
		}
		if st, _ := os.Stat(want); exists && st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v after WriteFile; want the replaced file's 0600", want, st.Mode().Perm())
		}
		for _, d := range []string{a, b} {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".cachekit-") || e.Name() == "out" && d == a {
					t.Errorf("%s left in %s", e.Name(), d)
				}
			}
		}
		if err := CheckWritable(name); err != nil {
			t.Errorf("CheckWritable(%s) = %v", name, err)
		}
	}
}
