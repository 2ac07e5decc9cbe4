package redis_test

import (
	"context"
	"log"
	"time"

	"github.com/cachekit/cachekit/redis"
	"github.com/cachekit/cachekit/service"
	goredis "github.com/redis/go-redis/v9"
)

// ExampleNewByteTier runs the cachekit service with a Redis shared by
// every instance as its second tier. It needs a Redis server at
// localhost:6379, so it is compiled but not run by go test (it has no
// Output comment); TestByteTierServices runs two such servers against
// Redis servers that the tests start.
func ExampleNewByteTier() {
	client := goredis.NewUniversalClient(redis.ClientDefaults(&goredis.UniversalOptions{
		Addrs: []string{"localhost:6379"},
	}))
	defer client.Close()

	tier, err := redis.NewByteTier(redis.ByteTierOptions{
		Client:  client,
		Prefix:  "cachekit:service:", // the same in every instance
		Timeout: 100 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := service.New(service.Options{Tier: tier})
	if err != nil {
		log.Fatal(err)
	}
	// The handlers need the server, and the server the tier: they are set
	// once both exist, before the server serves.
	tier.SetHandlers(redis.Handlers{
		Invalidate: func(key []byte) { srv.Invalidate(key) }, // another instance changed key
		Flush:      srv.InvalidateAll,                        // invalidations may have been missed
	})
	defer srv.Close()
	defer tier.Close() // runs first: no handler runs on a closed store

	ctx, stop := context.WithTimeout(context.Background(), time.Second) // a signal, in a real program
	defer stop()
	if err := srv.ListenAndServe(ctx); err != nil {
		log.Print(err)
	}
}
