#!/usr/bin/env bash
# The inventory's pcieRoot and numaNode equal what Kubernetes' own helper computes
# (k8s.io/dynamic-resource-allocation/deviceattribute, through tools/pcieroot) on every fixture
# machine. Exit 77 (skipped) when tools/setup.sh could not build it (no Go 1.26).
#
#   pcieroot_vs_kubernetes_test.sh TOPOGUARD_BINARY SOURCE_DIR
set -uo pipefail
binary=$1
source_dir=$2
here=$source_dir/tests/sysfs
helper=$("$source_dir/tools/pcieroot/build.sh" --cached) ||
  { echo "SKIP: tools/pcieroot is not built (tools/setup.sh builds it)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
for description in "$here"/machines/*.json; do
  machine=$(basename "$description" .json)
  python3 "$here/build_sysfs.py" "$description" "$work/$machine" || { echo "FAIL: $machine fixture"; failures=$((failures + 1)); continue; }
  "$helper" "$work/$machine" >"$work/$machine.kubernetes" || { echo "FAIL: $machine: pcieroot"; failures=$((failures + 1)); continue; }
  "$binary" inventory --sysfs "$work/$machine" -o json >"$work/$machine.inventory" || { echo "FAIL: $machine: inventory"; failures=$((failures + 1)); continue; }
  python3 - "$machine" "$work/$machine.kubernetes" "$work/$machine.inventory" <<'PY' || failures=$((failures + 1))
import json, sys
machine, kubernetes_path, inventory_path = sys.argv[1:]
kubernetes = {}
for line in open(kubernetes_path):
    entry = json.loads(line)
    kubernetes[entry["pciBusID"]] = entry
inventory = json.load(open(inventory_path))
devices = inventory["gpus"] + inventory["nics"]
problems = []
for device in devices:
    expected = kubernetes.get(device["pciBusID"])
    if expected is None:
        problems.append(f"{device['pciBusID']}: not under bus/pci/devices for Kubernetes")
        continue
    if device["pcieRoot"] != expected.get("pcieRoot"):
        problems.append(f"{device['pciBusID']}: pcieRoot {device['pcieRoot']!r}, Kubernetes "
                        f"{expected.get('pcieRoot') or expected.get('pcieRootError')!r}")
    # Kubernetes refuses -1 (no affinity: the attribute is not published) and unreadable text;
    # the inventory keeps -1 and says unknown (null) for the rest.
    if "numaNode" in expected:
        if device["numaNode"] != expected["numaNode"]:
            problems.append(f"{device['pciBusID']}: numaNode {device['numaNode']}, Kubernetes {expected['numaNode']}")
    elif device["numaNode"] not in (None, -1):
        problems.append(f"{device['pciBusID']}: numaNode {device['numaNode']}, Kubernetes: {expected['numaNodeError']}")
for problem in problems:
    print(f"FAIL {machine}: {problem}")
print(f"{machine}: {len(devices)} devices compared, {len(problems)} differences")
sys.exit(1 if problems else 0)
PY
done
echo "pcieroot_vs_kubernetes: $failures failure(s)"
[[ $failures == 0 ]]
