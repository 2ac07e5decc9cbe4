package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

func TestFingerprint(t *testing.T) {
	type a struct {
		X int `json:"x"`
	}
	type b struct {
		X int `json:"y"` // another tag
	}
	type c struct {
		X int64 `json:"x"` // another type
	}
	type node struct {
		Next *node
		V    []map[string]a
	}
	fa := fingerprint[a](JSONCodec[a]{}, "")
	if fa != fingerprint[a](JSONCodec[a]{}, "") {
		t.Fatal("fingerprint not deterministic")
	}
	for name, f := range map[string]uint64{
		"tag":     fingerprint[b](JSONCodec[b]{}, ""),
		"type":    fingerprint[c](JSONCodec[c]{}, ""),
		"version": fingerprint[a](JSONCodec[a]{}, "2"),
	} {
		if f == fa {
			t.Errorf("a change of %s left the fingerprint unchanged", name)
		}
	}
	if fingerprint[node](JSONCodec[node]{}, "") == 0 { // recursive types terminate
		t.Fatal("zero fingerprint")
	}
	if fingerprint[string](StringCodec{}, "") == fingerprint[[]byte](BytesCodec{}, "") {
		t.Fatal("string and []byte share a fingerprint")
	}
}

func TestDefaultCodec(t *testing.T) {
	if _, ok := DefaultCodec[[]byte]().(BytesCodec); !ok {
		t.Error("[]byte: not BytesCodec")
	}
	if _, ok := DefaultCodec[string]().(StringCodec); !ok {
		t.Error("string: not StringCodec")
	}
	type s struct{ A int }
	cd := DefaultCodec[s]()
	b, err := cd.Append([]byte("hdr"), s{A: 7})
	if err != nil {
		t.Fatal(err)
	}
	v, err := cd.Decode(b[3:])
	if err != nil || v.A != 7 {
		t.Fatalf("round trip: %+v, %v", v, err)
	}
}

func TestEnvelope(t *testing.T) {
	env := newEnvelope(kindValue, 0x0102030405060708, 42, 1234, 3)
	env = append(env, "abc"...)
	e := parseEntry(string(env))
	if e.kind != kindValue || e.fp != 42 || e.exp != 1234 || e.payload() != "abc" || e.casToken() != "w\x01\x02\x03\x04\x05\x06\x07\x08" {
		t.Fatalf("parsed %+v", e)
	}
	if e := parseEntry(string(newEnvelope(kindTomb, 9, 0, 0, 0))); e.kind != kindTomb {
		t.Fatalf("tombstone parsed as %+v", e)
	}
	for _, raw := range []string{"", "hello", magic + "x" + string(make([]byte, 24)), magic + "v12"} {
		if e := parseEntry(raw); e.kind != 0 || e.casToken()[0] != 'h' {
			t.Errorf("%q parsed as %+v, want foreign", raw, e)
		}
	}
}

func TestMessage(t *testing.T) {
	c := &core{id: "abcd"}
	m := c.message("some:key")
	sender, key, sent, ok := parseMessage(m)
	if !ok || sender != "abcd" || key != "some:key" || time.Since(sent) > time.Minute {
		t.Fatalf("parsed %q %q %v %v", sender, key, sent, ok)
	}
	for _, bad := range []string{"", "x", string([]byte{msgVersion, 0, 0, 0, 0, 0, 0, 0, 0, 200, 'a'}), "\x02" + m[1:]} {
		if _, _, _, ok := parseMessage(bad); ok {
			t.Errorf("malformed message %q accepted", bad)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	ok := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer ok.Close()
	noCtx := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer noCtx.Close()
	ld := loading.LoaderFunc[string, string](func(context.Context, string) (string, error) { return "", nil })
	for name, o := range map[string]Options[string]{
		"no client":         {Loader: ld},
		"no loader":         {Client: ok},
		"no ctx timeouts":   {Client: noCtx, Loader: ld},
		"local loader":      {Client: ok, Loader: ld, Local: loading.Options[string, string]{Loader: ld}},
		"negative TTL":      {Client: ok, Loader: ld, TTL: -1},
		"local TTL too big": {Client: ok, Loader: ld, TTL: time.Minute, Local: loading.Options[string, string]{TTL: time.Hour}},
		"local TTL jittered past TTL": {Client: ok, Loader: ld, TTL: time.Minute,
			Local: loading.Options[string, string]{TTL: time.Minute, TTLJitter: 0.2}},
		"short tombstones": {Client: ok, Loader: ld, Timeout: time.Second, TombstoneTTL: time.Second},
		"negative writers": {Client: ok, Loader: ld, Writers: -1},
		"huge write queue": {Client: ok, Loader: ld, WriteQueue: 1 << 62}, // make(chan) would panic
		"too many writers": {Client: ok, Loader: ld, Writers: 1 << 40},
		"bad sharding":     {Client: ok, Loader: ld, Sharded: 9},
		// Timers this short would keep a core busy.
		"1ns degraded TTL":        {Client: ok, Loader: ld, DegradedTTL: 1},
		"1ns health check":        {Client: ok, Loader: ld, HealthCheck: time.Nanosecond},
		"999µs resubscribe delay": {Client: ok, Loader: ld, ResubscribeDelay: MinPeriod - 1},
	} {
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err %v, want ErrInvalidOptions", name, err)
		}
	}
	// With a jitter, the default L1 TTL is shortened so that, stretched,
	// it stays within TTL.
	for _, ttl := range []time.Duration{10 * time.Second, 12100 * time.Millisecond, 99 * time.Millisecond, 770 * time.Millisecond} {
		for _, j := range []float64{0.1, 0.2, 0.5, 0.99} {
			jo := Options[string]{Client: ok, Loader: ld, TTL: ttl, Local: loading.Options[string, string]{TTLJitter: j}}
			if err := jo.resolve(); err != nil || jo.Local.TTL <= 0 || time.Duration(float64(jo.Local.TTL)*(1+j/2)) > ttl {
				t.Errorf("TTL %v, Local.TTLJitter %v: Local.TTL %v, %v", ttl, j, jo.Local.TTL, err)
			}
		}
	}
	o := ClientDefaults(&goredis.UniversalOptions{})
	if !o.ContextTimeoutEnabled || o.MaxRetries != 1 || o.ReadTimeout != time.Second {
		t.Fatalf("ClientDefaults: %+v", o)
	}
}
