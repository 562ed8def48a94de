#!/usr/bin/env bash
# Feasibility amplification under load (issue 38): `topoguard serve --kubeconfig --threads=4
# --failure-mode closed` against the fake API server holding a generated cluster whose GPUs each
# publish a unique uuid; hostile clients send templates whose GPU selector reads the uuid with a
# new string each time, a legitimate client sends aligned templates alongside. Prints the
# legitimate client's latency (p50/p99/max) and failures and every hostile review's latency.
# Runs the adversarial test tests/kube/serve_feasibility_test.cpp at the size asked for (its
# assertions still hold: the figures are printed first). Build first:
#   cmake --build build --target topoguard kube_integration_test
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'USAGE'
usage: bench/feasibility-load.sh [--nodes N] [--hostile N] [--legitimate N] [--topoguard PATH]

  --nodes N        nodes of the generated cluster, 8 GPUs and 4 NICs each (default 5000)
  --hostile N      hostile clients, each under its own username (default 16)
  --legitimate N   reviews the legitimate client sends, one after another (default 200)
  --topoguard PATH the topoguard binary to serve (default: build/topoguard), e.g. a build of an
                   older commit, for before/after figures
USAGE
}

nodes=5000
hostile=16
legitimate=200
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes="${2:?}"; shift 2 ;;
    --hostile) hostile="${2:?}"; shift 2 ;;
    --legitimate) legitimate="${2:?}"; shift 2 ;;
    --topoguard) binary="${2:?}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "feasibility-load: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
for n in "$nodes" "$hostile" "$legitimate"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "feasibility-load: counts must be positive" >&2; exit 2; }
done
test_binary="${repo}/build/tests/kube/kube_integration_test"
[ -x "$test_binary" ] || { echo "feasibility-load: build kube_integration_test first" >&2; exit 2; }

FEASIBILITY_LOAD_NODES="$nodes" FEASIBILITY_LOAD_HOSTILE_CLIENTS="$hostile" \
FEASIBILITY_LOAD_LEGITIMATE_REVIEWS="$legitimate" FEASIBILITY_LOAD_BINARY="$binary" \
  "$test_binary" --gtest_filter='ServeFeasibilityTest.*' --gtest_brief=1
