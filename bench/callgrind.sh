#!/bin/bash
# Instructions per relayed call, counted by valgrind (callgrind): unlike CPU time on this VM, the
# count repeats within ~1 % between runs, so a change of a few % can be seen in one run.
#
#   bash bench/callgrind.sh [gateway|proxy] [warm-up calls] [measured calls]
#   CALLGRIND_PATHS=C,CM,CR bash bench/callgrind.sh           # the conversion rows too (gateway only)
#     (the paths of bench/pathLoad.cjs: C passthrough, CM Claude client → OpenAI channel, CR
#     Responses client → Claude channel). Every path is warmed up first (warm-up calls each, in turn), then each is counted
#     on its own (N calls, a callgrind dump per path) in the same process.
#   CALLGRIND_BUNDLE=bench/tmp/x.cjs bash bench/callgrind.sh … # runs that bundle (built before; under bench/ so that it
#                                   finds node_modules) instead of building one
#   CALLGRIND_KEEP=dir bash bench/callgrind.sh …              # keeps the dumps (dir/<path>/cg.*) for callgrind_annotate
#   CALLGRIND_JSNAMES=1 CALLGRIND_KEEP=dir bash bench/callgrind.sh …   # also names the JIT code in the kept dumps
#                                   (dir/<path>/named.<pid>.<n>.cg: each JS function's name, file and line, from the
#                                   target's --perf-basic-prof map), for callgrind_annotate
#   CALLGRIND_PG=postgres://… CALLGRIND_REDIS=redis://… bash bench/callgrind.sh   # the C2 set-up
#                                   (fresh schema / prefix, dropped at the end; gateway side only)
#
# Builds the bundle the harness runs (bench/tmp/<target>.cjs), starts the mock on CPU 1 and the
# target under callgrind on CPU 0 with instrumentation off, warms it up (the JIT must settle:
# 6000 calls), then counts N calls at c=10. Prints Ir per call and a split by area (JIT compiler
# with the deoptimizer and bytecode compiler, V8 runtime, builtins, JIT code, SQLite, GC, libc).
# CALLGRIND_CPU=1 swaps the CPUs (target on 1), so that two counts can run side by side: the
# counts do not change, but the SQLite share does (how many calls a group commit takes follows
# the target's speed against the load's), hence the figure without it. Needs valgrind (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-gateway}
WARM=${2:-6000}
N=${3:-10000}
TARGET_CPU=${CALLGRIND_CPU:-0}
LOAD_CPU=$((1 - TARGET_CPU))
BUNDLE=${CALLGRIND_BUNDLE:-bench/tmp/$TARGET.cjs}
BUILD=1
[ -z "${CALLGRIND_BUNDLE:-}" ] || BUILD=0
KEY=callgrind0123456789abcdef0123456789abcdef
# shellcheck source=bench/perCall.sh
source bench/perCall.sh
DB_ARGS=(--db "sqlite:$OUT/g.db")
if [ -n "${CALLGRIND_PG:-}" ]; then
  SCHEMA=cg_$$
  DB_ARGS=(--db "$CALLGRIND_PG" --schema "$SCHEMA" --redis "${CALLGRIND_REDIS:-redis://127.0.0.1:6379}" --redis-prefix "cg:$$:")
fi
# --perf-basic-prof: V8 writes /tmp/perf-<pid>.map (address, size and name of every piece of JIT code).
JS_FLAGS=()
[ -z "${CALLGRIND_JSNAMES:-}" ] || JS_FLAGS=(--perf-basic-prof)
taskset -c $TARGET_CPU valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file --callgrind-out-file="$OUT/cg.%p" \
  node "${JS_FLAGS[@]}" --expose-gc --max-semi-space-size=8 --heap-growing-percent=60 "$BUNDLE" --port $PORT --upstream "http://127.0.0.1:$((PORT - 1))" \
  --key $KEY "${DB_ARGS[@]}" > "$OUT/target.log" 2>&1 &
