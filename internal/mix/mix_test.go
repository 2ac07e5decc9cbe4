package mix

import (
	"math/rand/v2"
	"testing"
)

func TestUnmixInvertsMix(t *testing.T) {
	seed := uint64(1)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for _, x := range []uint64{0, 1, 2, 1 << 63, ^uint64(0)} {
		if got := Unmix(Mix(x)); got != x {
			t.Fatalf("Unmix(Mix(%#x)) = %#x", x, got)
		}
	}
	for range 10000 {
		x := r.Uint64()
		if got := Unmix(Mix(x)); got != x {
			t.Fatalf("Unmix(Mix(%#x)) = %#x", x, got)
		}
	}
	if Mix(1) == 1 || Mix(1)>>32 == 0 {
		t.Fatalf("Mix(1) = %#x: not spread", Mix(1))
	}
}
