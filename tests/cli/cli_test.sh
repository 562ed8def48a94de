#!/usr/bin/env bash
# End-to-end checks of `topoguard audit` and `topoguard fix` through the real binary: exit codes,
# text and JSON output, stdin, bad input, and fix output that re-audits clean of fixable findings.
# Usage: cli_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$2
examples="$source_dir/examples/manifests"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_support.sh"

run() {  # run ARGS... -> $out $err $code
  "$binary" "$@" >"$work/out" 2>"$work/err" </dev/null
  code=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
}

run audit "$examples"
check "findings exit 1" test "$code" -eq 1
check "text line format" grep -qE '^[^:]+/unaligned-template-v1\.yaml:10: deny missing-pcie-alignment ResourceClaimTemplate inference/gpu-nic-unaligned \(policy default\): ' "$work/out"
check "summary line" grep -qE '^summary: 12 resources, 0 skipped, 6 deny, 2 warn, 0 audit, 0 exempted, 0 errors$' "$work/out"

# --fail-on reads alike in audit and fix (fix: over the findings its fixes leave).
for command in audit fix; do
  run "$command" --fail-on never "$examples"
  check "$command --fail-on never exit 0" test "$code" -eq 0
  run "$command" --fail-on warn "$examples/device-plugin-leaderworkerset.yaml"
  check "$command --fail-on warn reached" test "$code" -eq 1
  run "$command" --fail-on bogus "$examples"
  check "$command: bad --fail-on is a usage error" test "$code" -eq 2
  run "$command" "$examples/device-plugin-leaderworkerset.yaml"
  check "$command: warn below --fail-on deny" test "$code" -eq 0
done
check "fix: warn left is told" grep -qE '^topoguard fix: left 1 finding unfixed: device-plugin-pairing 1 \(warn\)' "$work/err"
run audit "$examples/aligned-template-v1.yaml"
check "aligned is clean" test "$code" -eq 0
check "aligned has no finding lines" test "$(grep -c 'missing-pcie' "$work/out")" -eq 0

run audit --format json "$examples"
check "json exit 1" test "$code" -eq 1
check "json is valid" jq_true '.summary.resources == 12 and .summary.deny == 6 and .summary.warn == 2 and .summary.audit == 0 and .summary.skipped == 0' "$work/out"
check "json finding fields" jq_true '[.findings[] | has("rule","policy","action","message","resource","source","path")] | all' "$work/out"
check "json fix only when fixable" jq_true '[.findings[] | select(.rule == "split-claims") | has("fix")] == [false]' "$work/out"
check "json fix ops" jq_true '[.findings[] | select(.resource.name == "gpu-nic-unaligned") | .fix[0].op] == ["add"]' "$work/out"

"$binary" audit - <"$examples/unaligned-template-v1.yaml" >"$work/out" 2>"$work/err"
code=$?
check "stdin exit 1" test "$code" -eq 1
check "stdin file name" grep -q '^-:10: deny missing-pcie-alignment' "$work/out"

run audit "$work/does-not-exist.yaml"
check "missing path exit 2" test "$code" -eq 2
check "missing path named" grep -q 'does-not-exist.yaml' "$work/err"

printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: a\n' >"$work/broken.yaml"
run audit "$work/broken.yaml" "$examples/unaligned-template-v1.yaml"
check "broken yaml exit 2" test "$code" -eq 2
check "broken yaml names file and line" grep -qE 'broken\.yaml:[0-9]+: .*\[invalid_yaml\]' "$work/err"
check "other files still audited" grep -q 'gpu-nic-unaligned' "$work/out"

printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: x}\nspec:\n  devices:\n    requests: {name: gpu}\n' >"$work/wrongtype.yaml"
run audit "$work/wrongtype.yaml"
check "wrong type exit 2" test "$code" -eq 2
check "wrong type names line and field" grep -qE 'wrongtype\.yaml:6: /spec/devices/requests: expected array, got object \[wrong_type\]' "$work/err"

run audit --format xml "$examples"
check "bad format is a usage error" test "$code" -eq 2
# audit and fix word a missing input alike.
run audit
check "no path is a usage error" test "$code" -eq 2
check "no path named as such" grep -q '^topoguard audit: no input: give manifest files, directories or - for stdin, --cluster or --cluster-state$' "$work/err"
run fix
check "fix: no path is a usage error" test "$code" -eq 2
check "fix: no path worded as audit's" grep -q '^topoguard fix: no input: give manifest files, directories or - for stdin$' "$work/err"
run fix "$work/does-not-exist.yaml"
check "fix: missing path exit 2" test "$code" -eq 2
check "fix: missing path worded as audit's" test "$(head -1 "$work/err")" == "$(
  "$binary" audit "$work/does-not-exist.yaml" 2>&1 >/dev/null | head -1)"

