#!/bin/sh
# Regenerates docs/benchmarks/*.md (make bench): every phase, or the named
# ones, one after the other, each with its published flags, timing each.
#
#   bench/run-all.sh                     # every phase (about 1.8 hours on 2 cores)
#   bench/run-all.sh articles gc         # some phases
#   NOTE='text' bench/run-all.sh memory  # a note for the documents' headers
#                                        (not hitratio's, synthetic's or tiered's:
#                                        their commands take no -note)
#   TRACES=/elsewhere bench/run-all.sh replay hitratio
#
# Phases, in order, and what each regenerates:
#
#   throughput   throughput.md, .json         (bench/run.sh, ~25 min)
#   hitratio     hit-ratio.md, .json, charts  (bench/run-hitratio.sh, ~7 min)
#   synthetic    hit-ratio-synthetic.md, .json, charts (bench/cmd/hitratio -synthetic, ~2 min)
#   loading      loading.md                   (bench/cmd/stampede, ~1 min)
#   visibility   visibility.md, .json, chart  (bench/cmd/visibility, ~2 min)
#   articles     articles.md, .json, charts   (bench/cmd/articles, ~4 min)
#   replay       replay.md, .json, chart      (bench/cmd/replay, ~2 min)
#   memory       memory.md, .json, chart      (bench/cmd/memory, ~2 min)
#   gc           gc.md, .json, charts         (bench/cmd/gc, ~30 min)
#   bytecache    bytecache.md, .json, charts  (bench/cmd/bytecache, ~9 min)
#   tiered       tiered.md                    (redis/internal/cmd/tierbench, ~4 min, needs redis-server)
#   service      service.md, .json            (cmd/cachekit/internal/svcbench, ~12 min, 8 GiB of memory)
#
# The times are those of the published runs (each document records its
# own). Run on a quiet machine: every document records the load average
# and warns when the machine was busy.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=docs/benchmarks
traces=${TRACES:-../shared/traces}
all="throughput hitratio synthetic loading visibility articles replay memory gc bytecache tiered service"
if [ $# -eq 0 ] || [ "$*" = all ]; then
	set -- $all
fi
for p in "$@"; do
	case " $all " in
	*" $p "*) ;;
	*)
		echo "unknown phase $p (known: $all)" >&2
		exit 2
		;;
	esac
done
start=$(date +%s)
for p in "$@"; do
	t0=$(date +%s)
	echo "== $p ($(date -u '+%H:%M:%S') UTC, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))"
	case $p in
	throughput) bench/run.sh ;;
	hitratio) TRACES=$traces JSON=$out/hit-ratio.json bench/run-hitratio.sh ;;
	synthetic) go run ./bench/cmd/hitratio -synthetic -md $out/hit-ratio-synthetic.md -json $out/hit-ratio-synthetic.json -chart-dir $out ;;
	loading) go run ./bench/cmd/stampede -rounds 20 -md $out/loading.md ${NOTE:+-note "$NOTE"} ;;
	visibility) go run ./bench/cmd/visibility -md $out/visibility.md -json $out/visibility.json ${NOTE:+-note "$NOTE"} ;;
	articles) go run ./bench/cmd/articles -md $out/articles.md -json $out/articles.json ${NOTE:+-note "$NOTE"} ;;
	replay) go run ./bench/cmd/replay -traces-dir "$traces" -md $out/replay.md -json $out/replay.json ${NOTE:+-note "$NOTE"} ;;
	memory) go run ./bench/cmd/memory -md $out/memory.md -json $out/memory.json ${NOTE:+-note "$NOTE"} ;;
	gc) go run ./bench/cmd/gc -md $out/gc.md -json $out/gc.json ${NOTE:+-note "$NOTE"} ;;
	bytecache) go run ./bench/cmd/bytecache -md $out/bytecache.md -json $out/bytecache.json ${NOTE:+-note "$NOTE"} ;;
	tiered) (cd redis && go run ./internal/cmd/tierbench -md ../$out/tiered.md) ;;
	service) (cd cmd/cachekit && go run ./internal/svcbench -md ../../$out/service.md -json ../../$out/service.json ${NOTE:+-note "$NOTE"}) ;;
	esac
	echo "== $p took $(($(date +%s) - t0)) s"
done
echo "== make bench: $# phase(s) in $(($(date +%s) - start)) s"
