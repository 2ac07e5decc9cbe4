package sim_test

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/sim"
)

// Check("opt:1") (cachekit sim -policy opt:1) says that opt takes no
// parameter, not that a name it lists as known is unknown; likewise for
// cache and opt-bypass.
func TestCheckParamOnSpecialName(t *testing.T) {
	for _, spec := range []string{"opt:1", "cache:2", "opt-bypass:0.5"} {
		err := sim.Check(spec)
		if err == nil || !strings.Contains(err.Error(), "no parameter") {
			t.Errorf("Check(%q) = %v; the name is known, it takes no parameter", spec, err)
		}
	}
}
