// Package service is the cachekit cache service (cachekit serve): an HTTP
// API over the GC-free byte cache of package bytecache, with statistics,
// Prometheus metrics, timeouts and a graceful shutdown. It uses only the
// standard library.
//
// # API
//
//	PUT    /v1/entries/{key}   store the body as the value (204)
//	GET    /v1/entries/{key}   200 with the value, 404 if absent
//	HEAD   /v1/entries/{key}   the same without the body
//	DELETE /v1/entries/{key}   204 if it was there, else 404
//	POST   /v1/entries         {"id": "...", "entry": <JSON>} or an array of
//	                           them: each entry's raw JSON is stored under its
//	                           id (200, {"stored": N})
//	GET    /v1/stats           statistics (JSON)
//	GET    /healthz            {"status":"ok"} (503 after Server.Close)
//	GET    /metrics            Prometheus text format
//
// The key is the rest of the path after /v1/entries/, percent-decoded, so
// it may hold "/" (raw or as %2F); it must be 1 to MaxKeyBytes bytes with
// no control character (below 0x20, or 0x7f). A write's TTL comes from the
// Cache-TTL header (on one line: a repeated header is refused) or else the
// ttl query parameter, in whole seconds (600) or as a Go duration (10m,
// 1h30m); it must be positive and at most MaxTTL.
// Without one an entry gets DefaultTTL.
//
// GET serves the value with the Content-Type it was written with (PUT
// without one: application/octet-stream; POSTed entries: application/json).
// POST needs Content-Type application/json and a body that is exactly one
// JSON value, an object with the fields id (a string) and entry (any JSON
// value) and no others, or an array of such objects. The whole body is
// checked before anything is stored: one bad message stores nothing.
// The server does not decode content codings: a PUT or POST body must be
// sent as is, without a Content-Encoding (but identity), and a PUT stores
// a whole value, without a Content-Range.
//
// Every error is a JSON object {"error": "...", "status": N}: 400 for a bad
// key, TTL, Content-Type (a PUT's, over 255 bytes), Content-Range (a
// PUT's) or body (malformed or trailing JSON, a body that is not UTF-8, a
// message without id or entry, an unknown field), 404 for an unknown path
// or a missing entry, 405 (with an Allow header) for a method a path does
// not support, 408 for a body not received within ReadTimeout, 413 for a
// value over MaxValueBytes or a POST body over MaxBodyBytes, 415 for a POST
// that is not application/json or a content-encoded body (with an
// Accept-Encoding: identity header), 503 while shutting down (a request
// for an entry, or /healthz, that reaches the handler after Server.Close;
// /v1/stats and /metrics still answer) or for a DELETE whose
// second-tier delete failed (see Tier). A 500 only means a
// bug (a recovered panic, which is logged and counted) or a value written to
// Server.Store directly in another form than EncodeValue's (logged). A
// failed request changes nothing (but that DELETE, which has deleted the
// key from this instance, and a POST that Server.Close cut short, whose
// 503 body adds "stored": the number of its first entries it stored, in
// the Tier too; sending the same batch again is safe). A request that
// net/http refuses before the server sees it gets net/http's plain-text answer instead: a malformed
// request line or header, or a path with an invalid percent-escape (a key
// holding a raw "%" that is not escaped as %25), is a 400, and headers over
// MaxHeaderBytes a 431.
//
// # Consistency
//
// Read-your-writes on one instance: once a write has been answered, every
// later read on this instance returns that value or a newer one, unless the
// entry expired (its TTL passed) or was evicted (the store's ring, sized by
// MaxBytes, came round to it: eviction is first in, first out by time of
// last write). Both are counted: store.expirations and store.evictions in
// /v1/stats, cachekit_store_expirations_total and
// cachekit_store_evictions_total in /metrics. A store sized for the write
// rate times the TTL evicts nothing.
//
// With a Tier, a write whose Tier part failed (counted as a tier error) is
// held by this instance's store alone: once it leaves the store (expiry,
// eviction, or an invalidation from the Tier: Server.Invalidate,
// Server.InvalidateAll), a read asks the Tier, which may answer the value
// written before it, or nothing.
//
// # Memory
//
// The store's entry storage (chunks) never exceeds MaxBytes; each entry
// takes its key, its value, one byte of content type (2+length for an
// unusual Content-Type) and the store's 2 to 16 byte header. On top come
// the store's index, 11 to 22 bytes per live entry as entries are added
// and up to 64 after many deletions (a shard's table halves only when an
// eighth full), and the server itself: per open connection about 10 KiB
// of buffers and goroutine stack, per request in flight its body (at most
// MaxValueBytes for a PUT, MaxBodyBytes for a POST, which also copies one
// entry at a time: up to MaxValueBytes more), pooled scratch buffers of at
// most 64 KiB each, and a few MiB of runtime. TestTenMillionEntries measures it.
//
// Where the store maps its chunks outside the Go heap (Linux, macOS, the
// BSDs; not in race-detector builds), they count neither in the heap nor
// in its collection goal, so GOGC's headroom applies only to the small rest
// of the process; elsewhere they are pointer-free heap objects (never
// scanned), and the heap may grow to twice its live size, chunks included,
// between collections: bound it with GOMEMLIMIT.
//
// # Second tier
//
// Options.Tier plugs in a second tier (the cachekit/redis module's
// ByteTier implements Tier); see Tier for the semantics.
package service
