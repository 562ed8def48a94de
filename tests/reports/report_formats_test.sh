#!/usr/bin/env bash
# report_formats_validate: renders every machine report format of `topoguard audit` over the
# shipped examples, every golden case, the real-world corpus and a deliberately hostile input,
# and validates each output with the validators the consuming tools use:
#   - openreports / policyreport: ajv against the CRDs' openAPIV3Schema (structural: unknown
#     fields are errors, as the API server would prune them) plus List/summary/namespace checks;
#   - sarif: ajv against the SARIF 2.1.0 JSON schema, and Microsoft's SARIF Multitool
#     `validate` (the spec's own rules; any error or warning fails);
#   - junit: xmllint against tests/reports/junit-10.xsd.
# Each validator is also shown a broken document and must reject it, so a validator that stops
# checking fails this test. A finding an exception waives must appear in every format. Needs
# `bash tools/setup.sh` (tests/node/node_modules, xmllint).
# Usage: report_formats_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
here="$source_dir/tests/reports"
schemas="$source_dir/../shared/reference/schemas"
node_modules="$source_dir/tests/node/node_modules"
multitool="$node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAILED: $*" >&2; failed=1; }

for tool in node python3 xmllint; do
  command -v "$tool" >/dev/null || { echo "report_formats_test: $tool missing; run bash tools/setup.sh" >&2; exit 1; }
done
[ -x "$multitool" ] && [ -d "$node_modules/ajv" ] ||
  { echo "report_formats_test: npm test tools missing; run bash tools/setup.sh" >&2; exit 1; }

# The CRDs are YAML; the validator reads JSON.
mkdir -p "$work/schemas" "$work/out"
cp "$schemas/sarif-schema-2.1.0.json" "$work/schemas/"
for crd in "$schemas"/*.yaml; do
  python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
    "$crd" "$work/schemas/$(basename "$crd").json" || fail "convert $crd"
done

# Input sets: name, then `audit` arguments.
inputs=()
declare -A carries_input_errors=([hostile]=1)
add_input() { inputs+=("$1"); printf '%s\0' "${@:2}" >"$work/args.$1"; }
add_input examples "$source_dir/examples/manifests"
# With a documentation base, reports link each rule there (SARIF helpUri, informationUri).
add_input examples-help-uri --help-uri-base https://git.example.com/topoguard/README.md \
  "$source_dir/examples/manifests"
# The repository's own deploy/: kustomize patches and kustomizations skipped, as SARIF notes.
add_input deploy "$source_dir/deploy"
# A mistyped path: an input error every format must carry.
add_input missing "$source_dir/deploy/no-such-dir"
carries_input_errors[missing]=1
add_input corpus "$source_dir/../shared/corpus"
# The kubernetes/api round-trip fixtures in it are named "nameValue": names the API server refuses.
carries_input_errors[corpus]=1
for case_dir in "$source_dir"/tests/golden/cases/*/; do
  name=golden-$(basename "$case_dir")
  policy_args=()
  for policy in $(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1])).get("policies", [])))' "$case_dir/case.yaml"); do
    policy_args+=(--policies "$case_dir/$policy")
  done
  add_input "$name" "${policy_args[@]}" "$case_dir/input.yaml"
  if jq -e '.errors | length > 0' "$case_dir/expected-report.json" >/dev/null; then
    carries_input_errors[$name]=1
  fi
done
# Markup, quotes, control characters and invalid UTF-8 in names and paths, plus a document
# that does not parse (an input error every format must carry).
mkdir -p "$work/hostile dir"
printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: "a<b>&\\"c\\x01\\t\xff"\n  namespace: ns\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}\n      - {name: nic, exactly: {deviceClassName: dra.net}}\n---\nkind: [unclosed\n' \
  >"$work/hostile dir/odd #1.yaml"
add_input hostile "$work/hostile dir"

declare -A extension=([sarif]=sarif [openreports]=openreports.json [policyreport]=policyreport.json [junit]=junit.xml)
for input in "${inputs[@]}"; do
  mapfile -d '' args <"$work/args.$input"
  for format in sarif openreports policyreport junit; do
    out="$work/out/$input.${extension[$format]}"
    "$binary" audit --format "$format" --fail-on never "${args[@]}" >"$out" 2>"$work/stderr"
    code=$?
    # 0: no input error; 2: input errors, which the report carries (the hostile input and the
    # golden cases that expect an input error); the SARIF run says which.
    if [ "$code" -ne 0 ] && ! { [ "$code" -eq 2 ] && [ -n "${carries_input_errors[$input]:-}" ]; }; then
      fail "audit --format $format $input exited $code: $(head -c 300 "$work/stderr")"
    elif [ "$format" = sarif ] && ! python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]["executionSuccessful"] != (sys.argv[2] == "0"))' "$out" "$code"; then
      fail "audit --format sarif $input exited $code but executionSuccessful disagrees"
    fi
  done
done
echo "rendered ${#inputs[@]} inputs in 4 formats"

# SARIF links rules to a page only when given one, and always carries their help text.
python3 - "$work/out/examples.sarif" "$work/out/examples-help-uri.sarif" <<'PY' || fail "SARIF rule help or helpUri"
import json, sys
plain, linked = (json.load(open(p))["runs"][0]["tool"]["driver"] for p in sys.argv[1:])
assert all("helpUri" not in r and "Why: " in r["help"]["text"] for r in plain["rules"]), "plain"
assert "informationUri" not in plain, "informationUri without a base"
assert all(r["helpUri"] == "https://git.example.com/topoguard/README.md#rule-" + r["id"]
           for r in linked["rules"]), "linked"