VG=$!
cleanup() {
  kill $MOCK $VG 2>/dev/null || true
  rm -f "/tmp/perf-$VG.map"
  rm -rf "$OUT"
  if [ -n "${SCHEMA:-}" ]; then psql "$CALLGRIND_PG" -qc "drop schema if exists $SCHEMA cascade" > /dev/null 2>&1 || true; fi
}
trap cleanup EXIT
wait_for_target 240
warm_paths "${CALLGRIND_PATHS:-C}" "$WARM" 10
for id in "${PATH_IDS[@]}"; do
  callgrind_control -i on $VG > /dev/null 2>&1
  load_path "$id" "$N" 10
  callgrind_control -i off $VG > /dev/null 2>&1
  before=$(ls "$OUT" | grep -c '^cg\.' || true)
  callgrind_control -d $VG > /dev/null 2>&1
  for _ in $(seq 1 30); do [ "$(ls "$OUT" | grep -c '^cg\.' || true)" -gt "$before" ] && break; sleep 1; done
  sleep 1
  mkdir -p "$OUT/$id"
  mv "$OUT"/cg.* "$OUT/$id/"
  if [ -n "${CALLGRIND_KEEP:-}" ]; then mkdir -p "$CALLGRIND_KEEP/$id" && cp "$OUT/$id"/cg.* "$CALLGRIND_KEEP/$id/"; fi
  if [ -n "${CALLGRIND_KEEP:-}" ] && [ -n "${CALLGRIND_JSNAMES:-}" ]; then
    # The dump names JIT code by address only: give each address the name V8 wrote for it (the
    # latest entry that covers it, since code can be moved and its space reused).
    python3 - "$CALLGRIND_KEEP/$id" "/tmp/perf-$VG.map" <<'PY'
import bisect, glob, os, re, sys
out, pmap = sys.argv[1], sys.argv[2]
ents = []
for order, line in enumerate(open(pmap)):
    a, s, n = line.rstrip('\n').split(' ', 2)
    ents.append((int(a, 16), int(s, 16), order, n.replace(' ', '_')))
ents.sort()
starts = [e[0] for e in ents]
largest = max((e[1] for e in ents), default=0)
def name(addr):
    best = None
    i = bisect.bisect_right(starts, addr) - 1
    while i >= 0 and addr - ents[i][0] <= largest:
        a, s, order, n = ents[i]
        if addr < a + s and (best is None or order > best[0]):
            best = (order, n)
        i -= 1
    return best and best[1]
fn = re.compile(r'^(c?fn)=\((\d+)\) (?:\?\?\?:)?(0x[0-9a-fA-F]+)\s*$')
for f in glob.glob(out + '/cg.*'):
    if not os.path.getsize(f):
        continue
    with open(f) as src, open(os.path.join(out, os.path.basename(f).replace('cg.', 'named.', 1) + '.cg'), 'w') as dst:
        for line in src:
            m = fn.match(line)
            n = m and name(int(m.group(3), 16))
            dst.write(f'{m.group(1)}=({m.group(2)}) {n} [{m.group(3)}]\n' if n else line)
PY
  fi
done
for id in "${PATH_IDS[@]}"; do
echo "== $id"
python3 - "$OUT/$id" "$N" <<'PY'
import collections, glob, re, subprocess, sys
out, n = sys.argv[1], int(sys.argv[2])
total = 0
areas = collections.Counter()
for f in glob.glob(out + '/cg.*'):
    text = subprocess.run(['callgrind_annotate', '--inclusive=no', '--threshold=100', f], capture_output=True, text=True).stdout
    for line in text.splitlines():
        m = re.match(r'\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)', line)
        if not m:
            continue
        ir, name = int(m.group(1).replace(',', '')), m.group(2)
        if 'PROGRAM TOTALS' in name:
            total += ir
            continue
        if re.search(r'compiler::|maglev|Maglev|Deoptimiz|interpreter::Bytecode|Compiler::|Parser::|Parser<', name):
            a = 'JIT compiler'
        elif 'better_sqlite3' in name:
            a = 'SQLite'
        elif re.search(r'Heap|Scaveng|MarkCompact|Sweeper|Marking|Evacuat|heap::|MemoryAllocator|RememberedSet|SlotSet|IterateObjectCache', name):
            a = 'GC'
        elif 'Builtins_' in name:
            a = 'V8 builtins'
        elif 'libc.so' in name or 'ld-linux' in name:
            a = 'libc'
        elif '/usr/bin/node' in name and ('node::' in name or 'llhttp' in name or 'uv_' in name):
            a = 'node/libuv'
        elif '/usr/bin/node' in name:
            a = 'V8 runtime'
        elif name.startswith('???:0x') or '???:???' in name:
            a = 'JIT code'
        else:
            a = 'other'
        areas[a] += ir
print(f'Ir per call: {total // n}  (JIT compiler varies ±20 k between runs; compare the rest)')
print(f'  without JIT compiler and GC: {(total - areas["JIT compiler"] - areas["GC"]) // n};'
      f' without them and SQLite (its share follows how many calls a group commit takes): {(total - areas["JIT compiler"] - areas["GC"] - areas["SQLite"]) // n}')
for a, ir in areas.most_common():
    print(f'  {a:13s} {ir // n:8d}  {100 * ir / total:5.1f} %')
PY
done
