package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileFlag registers --cpuprofile on fs. The returned start function
// begins profiling when the flag was given and returns the function that
// stops it and closes the file (a no-op otherwise).
func cpuProfileFlag(fs *flag.FlagSet) (start func(stderr io.Writer) (stop func(), ok bool)) {
	path := fs.String("cpuprofile", "", "write a CPU profile (pprof format) of the whole run to this file")
	return func(stderr io.Writer) (func(), bool) {
		if *path == "" {
			return func() {}, true
		}
		f, err := os.Create(*path)
		if err != nil {
			fmt.Fprintf(stderr, "cachekit: --cpuprofile: %v\n", err)
			return nil, false
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			fmt.Fprintf(stderr, "cachekit: --cpuprofile: %v\n", err)
			return nil, false
		}
		return func() {
			pprof.StopCPUProfile()
			f.Close()
		}, true
	}
}
