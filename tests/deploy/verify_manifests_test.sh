#!/usr/bin/env bash
# The guide's Verify step creates only claim templates in a namespace of their own (no workload
# is started, nothing is allocated) and gets the answers the guide states: the unaligned template
# is denied or patched with the pcieRoot constraint, the aligned one is clean.
# usage: verify_manifests_test.sh TOPOGUARD_BINARY SOURCE_DIR
set -euo pipefail

topoguard="${1:?topoguard binary}"
verify="${2:?source directory}/deploy/webhook/verify/templates.yaml"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

status=0
"$topoguard" audit --format json "$verify" >"${work}/audit.json" || status=$?
[ "$status" -eq 1 ] || { echo "FAIL audit exited ${status}, expected 1" >&2; exit 1; }
"$topoguard" fix "$verify" >"${work}/fixed.yaml" 2>/dev/null
"$topoguard" audit --format json "${work}/fixed.yaml" >"${work}/fixed.json" ||
  { echo "FAIL the fixed templates still have findings" >&2; cat "${work}/fixed.json" >&2; exit 1; }

python3 - "$verify" "${work}/audit.json" "${work}/fixed.json" <<'PY'
import json, sys, yaml
manifests, audit, fixed = sys.argv[1:]
documents = [d for d in yaml.safe_load_all(open(manifests)) if d]
kinds = sorted({d["kind"] for d in documents})
assert kinds == ["Namespace", "ResourceClaimTemplate"], f"only a namespace and templates: {kinds}"
namespace = next(d["metadata"]["name"] for d in documents if d["kind"] == "Namespace")
assert all(d["metadata"].get("namespace") == namespace for d in documents if d["kind"] != "Namespace")
findings = json.load(open(audit))["findings"]
assert [(f["rule"], f["action"], f["resource"]["name"]) for f in findings] == \
    [("missing-pcie-alignment", "deny", "gpu-nic-unaligned")], findings
assert findings[0]["fix"][0]["value"] == \
    [{"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}], findings[0]["fix"]
assert json.load(open(fixed))["findings"] == []
print(f"verify: {len(documents)} objects ({', '.join(kinds)}) in {namespace}; unaligned denied and fixed, aligned clean")
PY

# The guide shows this audit's output; it must be what the binary prints today.
guide="${2}/deploy/webhook/README.md"
python3 - "$guide" >"${work}/guide-output.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"The same verdicts offline.*?```console\n(.*?)```", text, re.S)
assert block, "the guide's Verify section has no offline console block"
lines = block.group(1).splitlines()
assert lines[0].startswith("$ "), lines[0]
print("\n".join(lines[1:]))
PY
(cd "$2" && "$topoguard" audit deploy/webhook/verify/templates.yaml >"${work}/actual.txt" 2>&1) || true
diff -u "${work}/guide-output.txt" "${work}/actual.txt" ||
  { echo "FAIL the guide's Verify output differs from topoguard audit's (update deploy/webhook/README.md)" >&2; exit 1; }
