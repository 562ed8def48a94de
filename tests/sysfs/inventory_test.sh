#!/usr/bin/env bash
# `topoguard inventory` on every fixture machine (tests/sysfs/machines): text and JSON output
# against tests/sysfs/golden/<machine>.{txt,json}, then input that must end in an error or an
# unknown, never a crash or a hang. TOPOGUARD_UPDATE_GOLDEN=1 rewrites the golden files.
#
#   inventory_test.sh TOPOGUARD_BINARY SOURCE_DIR
set -uo pipefail
binary=$1
source_dir=$2
here=$source_dir/tests/sysfs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for description in "$here"/machines/*.json; do
  machine=$(basename "$description" .json)
  python3 "$here/build_sysfs.py" "$description" "$work/$machine" || { fail "$machine: fixture"; continue; }
  for format in text json; do
    extension=$([[ $format == text ]] && echo txt || echo json)
    golden=$here/golden/$machine.$extension
    timeout 60 "$binary" inventory --sysfs "$work/$machine" -o "$format" >"$work/out" 2>"$work/err"
    status=$?
    [[ $status == 0 ]] || fail "$machine -o $format: exit $status: $(cat "$work/err")"
    if [[ ${TOPOGUARD_UPDATE_GOLDEN:-} == 1 ]]; then
      cp "$work/out" "$golden"
    elif ! diff -u "$golden" "$work/out"; then
      fail "$machine -o $format differs from $golden"
    fi
  done
done

# `topoguard ab` from each fixture's sysfs: golden YAML (exit 1 only when no variant exists).
for description in "$here"/machines/*.json; do
  machine=$(basename "$description" .json)
  golden=$here/golden/$machine.ab.yaml
  timeout 60 "$binary" ab --sysfs "$work/$machine" --node "$machine" --gpu-class gpu.nvidia.com \
    --nic-class rdma --image registry.example/nccl-tests:2.13 --command 'all_reduce_perf -b 8 -e 4G' \
    >"$work/out" 2>"$work/err"
  status=$?
  [[ $status == 0 || ($status == 1 && -s $work/err) ]] || fail "ab $machine: exit $status: $(cat "$work/err")"
  if [[ ${TOPOGUARD_UPDATE_GOLDEN:-} == 1 ]]; then
    cp "$work/out" "$golden"
  elif ! diff -u "$golden" "$work/out"; then
    fail "ab $machine differs from $golden"
  fi
done

# ab's input that is no inventory: exit 2 naming the file.
echo '{"kind": "Something"}' >"$work/not-inventory.json"
echo '{"kind": "topoguard.inventory/v1", "gpus": [{"pcieRoot": 7, "numaNode": 0}], "nics": []}' >"$work/bad-root.json"
for case in not-inventory.json:"not the output of topoguard inventory" bad-root.json:"gpus\[0\]: pcieRoot must be"; do
  timeout 60 "$binary" ab --inventory "$work/${case%%:*}" --node n --gpu-class g --nic-class n \
    --image i --command c >"$work/out" 2>"$work/err"
  status=$?
  [[ $status == 2 ]] && grep -q "${case#*:}" "$work/err" ||
    fail "ab --inventory ${case%%:*}: exit $status, $(cat "$work/err")"
done

# --compare-slices: the corpus's captured p4d slices agree with the p4d-like fixture (exit 0); a
# driver's wrong pcieRoot, numaNode and pciBusID are attribute-mismatch findings in every format
# (exit 1), devices of other nodes and without an address left out.
p4d_node=ip-192-168-153-160.ec2.internal
corpus=$source_dir/../shared/corpus/dranet/examples/aws_eks_examples/gpu-efa
if [[ -d $corpus ]]; then
  timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" --node "$p4d_node" \
    --compare-slices "$corpus/resourceslice-gpu.yaml" --compare-slices "$corpus/resourceslice-dranet.yaml" \
    >"$work/out" 2>"$work/err"
  status=$?
  [[ $status == 0 ]] && grep -q "15 devices with a PCI address, 0 without, 0 mismatches" "$work/out" ||
    fail "p4d corpus slices: exit $status, $(tail -2 "$work/out") $(cat "$work/err")"
fi
for format in text json sarif junit; do
  golden=$here/golden/aws-p4d.compare.$format
  timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" --node "$p4d_node" -o "$format" \
    --compare-slices "$here/slices/p4d-wrong-attributes.yaml" >"$work/out" 2>"$work/err"
  status=$?
  [[ $status == 1 ]] || fail "compare -o $format: exit $status, expected 1: $(cat "$work/err")"
  if [[ ${TOPOGUARD_UPDATE_GOLDEN:-} == 1 ]]; then
    cp "$work/out" "$golden"
  elif ! diff -u "$golden" "$work/out"; then
    fail "compare -o $format differs from $golden"
  fi
done
# `topology --inventory`: the node's sysfs (the inventory with the wrong driver's findings) beside
# what the corpus's captured p4d slices publish, as text and JSON; an inventory that names no node
# is taken with NODE=FILE, one that is none is an error naming the file.
if [[ -d $corpus ]]; then
  timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" --node "$p4d_node" -o json \
    --compare-slices "$here/slices/p4d-wrong-attributes.yaml" >"$work/p4d-inventory.json"
  for format in text json; do
    golden=$here/golden/aws-p4d.topology.$format
    (cd "$work" && timeout 60 "$binary" topology --cluster-state "$corpus/resourceslice-gpu.yaml" \
      --cluster-state "$corpus/resourceslice-dranet.yaml" --inventory p4d-inventory.json \
      -o "$format") | sed "s|$corpus/||g" >"$work/out" 2>"$work/err"
    status=${PIPESTATUS[0]}
    [[ $status == 0 ]] || fail "topology --inventory -o $format: exit $status: $(cat "$work/err")"
    if [[ ${TOPOGUARD_UPDATE_GOLDEN:-} == 1 ]]; then
      cp "$work/out" "$golden"
    elif ! diff -u "$golden" "$work/out"; then
      fail "topology --inventory -o $format differs from $golden"
    fi
  done
  timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" -o json >"$work/anonymous.json"
  timeout 60 "$binary" topology --cluster-state "$corpus/resourceslice-gpu.yaml" \
    --inventory "$work/anonymous.json" >"$work/out" 2>"$work/err"
  [[ $? == 2 ]] && grep -q "anonymous.json: node: the inventory names no node" "$work/err" ||
    fail "topology --inventory without a node: $(cat "$work/err")"
  timeout 60 "$binary" topology --cluster-state "$corpus/resourceslice-gpu.yaml" \
    --inventory "$p4d_node=$work/anonymous.json" >"$work/out" 2>"$work/err"
  [[ $? == 0 ]] && grep -q "inventory of node $p4d_node" "$work/out" ||
    fail "topology --inventory NODE=FILE: $(cat "$work/err")"
  timeout 60 "$binary" topology --cluster-state "$corpus/resourceslice-gpu.yaml" \
    --inventory "$work/bad-root.json" >"$work/out" 2>"$work/err"
  [[ $? == 2 ]] && grep -q "bad-root.json: " "$work/err" || fail "topology --inventory bad: $(cat "$work/err")"
fi
# The machine formats as their consumers check them: SARIF against the 2.1.0 JSON schema, JUnit
# against the schema tests/reports uses (when xmllint is there).
sarif_schema=$source_dir/../shared/reference/schemas/sarif-schema-2.1.0.json
if [[ -f $sarif_schema ]]; then
  python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
    "$here/golden/aws-p4d.compare.sarif" "$sarif_schema" || fail "SARIF schema"
fi
if command -v xmllint >/dev/null; then
  xmllint --noout --schema "$source_dir/tests/reports/junit-10.xsd" "$here/golden/aws-p4d.compare.junit" 2>/dev/null ||
    fail "JUnit schema"
fi
timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" -o sarif >"$work/out" 2>"$work/err"
[[ $? == 2 ]] && grep -q "writes the findings of --compare-slices or --cluster" "$work/err" || fail "sarif without slices"
timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" --compare-slices x >"$work/out" 2>"$work/err"
[[ $? == 2 ]] && grep -q -- "--node" "$work/err" || fail "--compare-slices without --node: $(cat "$work/err")"
printf 'kind: ResourceSlice\napiVersion: resource.k8s.io/v1\nspec: {driver: 7}\n' >"$work/bad-slice.yaml"
timeout 60 "$binary" inventory --sysfs "$work/aws-p4d" --node n --compare-slices "$work/bad-slice.yaml" >"$work/out" 2>"$work/err"
[[ $? == 2 ]] && grep -q "bad-slice.yaml" "$work/err" || fail "unreadable slice: $(cat "$work/err")"

# No sysfs there: exit 2 and a message naming the path.
expect_usage_error() {  # expect_usage_error WHAT ROOT TEXT
  timeout 60 "$binary" inventory --sysfs "$2" >"$work/out" 2>"$work/err"
  status=$?
  [[ $status == 2 ]] || fail "$1: exit $status, expected 2"
  grep -q -- "$3" "$work/err" || fail "$1: stderr lacks '$3': $(cat "$work/err")"
}
expect_usage_error "missing root" "$work/none" "none/bus/pci/devices is no directory"
touch "$work/file"
expect_usage_error "root is a file" "$work/file" "is no directory"

# A FIFO where an attribute should be is read as unknown, not waited on.
fifo_root=$work/dgx-a100
rm "$fifo_root/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:07:00.0/numa_node"
mkfifo "$fifo_root/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:07:00.0/numa_node"
timeout 60 "$binary" inventory --sysfs "$fifo_root" >"$work/out" 2>"$work/err"
status=$?
[[ $status == 0 ]] || fail "fifo numa_node: exit $status"
grep -q "0000:07:00.0: numa_node could not be read" "$work/out" || fail "fifo numa_node: no problem line"

# An unreadable bus directory: an error, not a crash (root ignores modes, so only as a user).
if [[ $(id -u) != 0 ]]; then
  chmod 000 "$work/vm-one-root/bus/pci/devices"
  timeout 60 "$binary" inventory --sysfs "$work/vm-one-root" >"$work/out" 2>"$work/err"
  status=$?
  chmod 755 "$work/vm-one-root/bus/pci/devices"
  [[ $status == 0 ]] && grep -q "bus/pci/devices: Permission denied" "$work/out" ||
    fail "unreadable bus: exit $status, $(cat "$work/out" "$work/err")"
fi

echo "inventory_test: $failures failure(s)"
[[ $failures == 0 ]]
