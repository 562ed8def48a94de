#!/usr/bin/env bash
# deploy/inventory rendered as `kubectl apply -k` would: the image tag is deploy/webhook's, the
# DaemonSet stays within the restricted Pod Security profile on its own (no hostPath, non-root,
# no privilege escalation, every capability dropped, read-only root filesystem, RuntimeDefault
# seccomp), takes the node name from the downward API, and RBAC grants only what the inventory
# uses. (e2e_inventory has the API server's Pod Security admission judge it.)
# usage: inventory_overlay_test.sh SOURCE_DIR
set -euo pipefail
source_dir="${1:?source directory}"
source "${source_dir}/tests/deploy/kustomize.sh"
require_kustomize_v5 deploy_inventory_overlay
kubectl kustomize "${source_dir}/deploy/inventory" | python3 -c '
import sys, yaml
objects = [d for d in yaml.safe_load_all(sys.stdin) if d]
webhook = yaml.safe_load(open(sys.argv[1]))
failures = []
def check(condition, message):
    if not condition:
        failures.append(message)
by_kind = {}
for obj in objects:
    by_kind.setdefault(obj["kind"], []).append(obj)
daemonset = by_kind["DaemonSet"][0]
spec = daemonset["spec"]["template"]["spec"]
container = spec["containers"][0]
tag = webhook["images"][0]["newTag"]
check(container["image"] == "topoguard/topoguard:" + tag, "image %s, deploy/webhook tag %s" % (container["image"], tag))
check(not any("hostPath" in volume for volume in spec.get("volumes", [])), "a hostPath volume")
check(not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC"), "host namespaces")
security = container["securityContext"]
check(security.get("allowPrivilegeEscalation") is False and security.get("privileged") is False, "privilege: %s" % security)
check(security.get("readOnlyRootFilesystem") is True and security.get("runAsNonRoot") is True, "root: %s" % security)
check(security.get("capabilities") == {"drop": ["ALL"]}, "capabilities: %s" % security)
check(spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", "seccomp")
check({"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in container["env"], "NODE_NAME")
args = container["args"]
check(args[0] == "inventory" and "--node=$(NODE_NAME)" in args and "--report" in args and "--cluster" in args, "args: %s" % args)
labels = by_kind["Namespace"][0]["metadata"]["labels"]
check(labels["pod-security.kubernetes.io/enforce"] == "restricted", "namespace: %s" % labels)
rules = sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r["verbs"])) for r in by_kind["ClusterRole"][0]["rules"])
check(rules == [(("",), ("nodes",), ("get",)), (("openreports.io",), ("clusterreports",), ("get", "create", "patch")),
                (("resource.k8s.io",), ("resourceslices",), ("list",))], "rules: %s" % rules)
for failure in failures:
    print("FAIL: " + failure)
print("deploy_inventory_overlay: %d objects, %d failure(s)" % (len(objects), len(failures)))
sys.exit(1 if failures else 0)
' "${source_dir}/deploy/webhook/base/kustomization.yaml"
