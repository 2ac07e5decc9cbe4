//go:build !((linux || darwin || freebsd || netbsd || openbsd || dragonfly) && !race)

package bytecache

import "errors"

// offHeapSupported reports whether chunks can be mapped outside the Go heap:
// not on this platform (or in a race-detector build), where chunks live on
// the Go heap.
const offHeapSupported = false

func mapChunk(int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapChunk([]byte) error { return errors.ErrUnsupported }
