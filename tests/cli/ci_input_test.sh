#!/usr/bin/env bash
# What CI feeds the CLI (issue 40): what is not a Kubernetes object is skipped with a note and
# a count, never an error, while a typo in a real manifest stays one; input errors reach stderr
# and the report in every format; -f/-R/--exclude; policies from stdin and from folders that
# also hold tests and manifests.
# Usage: ci_input_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_support.sh"
cd "$source_dir" || exit 1

run() {  # run ARGS... -> $code, $work/out, $work/err (stdin from $stdin, else none)
  "$binary" "$@" >"$work/out" 2>"$work/err" <"${stdin:-/dev/null}"
  code=$?
}

# The README's GitHub Actions step, on this repository: exit 0, the patches and kustomizations
# noted on stderr and in the SARIF as notes, the run successful.
run audit --format sarif --fail-on never deploy/
check "sarif --fail-on never deploy/ exits 0 (got $code: $(head -c 300 "$work/err"))" test "$code" -eq 0
check "deploy/: kustomize patches noted on stderr" \
  grep -q '^deploy/webhook/cert-manager/inject-ca.yaml: skipped, not a Kubernetes object: a patch' "$work/err"
check "deploy/: a kustomization's note names the command that renders it" \
  grep -qF 'deploy/webhook/base/kustomization.yaml: skipped, not a Kubernetes object: a kustomization; to audit what it builds: kubectl kustomize deploy/webhook/base | topoguard audit -' "$work/err"
# The Helm chart (deploy/helm/topoguard) is one input, its values files (deploy/helm/values) six.
check "deploy/: the Helm chart's note names the command that renders it" \
  grep -qF 'deploy/helm/topoguard: skipped, not a Kubernetes object: part of a Helm chart (a folder with Chart.yaml); to audit what it renders: helm template CHART | topoguard audit -' "$work/err"
check "deploy/: the count by reason" \
  grep -qE '^skipped 27 inputs that are not Kubernetes objects \(helm-chart 1, kustomization 12, kustomize-patch 8, no-kind 6\)' "$work/err"
check "deploy/: SARIF run successful, skipped inputs as notes" \
  jq_true '.runs[0].invocations[0].executionSuccessful and
           ([.runs[0].invocations[0].toolExecutionNotifications[] | select(.level == "note")] | length) == 27' "$work/out"
run audit --format json --fail-on never deploy/
check "deploy/: JSON lists skippedInputs" \
  jq_true '(.skippedInputs | length) == 27 and (.errors | length) == 0 and
           any(.skippedInputs[]; .reason == "kustomize-patch" and .file == "deploy/webhook/mtls/client-ca.yaml")' "$work/out"
# The PrometheusRule's {{ $labels.pod }} is alert text, not a Helm template: it is read.
check "deploy/: the PrometheusRule is read, not skipped" \
  jq_true 'all(.skippedInputs[]; .file != "deploy/webhook/monitoring/prometheusrule.yaml")' "$work/out"

# Helm: a chart folder is skipped whole with the command to render it; a template on stdin is
# skipped; a values file is skipped; none of it is an error.
mkdir -p "$work/repo/chart/templates" "$work/repo/plain"
printf 'apiVersion: v2\nname: gpu\nversion: 0.1.0\n' >"$work/repo/chart/Chart.yaml"
printf 'replicas: 2\n' >"$work/repo/chart/values.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n' >"$work/repo/chart/templates/pod.yaml"
printf 'image: {tag: x}\n' >"$work/repo/plain/values-prod.yaml"
cp examples/manifests/aligned-template-v1.yaml "$work/repo/plain/"
run audit "$work/repo"
check "helm chart and values: exit 0 (got $code)" test "$code" -eq 0
check "helm chart: noted with helm template" grep -q "repo/chart: skipped, not a Kubernetes object: part of a Helm chart .*helm template" "$work/err"
check "values file: noted" grep -q "values-prod.yaml:1: skipped, not a Kubernetes object: no apiVersion or kind" "$work/err"
check "helm chart: the aligned template is still audited" grep -qE '^summary: 2 resources' "$work/out"
stdin="$work/repo/chart/templates/pod.yaml" run audit --format junit -
check "helm template on stdin: exit 0 (got $code)" test "$code" -eq 0
check "helm template on stdin: noted" grep -q '^-: skipped, not a Kubernetes object: a template' "$work/err"

# A typo in a file of Kubernetes objects stays an input error, in every format, on stderr.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n---\napiVersion: v1\nmetadata: {name: c}\n' \
  >"$work/typos.yaml"
