package sim

import (
	"testing"

	"github.com/cachekit/cachekit/internal/leaktest"
)

// TestMain fails the tests if, once they have passed, goroutines they
// started are still running (see leaktest.Main).
func TestMain(m *testing.M) { leaktest.Main(m) }
