package redis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cachekit/cachekit/loading"
	"github.com/cachekit/cachekit/redis"
	goredis "github.com/redis/go-redis/v9"
)

type User struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Example puts a two-tier cache in front of a user table. It needs a Redis
// server at localhost:6379, so it is compiled but not run by go test (it
// has no Output comment); the tests exercise the same calls against Redis
// servers they start themselves.
func Example() {
	// One address: a single Redis. Several, or IsClusterMode: a Redis
	// Cluster. MasterName: Sentinel.
	client := goredis.NewUniversalClient(redis.ClientDefaults(&goredis.UniversalOptions{
		Addrs: []string{"localhost:6379"},
	}))
	defer client.Close()

	users, err := redis.New(redis.Options[User]{
		Client: client,
		Loader: loading.LoaderFunc[string, User](func(ctx context.Context, id string) (User, error) {
			return User{Name: "user " + id}, nil // the database query
		}),
		Prefix: "users:",
		TTL:    10 * time.Minute, // in Redis
		Local: loading.Options[string, User]{
			MaxEntries: 10_000,
			TTL:        30 * time.Second, // in process
			MaxStale:   time.Minute,      // serve stale while reloading, or while the source fails
		},
	})
	if err != nil {
		panic(err)
	}
	defer users.Close()

	ctx := context.Background()
	u, err := users.Get(ctx, "42") // L1, else Redis, else the loader
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Name)
	// After changing user 42 in the database: every instance drops it.
	if err := users.Delete(ctx, "42"); err != nil {
		fmt.Println("invalidation failed:", err)
	}
}
