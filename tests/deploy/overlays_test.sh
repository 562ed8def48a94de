#!/usr/bin/env bash
# Renders every install path of deploy/webhook the way `kubectl apply -k` would (each overlay, and
# each with the monitoring component), then checks the rendered objects: OpenAPI schemas, the
# kinds that fail closed, the workload matchConditions, and `topoguard audit` on the output.
# usage: overlays_test.sh TOPOGUARD_BINARY SOURCE_DIR
set -euo pipefail

topoguard="${1:?topoguard binary}"
source_dir="${2:?source directory}"
node_dir="${source_dir}/tests/node"

source "${source_dir}/tests/deploy/kustomize.sh"
require_kustomize_v5 deploy_overlays
for tool in node python3; do
  command -v "$tool" >/dev/null || { echo "overlays_test: $tool not found (run tools/setup.sh)" >&2; exit 1; }
done
[ -d "${node_dir}/node_modules" ] || { echo "overlays_test: run tools/setup.sh (npm test tools)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A copy, so the dev overlay's certificates (git-ignored) are made here, not in the source tree.
cp -r "${source_dir}/deploy/webhook" "${work}/webhook"
"${source_dir}/certs/generate-dev-certs.sh" --out "${work}/webhook/dev/certs" --quiet >/dev/null

# Rendered YAML ($1) as the JSON list of its objects ($2).
to_json() {
  # kustomize wraps long base64 values (Secret data, caBundle) over lines; the API server's
  # base64 decoder skips newlines, the schema's "byte" format does not: join them as kubectl's
  # YAML-to-JSON step plus decoding would.
  python3 -c '
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    if d["kind"] == "Secret":
        d["data"] = {k: v.replace("\n", "") for k, v in d.get("data", {}).items()}
    for w in d.get("webhooks", []) if d["kind"].endswith("WebhookConfiguration") else []:
        if "caBundle" in w["clientConfig"]:
            w["clientConfig"]["caBundle"] = w["clientConfig"]["caBundle"].replace("\n", "")
json.dump(docs, sys.stdout)' <"$1" >"$2"
}

overlays=(. existing-secret dev cert-manager)
rendered=()
for overlay in "${overlays[@]}"; do
  name="$overlay"
  if [ "$overlay" = . ]; then name=root; fi
  # The same overlay with the monitoring component, as the guide tells users to compose it.
  # (outside deploy/webhook: the root kustomization there may not contain another root).
  mkdir -p "${work}/with-monitoring-${name}"
  cat >"${work}/with-monitoring-${name}/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../webhook/${overlay}
components:
  - ../webhook/monitoring
EOF
  for dir in "webhook/${overlay}" "with-monitoring-${name}"; do
    label="${dir#webhook/}"
    if [ "$label" = . ]; then label=root; fi
    out="${work}/${label}"
    kubectl kustomize "${work}/${dir}" >"${out}.yaml"
    to_json "${out}.yaml" "${out}.json"
    rendered+=("${out}.json")
    # Nothing topoguard installs may itself be a finding.
    "$topoguard" audit --fail-on audit "${out}.yaml" >"${out}.audit" ||
      { echo "FAIL topoguard audit on ${dir}:" >&2; cat "${out}.audit" >&2; exit 1; }
  done
done

# The mtls component on the dev overlay, as the guide composes it.
mkdir -p "${work}/with-mtls"
cat >"${work}/with-mtls/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../webhook/dev
components:
  - ../webhook/mtls
EOF
kubectl kustomize "${work}/with-mtls" >"${work}/mtls.yaml"
to_json "${work}/mtls.yaml" "${work}/mtls.json"
rendered+=("${work}/mtls.json")
"$topoguard" audit --fail-on audit "${work}/mtls.yaml" >"${work}/mtls.audit" ||
  { echo "FAIL topoguard audit on the mtls component:" >&2; cat "${work}/mtls.audit" >&2; exit 1; }

# The reports component on the root install (self-managed TLS) and on a mounted Secret: one
# --report-interval added to the overlay's flags, RBAC for the report CRDs and the reports' Lease
# only.
for base in . existing-secret; do
  name=reports-${base/./root}
  mkdir -p "${work}/with-${name}"
  cat >"${work}/with-${name}/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../webhook/${base}
components:
  - ../webhook/reports
EOF
  kubectl kustomize "${work}/with-${name}" >"${work}/${name}.yaml"
  to_json "${work}/${name}.yaml" "${work}/${name}.json"
  rendered+=("${work}/${name}.json")
  "$topoguard" audit --fail-on audit "${work}/${name}.yaml" >"${work}/${name}.audit" ||
    { echo "FAIL topoguard audit on ${name}:" >&2; cat "${work}/${name}.audit" >&2; exit 1; }
  python3 - "${work}/${name}.json" "$base" <<'EOF'
import json, sys
docs = json.load(open(sys.argv[1]))
named = {(d["kind"], d["metadata"]["name"]): d for d in docs}
args = named[("Deployment", "topoguard")]["spec"]["template"]["spec"]["containers"][0]["args"]
assert args.count("--report-interval=5m") == 1, args
assert ("--self-managed-tls" in args) == (sys.argv[2] == "."), args
assert named[("ClusterRole", "topoguard-reports")]["rules"] == [
    {"apiGroups": ["openreports.io"], "resources": ["reports", "clusterreports"],
     "verbs": ["list", "create", "patch", "delete"]},
    {"apiGroups": ["wgpolicyk8s.io"], "resources": ["policyreports", "clusterpolicyreports"],
     "verbs": ["list", "create", "patch", "delete"]}]
role = named[("Role", "topoguard-reports")]
assert role["metadata"]["namespace"] == "topoguard"
assert [(r["resources"], r.get("resourceNames", []), r["verbs"]) for r in role["rules"]] == [
    (["leases"], ["topoguard-reports"], ["get", "update"]), (["leases"], [], ["create"])]
for kind in ("RoleBinding", "ClusterRoleBinding"):
    assert named[(kind, "topoguard-reports")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "topoguard", "namespace": "topoguard"}]
