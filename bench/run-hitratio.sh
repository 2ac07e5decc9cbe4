#!/bin/sh
# Regenerates docs/benchmarks/hit-ratio.md and its charts
# (docs/benchmarks/hit-ratio-TRACE.png) with the hitratio command: every
# trace of ../shared/traces/README.md's suite table at its capacities,
# through our policies, the real Cache, the peers and OPT; the caches that
# seed themselves at random are replayed 3 times (about 7 minutes on
# 2 cores).
#
#   bench/run-hitratio.sh                          # the published run
#   RUNS=5 bench/run-hitratio.sh                   # more runs of the random caches
#   TRACES=/elsewhere/traces bench/run-hitratio.sh # another copy of the traces
#   JSON=/tmp/hit-ratio.json bench/run-hitratio.sh # also keep the raw results
#   bench/run-hitratio.sh -only arc-oltp,lirs-loop # extra flags
#
# A report can be drawn again from such a JSON file without replaying:
#   go run ./bench/cmd/hitratio -from-json /tmp/hit-ratio.json
#
# Works from any directory; needs only Go (the module proxy for the peers).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
set -- -traces "${TRACES:-../shared/traces}" -runs "${RUNS:-3}" \
	-md docs/benchmarks/hit-ratio.md -chart-dir docs/benchmarks "$@"
if [ -n "${JSON:-}" ]; then
	set -- "$@" -json "$JSON"
fi
exec go run ./bench/cmd/hitratio "$@"