# A mistyped subcommand is named, with the ones there are.
run frobnicate
check "unknown subcommand exit 2" test "$code" -eq 2
check "unknown subcommand named" grep -q '^topoguard: unknown subcommand "frobnicate"; the subcommands are: audit, fix, explain, policy, serve, review, topology, inventory, ab, evidence, version, completion$' "$work/err"
run policy frobnicate
check "unknown policy subcommand exit 2" test "$code" -eq 2
check "unknown policy subcommand named" grep -q '^topoguard policy: unknown subcommand "frobnicate"; the subcommands are: lint, show, test, compile, show-default$' "$work/err"
run
check "no subcommand is a usage error" test "$code" -eq 2
check "no subcommand lists them" grep -q '^topoguard: a subcommand is needed: audit, fix, explain, policy, serve, review, topology, inventory, ab, evidence, version, completion$' "$work/err"
run policy
check "no policy subcommand is a usage error" test "$code" -eq 2
check "no policy subcommand lists them" grep -q '^topoguard policy: a subcommand is needed: lint, show, test, compile, show-default$' "$work/err"

# explain: the rule's whole explanation, told once instead of in every finding.
run explain missing-pcie-alignment
check "explain exit 0" test "$code" -eq 0
check "explain heads with id and title" test "$(head -1 "$work/out")" == "missing-pcie-alignment: GPU and NIC requests not tied to one PCIe root"
check "explain gives the measured figures" grep -q '194.6 Gbit/s' "$work/out"
check "explain gives the fix" grep -q '^Fix: Add one constraint per GPU/NIC pair' "$work/out"
check "explain fits a terminal" test "$(awk 'length > 100' "$work/out" | wc -l)" -eq 0
run explain no-such-rule
check "explain: unknown rule exit 2" test "$code" -eq 2
check "explain: unknown rule lists the rules" grep -q '^topoguard explain: unknown rule "no-such-rule"; the rules are: missing-pcie-alignment, numa-only-alignment, .*, attribute-not-published, overridden-alignment-attribute$' "$work/err"
run audit "$examples"
check "findings carry no measured figures" test "$(grep -c 'Gbit' "$work/out")" -eq 0
check "finding messages fit a CI log line" test "$(awk -F '[(]policy default[)]: ' 'length($2) > 300' "$work/out" | wc -l)" -eq 0
check "audit text says where rules are explained" grep -q '^why and how to fix: topoguard explain RULE$' "$work/out"

run fix "$examples"
check "fix exit 1: deny findings it cannot fix are left" test "$code" -eq 1
check "fix reports changes on stderr" grep -q 'fixed missing-pcie-alignment ResourceClaimTemplate inference/gpu-nic-unaligned' "$work/err"
check "fix says what it left, per rule" grep -qE '^topoguard fix: left [0-9]+ findings unfixed: .*split-claims 1 \(deny\)' "$work/err"
# Of the 4 missing-pcie-alignment findings only the ambiguous template's is left: the StatefulSet
# whose template the fix aligned no longer counts.
check "fix counts nothing it fixed as left" grep -q 'unfixed: missing-pcie-alignment 1 (deny),' "$work/err"
cp "$work/out" "$work/fixed.yaml"
run audit --format json "$work/fixed.yaml"
check "fixed output re-audits clean of fixable findings" jq_true '[.findings[] | select(has("fix"))] | length == 0' "$work/out"
check "fixed output keeps unfixable findings" jq_true '[.findings[] | select(.rule == "split-claims")] | length == 1' "$work/out"

mkdir -p "$work/inplace"
cp "$examples/unaligned-template-v1.yaml" "$examples/aligned-template-v1.yaml" "$work/inplace/"
before_aligned=$(cat "$work/inplace/aligned-template-v1.yaml")
run fix --in-place "$work/inplace"
check "in-place exit 0" test "$code" -eq 0
check "in-place leaves clean files byte-identical" test "$before_aligned" == "$(cat "$work/inplace/aligned-template-v1.yaml")"
run audit "$work/inplace"
check "in-place result is clean" test "$code" -eq 0

(cd "$examples/.." && "$binary" fix --output-dir "$work/outdir" manifests/unaligned-claim-v1beta1.yaml >/dev/null 2>&1)
check "--output-dir writes the relative path" test -s "$work/outdir/manifests/unaligned-claim-v1beta1.yaml"
run fix --output-dir "$work/x" --in-place "$examples"
check "--output-dir with --in-place is a usage error" test "$code" -eq 2
run fix "$examples/unaligned-template-v1.yaml"
check "fix: everything fixed exit 0" test "$code" -eq 0
check "fix: nothing left, nothing told" test "$(grep -c 'unfixed' "$work/err")" -eq 0

