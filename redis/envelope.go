package redis

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
)

// An entry in Redis is an envelope around the codec's bytes:
//
//	[0:3)   magic "ck\x01" (format version 1)
//	[3]     kind: 'v' value, 't' tombstone
//	[4:12)  write id: random, different for every write
//	[12:20) fingerprint of the value type, codec and version (0 in a tombstone)
//	[20:28) expiry: Unix milliseconds, the entry's PXAT in Redis (0: none)
//	[28:)   the codec's bytes (empty in a tombstone)
//
// The write id is what a load's compare-and-set compares (casScript): it
// reads the current entry's id at the same offset. The expiry lets a reader
// know the entry's remaining TTL without asking Redis (Options.ExactTTL).
const (
	magic      = "ck\x01"
	headerSize = 28
	kindValue  = 'v'
	kindTomb   = 't'
)

// newEnvelope returns a header for a new entry of kind with write id id,
// fingerprint fp and expiry exp (Unix milliseconds), with room for the
// payload.
func newEnvelope(kind byte, id, fp uint64, exp int64, room int) []byte {
	b := make([]byte, headerSize, headerSize+room)
	copy(b, magic)
	b[3] = kind
	binary.BigEndian.PutUint64(b[4:12], id)
	binary.BigEndian.PutUint64(b[12:20], fp)
	binary.BigEndian.PutUint64(b[20:28], uint64(exp))
	return b
}

// setExpiry sets the expiry stored in an envelope.
func setExpiry(env []byte, exp int64) { binary.BigEndian.PutUint64(env[20:28], uint64(exp)) }

// expiry returns the expiry stored in an envelope.
func expiry(env []byte) int64 { return int64(binary.BigEndian.Uint64(env[20:28])) }

// entry is what a read found in Redis.
type entry struct {
	kind  byte   // kindValue, kindTomb, or 0 for bytes that are not an envelope
	fp    uint64 // with kindValue
	exp   int64  // expiry, Unix milliseconds; 0: none
	raw   string // the bytes read; "" when there was no key (or no answer)
	found bool   // raw was read
}

// parseEntry reads raw bytes from Redis. It never fails: bytes that are not
// an envelope of ours come back with kind 0. It copies nothing: the payload
// is copied for the codec (Cache.decode), and the compare-and-set token
// computed, only when they are needed.
func parseEntry(raw string) entry {
	kind, fp, exp, ok := parseHeader(raw)
	if !ok {
		return entry{raw: raw, found: true}
	}
	e := entry{kind: kind, exp: exp, raw: raw, found: true}
	if e.kind == kindValue {
		e.fp = fp
	}
	return e
}

// payload returns the codec's bytes of a value entry.
func (e entry) payload() string { return e.raw[headerSize:] }

// casToken returns the compare-and-set token of what a read found
// (casScript): absentToken for no key, "w" + the write id for an envelope,
// "h" + the SHA-1 in hex for other bytes.
func (e entry) casToken() string {
	switch {
	case !e.found:
		return absentToken
	case e.kind == 0:
		sum := sha1.Sum([]byte(e.raw))
		return "h" + hex.EncodeToString(sum[:])
	}
	return "w" + e.raw[4:12]
}

// parseHeader reads the header of an envelope (its payload is
// raw[headerSize:]), without copying; ok is false for bytes that are not an
// envelope of ours.
func parseHeader(raw string) (kind byte, fp uint64, exp int64, ok bool) {
	if len(raw) < headerSize || raw[:3] != magic || (raw[3] != kindValue && raw[3] != kindTomb) {
		return 0, 0, 0, false
	}
	return raw[3], binary.BigEndian.Uint64([]byte(raw[12:20])), int64(binary.BigEndian.Uint64([]byte(raw[20:28]))), true
}

// absentToken is the compare-and-set token of a key that does not exist.
const absentToken = ""

// casScript writes ARGV[2] to KEYS[1] to expire at ARGV[3] (Unix ms),
// but only if the key still holds what the load read (ARGV[1], a token: ""
// for no key, "w" + write id for an envelope, "h" + SHA-1 in hex for other
// bytes). Its answer is {code, the server's time in Unix ms} (a sample of
// the server's clock, as a write's: serverClock), the code 1 if it wrote,
// 0 if the key had changed, and 2 if ARGV[3] has passed by the server's
// clock (a write that waited that long in the queue, or a value loaded
// with a very short TTL: SET with a past PXAT would delete the key, a
// tombstone too) or ARGV[4] has (Unix ms by the server's clock: the latest
// time the write may still apply, before a tombstone it must not outlive
// could have expired; a Redis that hung runs the writes it holds when it
// resumes, however late). A key of another type than string is never
// overwritten (0).
const casScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ok, cur = pcall(redis.call, 'GET', KEYS[1])
if not ok then return {0, now} end
local tok = ''
if cur then
  if #cur >= 28 and string.sub(cur, 1, 3) == 'ck\1' and (string.sub(cur, 4, 4) == 'v' or string.sub(cur, 4, 4) == 't') then
    tok = 'w' .. string.sub(cur, 5, 12)
  else
    tok = 'h' .. redis.sha1hex(cur)
  end
end
if tok ~= ARGV[1] then return {0, now} end
if tonumber(ARGV[3]) <= now or tonumber(ARGV[4]) < now then return {2, now} end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
return {1, now}
`
