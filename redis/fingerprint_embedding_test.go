package redis

import (
	"context"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// EmbeddedContact is embedded in one version of a value type and a named field
// of the same name and type in the next.
type EmbeddedContact struct {
	Email string
}

// A value type whose field changes from embedded to a named field of the
// same name and type (its JSON from {"Email":...} to
// {"EmbeddedContact":{"Email":...}}) gets another fingerprint: the old
// program's value is a miss counted in L2Incompatible, and the loader's
// value is served. The fingerprint ignored embedding, and the new program
// decoded the old value as an L2 hit with Email silently lost.
func TestFingerprintSeesEmbedding(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	client, _ := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	prefix := testPrefix(t)
	{
		// The previous version of the program: the contact is embedded.
		type profile struct {
			ID int
			EmbeddedContact
		}
		old, err := New(Options[profile]{Client: client, Prefix: prefix, Timeout: time.Second,
			Loader: loading.LoaderFunc[string, profile](func(context.Context, string) (profile, error) { return profile{}, nil })})
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		if err := old.Set(ctx, "u", profile{ID: 1, EmbeddedContact: EmbeddedContact{Email: "old@example.com"}}); err != nil {
			t.Fatal(err)
		}
	}
	// The current version: the contact is a named field of the same name.
	type profile struct {
		ID              int
		EmbeddedContact EmbeddedContact
	}
	loaded := profile{ID: 2, EmbeddedContact: EmbeddedContact{Email: "loaded@example.com"}}
	cur, err := New(Options[profile]{Client: client, Prefix: prefix, Timeout: time.Second,
		Loader: loading.LoaderFunc[string, profile](func(context.Context, string) (profile, error) { return loaded, nil })})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	v, err := cur.Get(ctx, "u")
	st := cur.Stats()
	if err != nil || v != loaded || st.L2Incompatible != 1 || st.L2Hits != 0 {
		t.Fatalf("Get of a value written with the field embedded = %+v, %v (L2 hits %d, incompatible %d); "+
			"want the loaded %+v, the old value counted as incompatible", v, err, st.L2Hits, st.L2Incompatible, loaded)
	}
}