print(f"reports component on {sys.argv[2]}: --report-interval added, RBAC for reports and Lease")
EOF
done

# The guide's example user overlay: its own namespace, registry and policy files, nothing edited
# in the checkout.
kubectl kustomize "${work}/webhook/examples/user-overlay" >"${work}/user-overlay.yaml"
to_json "${work}/user-overlay.yaml" "${work}/user-overlay.json"
rendered+=("${work}/user-overlay.json")
"$topoguard" audit --fail-on audit "${work}/user-overlay.yaml" >"${work}/user-overlay.audit" ||
  { echo "FAIL topoguard audit on the user overlay:" >&2; cat "${work}/user-overlay.audit" >&2; exit 1; }
python3 - "${work}/user-overlay.json" "${work}/user-policies" <<'EOF'
import json, os, sys
docs = json.load(open(sys.argv[1]))
namespace = "ml-admission"
kinds = {d["kind"]: d for d in docs}
assert kinds["Namespace"]["metadata"]["name"] == namespace, kinds["Namespace"]["metadata"]
cluster_scoped = ("Namespace", "ClusterRole", "ClusterRoleBinding")
for d in docs:
    if d["kind"] not in cluster_scoped and not d["kind"].endswith("WebhookConfiguration"):
        assert d["metadata"].get("namespace") == namespace, (d["kind"], d["metadata"])
assert kinds["ClusterRoleBinding"]["subjects"] == [
    {"kind": "ServiceAccount", "name": "topoguard", "namespace": namespace}], \
    kinds["ClusterRoleBinding"]["subjects"]
for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
    doc = kinds[kind]
    assert doc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == \
        f"{namespace}/topoguard-serving-cert", doc["metadata"]
    for webhook in doc["webhooks"]:
        assert webhook["clientConfig"]["service"]["namespace"] == namespace, webhook["name"]
        excluded = next(e["values"] for e in webhook["namespaceSelector"]["matchExpressions"]
                        if e["key"] == "kubernetes.io/metadata.name")
        assert namespace in excluded and "topoguard" not in excluded, (webhook["name"], excluded)
