#!/usr/bin/env bash
# Sets up everything needed on Debian 12, builds (build/, binary at build/topoguard) and runs
# every test: unit, golden, corpus and integration (real TLS on 127.0.0.1). Prints each step's
# wall time at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

step_times=""
step() {  # step NAME COMMAND...: runs COMMAND and records its wall time
  local name="$1" start=$SECONDS
  shift
  "$@"
  step_times+=" ${name} $((SECONDS - start)) s,"
}
step setup bash tools/setup.sh
step configure cmake --preset release >/dev/null
step build cmake --build build -j"$(nproc)"
step ctest ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
echo "test: wall time:${step_times%,}" >&2
