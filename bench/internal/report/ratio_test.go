package report

import "testing"

// TestRatioNeverShowsATieThatIsNot: a ratio that rounds to 1.00 but is
// not 1 gets the decimals that tell it from 1.
func TestRatioNeverShowsATieThatIsNot(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{
		{1, 1, "1.00×"},
		{3, 2, "1.50×"},
		{10, 1, "10.00×"},
		{996, 1000, "0.996×"},
		{1004, 1000, "1.004×"},
		{9999, 10000, "0.9999×"},
		{994, 1000, "0.99×"},
		{1, 0, "–"},
	} {
		if got := Ratio(tc.a, tc.b); got != tc.want {
			t.Errorf("Ratio(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