serving = next(d for d in docs if d["kind"] == "Certificate" and d["metadata"]["name"] == "topoguard-serving-cert")
assert serving["spec"]["dnsNames"] == [f"topoguard.{namespace}.svc", f"topoguard.{namespace}.svc.cluster.local"], serving["spec"]
image = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"]
assert image.startswith("registry.example.com/platform/topoguard:"), image
policies = kinds["ConfigMap"]["data"]
assert sorted(policies) == ["gpu-platform.yaml"], sorted(policies)
os.makedirs(sys.argv[2])
for name, text in policies.items():
    open(os.path.join(sys.argv[2], name), "w").write(text)
print(f"user overlay: namespace {namespace} everywhere, image {image}, policies {sorted(policies)}")
EOF
"$topoguard" policy lint "${work}/user-policies" >/dev/null ||
  { echo "FAIL the user overlay's policies do not lint" >&2; exit 1; }

# The Deployment's critical priority class is covered by a ResourceQuota in its namespace, which
# clusters that limit that class (GKE) require outside kube-system.
python3 - "${work}" <<'EOF'
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    if path.name == "samples.json":
        continue
    docs = json.load(open(path))
    for deployment in (d for d in docs if d["kind"] == "Deployment"):
        namespace = deployment["metadata"]["namespace"]
        priority = deployment["spec"]["template"]["spec"]["priorityClassName"]
        covered = [q["metadata"]["name"] for q in docs if q["kind"] == "ResourceQuota"
                   and q["metadata"]["namespace"] == namespace
                   and any(e["scopeName"] == "PriorityClass" and e["operator"] == "In" and priority in e["values"]
                           for e in q["spec"]["scopeSelector"]["matchExpressions"])]
        assert covered, f"{path.name}: no ResourceQuota in {namespace} covers priority class {priority}"
        print(f"{path.name}: priority class {priority} covered by ResourceQuota {covered}")
EOF

# The root install (base/, self-managed TLS): the certificate comes from the API, so no tls
# volume, the flags name the Secret, Service and configurations the RBAC grants (and nothing
# wider), and each replica has a POD_NAME for its Lease identity. The overlays that mount a Secret
# (existing-secret/ and those built on it) have none of that RBAC.
python3 - "${work}/root.json" "${work}/existing-secret.json" "${work}/dev.json" "${work}/cert-manager.json" <<'EOF'
import json, sys
docs = json.load(open(sys.argv[1]))
named = {(d["kind"], d["metadata"]["name"]): d for d in docs}
pod = named[("Deployment", "topoguard")]["spec"]["template"]["spec"]
container = pod["containers"][0]
args = container["args"]
for flag in ("--self-managed-tls", "--tls-secret=topoguard/topoguard-tls",
             "--service=topoguard/topoguard", "--webhook-configuration=topoguard"):
    assert flag in args, (flag, args)
assert not any(a.startswith(("--tls-cert", "--tls-key")) for a in args), args
assert all(v["name"] != "tls" for v in pod["volumes"]), pod["volumes"]
assert all(m["name"] != "tls" for m in container["volumeMounts"]), container["volumeMounts"]
assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} in container["env"]
assert ("Secret", "topoguard-tls") not in named, "the Secret is made by topoguard, not applied"
role = named[("Role", "topoguard-self-managed-tls")]
assert role["metadata"]["namespace"] == "topoguard"
rules = [(r["apiGroups"], r["resources"], r.get("resourceNames", []), r["verbs"])
         for r in role["rules"]]
assert rules == [([""], ["secrets"], ["topoguard-tls"], ["get", "list", "watch", "update"]),
                 ([""], ["secrets"], [], ["create"]),
                 (["coordination.k8s.io"], ["leases"], ["topoguard-tls"], ["get", "update"]),
                 (["coordination.k8s.io"], ["leases"], [], ["create"])], rules
assert named[("ClusterRole", "topoguard-self-managed-tls")]["rules"] == [{
    "apiGroups": ["admissionregistration.k8s.io"],
    "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
    "resourceNames": ["topoguard"], "verbs": ["get", "list", "watch", "patch"]}]
for kind in ("RoleBinding", "ClusterRoleBinding"):
    assert named[(kind, "topoguard-self-managed-tls")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "topoguard", "namespace": "topoguard"}]
for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
    assert (kind, "topoguard") in named, kind
