package service

import (
	"net/http"
	"strings"
	"testing"
)

// A Go-duration TTL whose number is beyond float64's range (over 308
// digits) was "invalid TTL": durationOverflows took strconv.ParseFloat's
// ErrRange for a malformed number. It is too long, as any shorter spelling
// of a duration beyond max-ttl is; negative, it is not positive.
func TestTTLBeyondFloatRangeIsTooLong(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	huge := "1" + strings.Repeat("0", 400)
	for _, c := range []struct {
		ttl  string
		want *apiError
	}{
		{huge + "h", errTTLTooLong},
		{"+" + huge + "ns", errTTLTooLong},
		{"1h" + huge + "s", errTTLTooLong},
		{"-" + huge + "h", errTTLNotPositive},
	} {
		r := svcfuzzDo(s, "PUT", "/v1/entries/t", map[string]string{"Cache-TTL": c.ttl}, "x")
		if r.Code != http.StatusBadRequest || r.Body.String() != string(c.want.body) {
			t.Errorf("Cache-TTL %.12s…%s: %d %q, want 400 %q", c.ttl, c.ttl[len(c.ttl)-2:], r.Code, r.Body, c.want.body)
		}
	}
}
