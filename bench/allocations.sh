#!/bin/bash
# Bytes allocated per relayed call, by area and function (V8's sampling heap profiler, objects
# collected since included): what the young generation's collections follow. At c=50 a
# scavenge's pause follows what survives it (the calls in flight), and how often one comes follows
# what each call allocates, so bytes per call × the pause per scavenge is the GC's share per call.
#
#   bash bench/allocations.sh [gateway|proxy] [warm-up calls] [measured calls]
#   ALLOC_PATHS=C,CM,CR bash bench/allocations.sh      # the conversion paths too (bench/pathLoad.cjs)
#   ALLOC_TOP=50 …                                     # functions listed per path (default 30)
#
# Builds the bundle the harness runs (bench/tmp/<target>.cjs), starts the mock on CPU 1 and the
# target on CPU 0 with the start script's V8 flags, warms every path up, then samples each path's
# calls at c=50 on its own. The sampling slows the target (≈ 1/3 of its throughput): the bytes are
# the measure here, not the time.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-gateway}
WARM=${2:-20000}
N=${3:-20000}
BUNDLE=bench/tmp/$TARGET.cjs
LOAD_CPU=1
KEY=allocations0123456789abcdef0123456789abcd
# shellcheck source=bench/perCall.sh
source bench/perCall.sh
TARGET_ARGS=(--port $PORT --upstream "http://127.0.0.1:$((PORT - 1))")
[ "$TARGET" = gateway ] && TARGET_ARGS+=(--key $KEY --db "sqlite:$OUT/g.db")
ALLOC_OUT="$OUT/profile.json" taskset -c 0 node --require ./bench/allocProbe.cjs --expose-gc --max-semi-space-size=8 \
  --heap-growing-percent=60 "$BUNDLE" "${TARGET_ARGS[@]}" > "$OUT/target.log" 2>&1 &
TG=$!
cleanup() {
  kill $MOCK $TG 2>/dev/null || true
  rm -rf "$OUT"
}
trap cleanup EXIT
wait_for_target 60
warm_paths "${ALLOC_PATHS:-C}" "$WARM" 50
for id in "${PATH_IDS[@]}"; do
  rm -f "$OUT/profile.json"
  kill -USR2 $TG
  sleep 0.2
  load_path "$id" "$N" 50
  kill -USR2 $TG
  for _ in $(seq 1 60); do [ -s "$OUT/profile.json" ] && break; sleep 0.5; done
  sleep 0.5
  echo "== $TARGET $id"
  node bench/allocProbe.cjs "$OUT/profile.json" "$N" "${ALLOC_TOP:-30}"
done
