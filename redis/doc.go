// Package redis is a two-tier cache: an in-process L1 (a loading.Cache of
// the cachekit module) in front of a shared L2 in Redis, in front of the
// source that a Loader reads. Hot keys are answered from process memory
// without a network round trip; the long tail is shared by every instance
// through Redis; the source sees at most one load per key per instance at a
// time, however many callers miss at once. (A change of the key while its
// load runs, a Set or Delete here or another instance's invalidation,
// overtakes that load, as in loading.Cache: it goes on for its waiters but
// its result is not kept, and the next miss starts a new load alongside it,
// which reads Redis and the source after the change. So a key changed
// again and again during slow loads has one load more in flight for each
// change.)
//
// The package is named after its directory, as Go packages are; programs
// that also import the go-redis client (whose package is named redis too)
// import one of them under another name. The examples and this package use
// goredis for github.com/redis/go-redis/v9.
//
// # Reads
//
// Get answers from L1 when it can, with no Redis command at all. On an L1
// miss one load of the key starts (later callers wait for it, as in
// loading.Cache): the caller that starts it reads the key from Redis on its
// own goroutine (one GET; see Options.ExactTTL), and a hit fills L1 with a
// TTL no longer than the entry's remaining TTL in Redis; a miss calls the
// Loader (on a goroutine of L1, as any load) and fills both tiers, Redis
// asynchronously.
//
// Reads of Redis that miss L1 at the same time share round trips: at most
// Options.ReadsInFlight of them are in flight at once, and a read that
// finds none free waits for the next one to come back and goes with every
// other read that waited, in one pipeline (on a cluster or a ring, round
// trips and queues are per node: a node that hangs holds up only the reads
// of its keys). Under load that saves each read
// its own system calls and connection turn (docs/benchmarks/tiered.md); a
// read that finds a round trip free goes at once, so a lightly loaded
// Cache sends one GET per read, without waiting.
// A value in Redis that this cache cannot decode (written by another
// version of the program, or by someone else) is a miss, counted in
// Stats.L2Incompatible, never a panic.
//
// # Writes and invalidation
//
// Set and Delete change both tiers and publish an invalidation on a Redis
// Pub/Sub channel (a sharded channel, SPUBLISH/SSUBSCRIBE, on a Redis
// Cluster). Every instance subscribes; an instance drops the key from its
// L1 when another instance's message arrives, and ignores its own messages.
// Delete leaves a tombstone in Redis rather than removing the key, and a
// load writes its result to Redis only if the key has not changed since the
// load read it (a compare-and-set in a Lua script): a load that raced a Set
// or Delete, here or in another instance, never puts an old value back
// (unless Redis itself removed the newer entry early: a maxmemory policy
// that evicts keys can drop a value or a tombstone, and a load that read
// the key before it then finds it as it was).
// Nor does it in L1: a load in flight when Set or Delete is called stores
// nothing, and one of this instance that reads Redis while its own Set or
// Delete of the key is on its way (after L1 lost the key: a flush, an
// eviction, an invalidation) is dropped from L1 when the write returns.
// An instance's Sets and Deletes of one key run one at a time, in order.
// Every write is a Lua script that does nothing if it reaches Redis after
// its deadline (Timeout, or ctx's) by the server's clock, estimated from
// the answers of earlier writes: a write whose caller has given up (its
// bytes held by a Redis that hung, or a lost packet sent again) never
// lands later over a newer write of the key. A write whose fate is unknown
// (a timeout) returns once it can no longer land (a few milliseconds after
// its deadline). Until a first write has been answered there is no
// estimate, and the writes sent meanwhile are not bounded (a load's write,
// whose bound keeps it from outliving a Delete's tombstone, then takes
// this machine's time for the server's); a load's write is answered with
// a sample of the server's clock too. Each server of a cluster or ring has
// its own (a cluster's write is bounded by the
// earliest of all its masters' estimates, as Redis may redirect it; a
// master or shard with none yet is covered by the others' as far as
// their clocks agree). The client's user must be allowed EVAL and EVALSHA, and the
// commands the scripts run: TIME, SET, GET and TYPE.
// A tombstone lasts TombstoneTTL of the server's time; a value expires at
// the absolute time its writer's clock gave it (every instance then sees
// the same remaining TTL), so the instances' clocks should agree to well
// within TTL.
//
// If the subscription is lost, invalidations may be missed: L1's lifetimes
// are cut to Options.DegradedTTL (L1 is flushed DegradedTTL after the loss
// and every DegradedTTL while the subscription stays down, and values
// loaded meanwhile live no longer), and the subscription is re-established
// in the background; L1 is flushed as soon as it is. So a Redis that goes
// down does not empty L1 at once. A subscription on a server that no
// longer gets the invalidations counts as lost too: after a Sentinel
// failover (the master's run_id is compared every DegradedTTL/2, or every
// Timeout, or 100 ms, if that is longer), or when a goredis.Ring routes
// the channel to another shard (a lookup in the ring's own map, without a
// round trip, made at each message received and at least every Timeout,
// or 100 ms if that is longer).
//
// # Faults
//
// Redis is an optimisation, never a dependency of a read: every Redis call
// has a deadline (Options.Timeout), a circuit breaker stops calling Redis
// after consecutive failures and lets one probe through after a pause, and
// a Redis error counts as a miss: the key is loaded from the source (or,
// with Local.MaxStale, a stale L1 value is served while it reloads). A
// call whose caller's context ends first is no failure of Redis: it counts
// neither for the breaker nor in Stats.L2Errors or Stats.L2WriteErrors. Writes
// of loaded values to Redis are queued (a bounded queue); a write that
// fails or finds the queue full is counted, logged and dropped. An L1 hit
// never touches Redis, the breaker or a lock that a Redis call holds, so a
// Redis that is down or hangs never delays it.
//
// On a Redis Cluster or a goredis.Ring each node (master or shard) has its
// own breaker: a master that is down or hangs (with its slots not covered
// by a replica) fails the calls for its keys, BreakerFailures of them in a
// row open its breaker, and the calls for its keys then fail at once until
// a probe succeeds, while the healthy masters' keys go on as before.
// Stats.Breaker shows the most severe of the breakers' states. The
// publication of a write's invalidation, sent after the write to the node
// that holds the channel, goes through that node's breaker: while it is
// open, writes land but their invalidations are not sent, and the calls
// return an error wrapping ErrUnavailable. A further breaker covers the
// calls whose node the client cannot name (a cluster whose map of the
// slots cannot be loaded); while it is open, no call asks for the node.
// An answer that no node serves a key's slot (CLUSTERDOWN Hash slot not
// served) counts for no breaker: it says nothing of the node that sent
// it. A call's breaker is chosen from the client's map of the slots before
// the call: one that Redis redirects to another node (MOVED after a
// reshard, until the client reloads its map; ASK while a slot migrates)
// counts for the breaker of the node the map named, even if the other node
// failed it. A write that Redis refuses while it answers reads (OOM, READONLY,
// ...) is no failure (see Options.BreakerFailures).
//
// # A byte tier for the cachekit service
//
// ByteTier is the same shared tier without the typed L1 and the Loader: it
// stores opaque byte values for programs that keep their own in-memory
// copies, such as the cachekit service (it implements service.Tier). Its
// Set and Delete publish invalidations on the same kind of channel, which
// other instances' ByteTiers pass to Handlers.Invalidate (its Delete, too,
// leaves a tombstone, for twice Timeout only: see ByteTier.Delete); a lost
// subscription is reported to Handlers.Lost and Handlers.Flush as a
// Cache handles it (see Handlers), and its calls have the same deadline
// and circuit breaker.
//
// # Concurrency and goroutines
//
// Every method of Cache is safe for concurrent use. A Cache runs one
// goroutine for its subscription and Options.Writers for queued writes,
// besides the loads of its L1 and, while reads are queued, up to
// Options.ReadsInFlight goroutines that send them (per node of a cluster
// or ring; each ends when its queue is empty); Close stops them all and waits for them, and for the
// Sets and Deletes in flight (each ends within Timeout), so that nothing
// is written to Redis after Close has returned; Set and Delete then return
// ErrClosed. The Redis client belongs to the caller: Close does not close
// it.
package redis
