package policy

import (
	"strings"

	"github.com/cachekit/cachekit/internal/node"
	"testing"
)

// The error for a parameter given to the default policy spoke only of
// "policy tinylfu", a name the caller had not written; it now names the
// spec as written and the policy it stands for.
func TestDefaultSpecErrorNamesTheSpec(t *testing.T) {
	for _, spec := range []string{"default:1", " Default:2 ", ":3"} {
		_, err := New(spec, 10, false, 1, func(*node.Node) uint64 { return 0 })
		if err == nil {
			t.Fatalf("New(%q) accepted a parameter for the default policy", spec)
		}
		if want := strings.TrimSpace(spec); !strings.Contains(err.Error(), `"`+want+`"`) || !strings.Contains(err.Error(), DefaultName) {
			t.Errorf("New(%q) = %q; want the spec %q and the policy %s named", spec, err, want, DefaultName)
		}
	}
	// A named policy's error stays as it was, without the prefix.
	_, err := New("lru:1", 10, false, 1, func(*node.Node) uint64 { return 0 })
	if err == nil || err.Error() != "policy lru takes no parameter" {
		t.Errorf(`New("lru:1") = %v; want "policy lru takes no parameter"`, err)
	}
}
