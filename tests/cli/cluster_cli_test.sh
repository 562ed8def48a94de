#!/usr/bin/env bash
# End-to-end checks of the cluster-state commands through the real binary on dranet's real AWS
# p4d and Azure GB300 ResourceSlice captures: `topoguard topology` (text, JSON, stdin, bad
# input) and `topoguard audit --cluster-state` (feasibility rules).
# Usage: cluster_cli_test.sh BINARY CORPUS_DIR
set -uo pipefail
binary=$(realpath "$1")
corpus=$2
p4d="$corpus/dranet/examples/aws_eks_examples/gpu-efa"
gb300="$corpus/dranet/examples/azure_aks_examples/gb300"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_support.sh"

run() {  # run ARGS... -> $code, output in $work/out and $work/err
  "$binary" "$@" >"$work/out" 2>"$work/err" </dev/null
  code=$?
}

run topology --cluster-state "$p4d/resourceslice-gpu.yaml" "$p4d/resourceslice-dranet.yaml" "$gb300"
check "topology exit 0" test "$code" -eq 0
check "p4d root line" grep -qx '  pci0000:10: 2 GPUs, 1 NIC' "$work/out"
check "gb300 has no pair" grep -qx 'nodes without an aligned GPU+NIC pair: aks-gpu-45139532-vmss000081' "$work/out"
check "gb300 unrooted NICs" grep -qx '  no resource.kubernetes.io/pcieRoot: 0 GPUs, 4 NICs' "$work/out"

run topology --format json --cluster-state "$gb300"
check "json exit 0" test "$code" -eq 0
check "json summary" jq_true '.summary == {"alignedPairs": 0, "gpus": 4, "nics": 4, "nodes": 1, "nodesWithoutAlignedPairs": 1}' "$work/out"
check "json device fields" jq_true '.nodes[0].roots[0].gpus[0] | .busID == "0008:06:00.0" and .numaNode == null' "$work/out"

"$binary" topology --cluster-state - --format json <"$p4d/resourceslice-gpu.yaml" >"$work/out" 2>"$work/err"
check "stdin" jq_true '.nodes[0].roots | length == 4' "$work/out"

printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: x}\nspec:\n  driver: d\n  nodeName: n\n  pool: {name: p}\n  devices:\n  - name: a\n    attributes:\n      numa: {int: "0"}\n' >"$work/bad.yaml"
run topology --cluster-state "$work/bad.yaml"
check "bad slice exit 2" test "$code" -eq 2
check "bad slice names file, line and field" grep -qF "bad.yaml:11: /spec/devices/0/attributes/numa/int: expected integer, got string [wrong_type]" "$work/err"
check "bad slice marks node incomplete" grep -q '^node n: .*(incomplete' "$work/out"

run topology
check "no cluster state is a usage error" test "$code" -eq 2

classes="$(dirname "$0")/../data/device-classes.yaml"  # the classes the templates name

# p4d: the aligned 1 GPU + 1 EFA template fits, and so would the fix of the unaligned one.
run audit --format json --cluster-state "$p4d/resourceslice-gpu.yaml" "$p4d/resourceslice-dranet.yaml" \
  "$p4d/device-class.yaml" "$classes" "$p4d/resource-claim-template.yaml"
check "p4d audit exit 1 (the unaligned template is denied)" test "$code" -eq 1
check "p4d no feasibility finding" jq_true '[.findings[] | select(.rule == "unsatisfiable-alignment" or .rule == "attribute-not-published")] | length == 0' "$work/out"
check "p4d slices count as resources" jq_true '.summary.skipped == 0' "$work/out"

# GB300: a pcieRoot constraint on GPU + ConnectX is unsatisfiable, and DRANET publishes no root.
run audit --format json --fail-on never --cluster-state "$gb300/resourceslice-gpu.yaml" \
  "$gb300/resourceslice-dranet.yaml" "$classes" "$gb300/resource-claim-template.yaml"
check "gb300 exit 0 with --fail-on never" test "$code" -eq 0
check "gb300 what-if unsatisfiable" jq_true '[.findings[] | select(.rule == "unsatisfiable-alignment") | .resource.name] == ["1nic-aligned", "1nic-unaligned"]' "$work/out"
check "gb300 attribute-not-published" jq_true '[.findings[] | select(.rule == "attribute-not-published") | .action] == ["warn", "warn"]' "$work/out"

# A DeviceClass only the cluster has maps example.com/ib: a pod asking it beside nvidia.com/gpu
# gets a scheduler-made claim without constraints (device-plugin-pairing).
printf 'apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: dranet-ib}\nspec:\n  selectors: [{cel: {expression: device.driver == "dra.net"}}]\n  extendedResourceName: example.com/ib\n' >"$work/ib-class.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n  - name: main\n    resources:\n      limits: {nvidia.com/gpu: "1", example.com/ib: "1"}\n' >"$work/ib-pod.yaml"
run audit --format json --cluster-state "$work/ib-class.yaml" -- "$work/ib-pod.yaml"
check "cluster class maps an extended resource" jq_true '[.findings[] | select(.rule == "device-plugin-pairing") | .resource.name] == ["p"]' "$work/out"
run audit --format json "$work/ib-pod.yaml"
check "without the class the resource is no NIC" jq_true '[.findings[] | select(.rule == "device-plugin-pairing")] | length == 0' "$work/out"

run audit
check "audit without paths or cluster state is a usage error" test "$code" -eq 2

echo "$passed passed, $failed failed"
test "$failed" -eq 0
