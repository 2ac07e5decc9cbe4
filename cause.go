package cachekit

// Cause tells why an entry left the cache.
type Cause uint8

const (
	// CauseCapacity: the policy evicted it to respect the bound.
	CauseCapacity Cause = iota
	// CauseExpired: its TTL passed.
	CauseExpired
	// CauseDeleted: Delete removed it.
	CauseDeleted
	// CauseReplaced: a Set of the same key replaced its value.
	CauseReplaced
	// CauseCleared: Clear removed it.
	CauseCleared

	numCauses
)

var causeNames = [numCauses]string{"capacity", "expired", "deleted", "replaced", "cleared"}

// String returns the cause's name in lower case ("capacity", "expired", …).
func (c Cause) String() string {
	if c < numCauses {
		return causeNames[c]
	}
	return "unknown"
}
