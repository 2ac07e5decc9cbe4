package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/node"
)

// dlfu takes inf for "no decay"; a number too large for a float64 is the
// same request, but ParseSpec calls it "not a number".
func TestDLFUHugeParam(t *testing.T) {
	if _, err := New("dlfu:inf", 10, false, 1, node.KeyedHash); err != nil {
		t.Fatal(err)
	}
	if _, err := New("dlfu:1e400", 10, false, 1, node.KeyedHash); err != nil {
		t.Fatalf("dlfu:1e400: %v", err)
	}
}
