package service

import (
	"encoding/json"
	"testing"
	"time"
)

// A DELETE whose tier delete fails answers 503 with a message that is true
// of this instance: "deleted from this instance" only if it held the key.
// The message said so also for a key this instance never held.
func TestDeleteTierFailureMessage(t *testing.T) {
	checkLeaks(t)
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier})
	if r := ts.req(t, "PUT", "/v1/entries/held", nil, "v"); r.status != 204 {
		t.Fatal(r)
	}
	tier.mu.Lock()
	tier.fail = true
	tier.mu.Unlock()
	for _, c := range []struct{ key, want string }{
		{"held", "deleted from this instance, but the second tier failed: the key may be served again from it, or by other instances that it did not tell; retry"},
		{"never", "this instance does not hold the key, but the second tier failed: the key may still be served from it, or by other instances that it did not tell; retry"},
	} {
		r := ts.req(t, "DELETE", "/v1/entries/"+c.key, nil, "")
		var body struct {
			Error  string `json:"error"`
			Status int    `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.body), &body); err != nil {
			t.Fatalf("DELETE %s: %d %q: %v", c.key, r.status, r.body, err)
		}
		if r.status != 503 || body.Status != 503 || body.Error != c.want {
			t.Errorf("DELETE %s with the tier failing: %d %q; want 503 %q", c.key, r.status, body.Error, c.want)
		}
	}
}
