#!/bin/sh
# Regenerates docs/benchmarks/throughput.md, its charts (throughput-*.png) and
# docs/benchmarks/throughput.json
# with the throughput command: every cache, every workload, GOMAXPROCS ×1, ×4
# and ×16 goroutines, 3 interleaved rounds of 1 s runs (about 25 minutes on
# 2 cores). Run it on a quiet machine: the figures are only as good as the
# machine is idle.
#
#   bench/run.sh                      # the published run
#   ROUNDS=5 bench/run.sh             # more rounds
#   NOTE='text' bench/run.sh          # a note for the document's header
#   bench/run.sh -caches cachekit,otter -workloads getput   # extra flags
#
# Works from any directory; needs only Go (the module proxy for the peers).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p docs/benchmarks
set -- -rounds "${ROUNDS:-3}" -duration "${DURATION:-1s}" \
	-md docs/benchmarks/throughput.md -json docs/benchmarks/throughput.json "$@"
if [ -n "${NOTE:-}" ]; then
	set -- "$@" -note "$NOTE"
fi
exec go run ./bench/cmd/throughput "$@"
