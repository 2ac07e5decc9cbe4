//go:build (linux || darwin || freebsd || netbsd || openbsd || dragonfly) && !race

package bytecache

import "syscall"

// offHeapSupported reports whether chunks can be mapped outside the Go heap.
// Race-detector builds keep chunks on the heap, where the detector sees
// them.
const offHeapSupported = true

// mapChunk maps n bytes of zeroed anonymous memory outside the Go heap.
// The kernel backs pages only as they are first written.
func mapChunk(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapChunk releases a chunk returned by mapChunk.
func unmapChunk(b []byte) error { return syscall.Munmap(b) }