for path in sys.argv[2:]:
    mounted = json.load(open(path))
    assert not [d for d in mounted if "self-managed-tls" in d["metadata"]["name"]], path
    container = next(d for d in mounted if d["kind"] == "Deployment")["spec"]["template"]["spec"][
        "containers"][0]
    assert "--tls-cert=/etc/topoguard/tls/tls.crt" in container["args"], container["args"]
    assert "env" not in container and "--self-managed-tls" not in container["args"], path
print("root install: no tls volume, RBAC limited to the Secret, Lease and configurations; "
      "none of it where a Secret is mounted")
EOF

# Probes never use the webhook port (it may demand a client certificate the kubelet does not
# have), and the mtls component passes --client-ca with the CA mounted where the flag points.
python3 - "${work}" <<'EOF'
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
for path in sorted(work.glob("*.json")):
    if path.name == "samples.json":
        continue
    for doc in json.load(open(path)):
        if doc["kind"] != "Deployment":
            continue
        pod = doc["spec"]["template"]["spec"]
        container = pod["containers"][0]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            get = container[probe]["httpGet"]
            assert get["port"] == "metrics" and get.get("scheme", "HTTP") == "HTTP", \
                f"{path.name}: {probe} uses {get}"
        flags = [a for a in container["args"] if a.startswith("--client-ca=")]
        if path.name == "mtls.json":
            assert flags == ["--client-ca=/etc/topoguard/client-ca/ca.crt"], flags
            mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
            volumes = {v["name"]: v for v in pod["volumes"]}
            assert mounts.get("client-ca") == "/etc/topoguard/client-ca", mounts
            assert volumes["client-ca"]["configMap"]["name"] == "topoguard-client-ca", volumes
        else:
            assert not flags, f"{path.name}: {flags}"
        print(f"{path.name}: probes on the metrics port, client CA flags {flags}")
EOF

# Each overlay's webhooks must carry its CA: dev from certs/, cert-manager through the injection annotation.
python3 - "${work}" <<'EOF'
import json, sys
work = sys.argv[1]
for name, expect in [("dev", "caBundle"), ("cert-manager", "inject"), ("existing-secret", None),
                     ("root", None)]:
    docs = json.load(open(f"{work}/{name}.json"))
    for doc in docs:
        if not doc["kind"].endswith("WebhookConfiguration"):
            continue
        bundles = [w["clientConfig"].get("caBundle") for w in doc["webhooks"]]
        annotation = doc["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from")
        if expect == "caBundle":
            assert all(bundles), f"{name}: {doc['kind']} has a webhook without caBundle"
        elif expect == "inject":
            assert annotation == "topoguard/topoguard-serving-cert", f"{name}: {doc['kind']}: {annotation}"
        print(f"{name}: {doc['kind']}: {len(bundles)} webhooks, caBundle set on "
              f"{sum(1 for b in bundles if b)}, inject-ca-from {annotation}")
EOF

# Sample workloads for the matchConditions: the corpus, the examples and the golden inputs.
python3 - "$source_dir" >"${work}/samples.json" <<'EOF'
import json, pathlib, sys, yaml
root = pathlib.Path(sys.argv[1])
objects = []
for base in [root.parent / "shared" / "corpus", root / "examples", root / "tests" / "golden" / "cases"]:
    for path in sorted(base.rglob("*")):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        try:
            objects += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        except (yaml.YAMLError, UnicodeDecodeError):
            pass  # deliberately malformed inputs of the golden cases
json.dump(objects, sys.stdout, default=str)
EOF

node "${source_dir}/tests/deploy/validate_rendered.mjs" "$node_dir" "${work}/samples.json" \
  "${work}/skipped.yaml" "${rendered[@]}"

# What matchConditions skip must be what topoguard has nothing to say about.
if [ -s "${work}/skipped.yaml" ]; then
  "$topoguard" audit --fail-on audit "${work}/skipped.yaml" >"${work}/skipped.audit" ||
    { echo "FAIL objects skipped by matchConditions have findings:" >&2; cat "${work}/skipped.audit" >&2; exit 1; }
fi
echo "overlays_test: ${#rendered[@]} renderings valid"
