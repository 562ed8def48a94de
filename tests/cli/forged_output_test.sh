#!/usr/bin/env bash
# Issue 38, item 2: nothing input holds can forge a line of output or drive the terminal. Every
# command that prints input (audit in every format, fix, review, policy test/lint/show, explain,
# topology, usage errors) runs over manifests, policies, suites, AdmissionReviews and slices whose
# names, request names, class names, CEL selectors, exception reasons and file names hold line
# feeds, carriage returns, escape sequences (erase line, set title), C1 CSI, bidi overrides and
# invalid UTF-8. Text output must hold no raw control byte but the line feeds that end lines, be
# valid UTF-8 and carry no forged summary line; JSON, SARIF and JUnit must still parse. Names the
# API server would refuse are input errors at their field.
# Usage: forged_output_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$source_dir/tests/cli/cli_support.sh"

run() {  # run NAME ARGS... -> $work/NAME.out, $work/NAME.err, $code
  local name=$1
  shift
  "$binary" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
  code=$?
  check "$name: ends without a crash (exit $code)" test "$code" -lt 128
}

parses() {  # parses FILE: a JSON document
  [ -s "$1" ] && jq -e . "$1" >/dev/null
}

# No byte a terminal acts on: C0 controls but the line feed, DEL, C1 controls (UTF-8 C2 80-9F),
# line/paragraph separators and bidi controls (U+2028-202E, U+2066-2069); and valid UTF-8.
clean() {  # clean FILE
  local raw='[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]'
  if LC_ALL=C grep -qaP "$raw" "$1"; then
    LC_ALL=C grep -naP "$raw" "$1" | head -3 | cat -v >&2
    return 1
  fi
  iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 || { echo "invalid UTF-8 in $1" >&2; return 1; }
}

# No line that the hostile names try to print as topoguard's own.
unforged() {  # unforged FILE
  ! grep -qaE '^(summary: 0 resources, 0 deny|PASS forged|topoguard: forged|node forged)' "$1"
}

text_output() {  # text_output NAME: stdout and stderr of run NAME are clean and unforged
  check "$1: stdout has no raw control byte" clean "$work/$1.out"
  check "$1: stderr has no raw control byte" clean "$work/$1.err"
  check "$1: stdout has no forged line" unforged "$work/$1.out"
  check "$1: stderr has no forged line" unforged "$work/$1.err"
}

# Hostile manifests. YAML escapes (\e, \a, \r, \n, \x9b, \u202e) put the control characters in
# the values; one file holds raw bytes, and one file's name holds a raw escape sequence.
in="$work/in"
mkdir -p "$in"
esc_file="$in/evil$(printf '\033')[2K$(printf '\r')summary: 0 resources, 0 deny.yaml"
cat >"$esc_file" <<'EOF'
# A name that would print a summary line of its own: refused as the API server refuses it.
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: "x\nsummary: 0 resources, 0 deny"
  namespace: "ml\e]0;title\a"
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: "erase\e[2K\r", namespace: ml}
spec: {template: {spec: {containers: []}}}
---
# A valid name whose requests, class names and selector hold what the names above cannot.
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: hostile-requests, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: "gpu\e]0;title\a\nsummary: 0 resources, 0 deny"
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: "nic\x9b2K\u202e\r"
        exactly:
          deviceClassName: dranet
          selectors:
          - cel: {expression: "device.attributes[\"dra.net\"].rdma == true && \"\e[2K\" != \"\""}
---
# A class name and a selector that does not compile, both holding escape sequences.
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: hostile-class, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: other
        exactly:
          deviceClassName: "gpu.nvidia.com\e[31m"
          selectors:
          - cel: {expression: "device.driver == \"gpu.nvidia.com\" &&& \e]0;title\a"}
---
# Waived by the hostile policy's exception, whose reason is printed with --show-exempted.
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: waived-pair, namespace: waived}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
EOF
{
  printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n'
  printf 'metadata: {name: raw-bytes, namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n'
  printf '      - {name: "gpu\033[2K\302\233\377\376", exactly: {deviceClassName: gpu.nvidia.com}}\n'
  printf '      - {name: "nic\tsummary: 0 resources, 0 deny", exactly: {deviceClassName: dranet}}\n'
} >"$in/raw-bytes.yaml"