# --policies takes one value per flag: the paths after it stay manifests.
"$binary" policy show-default >"$work/policy.yaml"
run audit --policies "$work/policy.yaml" "$examples/unaligned-template-v1.yaml" "$examples/aligned-template-v1.yaml"
check "--policies takes one value" test "$code" -eq 1
check "--policies leaves later paths as manifests" grep -qE '^summary: 4 resources' "$work/out"
run audit --policies "$work/policy.yaml" --policies "$work/policy.yaml" "$examples"
check "--policies repeated is read twice (duplicate name)" grep -q 'duplicate policy name' "$work/err"

# An input without manifests is an error, so a mistyped path in CI cannot pass silently.
mkdir -p "$work/empty"
printf 'notes\n' >"$work/empty/readme.txt"
run audit "$work/empty"
check "no manifests exit 2" test "$code" -eq 2
check "no manifests named" grep -q "no manifests found in $work/empty" "$work/err"
printf '# only a comment\n' >"$work/comment.yaml"
run fix "$work/comment.yaml"
check "fix: no manifests exit 2" test "$code" -eq 2
check "fix: no manifests named" grep -q "no manifests found in $work/comment.yaml" "$work/err"

run audit --help
check "help shows the -o default" grep -qE -- '-o,--output \{text,json,sarif,openreports,policyreport,junit\}=text' "$work/out"
check "help shows the --fail-on default" grep -qE -- '--fail-on .*=deny' "$work/out"
check "help shows the --policies default" grep -qE -- '--policies PATH .*' "$work/out"
check "help says the --policies default in words" grep -q 'default: the built-in policy' "$work/out"
# Every option of every command shows what to write (FILE, N, {a,b}, ...), not CLI11's C++ types
# and checks (TEXT, UINT:INT in [1 - 300]).
for command in audit fix explain review serve topology "policy lint" "policy show"; do
  # shellcheck disable=SC2086 # the policy subcommands are two words
  run $command --help
  check "help of $command names values, not C++ types" test "$(grep -cE ' (TEXT|UINT|INT|FLOAT)\b|:INT in|=built-in' "$work/out")" -eq 0
done
# Every option of every command shows its default ("=VALUE" or "default:" in its description),
# unless it is required.
options_without_default() {  # options_without_default HELP_FILE: prints the offending options
  python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
for i, line in enumerate(lines):
    match = re.match(r"  (-\S.*?)(?:\s{2,}(.*))?$", line)
    if not match or re.match(r"-h,--help|--version", match.group(1)):
        continue
    text = line + " " + (lines[i + 1] if i + 1 < len(lines) and lines[i + 1].startswith("   ") else "")
    if "REQUIRED" not in match.group(1) and "=" not in match.group(1) and "default:" not in text:
        print(match.group(1))
PY
}
for command in audit fix explain review serve topology "policy lint" "policy show" "policy compile" \
  "policy show-default" version completion; do
  # shellcheck disable=SC2086 # the policy subcommands are two words
  run $command --help
  check "help of $command shows every default" test -z "$(options_without_default "$work/out")"
done

run fix "$examples"
check "fix summary counts changed files" grep -qE '^topoguard fix: applied [0-9]+ fix(es)?, changed [0-9]+ of [0-9]+ files$' "$work/err"

# fix --diff: a unified diff of added lines only; a .json input stays JSON.
run fix --diff "$examples/unaligned-template-v1.yaml"
check "fix --diff exit 0" test "$code" -eq 0
check "fix --diff header" grep -q '^+++ b/.*unaligned-template-v1.yaml$' "$work/out"
check "fix --diff adds the constraint" grep -qE '^\+      constraints:$' "$work/out"
check "fix --diff removes nothing" test "$(grep -c '^-[^-]' "$work/out")" -eq 0
mkdir -p "$work/json"
printf '{\n  "apiVersion": "resource.k8s.io/v1",\n  "kind": "ResourceClaim",\n  "metadata": {"name": "c", "namespace": "ml"},\n  "spec": {\n    "devices": {\n      "requests": [\n        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},\n        {"name": "nic", "exactly": {"deviceClassName": "dranet"}}\n      ]\n    }\n  }\n}\n' >"$work/json/claim.json"
run fix --in-place "$work/json/claim.json"
check "fix --in-place json exit 0" test "$code" -eq 0
check "fix keeps a .json file JSON" jq_true '.spec.devices.constraints[0].requests == ["gpu","nic"]' "$work/json/claim.json"

