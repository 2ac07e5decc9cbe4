// Package bench holds the Go benchmarks that run cachekit and its peers
// side by side, for benchstat. It is a module of its own so that the peers
// never appear in cachekit's go.mod.
//
//	cd bench
//	go test -run '^$' -bench . -count 10 | tee new.txt
//	benchstat -col /cache new.txt
//
// The command bench/cmd/throughput runs the same workloads interleaved over
// rounds and writes docs/benchmarks/throughput.md; README.md says more.
package bench
