#!/bin/sh
# Compares the root package's micro-benchmarks at a git revision with the
# working tree, and prints benchstat's comparison (make bench-compare).
#
#   bench/compare.sh REV                  # e.g. HEAD~3, a tag, a commit
#   COUNT=20 bench/compare.sh REV         # runs per benchmark (default 10)
#   BENCHFILTER=Get bench/compare.sh REV  # a -bench pattern (default .)
#
# REV is checked out in a temporary git worktree (removed afterwards). Both
# test binaries are built first, then run alternately, one run of each at a
# time, so that a slow drift of the machine hits both alike. Needs benchstat
# (make setup installs it).
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 REV" >&2
	exit 2
fi
rev=$1
root=$(cd "$(dirname "$0")/.." && pwd)
count=${COUNT:-10}
filter=${BENCHFILTER:-.}
# go install puts it in GOBIN, or else in the bin directory of GOPATH's
# first entry (GOPATH may list several, separated by colons).
bindir=$(go env GOBIN)
if [ -z "$bindir" ]; then
	bindir=$(go env GOPATH)
	bindir=${bindir%%:*}/bin
fi
benchstat=${BENCHSTAT:-$bindir/benchstat}
if ! [ -x "$benchstat" ]; then
	echo "benchstat is missing ($benchstat): run make setup" >&2
	exit 1
fi
tmp=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true
	git -C "$root" worktree prune >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
# A signal ends the script (once the step running has ended), and the
# exit runs the cleanup.
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
git -C "$root" worktree add --quiet --detach "$tmp/old" "$rev"
echo "== building the benchmarks at $rev and in the working tree"
(cd "$tmp/old" && GOWORK=off go test -c -o "$tmp/old.test" .)
(cd "$root" && GOWORK=off go test -c -o "$tmp/new.test" .)
: >"$tmp/old.txt"
: >"$tmp/new.txt"
i=1
while [ "$i" -le "$count" ]; do
	echo "== run $i of $count"
	(cd "$tmp/old" && "$tmp/old.test" -test.run '^$' -test.bench "$filter" -test.benchmem -test.count 1) >>"$tmp/old.txt"
	(cd "$root" && "$tmp/new.test" -test.run '^$' -test.bench "$filter" -test.benchmem -test.count 1) >>"$tmp/new.txt"
	i=$((i + 1))
done
echo "== benchstat: $rev (old) against the working tree (new)"
"$benchstat" "$rev=$tmp/old.txt" "working tree=$tmp/new.txt"
