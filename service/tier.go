package service

import (
	"context"
	"time"
)

// Tier is an optional second tier behind the in-memory store, typically a
// Redis shared by several instances (Options.Tier). The server uses it so:
//
//   - Writes (PUT, POST) go to the in-memory store first, then to the tier
//     (write-through), each within Options.TierTimeout, even if the client
//     goes away meanwhile. A tier error does not fail the request, which
//     the in-memory store already holds: it is counted ("tier": {"errors"}
//     in /v1/stats, cachekit_tier_errors_total in /metrics) and logged.
//     After one failed tier write, a POST's remaining entries skip the tier
//     (each counted as a tier error), so that a tier that hangs costs a
//     POST one TierTimeout, not one per entry.
//   - A read that misses the in-memory store asks the tier; a value found
//     there is served and put in the in-memory store with the TTL the tier
//     reports (the default TTL if it reports none). A tier error is counted
//     and the read is a miss (but not when the client went away first: that
//     is no error of the tier). A value not in the server's stored form
//     (written by someone else) is a miss too, counted as a tier miss and
//     logged.
//   - DELETE removes the key from both. If the tier's delete fails, the
//     DELETE answers 503 (the key is gone from this instance, but a read
//     could bring it back from the tier, and other instances may still hold
//     their copies if the tier could not tell them): the client should
//     retry.
//
// The values given to and returned by a Tier are the server's stored form
// (a small header with the content type, then the body); a Tier stores them
// as opaque bytes. Keys and values passed to a Tier are only valid during
// the call. Invalidation of other instances' in-memory copies is the
// Tier's business: on a message from another instance it calls
// Server.Invalidate.
//
// Every method must be safe for concurrent use and return when ctx is done.
type Tier interface {
	// Get appends key's value to dst and returns it with the entry's
	// remaining time to live (0 if unknown or none) and true, or dst and
	// false if the tier does not hold key.
	Get(ctx context.Context, dst, key []byte) (value []byte, ttl time.Duration, found bool, err error)
	// Set stores value under key for ttl (negative: no expiry).
	Set(ctx context.Context, key, value []byte, ttl time.Duration) error
	// Delete removes key, reporting whether it was there, and has the
	// other instances drop their copies; an error means that either may
	// not have happened (a Redis tier whose delete landed but whose
	// invalidation could not be sent returns one too).
	Delete(ctx context.Context, key []byte) (bool, error)
}
