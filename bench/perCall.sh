# Sourced by the per-call counters (callgrind.sh, allocations.sh): a port, the bundle, the mock,
# the wait for the target's first answer and the load on one path. Set before sourcing:
# TARGET (gateway|proxy), BUNDLE, LOAD_CPU, KEY; BUILD=0 keeps a bundle built before. Sets OUT, a
# scratch folder for the logs (the caller's cleanup removes it), PORT and MOCK.
OUT=$(mktemp -d)
# Below the ephemeral range (32768–60999), which outgoing connections share: a port picked there
# may be taken by the time it is bound. The mock listens on PORT - 1.
PORT=$((20001 + RANDOM % 12000))
[ "${BUILD:-1}" = 0 ] || node server/build.mjs "bench/$TARGET.ts" "$BUNDLE" > /dev/null
taskset -c "$LOAD_CPU" node --import tsx bench/mock.ts --port $((PORT - 1)) > "$OUT/mock.log" 2>&1 &
MOCK=$!

# wait_for_target <seconds>: until the target answers a completion; exits with its log otherwise.
wait_for_target() {
  local code=000
  for _ in $(seq 1 "$1"); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
      -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello there"}]}' "http://127.0.0.1:$PORT/v1/chat/completions" || true)
    [ "$code" = 200 ] && return 0
    sleep 1
  done
  echo "the target does not answer ($code):" >&2
  tail -20 "$OUT/target.log" >&2
  exit 1
}

# load_path <path id> <calls> <connections>: that path's client protocol (bench/pathLoad.cjs).
load_path() { taskset -c "$LOAD_CPU" node bench/pathLoad.cjs "$PORT" "$KEY" "$1" "$2" "$3"; }

# warm_paths <path ids, comma-separated> <calls> <connections>: sets PATH_IDS (C alone for the
# proxy, which serves one protocol) and warms each path up in turn.
warm_paths() {
  local paths=$1
  [ "$TARGET" = gateway ] || paths=C
  IFS=, read -ra PATH_IDS <<< "$paths"
  for id in "${PATH_IDS[@]}"; do load_path "$id" "$2" "$3"; done
}
