#!/usr/bin/env bash
# Every metric the monitoring component's alerts read must exist: starts `topoguard serve`, sends
# a review to /mutate and /validate, scrapes /metrics, and checks each topoguard_* name (and
# each label an alert selects or groups by) against the scrape. Names from other exporters must
# be in this test's short list. The latency threshold must be half of the webhooks' timeout.
# usage: alert_metrics_test.sh TOPOGUARD_BINARY SOURCE_DIR
set -euo pipefail

topoguard="${1:?topoguard binary}"
source_dir="${2:?source directory}"
source "${source_dir}/tests/deploy/serve_helpers.sh"
source "${source_dir}/tests/deploy/kustomize.sh"
require_kustomize_v5 deploy_alert_metrics

make_work_dir

eval "$("${source_dir}/certs/generate-dev-certs.sh" --out "${work}/certs" --quiet)"
ports="$(free_ports 2)"
read -r port metrics_port <<<"$ports"
"$topoguard" serve --tls-cert "$TLS_CERT" --tls-key "$TLS_KEY" --listen "127.0.0.1:${port}" \
  --metrics-listen "127.0.0.1:${metrics_port}" --log-level warn >"${work}/serve.log" 2>&1 &
server_pid=$!
wait_ready "$port" "$CA_CERT" "$server_pid" || { cat "${work}/serve.log" >&2; exit 1; }

review="${source_dir}/examples/admission/resourceclaimtemplate-create-unaligned.json"
post_review "$port" "$CA_CERT" /mutate "$review" >/dev/null
post_review "$port" "$CA_CERT" /validate "$review" >/dev/null
curl -sS --fail --max-time 5 "http://127.0.0.1:${metrics_port}/metrics" >"${work}/metrics.txt"

kubectl kustomize "${source_dir}/deploy/webhook" >"${work}/base.yaml"
python3 - "${source_dir}/deploy/webhook/monitoring/prometheusrule.yaml" "${work}/metrics.txt" \
  "${work}/base.yaml" <<'PY'
import re, sys, yaml

rule_file, scrape_file, base_file = sys.argv[1:]
# Metrics the alerts may read from other exporters (not from topoguard).
external = {"kube_deployment_status_replicas_ready": "kube-state-metrics"}

series = {}  # metric name -> set of label names seen in the scrape
for line in open(scrape_file):
    if line.startswith("#") or not line.strip():
        continue
    match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s", line)
    labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', match.group(3) or ""))
    series.setdefault(match.group(1), set()).update(labels)

failures = []
rules = [r for g in yaml.safe_load(open(rule_file))["spec"]["groups"] for r in g["rules"]]
keywords = {"and", "or", "unless", "bool", "on", "ignoring", "group_left", "group_right"}
checked = 0
for rule in rules:
    expr = re.sub(r'"[^"]*"', '""', rule["expr"])  # label values
    grouping = set()
    for clause in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        grouping.update(label.strip() for label in clause.split(",") if label.strip())
    bare = re.sub(r"\b(?:by|without)\s*\([^)]*\)|\[[^\]]*\]", " ", expr)  # groupings, ranges
    references = re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*(\()?", bare)
    metrics = [(name, selector) for name, selector, call in references
               if not call and name not in keywords and not (selector == "" and name in grouping)]
    # Identifiers inside a selector are label names, not metrics.
    metrics = [(n, s) for n, s in metrics if not any(re.search(r"\b" + n + r"\s*[=!]", sel) for _, sel in metrics)]
    if not metrics:
        failures.append(f"{rule['alert']}: no metric found in its expression")
    for name, selector in metrics:
        checked += 1
        if name in external:
            print(f"{rule['alert']}: {name} (from {external[name]})")
            continue
        if name not in series:
            failures.append(f"{rule['alert']}: {name} is not exported by topoguard serve")
            continue
        # namespace and pod are added by the scrape, le belongs to the histogram buckets.
        needed = (set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*[=!]", selector)) | grouping) - {"namespace", "pod", "le"}
        missing = needed - series[name]
        if missing:
            failures.append(f"{rule['alert']}: {name} has no label {sorted(missing)}")
        print(f"{rule['alert']}: {name} labels {sorted(needed)} ok")

# The latency alert fires at half of the webhooks' timeout.
timeouts = {w["timeoutSeconds"] for d in yaml.safe_load_all(open(base_file)) if d and d["kind"].endswith("WebhookConfiguration") for w in d["webhooks"]}
latency = [r for r in rules if r["alert"] == "TopoguardAdmissionLatencyHigh"]
threshold = float(re.search(r">\s*([0-9.]+)\s*$", latency[0]["expr"].strip()).group(1)) if latency else None
if len(timeouts) != 1 or threshold != list(timeouts)[0] / 2:
    failures.append(f"latency threshold {threshold} is not half of the webhook timeouts {sorted(timeouts)}")

for failure in failures:
    print("FAIL", failure, file=sys.stderr)
print(f"{len(rules)} alerts, {checked} metric references checked")
sys.exit(1 if failures else 0)
PY
