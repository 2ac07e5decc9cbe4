package adapter

// BytesCodec stores []byte values as they are. Decode copies, so the
// value a Get returns belongs to the caller, as it does for the caches of
// Go values.
type BytesCodec struct{}

// Append appends v to dst.
func (BytesCodec) Append(dst []byte, v []byte) ([]byte, error) { return append(dst, v...), nil }

// Decode returns a copy of b.
func (BytesCodec) Decode(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil }

// StringCodec stores string values as their bytes.
type StringCodec struct{}

// Append appends v to dst.
func (StringCodec) Append(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }

// Decode returns b as a string.
func (StringCodec) Decode(b []byte) (string, error) { return string(b), nil }