PY

# A finding a policy exception waives (golden case custom_policy_exceptions) reaches every
# validator in each format's own terms: a suppressed SARIF result, a `skip` report result and a
# skipped JUnit test case, each naming the exception.
exempted="$work/out/golden-custom_policy_exceptions"
python3 - "$exempted" <<'PY' || fail "the exempted finding is missing from a report format"
import json, sys, xml.etree.ElementTree as ET
base = sys.argv[1]
results = json.load(open(base + ".sarif"))["runs"][0]["results"]
assert any(s.get("kind") == "external" and s.get("justification") and s["properties"]["exception"]
           for r in results for s in r["suppressions"]), "no suppressed SARIF result"
for fmt in ("openreports", "policyreport"):
    skips = [r for item in json.load(open(base + "." + fmt + ".json"))["items"]
             for r in item["results"] if r["result"] == "skip"]
    assert skips and all(r["properties"]["exception"] for r in skips), "no skip result in " + fmt
skipped = ET.parse(base + ".junit.xml").getroot().findall(".//testcase/skipped")
assert skipped and "exception" in skipped[0].get("message"), "no skipped JUnit test case"
PY

# Broken documents every validator must reject.
mkdir -p "$work/broken"
python3 - "$work/out/examples" "$work/broken/broken" <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
sarif = json.load(open(src + ".sarif"))
sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
json.dump(sarif, open(dst + ".sarif", "w"))
sarif = json.load(open(src + ".sarif"))
sarif["runs"][0]["results"][0]["suppressions"] = [{"kind": "waived", "justification": "no such kind"}]
json.dump(sarif, open(dst + "-suppression.sarif", "w"))
for fmt in ("openreports", "policyreport"):
    reports = json.load(open(src + "." + fmt + ".json"))
    reports["items"][0]["results"][0]["result"] = "passed"
    json.dump(reports, open(dst + "." + fmt + ".json", "w"))
    reports = json.load(open(src + "." + fmt + ".json"))
    reports["items"][0]["results"][0]["unknownField"] = "pruned by the API server"
    json.dump(reports, open(dst + "-pruned." + fmt + ".json", "w"))
open(dst + ".junit.xml", "w").write(open(src + ".junit.xml").read().replace(' name="default/', ' nome="default/', 1))
PY

cd "$source_dir" || exit 1
node "$here/validate_reports.mjs" "$work/schemas" "$work"/out/*.sarif "$work"/out/*.openreports.json \
  "$work"/out/*.policyreport.json >"$work/ajv.log" 2>&1 || { cat "$work/ajv.log" >&2; fail "ajv validation"; }
grep -c '^ok ' "$work/ajv.log" | sed 's/^/ajv: valid documents: /'
for broken in "$work"/broken/*.json "$work"/broken/*.sarif; do
  if node "$here/validate_reports.mjs" "$work/schemas" "$broken" >/dev/null 2>&1; then
    fail "ajv accepted the broken $(basename "$broken")"
  fi
done

# The Multitool reports problems as a SARIF log; any error or warning result fails, except the
# messages named in ALLOWED: without --help-uri-base a log has no informationUri, which SARIF2005
# asks for, since topoguard has no page of its own that is sure to exist.
multitool_check() {  # multitool_check OUTPUT ALLOWED FILE... -> number of error/warning results
  "$multitool" validate "${@:3}" -o "$1" --log ForceOverwrite --quiet >/dev/null 2>&1
  python3 -c 'import json, sys
log = json.load(open(sys.argv[1]))
allowed = set(sys.argv[2].split(","))
problems = [r for run in log["runs"] for r in run.get("results", [])
            if r.get("level", "warning") in ("error", "warning") and r["message"].get("id") not in allowed]
for r in problems:
    loc = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] if r.get("locations") else "?"
    print(r["ruleId"], loc, r["message"].get("arguments") or r["message"].get("text"), file=sys.stderr)
print(len(problems))' "$1" "$2"
}
linked="$work/out/examples-help-uri.sarif"
count=$(multitool_check "$work/multitool-linked.sarif" "" "$linked")
[ "$count" = 0 ] || fail "SARIF Multitool, with --help-uri-base: $count errors or warnings"
unlinked=()
for log in "$work"/out/*.sarif; do
  [ "$log" = "$linked" ] || unlinked+=("$log")
done
# (sic: the Multitool's message id)
count=$(multitool_check "$work/multitool.sarif" Warning_ProvideToolnformationUri "${unlinked[@]}")
[ "$count" = 0 ] || fail "SARIF Multitool: $count errors or warnings"
echo "sarif-multitool: $(ls "$work"/out/*.sarif | wc -l) logs, $count errors or warnings"
count=$(multitool_check "$work/multitool-broken.sarif" "" "$work/broken/broken.sarif" 2>/dev/null)
[ "$count" != 0 ] || fail "SARIF Multitool accepted the broken log"

xmllint --noout --schema "$here/junit-10.xsd" "$work"/out/*.junit.xml 2>"$work/xmllint.log" ||
  { grep -v ' validates$' "$work/xmllint.log" >&2; fail "xmllint junit-10.xsd"; }
echo "xmllint: $(grep -c ' validates$' "$work/xmllint.log") JUnit files valid"
if xmllint --noout --schema "$here/junit-10.xsd" "$work/broken/broken.junit.xml" 2>/dev/null; then
  fail "xmllint accepted the broken JUnit file"
fi

exit "$failed"
