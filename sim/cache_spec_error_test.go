package sim

import "testing"

// NewCache (and so Trace.Run) used to hand every spec other than the exact
// names "cache", "opt" and "opt-bypass" to the policy registry, whose error
// said `unknown policy "opt"` for "opt:1" and left cache, opt and
// opt-bypass out of the known names for a misspelt one. It now refuses a
// bad spec with Check's reasons, as its doc says ("see Check").
func TestNewCacheRefusesAsCheck(t *testing.T) {
	tr := NewTrace([]uint64{1, 2, 3})
	for _, spec := range []string{"opt:1", "cache:1", "opt-bypass:0.5", "no-such-policy"} {
		want := Check(spec)
		_, err := tr.NewCache(spec, 10)
		if want == nil || err == nil {
			t.Fatalf("%q: Check %v, NewCache %v: both should fail", spec, want, err)
		}
		if err.Error() != want.Error() {
			t.Errorf("NewCache(%q): %q\n\tCheck says: %q", spec, err, want)
		}
	}
}
