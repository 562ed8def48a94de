#!/usr/bin/env bash
# `topoguard policy compile` through the binary: both formats, versions, --strict, --cluster-state
# and the header (cost bound, what is left to the webhook).
set -euo pipefail
topoguard=$1
repo=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# YAML: a header, then one document per object.
"$topoguard" policy compile > "$work/out.yaml" || fail "default compile exited $?"
grep -q '^# cost bound (cel-go cost units' "$work/out.yaml" || fail "no cost bound in the header"
grep -q '^# for the webhook only' "$work/out.yaml" || fail "no webhook-only list"
grep -q '^#   - policy "default": split-claims' "$work/out.yaml" || fail "split-claims not listed for the webhook"
[ "$(grep -c '^kind: ' "$work/out.yaml")" = 6 ] || fail "expected 6 objects"
python3 - "$work/out.yaml" <<'PY' || fail "YAML output does not parse as 6 objects"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
assert len(docs) == 6, len(docs)
assert docs[4]["kind"] == "MutatingAdmissionPolicy" and docs[4]["apiVersion"].endswith("/v1")
PY

# JSON: a List on stdout, the header on stderr.
"$topoguard" policy compile --format json > "$work/out.json" 2> "$work/err" ||
  fail "json compile exited $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kind"]=="List" and len(d["items"])==6' \
  "$work/out.json" || fail "JSON output is not a List of 6"
grep -q '^# cost bound' "$work/err" || fail "JSON: no header on stderr"

# 1.34/1.35: MutatingAdmissionPolicy v1beta1 with the gate named; older: refused.
"$topoguard" policy compile --kubernetes-version 1.34 > "$work/beta.yaml"
grep -q 'apiVersion: admissionregistration.k8s.io/v1beta1' "$work/beta.yaml" ||
  fail "1.34: no v1beta1 MutatingAdmissionPolicy"
grep -q 'feature-gate' "$work/beta.yaml" || fail "1.34: the feature gate is not named"
status=0
"$topoguard" policy compile --kubernetes-version 1.30 > /dev/null 2> "$work/err" || status=$?
[ "$status" = 2 ] || fail "1.30: exit $status, expected 2"
grep -q '1.34 or later' "$work/err" || fail "1.30: the error does not say why"

# --strict: what native policies never decide (pod-level rules, feasibility) does not fail it, so
# the built-in policy and the shipped policies/ folder (with its tests and manifests, skipped
# with a note) pass; a policy whose claim rules cannot compile fails, naming what.
"$topoguard" policy compile --strict > /dev/null 2> "$work/err" ||
  fail "--strict on the built-in policy: exit $?: $(cat "$work/err")"
"$topoguard" policy compile --strict --policies "$repo/policies" > /dev/null 2> "$work/err" ||
  fail "--strict --policies policies/: exit $?: $(cat "$work/err")"
grep -q -- '--policies: skipped .* documents that are not policies .*AlignmentPolicyTest' "$work/err" ||
  fail "--policies policies/: no note on the skipped tests and manifests: $(cat "$work/err")"
cat > "$work/pods-only.yaml" <<'YAML'
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: pods-only}
spec:
  match: {kinds: [Deployment, Pod]}
YAML
status=0
"$topoguard" policy compile --strict --policies "$work/pods-only.yaml" > /dev/null 2> "$work/err" || status=$?
[ "$status" = 1 ] || fail "--strict, pods-only policy: exit $status, expected 1"
grep -q 'did not compile' "$work/err" && grep -q 'matches no ResourceClaim' "$work/err" ||
  fail "--strict: does not say what did not compile: $(cat "$work/err")"
# Policies from standard input.
"$topoguard" policy compile --policies - < "$repo/policies/default.yaml" > "$work/stdin.yaml" ||
  fail "--policies -: exit $?"
[ "$(grep -c '^kind: ' "$work/stdin.yaml")" = 6 ] || fail "--policies -: expected 6 objects"

# --cluster-state: a DeviceClass that selects a GPU driver gets the GPU role, baked in.
cat > "$work/classes.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: a100-pcie}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
YAML
"$topoguard" policy compile --cluster-state "$work/classes.yaml" > "$work/state.yaml"
grep -q "'a100-pcie'" "$work/state.yaml" || fail "--cluster-state: class not baked in"
grep -q 'baked in from the DeviceClasses' "$work/state.yaml" || fail "--cluster-state: not said"

# Bad input: a missing cluster-state file and a bad format are usage errors.
status=0
"$topoguard" policy compile --cluster-state "$work/none.yaml" > /dev/null 2> "$work/err" || status=$?
[ "$status" = 2 ] || fail "missing --cluster-state file: exit $status, expected 2"
status=0
"$topoguard" policy compile --format xml > /dev/null 2>&1 || status=$?
[ "$status" != 0 ] || fail "--format xml accepted"

# A policy file with an error: exit 2 with file:line.
printf 'apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: x}\nspec: {bogus: 1}\n' \
  > "$work/bad.yaml"
status=0
"$topoguard" policy compile --policies "$work/bad.yaml" > /dev/null 2> "$work/err" || status=$?
[ "$status" = 2 ] || fail "bad policy: exit $status, expected 2"
grep -q 'bad.yaml:4' "$work/err" || fail "bad policy: no file:line ($(cat "$work/err"))"

[ -d "$repo/policies" ] || fail "repo not found"
if [ "$failures" -gt 0 ]; then
  echo "$failures failures" >&2
  exit 1
fi
echo "policy compile CLI: all checks passed"
