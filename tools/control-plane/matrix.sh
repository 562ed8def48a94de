#!/usr/bin/env bash
# The e2e suites against other Kubernetes releases, on demand (CI runs them on the pinned 1.37).
# For each release, builds its control plane with build.sh (or reuses the cached one) and runs
# `ctest -L e2e` of a build folder with TOPOGUARD_CONTROL_PLANE_BIN pointing at it; the launcher
# (tests/e2e/control_plane.py) turns on what that release ships off. Prints one line per suite
# and release (passed / failed / skipped, seconds) and keeps each release's verbose ctest log
# (every suite's own figures).
#
#   tools/control-plane/matrix.sh                      # 1.34.4, 1.35.4 and 1.36.3
#   tools/control-plane/matrix.sh 1.36.3:3.6.8         # RELEASE:ETCD, one or more
#   tools/control-plane/matrix.sh -R 'webhook|native'  # only the suites matching REGEX
#   options: --build-dir DIR (default build), --out DIR (logs; default a new folder in /tmp),
#            -j N (ctest jobs, default 1)
#
# etcd: the version each release's kubeadm pins (cmd/kubeadm/app/constants), or the nearest the
# module proxy serves (1.35's 3.6.6 is not there: 3.6.8). Exit status: 1 when a suite failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build_dir=$source_dir/build
out=""
regex=""
jobs=1
releases=()
while (($#)); do
  case $1 in
    --build-dir) build_dir=$(cd "${2:?}" && pwd); shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -R) regex=${2:?}; shift 2 ;;
    -j) jobs=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9]*:[0-9]*) releases+=("$1"); shift ;;
    *) echo "matrix.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
((${#releases[@]})) || releases=(1.34.4:3.6.5 1.35.4:3.6.8 1.36.3:3.6.8)
[[ -f $build_dir/CTestTestfile.cmake ]] ||
  { echo "matrix.sh: $build_dir is not a configured build (cmake --preset release)" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/topoguard-matrix-XXXXXX)}
mkdir -p "$out"

status=0
for pair in "${releases[@]}"; do
  kube=${pair%%:*} etcd=${pair#*:}
  echo "== Kubernetes $kube, etcd $etcd" >&2
  if ! bin_dir=$(bash "$here/build.sh" --kube "$kube" --etcd "$etcd" | tail -n 1); then
    echo "matrix.sh: building $kube failed" >&2
    status=1
    continue
  fi
  junit=$out/ctest-$kube.xml
  TOPOGUARD_CONTROL_PLANE_BIN=$bin_dir ctest --test-dir "$build_dir" -L e2e -j "$jobs" \
    ${regex:+-R "$regex"} -V --output-junit "$junit" \
    > "$out/ctest-$kube.log" 2>&1 || status=1
  python3 - "$kube" "$junit" <<'PY'
import sys
import xml.etree.ElementTree as tree

release, junit = sys.argv[1], sys.argv[2]
for case in tree.parse(junit).getroot().iter("testcase"):
    state = case.get("status") or "run"
    if case.find("failure") is not None:
        state = "failed"
    elif case.find("skipped") is not None or state == "notrun":
        state = "skipped"
    elif state == "run":
        state = "passed"
    print("%-8s %-40s %-8s %7.1f s" % (release, case.get("name"), state, float(case.get("time", 0))))
PY
done
echo "logs: $out" >&2
exit "$status"