policy="$work/policy.yaml"
cat >"$policy" <<'EOF'
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: hostile}
spec:
  exceptions:
  - name: waive
    reason: "until \e[2K\rsummary: 0 resources, 0 deny\e]0;title\a \x9b \u202e"
    rules: [missing-pcie-alignment]
    match: {namespaces: {include: ['waived']}}
EOF

# audit: text, then every machine format.
run audit audit --policies "$policy" --show-exempted "$in"
check "audit: refused names are an input error (exit 2)" test "$code" -eq 2
text_output audit
check "audit: one summary line" test "$(grep -c '^summary: ' "$work/audit.out")" -eq 1
check "audit: the name is refused at its field, as the API server words it" grep -qE \
  ':5: /metadata/name: Invalid value: "x\\nsummary: 0 resources, 0 deny": a lowercase RFC 1123 subdomain must consist of .*\[invalid_value\]$' \
  "$work/audit.err"
check "audit: the namespace is refused at its field" grep -qE \
  ':6: /metadata/namespace: Invalid value: "ml\\x1b\]0;title\\x07": a lowercase RFC 1123 label .*\[invalid_value\]$' \
  "$work/audit.err"
check "audit: the file name is escaped" grep -q 'evil\\x1b\[2K\\rsummary: 0 resources, 0 deny\.yaml:' \
  "$work/audit.out"
check "audit: a request name is escaped in its finding" grep -q 'request "gpu\\x1b\]0;title\\x07\\nsummary' \
  "$work/audit.out"
check "audit: the exception reason is escaped" grep -q 'exception waive: until \\x1b\[2K\\rsummary' \
  "$work/audit.out"
check "audit: invalid UTF-8 as bytes" grep -q 'gpu\\x1b\[2K\\u009b\\xff\\xfe' "$work/audit.out"
for format in json sarif openreports policyreport; do
  run "audit-$format" audit --policies "$policy" --format "$format" "$in"
  check "audit --format $format: parses" parses "$work/audit-$format.out"
  check "audit --format $format: stderr clean" clean "$work/audit-$format.err"
done
check "audit --format json: the refusal is an error of the report" jq_true \
  '[.errors[] | select(.field == "/metadata/name" and .code == "invalid_value")] | length == 2' \
  "$work/audit-json.out"
run audit-junit audit --policies "$policy" --format junit "$in"
check "audit --format junit: parses" xmllint --noout "$work/audit-junit.out"
check "audit --format junit: stderr clean" clean "$work/audit-junit.err"

# fix: its notes on stderr, the documents it rewrites on stdout and the diff headers.
run fix fix --policies "$policy" "$esc_file"
text_output fix
check "fix: a fix was applied and told" grep -q 'fixed missing-pcie-alignment ResourceClaimTemplate ml/hostile-requests' \
  "$work/fix.err"
run fix-diff fix --policies "$policy" --diff "$esc_file"
text_output fix-diff
# A rewritten document holding raw bytes is written back escaped (and invalid UTF-8 replaced).
run fix-raw fix --policies "$policy" "$in/raw-bytes.yaml"
text_output fix-raw

# review: the AdmissionReview response is JSON; a refused body is told on stderr.
jq -n '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
  request: {uid: "0000-forged", operation: "CREATE", name: "hostile-requests", namespace: "ml",
    kind: {group: "resource.k8s.io", version: "v1", kind: "ResourceClaimTemplate"},
    resource: {group: "resource.k8s.io", version: "v1", resource: "resourceclaimtemplates"},
    userInfo: {username: "u\u001b]0;title\u0007"},
    object: {apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
      metadata: {name: "hostile-requests", namespace: "ml"},
      spec: {spec: {devices: {requests: [
        {name: "gpu\u001b]0;title\u0007\nsummary: 0 resources, 0 deny",
         exactly: {deviceClassName: "gpu.nvidia.com"}},
        {name: "nic\u009b2K\u202e\r", exactly: {deviceClassName: "dranet"}}]}}}}}}' \
  >"$work/review.json"
