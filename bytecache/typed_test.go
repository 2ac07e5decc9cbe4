package bytecache

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

type user struct {
	ID    int64
	Admin bool
	Name  string
}

var userCodec = CodecFuncs[user]{
	AppendFunc: func(dst []byte, u user) ([]byte, error) {
		if len(u.Name) > 255 {
			return dst, errors.New("name too long")
		}
		dst = binary.AppendVarint(dst, u.ID)
		b := byte(0)
		if u.Admin {
			b = 1
		}
		dst = append(dst, b, byte(len(u.Name)))
		return append(dst, u.Name...), nil
	},
	DecodeFunc: func(b []byte) (user, error) {
		id, n := binary.Varint(b)
		if n <= 0 || len(b) < n+2 || len(b) != n+2+int(b[n+1]) {
			return user{}, errors.New("bad user encoding")
		}
		return user{ID: id, Admin: b[n] == 1, Name: string(b[n+2:])}, nil
	},
}

func TestTyped(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	type userID string
	users := NewTyped[userID](c, Codec[user](userCodec))
	u := user{ID: 42, Admin: true, Name: "ada"}
	if err := users.Set("u42", u, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, ok := users.Get("u42"); !ok || got != u {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	if !users.Has("u42") || users.Has("u1") {
		t.Fatal("Has")
	}
	if err := users.Set("long", user{Name: string(make([]byte, 300))}, 0); err == nil {
		t.Fatal("encoding error not returned")
	}
	if users.Has("long") {
		t.Fatal("a value that failed to encode was stored")
	}
	// Bytes that do not decode are a miss with a counted error.
	if err := c.Set([]byte("garbage"), []byte{0x80}, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := users.Get("garbage"); ok || users.DecodeErrors() != 1 {
		t.Fatalf("garbage decoded: ok=%v errors=%d", ok, users.DecodeErrors())
	}
	if !users.Delete("u42") || users.Has("u42") {
		t.Fatal("Delete")
	}
	if users.Cache() != c {
		t.Fatal("Cache()")
	}

	raw := NewTyped[[]byte, []byte](c, BytesCodec{})
	if err := raw.Set([]byte("k"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	v, ok := raw.Get([]byte("k"))
	if !ok || string(v) != "v" {
		t.Fatalf("bytes: %q %v", v, ok)
	}
	strs := NewTyped[string, string](c, StringCodec{})
	if s, ok := strs.Get("k"); !ok || s != "v" {
		t.Fatalf("strings: %q %v", s, ok)
	}
}

func TestTypedGetAllocs(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	type fixed struct{ A, B uint64 }
	codec := CodecFuncs[fixed]{
		AppendFunc: func(dst []byte, v fixed) ([]byte, error) {
			return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(dst, v.A), v.B), nil
		},
		DecodeFunc: func(b []byte) (fixed, error) {
			if len(b) != 16 {
				return fixed{}, errors.New("bad length")
			}
			return fixed{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}, nil
		},
	}
	tc := NewTyped[string, fixed](c, codec)
	key := "a key longer than thirty-two bytes, so a conversion would allocate"
	if err := tc.Set(key, fixed{1, 2}, 0); err != nil {
		t.Fatal(err)
	}
	tc.Get(key) // fill the pool
	if n := testing.AllocsPerRun(100, func() {
		if v, ok := tc.Get(key); !ok || v.B != 2 {
			t.Fatal("miss")
		}
	}); n > 0 {
		t.Fatalf("Typed.Get allocates %v times", n)
	}
}