for format in text json sarif junit openreports policyreport; do
  run audit --format "$format" "$work/typos.yaml"
  check "typos ($format): exit 2" test "$code" -eq 2
  check "typos ($format): missing apiVersion on stderr" \
    grep -qF "$work/typos.yaml:5: /apiVersion: a Kubernetes object needs an apiVersion [missing_field]" "$work/err"
  check "typos ($format): missing kind on stderr" \
    grep -qF "$work/typos.yaml:8: /kind: a Kubernetes object needs a kind [missing_field]" "$work/err"
  # A mistyped path: its error on stderr as file: message [code], and in the report.
  run audit --format "$format" deploy/no-such-dir
  check "mistyped path ($format): exit 2" test "$code" -eq 2
  check "mistyped path ($format): error on stderr" \
    grep -qFx "deploy/no-such-dir: no such file or directory [io_error]" "$work/err"
  case $format in
    json) check "mistyped path: JSON errors" jq_true '.errors[0].file == "deploy/no-such-dir" and .errors[0].code == "io_error"' "$work/out" ;;
    sarif) check "mistyped path: SARIF notification" jq_true '.runs[0].invocations[0].executionSuccessful == false and .runs[0].invocations[0].toolExecutionNotifications[0].level == "error"' "$work/out" ;;
    junit) check "mistyped path: JUnit error case" grep -q '<error' "$work/out" ;;
    openreports|policyreport) check "mistyped path: $format error result" jq_true 'any(.items[].results[]?; .result == "error")' "$work/out" ;;
  esac
done

# -f is repeatable, - reads stdin; a folder given with -f is read without its subfolders unless
# -R; positional folders are read whole, as always.
run audit --format json --fail-on never -f deploy/webhook
check "-f DIR: subfolders not read" jq_true '.summary.resources == 0' "$work/out"
run audit --format json --fail-on never -f deploy/webhook -R
check "-f DIR -R: subfolders read" jq_true '.summary.resources == 5 and .summary.deny == 1' "$work/out"
stdin=examples/manifests/aligned-template-v1.yaml run audit --format json -f - -f examples/manifests/unaligned-template-v1.yaml
check "-f - -f FILE: both read" jq_true '.summary.resources == 4 and .summary.deny == 2' "$work/out"
# --exclude: a folder's relative path or a name; the verification template's deny goes.
run audit --exclude verify deploy/
check "--exclude FOLDER: exit 0 (got $code)" test "$code" -eq 0
run audit --exclude '*/templates.yaml' --exclude '*-patch.yaml' --format json deploy/
check "--exclude GLOB (repeatable)" jq_true '.summary.deny == 0 and all(.skippedInputs[]; (.file | endswith("-patch.yaml")) | not)' "$work/out"

# Policies from stdin, once only; a policy folder with tests and manifests beside the policies.
stdin=policies/default.yaml run audit --policies - examples/manifests
check "--policies -: exit 1 on the examples' denials (got $code)" test "$code" -eq 1
stdin=policies/default.yaml run audit --policies - -
check "--policies - with manifests -: usage error" test "$code" -eq 2
check "--policies - with manifests -: says why" grep -q 'standard input (-) is given more than once' "$work/err"
for command in "audit examples/manifests" "fix examples/manifests" "policy compile" \
               "topology --cluster-state policies/tests/manifests/cluster-state.yaml"; do
  # shellcheck disable=SC2086
  run $command --policies policies/
  check "$command --policies policies/: not a usage error (got $code: $(head -c 200 "$work/err"))" test "$code" -ne 2
  check "$command --policies policies/: skipped documents noted" \
    grep -q -- '--policies: skipped [0-9]* documents that are not policies in [0-9]* files (AlignmentPolicyTest' "$work/err"
done
run policy lint policies/
check "policy lint policies/: the policy is valid (got $code)" test "$code" -eq 0
check "policy lint policies/: skipped documents noted" \
  grep -q 'topoguard policy lint: skipped [0-9]* documents that are not policies in [0-9]* files (AlignmentPolicyTest' "$work/err"
run policy lint --quiet policies/
check "policy lint --quiet: no note" test ! -s "$work/err"
stdin=policies/default.yaml run review --policies - --mode validate examples/admission/resourceclaimtemplate-create-aligned.json
check "review --policies -: exit 0 (got $code)" test "$code" -eq 0
# serve re-reads its policies: standard input is refused with a reason.
"$source_dir/certs/generate-dev-certs.sh" --out "$work/certs" --quiet >/dev/null
run serve --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
  --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --cluster-cache off --policies -
check "serve --policies -: usage error (got $code)" test "$code" -eq 2
check "serve --policies -: says why" grep -q 'serve re-reads its policies' "$work/err"
# A policy with a typo in its kind is still an error, not skipped.
sed 's/kind: AlignmentPolicy/kind: AlignmentPolcy/' policies/default.yaml >"$work/typo-policy.yaml"
run audit --policies "$work/typo-policy.yaml" examples/manifests
check "policy kind typo: usage error" test "$code" -eq 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