run review review --mode validate "$work/review.json"
check "review: response parses" jq_true '.response.allowed == false' "$work/review.out"
check "review: stderr clean" clean "$work/review.err"
printf '{"apiVersion": "admission.k8s.io/v1", "kind": "\033[2K\nsummary: 0 resources, 0 deny' \
  >"$work/broken-review.json"
run review-broken review --mode validate "$work/broken-review.json"
check "review: a broken body is an error" test "$code" -eq 2
text_output review-broken

# policy test: test names, resource names, patched file names and the diff, text and JUnit.
suite="$work/suite"
mkdir -p "$suite"
cp "$esc_file" "$suite/manifests.yaml"
cat >"$suite/suite.yaml" <<'EOF'
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicyTest
metadata: {name: "t\e[2K\rPASS forged\nsummary: 0 resources, 0 deny"}
resources: [manifests.yaml]
strict: false
results:
- resource: {kind: ResourceClaimTemplate, namespace: ml, name: hostile-requests}
  patched: "expected\e]0;title\a.yaml"
- resource: {kind: ResourceClaimTemplate, namespace: ml, name: "gone\e[2K\nPASS forged"}
  rule: missing-pcie-alignment
  action: deny
EOF
printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: hostile-requests, namespace: "ml"}\nspec: {spec: {devices: {requests: [{name: "x\\e[2K"}]}}}\n' \
  >"$suite/expected$(printf '\033')]0;title$(printf '\007').yaml"
(cd "$suite" && "$binary" policy test suite.yaml >"$work/policy-test.out" 2>"$work/policy-test.err")
code=$?
check "policy test: fails (exit 1 or 2)" test "$code" -ne 0
text_output policy-test
check "policy test: the test name is escaped" grep -q '^FAIL t\\x1b\[2K\\rPASS forged\\nsummary' \
  "$work/policy-test.out"
(cd "$suite" && "$binary" policy test --format junit suite.yaml >"$work/policy-junit.out" 2>"$work/policy-junit.err")
check "policy test --format junit: parses" xmllint --noout "$work/policy-junit.out"
check "policy test --format junit: stderr clean" clean "$work/policy-junit.err"
run policy-test-run policy test --run "$(printf 'x\033[2K\nPASS forged')" "$suite/suite.yaml"
text_output policy-test-run

# policy lint and show: a policy whose name the schema refuses, and the hostile exception.
cat >"$work/bad-policy.yaml" <<'EOF'
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: "bad\e[2K\nsummary: 0 resources, 0 deny"}
spec:
  rules: {"missing-pcie-alignment\e]0;t\a": {action: deny}}
EOF
run lint policy lint "$work/bad-policy.yaml" "$policy"
text_output lint
run show policy show "$policy"
check "policy show: exit 0" test "$code" -eq 0
text_output show
run show-effective policy show --effective "$policy"
text_output show-effective

# explain and usage errors quote the command line.
run explain explain "$(printf 'rule\033]0;title\007\nsummary: 0 resources, 0 deny')"
check "explain: unknown rule is a usage error" test "$code" -eq 2
text_output explain
run usage "$(printf 'forged\033[2K\rtopoguard: forged')"
text_output usage

# topology: node, device, driver and attribute names from the slices.
cat >"$work/slices.yaml" <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: "node-a\e[2K\rnode forged"
  pool: {name: node-a}
  devices:
  - {name: "gpu-0\e]0;title\a", attributes: {resource.kubernetes.io/pcieRoot: {string: "pci0000:00\x9b2K"}}}
  - {name: "gpu-1\u202e", attributes: {resource.kubernetes.io/pcieRoot: {string: "pci\n0000:80"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: "Bad\e[2K"}
spec:
  driver: dra.net
  nodeName: node-b
  pool: {name: node-b}
  devices: []
EOF
run topology topology --cluster-state "$work/slices.yaml"
check "topology: the refused slice name is an input error" test "$code" -eq 2
text_output topology
check "topology: the node name is escaped" grep -q '^node node-a\\x1b\[2K\\rnode forged: ' \
  "$work/topology.out"
run topology-json topology --format json --cluster-state "$work/slices.yaml"
check "topology --format json: parses" parses "$work/topology-json.out"
check "topology --format json: stderr clean" clean "$work/topology-json.err"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
