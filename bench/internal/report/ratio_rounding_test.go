package report

import "testing"

// Ratio of two figures one float rounding apart (0.1+0.2 against 0.3)
// printed "1.000000000000000×": fifteen decimals that still read as a tie.
// Decimals stop at 6, and a ratio within a millionth of 1 prints as 1.00×.
func TestRatioRoundingErrorIsATie(t *testing.T) {
	a, b := 0.1, 0.2
	sum := a + b // 0.30000000000000004
	got := Ratio(sum, 0.3)
	if len(got) > len("0.99999999×") {
		t.Errorf("Ratio(%v, 0.3) = %q: %d decimals that still read as 1", sum, got, len(got)-len("1.×"))
	}
}

func TestRatioRoundingErrorPrintsOne(t *testing.T) {
	if got := Ratio(0.1+0.2, 0.3); got != "1.00×" {
		t.Errorf("Ratio(0.1+0.2, 0.3) = %q, want 1.00×", got)
	}
	if got := Ratio(99999, 100000); got != "0.99999×" {
		t.Errorf("Ratio(99999, 100000) = %q, want 0.99999×", got)
	}
}
