#!/usr/bin/env bash
# Sets up everything needed on Debian 12, builds (build/, binary at build/topoguard) and runs
# every test: unit, golden, corpus and integration (real TLS on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
cmake --preset release >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
