#!/usr/bin/env bash
# Label-based policies never weaken silently (issue 40, item 3): the "deny where tier=prod, warn
# elsewhere" example of policies/README.md warns with a note on stderr when the input holds no
# Namespace objects, and denies with --namespace-labels; --fail-on-unknown fails the run; review,
# fix and policy test take the labels too; a bad labels file names file, line and field.
# Usage: namespace_labels_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_support.sh"

run() {  # run ARGS... -> $code, stdout in $work/out, stderr in $work/err
  "$binary" "$@" >"$work/out" 2>"$work/err" </dev/null
  code=$?
}

# The policy exactly as the README shows it: the yaml block that names prod-tier-strict.
awk '/^```yaml$/ {block = ""; inside = 1; next}
     /^```$/ {if (inside && block ~ /name: prod-tier-strict/) printf "%s", block; inside = 0; next}
     inside {block = block $0 "\n"}' "$source_dir/policies/README.md" >"$work/prod.yaml"
check "README example found" grep -q 'namespaceSelector: {matchLabels: {tier: prod}}' "$work/prod.yaml"

template="$source_dir/examples/manifests/unaligned-template-v1.yaml"  # namespace inference
note='judged without the labels of their namespace'

# Without Namespace objects: a warning, loudly.
run audit --policies "$work/prod.yaml" "$template"
check "unknown labels: warn, not deny" grep -q ': warn missing-pcie-alignment ResourceClaimTemplate inference/gpu-nic-unaligned' "$work/out"
check "unknown labels: exit 0 (warn below --fail-on deny)" test "$code" -eq 0
check "unknown labels: stderr note" grep -q "^topoguard audit: 2 resources were $note" "$work/err"
check "unknown labels: names the objects and namespace" grep -qF 'namespace "inference" (2): ResourceClaimTemplate gpu-nic-unaligned (' "$work/err"
check "unknown labels: says how to give them" grep -q 'give the labels with --namespace-labels FILE' "$work/err"
for format in json sarif junit; do
  run audit --format "$format" --policies "$work/prod.yaml" "$template"
  check "unknown labels: stderr note with --format $format" grep -q "$note" "$work/err"
done
run audit --format json --policies "$work/prod.yaml" "$template"
check "json lists the unknown" jq_true '[.unknown[].resource.name] == ["gpu-nic-unaligned", "decode"]' "$work/out"

run audit --fail-on-unknown --policies "$work/prod.yaml" "$template"
check "--fail-on-unknown: exit 1" test "$code" -eq 1
check "--fail-on-unknown: said" grep -q -- '--fail-on-unknown: exit 1' "$work/err"

# The labels as a map: deny.
printf 'inference: {tier: prod}\n' >"$work/labels-map.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/labels-map.yaml" "$template"
check "map labels: deny" grep -q ': deny missing-pcie-alignment ResourceClaimTemplate inference/gpu-nic-unaligned' "$work/out"
check "map labels: exit 1" test "$code" -eq 1
check "map labels: no note" test ! -s "$work/err"
run audit --fail-on never --fail-on-unknown --policies "$work/prod.yaml" \
  --namespace-labels "$work/labels-map.yaml" "$template"
check "known labels: --fail-on-unknown passes" test "$code" -eq 0

# As kubectl prints them: a v1 List, and several documents.
cat >"$work/labels-list.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: inference
    labels: {kubernetes.io/metadata.name: inference, tier: prod}
  status: {phase: Active}
EOF
run audit --policies "$work/prod.yaml" --namespace-labels "$work/labels-list.yaml" "$template"
check "List of Namespaces: deny" grep -q ': deny missing-pcie-alignment' "$work/out"
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n---\n{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "inference", "labels": {"tier": "prod"}}}\n' \
  >"$work/labels-docs.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/labels-docs.yaml" "$template"
check "Namespace documents (YAML and JSON): deny" grep -q ': deny missing-pcie-alignment' "$work/out"

# Labels that do not say prod: warn, and nothing unknown.
printf 'inference: {tier: dev}\n' >"$work/labels-dev.yaml"
run audit --fail-on-unknown --policies "$work/prod.yaml" --namespace-labels "$work/labels-dev.yaml" "$template"
check "tier=dev: warn, exit 0" test "$code" -eq 0
check "tier=dev: warn line" grep -q ': warn missing-pcie-alignment' "$work/out"
check "tier=dev: no note" test ! -s "$work/err"

# A Namespace in the input wins over the file (it is what gets applied).
{ printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: inference, labels: {tier: dev}}\n---\n'; cat "$template"; } \
  >"$work/with-namespace.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/labels-map.yaml" "$work/with-namespace.yaml"
check "input Namespace wins: warn" grep -q ': warn missing-pcie-alignment' "$work/out"

# Bad labels files: file, line, field; exit 2.
printf 'inference:\n  tier: prod\n  generation: 5\n' >"$work/bad-value.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/bad-value.yaml" "$template"
check "non-string label: exit 2" test "$code" -eq 2
check "non-string label: file, line, field" grep -qF "bad-value.yaml:3: /inference/generation: a label value must be a string (quote it), got integer [wrong_type]" "$work/err"
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n' >"$work/bad-kind.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/bad-kind.yaml" "$template"
check "other kind: exit 2" test "$code" -eq 2
check "other kind: file and line" grep -qE 'bad-kind\.yaml:6: /kind: must be a Namespace \(apiVersion v1\), got v1 Pod' "$work/err"
printf 'Bad_Name: {tier: prod}\n' >"$work/bad-name.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/bad-name.yaml" "$template"
check "bad namespace name: exit 2" test "$code" -eq 2
check "bad namespace name: named" grep -qF 'bad-name.yaml:1: /Bad_Name: Invalid value: "Bad_Name": a lowercase RFC 1123 label' "$work/err"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/missing.yaml" "$template"
check "missing labels file: exit 2" test "$code" -eq 2
check "missing labels file: named" grep -q 'missing.yaml' "$work/err"
run audit --policies "$work/prod.yaml" --namespace-labels /dev/zero "$template"
check "labels file that is not a regular file: exit 2" test "$code" -eq 2
printf '# nothing\n' >"$work/empty.yaml"
run audit --policies "$work/prod.yaml" --namespace-labels "$work/empty.yaml" "$template"
check "empty labels file: exit 2" test "$code" -eq 2

# review: the same policy, through the webhook's decision.
review="$source_dir/examples/admission/resourceclaimtemplate-create-unaligned.json"  # ml-inference
run review --mode validate --policies "$work/prod.yaml" "$review"
check "review unknown labels: allowed (warn)" jq_true '.response.allowed == true' "$work/out"
check "review unknown labels: annotation" jq_true '.response.auditAnnotations.unknown | test("ml-inference")' "$work/out"
check "review unknown labels: stderr note" grep -qF 'was judged without the labels of namespace "ml-inference"' "$work/err"
printf 'ml-inference: {tier: prod}\n' >"$work/labels-ml.yaml"
run review --mode validate --policies "$work/prod.yaml" --namespace-labels "$work/labels-ml.yaml" "$review"
check "review with labels: denied" jq_true '.response.allowed == false and .response.status.code == 403' "$work/out"
check "review with labels: no note" test ! -s "$work/err"
run review --mode validate --policies "$work/prod.yaml" --namespace-labels "$work/bad-value.yaml" "$review"
check "review bad labels file: exit 2" test "$code" -eq 2

# fix: a policy that runs only where tier=prod applies no fix without the labels.
cat >"$work/prod-only.yaml" <<'EOF'
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: prod-only}
spec:
  match: {namespaceSelector: {matchLabels: {tier: prod}}}
EOF
run fix --fail-on-unknown --policies "$work/prod-only.yaml" "$template"
check "fix unknown labels: exit 1 with --fail-on-unknown" test "$code" -eq 1
check "fix unknown labels: nothing applied" grep -q 'applied 0 fixes' "$work/err"
check "fix unknown labels: note" grep -q "^topoguard fix: 2 resources were $note" "$work/err"
run fix --fail-on-unknown --policies "$work/prod-only.yaml" --namespace-labels "$work/labels-map.yaml" "$template"
check "fix with labels: fixed, exit 0" test "$code" -eq 0
check "fix with labels: applied" grep -q 'applied 1 fix' "$work/err"

# policy test: the failure says why; namespaces: or --namespace-labels make it pass.
mkdir -p "$work/suite"
cp "$work/prod.yaml" "$work/suite/prod.yaml"
cp "$template" "$work/suite/template.yaml"
write_test() {  # write_test EXTRA_LINE -> suite/test.yaml
  cat >"$work/suite/test.yaml" <<EOF
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicyTest
metadata: {name: prod-tier}
policies: [prod.yaml]
resources: [template.yaml]
$1
results:
- resource: {kind: ResourceClaimTemplate, namespace: inference, name: gpu-nic-unaligned}
  rule: missing-pcie-alignment
  action: deny
EOF
}
write_test ""
run policy test --root "$work" "$work/suite/test.yaml"
check "policy test without labels: fails" test "$code" -eq 1
check "policy test without labels: got warn" grep -q '^    got: warn: ' "$work/out"
check "policy test without labels: why" grep -qF '    why: the labels of namespace "inference" are not known' "$work/out"
run policy test --format junit --root "$work" "$work/suite/test.yaml"
check "policy test junit: why in the failure" grep -q 'why: the labels of namespace' "$work/out"
run policy test --root "$work" --namespace-labels "$work/labels-map.yaml" "$work/suite/test.yaml"
check "policy test --namespace-labels: passes" test "$code" -eq 0
write_test "namespaces: {inference: {tier: prod}}"
run policy test --root "$work" "$work/suite/test.yaml"
check "policy test namespaces: map passes" test "$code" -eq 0
cp "$work/labels-list.yaml" "$work/suite/namespaces.yaml"
write_test "namespaces: [namespaces.yaml]"
run policy test --root "$work" "$work/suite/test.yaml"
check "policy test namespaces: files pass" test "$code" -eq 0
write_test "namespaces: [../outside.yaml]"
run policy test --root "$work/suite" "$work/suite/test.yaml"
check "policy test namespaces: file outside the root is an error" test "$code" -eq 2
write_test "namespaces: {inference: {tier: [prod]}}"
run policy test --root "$work" "$work/suite/test.yaml"
check "policy test namespaces: bad label exit 2" test "$code" -eq 2
check "policy test namespaces: bad label at its line" grep -qF 'test.yaml:6: /namespaces/inference/tier: a label value must be a string' "$work/out"

echo "$passed passed, $failed failed"
test "$failed" -eq 0
