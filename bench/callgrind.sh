#!/bin/bash
# Instructions per relayed call, counted by valgrind (callgrind): unlike CPU time on this VM, the
# count repeats within ~1 % between runs, so a change of a few % can be seen in one run.
#
#   bash bench/callgrind.sh [gateway|proxy] [warm-up calls] [measured calls]
#   CALLGRIND_PATHS=C,CM,CR bash bench/callgrind.sh           # the conversion rows too (gateway only)
#     C: OpenAI Chat client → OpenAI channel (passthrough); CM: Claude Messages client → OpenAI
#     channel; CR: OpenAI Responses client → Claude channel — bodies and headers as bench/run.ts's
#     completions. Every path is warmed up first (warm-up calls each, in turn), then each is counted
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
OUT=$(mktemp -d)
TARGET_CPU=${CALLGRIND_CPU:-0}
LOAD_CPU=$((1 - TARGET_CPU))
# Below the ephemeral range (32768–60999), which outgoing connections share: a port picked there may be taken by the time it is bound.
PORT=$((20001 + RANDOM % 12000))
BUNDLE=${CALLGRIND_BUNDLE:-bench/tmp/$TARGET.cjs}
[ -n "${CALLGRIND_BUNDLE:-}" ] || node server/build.mjs "bench/$TARGET.ts" "$BUNDLE" > /dev/null
taskset -c $LOAD_CPU node --import tsx bench/mock.ts --port $((PORT - 1)) > "$OUT/mock.log" 2>&1 &
MOCK=$!
KEY=callgrind0123456789abcdef0123456789abcdef
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
BODY_C='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello there"}]}'
for _ in $(seq 1 240); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$BODY_C" "http://127.0.0.1:$PORT/v1/chat/completions" || true)
  [ "$code" = 200 ] && break
  sleep 1
done
if [ "$code" != 200 ]; then echo "the target does not answer ($code):" >&2; tail -20 "$OUT/target.log" >&2; exit 1; fi
PATHS=${CALLGRIND_PATHS:-C}
[ "$TARGET" = gateway ] || PATHS=C
# load <path id> <calls>: autocannon at c=10 with that path's client protocol (as bench/run.ts).
load() {
  taskset -c $LOAD_CPU node -e "
const paths = {
  C: { path: '/v1/chat/completions', headers: { authorization: 'Bearer $KEY' },
       body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] } },
  CM: { path: '/v1/messages', headers: { 'x-api-key': '$KEY', 'anthropic-version': '2023-06-01' },
        body: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }] } },
  CR: { path: '/v1/responses', headers: { authorization: 'Bearer $KEY' },
        body: { model: 'claude-mock', input: 'hello there', max_output_tokens: 16 } },
};
const p = paths['$1'];
if (!p) { console.error('unknown path $1'); process.exit(1); }
require('autocannon')({ url: 'http://127.0.0.1:$PORT' + p.path, method: 'POST', connections: 10, amount: $2, timeout: 120,
  headers: { ...p.headers, 'content-type': 'application/json' }, body: JSON.stringify(p.body) },
  (e, r) => {
    // A few connection errors happen when the target under valgrind is slow (a kept-alive socket closed as a request
    // is sent): tolerated up to 1 %, printed; a non-2xx answer or more errors fail the count.
    if (e || r.non2xx || r.errors + r.timeouts > $2 / 100) { console.error('load failed', '$1', e ?? r.non2xx + ' non-2xx, ' + r.errors + ' errors, ' + r.timeouts + ' timeouts'); process.exit(1); }
    if (r.errors) console.error('$1: ' + r.errors + ' connection errors of $2 calls');
  })"
}
IFS=, read -ra PATH_IDS <<< "$PATHS"
for id in "${PATH_IDS[@]}"; do load "$id" "$WARM"; done
for id in "${PATH_IDS[@]}"; do
  callgrind_control -i on $VG > /dev/null 2>&1
  load "$id" "$N"
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