# policy show --effective: what a short policy inherits; lint warns without failing.
printf 'apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: short}\nspec:\n  rules:\n    split-claims: {action: warn}\n' >"$work/short.yaml"
run policy show --effective "$work/short.yaml"
check "show --effective exit 0" test "$code" -eq 0
check "show --effective lists inherited sections" grep -q '^# effective: .*devices.gpu' "$work/out"
check "show --effective prints inherited devices" grep -q "gpu\\\\.nvidia\\\\.com" "$work/out"
run policy show "$work/short.yaml"
check "show without --effective omits inherited devices" test "$(grep -c 'devices' "$work/out")" -eq 0
"$binary" policy show-default >"$work/copy.yaml"
run policy lint "$work/copy.yaml"
check "lint warning keeps exit 0" test "$code" -eq 0
check "lint warns about a policy identical to the default" grep -q 'warning: policy "default" changes nothing' "$work/out"

# serve: one way to get a certificate, and every self-managed TLS flag checked before anything
# starts (exit 2, the flag named).
run serve
check "serve without a certificate source is a usage error" test "$code" -eq 2
check "serve names the two ways" grep -q 'give either --tls-cert and --tls-key, or --self-managed-tls' "$work/err"
run serve --self-managed-tls --tls-cert "$work/x.pem" --tls-key "$work/x.key"
check "serve with both ways is a usage error" test "$code" -eq 2
run serve --self-managed-tls --tls-secret no-slash
check "bad --tls-secret exit 2" test "$code" -eq 2
check "bad --tls-secret named" grep -q -- '--tls-secret "no-slash" is not NAMESPACE/NAME' "$work/err"
run serve --self-managed-tls --service Topoguard/x
check "bad --service named" grep -q -- '--service "Topoguard/x" is not NAMESPACE/NAME' "$work/err"
run serve --self-managed-tls --webhook-configuration 'a/b'
check "bad --webhook-configuration named" grep -q -- '--webhook-configuration "a/b" is not an object name' "$work/err"
run serve --self-managed-tls --ca-lifetime 5d
check "bad --ca-lifetime exit 2" test "$code" -eq 2
check "bad --ca-lifetime named" grep -q -- '--ca-lifetime: "5d" is not a duration' "$work/err"
run serve --self-managed-tls --cert-lifetime 30s
check "too short --cert-lifetime named" grep -q -- '--cert-lifetime must be at least 1m' "$work/err"
run serve --self-managed-tls --ca-lifetime 24h --cert-lifetime 48h
check "certificate outliving its CA refused" grep -q -- '--cert-lifetime must not exceed --ca-lifetime' "$work/err"

# Background reports: their flags are checked before anything starts too.
certificate=(--tls-cert "$work/x.pem" --tls-key "$work/x.key")
run serve "${certificate[@]}" --cluster-cache off --report-interval 5m
check "reports without the cluster cache exit 2" test "$code" -eq 2
check "reports need the cluster cache" \
  grep -q -- '--report-interval needs the cluster cache' "$work/err"
run serve "${certificate[@]}" --report-interval 5q
check "bad --report-interval named" \
  grep -q -- '--report-interval: "5q" is not a duration' "$work/err"
run serve "${certificate[@]}" --cluster-cache on --report-interval 500ms
check "too short --report-interval named" \
  grep -q -- '--report-interval must be 0 (off) or at least 1s' "$work/err"
run serve "${certificate[@]}" --cluster-cache on --report-interval 1m --report-lease a/B
check "bad --report-lease named" grep -q -- '--report-lease "a/B" is not NAMESPACE/NAME' "$work/err"
run serve "${certificate[@]}" --report-format junit
check "bad --report-format exit 2" test "$code" -eq 2

# Exceptions are reported: counted, and listed with --show-exempted.
printf 'apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: waive}\nspec:\n  exceptions:\n  - {name: legacy, reason: "validated by hand", match: {namespaces: {include: [inference]}}}\n' >"$work/waive.yaml"
run audit --policies "$work/waive.yaml" "$examples/unaligned-template-v1.yaml"
check "exempted findings do not fail" test "$code" -eq 0
check "exempted counted" grep -qE ' 2 exempted, 0 errors$' "$work/out"
run audit --show-exempted --policies "$work/waive.yaml" "$examples/unaligned-template-v1.yaml"
check "--show-exempted lists them" grep -q 'exempted deny missing-pcie-alignment .*exception legacy: validated by hand' "$work/out"

# A binary linked with jemalloc starts it with the options of src/cli/allocator_config.cpp.
if ldd "$binary" | grep -q libjemalloc; then
  MALLOC_CONF=confirm_conf:true "$binary" --version >/dev/null 2>"$work/err"
  check "jemalloc takes the built-in options" grep -q 'global variable malloc_conf): "tcache_nslots_small_max:2000,dirty_decay_ms:1000,muzzy_decay_ms:0"' "$work/err"
  check "and applies them" grep -q 'Set conf value: tcache_nslots_small_max:2000' "$work/err"
  check "with the shorter decay" grep -q 'Set conf value: dirty_decay_ms:1000' "$work/err"
fi

echo "$passed passed, $failed failed"
test "$failed" -eq 0
