package report

import (
	"math"
	"testing"
)

func TestCountAndSigned(t *testing.T) {
	for n, want := range map[int]string{0: "0 rounds", 1: "1 round", 3: "3 rounds"} {
		if got := Count(n, "round"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	for v, want := range map[float64]string{-0.004: "0.00", 0.004: "0.00", math.Copysign(0, -1): "0.00", 0.5: "+0.50", -1.236: "-1.24"} {
		if got := Signed(v); got != want {
			t.Errorf("Signed(%v) = %q, want %q", v, got, want)
		}
	}
	for _, c := range []struct {
		words []string
		want  string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := JoinAnd(c.words); got != c.want {
			t.Errorf("JoinAnd(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}
