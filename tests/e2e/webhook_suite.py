#!/usr/bin/env python3
"""The webhook against the real kube-apiserver: `topoguard serve` on 127.0.0.1 behind the webhook
configurations shipped in deploy/webhook (rendered with the real `kubectl kustomize`, each
`clientConfig.service` turned into `url: https://127.0.0.1:PORT/PATH` with the caBundle, as
envtest registers a local webhook), registered for real; every object of examples/manifests and
of tests/golden/cases created with the real kubectl.

What an object should come to is what topoguard's engine answers for it (`topoguard review`,
/mutate and then /validate on the patched object, with the case's policies, the same policies
the server has loaded); what it comes to is what the API server did: denied with the rule's
message, admitted with the warnings as API warnings, stored with the patch applied. Then the
API server's side of the contract: UPDATEs that remove finalizers or scale are admitted, DELETE is
never sent, `--dry-run=server` is judged and stores nothing, matchConditions keep pods and
workloads without devices from the webhook (counted at its /metrics), and with topoguard stopped
claims fail closed and workloads fail open.

Usage: webhook_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not built.
"""

import copy
import json
import os
import re
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (CASES, EXAMPLES, RESOURCES, Cluster, Results, Serve,  # noqa: E402
                               check, devices_of, documents, expected_outcome, golden_cases,
                               dev_certs, install_custom_kinds, register_webhooks, suite_main,
                               unaligned_template)
from control_plane import wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
# The configurations' namespaceSelector leaves these out.
NAMESPACES_NEVER_SENT = ("kube-system", "kube-node-lease", "kube-public", "topoguard")
# Golden cases whose objects the real API server itself refuses, whatever topoguard says: the
# refusal each object meets (a pattern of its error) and why. Any other refusal is a failure.
API_SERVER_REFUSES = {
    "cel_device_class_syntax_error": (
        r"spec\.selectors\[1\]\.cel\.expression: Invalid value: .*compilation failed",
        "the case is a DeviceClass whose selector is not CEL: the API server compiles it too"),
}
# Kubernetes 1.37.2 requires a domain in a derived attribute's name and in a matchAttribute
# (docs/dra.md, "Names"): the cases that spell the alias `root` bare are refused.
BARE_DERIVED_NAME = (r'derivedAttributes\[0\]\.name: Invalid value: "root": a fully qualified name '
                     r"must be a domain and a name separated by a slash",
                     "1.37.2 refuses a derived attribute named `root` without a domain")
for case in ("derived_alias_v1", "derived_alias_v1beta2", "feasibility_derived_alias",
             "feasibility_derived_error"):
    API_SERVER_REFUSES[case] = BARE_DERIVED_NAME

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController")
OVERCOMMITTABLE = ("cpu", "memory", "ephemeral-storage")


def completed(obj):
    """`obj` with what the API server requires and topoguard does not read filled in where the
    golden cases leave it out (they are written for topoguard, not for a cluster): container
    images, a workload's selector and the matching template labels, a Job's restartPolicy,
    limits equal to requests for extended resources (which cannot be overcommitted), a
    Service's ports, a ResourceSlice pool's slice count. topoguard's verdicts are taken on the
    completed object too."""
    obj = copy.deepcopy(obj)
    kind = obj["kind"]
    if kind == "Service":
        obj.setdefault("spec", {})
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    if kind == "ResourceSlice" and not spec.get("pool", {}).get("resourceSliceCount"):
        spec.setdefault("pool", {})["resourceSliceCount"] = 1
    if kind == "Service" and not spec.get("ports"):
        spec["ports"] = [{"port": 80}]
    if kind in WORKLOAD_KINDS and "template" in spec:
        labels = spec["template"].setdefault("metadata", {}).setdefault("labels", {})
        labels.setdefault("topoguard.dev/e2e", obj["metadata"]["name"])
        if kind == "ReplicationController":
            spec.setdefault("selector", dict(labels))
        else:
            spec.setdefault("selector", {"matchLabels": dict(labels)})
    pod_specs = []
    if kind == "Pod":
        pod_specs.append(spec)
    elif kind == "CronJob":
        pod_specs.append(spec.get("jobTemplate", {}).get("spec", {}).get("template", {})
                         .get("spec"))
    elif isinstance(spec.get("template"), dict):
        pod_specs.append(spec["template"].get("spec"))
    for pod_spec in filter(None, pod_specs):
        if kind in ("Job", "CronJob"):
            pod_spec.setdefault("restartPolicy", "Never")
        for container in pod_spec.get("containers", []) + pod_spec.get("initContainers", []):
            container.setdefault("image", "example.com/app:1")
            resources = container.get("resources", {})
            for name, quantity in resources.get("requests", {}).items():
                if name not in OVERCOMMITTABLE and not name.startswith("hugepages-"):
                    resources.setdefault("limits", {}).setdefault(name, quantity)
    return obj


# --- the cluster side ---------------------------------------------------------------------------

# --- the checks ---------------------------------------------------------------------------------

def gpu_deployment(name, namespace, replicas=1):
    """A Deployment pairing a device-plugin GPU and RDMA NIC: a warning, no patch."""
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{
                                      "name": "main", "image": "example.com/train:1",
                                      "resources": {"limits": {"nvidia.com/gpu": "1",
                                                               "rdma/hca": "1"}}}]}}}}


def plain_pod(name, namespace, claims=False):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
           "spec": {"containers": [{"name": "main", "image": "example.com/app:1",
                                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    if claims:
        pod["spec"]["resourceClaims"] = [{"name": "devices",
                                          "resourceClaimTemplateName": "gpu-nic"}]
        pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "devices"}]
    return pod


class Suite(Results):
    def __init__(self, cluster, serve, work):
        super().__init__()
        self.cluster, self.serve = cluster, serve
        self.strict_pairing = os.path.join(work, "strict-pairing.yaml")
        with open(self.strict_pairing, "w") as out:
            yaml.safe_dump({"apiVersion": "topoguard.dev/v1alpha1", "kind": "AlignmentPolicy",
                            "metadata": {"name": "strict-pairing"},
                            "spec": {"rules": {"device-plugin-pairing": {"action": "deny"}}}},
                           out)
        self.tallies = {"objects": 0, "denied": 0, "warned": 0, "patched": 0, "not sent": 0,
                        "refused by the API server": 0, "not served by this release": 0}

    # --- golden cases and examples ---

    def manifests(self, label, path, policies):
        self.serve.use_policies(policies)
        objects = list(documents(path))
        for obj in objects:  # namespaces first: the objects in them need them
            if obj["kind"] == "Namespace":
                self.cluster.ensure_namespace(obj["metadata"]["name"],
                                              obj["metadata"].get("labels"))
        created, problems = [], []
        for obj in objects:
            if obj["kind"] != "Namespace":
                problem = self.judge(label, obj, policies, created)
                if problem:
                    problems.append("%s %s/%s: %s" % (obj["kind"],
                                                      obj["metadata"].get("namespace", ""),
                                                      obj["metadata"]["name"], problem))
        for stored in created:
            self.cluster.delete(stored)
        check(not problems, "\n".join(problems))

    def judge(self, label, obj, policies, created):
        """Creates `obj` (appended to `created` if stored); what is wrong with what the API
        server did with it, or None."""
        self.tallies["objects"] += 1
        unserved = self.cluster.unserved(obj)
        if unserved:
            self.tallies["not served by this release"] += 1
            print("     %s: %s" % (label, unserved))
            return None
        namespace = obj["metadata"].get("namespace")
        if namespace:
            self.cluster.ensure_namespace(namespace)
        obj = completed(obj)
        ok, stored, warnings = self.cluster.create(obj)
        if ok:
            created.append(stored)
        if not ok and "admission webhook" not in stored:
            pattern, why = API_SERVER_REFUSES.get(label, (None, None))
            if pattern and re.search(pattern, stored):
                self.tallies["refused by the API server"] += 1
                print("     %s: %s %s refused by the API server as expected: %s"
                      % (label, obj["kind"], obj["metadata"]["name"], why))
                return None
            return "refused by the API server itself: " + stored
        if obj["kind"] not in RESOURCES or namespace in NAMESPACES_NEVER_SENT:
            self.tallies["not sent"] += 1
            return None
        allowed, message, expected_warnings, patched = expected_outcome(BINARY, obj, policies)
        if allowed != ok:
            return "topoguard %s it, the API server %s it: %s" % (
                "allows" if allowed else "denies", "admitted" if ok else "refused",
                message if not allowed else stored)
        if not ok:
            self.tallies["denied"] += 1
            if "denied the request: " + message not in stored:
                return "denial without the rule's message %r: %s" % (message, stored)
            return None
        missing = [warning for warning in expected_warnings if warning not in warnings]
        if missing:
            return "warnings %r missing from the API warnings %r" % (missing, warnings)
        self.tallies["warned"] += bool(expected_warnings)
        if obj["kind"] in CLAIM_KINDS:
            want, have = devices_of(patched), devices_of(stored)
            if want.get("constraints") != have.get("constraints"):
                return "stored constraints %s, topoguard's patch makes %s" % (
                    have.get("constraints"), want.get("constraints"))
            self.tallies["patched"] += patched is not obj
        return None

    # --- the API server's side of the contract ---

    def update_finalizer_and_scale(self):
        namespace = "updates"
        self.cluster.ensure_namespace(namespace)
        template = unaligned_template("held", namespace)
        template["metadata"]["finalizers"] = ["example.com/hold"]
        ok, stored, _ = self.cluster.create(template)
        check(ok, "template with a finalizer: %s" % stored)
        self.cluster.kubectl("-n", namespace, "patch", "resourceclaimtemplate", "held",
                             "--type=json", "-p",
                             '[{"op":"remove","path":"/metadata/finalizers"}]')
        check("finalizers" not in json.loads(self.cluster.kubectl(
            "-n", namespace, "get", "resourceclaimtemplate", "held", "-o", "json").stdout)
              ["metadata"], "the finalizer is still there")
        ok, stored, _ = self.cluster.create(gpu_deployment("trainer", namespace))
        check(ok, "deployment: %s" % stored)
        # Scaling goes through the scale subresource, which the configurations do not name:
        # never sent. A label is an UPDATE of the object: sent to /validate, which skips a
        # change of metadata only.
        before = self.serve.requests(kind="Deployment", operation="UPDATE")
        self.cluster.kubectl("-n", namespace, "scale", "deployment", "trainer", "--replicas=3")
        check(self.serve.requests(kind="Deployment", operation="UPDATE") == before,
              "a scale reached topoguard")
        self.cluster.kubectl("-n", namespace, "label", "deployment", "trainer", "team=ml")
        after = self.serve.requests(kind="Deployment", operation="UPDATE")
        skipped = self.serve.requests(kind="Deployment", operation="UPDATE", decision="skip")
        check(after == before + 1 and skipped == after,
              "the label UPDATE was not sent once and skipped as metadata-only: %s" % "\n".join(
                  line for line in self.serve.metrics().splitlines()
                  if 'kind="Deployment"' in line))

    def update_of_stored_violation(self):
        """A Deployment that is denied at CREATE (device-plugin-pairing raised to deny), stored
        while its namespace opted out: once the namespace opts back in, annotating, scaling and
        changing its environment are admitted (an UPDATE is denied only for what it brings)."""
        self.serve.use_policies([self.strict_pairing])
        namespace = "opted-out"
        self.cluster.ensure_namespace(namespace, {"topoguard.dev/webhook": "disabled"})
        ok, stored, _ = self.cluster.create(gpu_deployment("paired", namespace))
        check(ok, "a Deployment in an opted-out namespace: %s" % stored)
        self.cluster.kubectl("label", "namespace", namespace, "topoguard.dev/webhook-")
        before = self.serve.requests(kind="Deployment", operation="UPDATE")
        # The API server matches namespaces from its informer: wait until an UPDATE is sent.
        wait_until(lambda: self.cluster.kubectl("-n", namespace, "annotate", "--overwrite",
                                                "deployment", "paired", "owner=ml",
                                                check=False).returncode == 0 and
                   self.serve.requests(kind="Deployment", operation="UPDATE") > before,
                   "an annotation of the stored violation to be judged and admitted", 20)
        self.cluster.kubectl("-n", namespace, "scale", "deployment", "paired", "--replicas=2")
        self.cluster.kubectl("-n", namespace, "set", "env", "deployment/paired", "MODE=serve")
        # The same Deployment created anew is denied: the violation is real.
        ok, error, _ = self.cluster.create(gpu_deployment("paired-again", namespace))
        check(not ok and "denied the request" in error and "cannot be aligned" in error,
              "the violation at CREATE: %s" % error)
        self.serve.use_policies([])

    def delete_never_sent(self):
        namespace = "deletes"
        self.cluster.ensure_namespace(namespace)
        ok, stored, _ = self.cluster.create(unaligned_template("doomed", namespace))
        check(ok, "template: %s" % stored)
        before = self.serve.requests()
        self.cluster.kubectl("-n", namespace, "delete", "resourceclaimtemplate", "doomed")
        check(self.serve.requests(operation="DELETE") == 0, "a DELETE reached topoguard")
        check(self.serve.requests() == before, "the DELETE sent topoguard a request")

    def dry_run(self):
        namespace = "dry-run"
        self.cluster.ensure_namespace(namespace)
        before = self.serve.requests(kind="ResourceClaimTemplate", operation="CREATE")
        ok, stored, _ = self.cluster.create(unaligned_template("patched", namespace),
                                            "--dry-run=server")
        check(ok, "dry-run create: %s" % stored)
        check(devices_of(stored).get("constraints"), "the dry-run answer lacks the patch: %s"
              % stored)
        check(self.serve.requests(kind="ResourceClaimTemplate", operation="CREATE") >= before + 2,
              "the dry run was not judged by both webhooks")
        absent = self.cluster.kubectl("-n", namespace, "get", "resourceclaimtemplate", "patched",
                                      check=False)
        check(absent.returncode != 0 and "NotFound" in absent.stderr,
              "the dry run stored the object: %s" % absent.stdout)
        # A denial in dry run: the same message, nothing stored.
        self.serve.use_policies([os.path.join(CASES, "deny_in_prod_warn_elsewhere",
                                              "prod-strict.yaml")])
        self.cluster.ensure_namespace("prod-dry")
        denied = unaligned_template("denied", "prod-dry")
        mutate_off = copy.deepcopy(denied)
        allowed, message, _, _ = expected_outcome(BINARY, mutate_off, [os.path.join(
            CASES, "deny_in_prod_warn_elsewhere", "prod-strict.yaml")])
        ok, error, _ = self.cluster.create(denied, "--dry-run=server")
        check(ok == allowed, "dry run: topoguard allows=%s, API server admitted=%s: %s"
              % (allowed, ok, error))
        self.serve.use_policies([])

    def match_conditions(self):
        namespace = "match"
        self.cluster.ensure_namespace(namespace)
        before_pods = self.serve.requests(kind="Pod")
        before_deployments = self.serve.requests(kind="Deployment")
        ok, stored, _ = self.cluster.create(plain_pod("plain", namespace))
        check(ok, "plain pod: %s" % stored)
        plain = gpu_deployment("web", namespace)
        plain["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "limits": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "1Gi"}}
        ok, stored, _ = self.cluster.create(plain)
        check(ok, "plain deployment: %s" % stored)
        check(self.serve.requests(kind="Pod") == before_pods, "a pod without devices was sent")
        check(self.serve.requests(kind="Deployment") == before_deployments,
              "a deployment without devices was sent")
        ok, stored, _ = self.cluster.create(plain_pod("with-claims", namespace, claims=True))
        check(ok, "pod with claims: %s" % stored)
        check(self.serve.requests(kind="Pod", operation="CREATE") == before_pods + 2,
              "the pod with claims was not sent to both webhooks once each")
        ok, stored, _ = self.cluster.create(gpu_deployment("gpus", namespace))
        check(ok, "gpu deployment: %s" % stored)
        check(self.serve.requests(kind="Deployment") == before_deployments + 2,
              "the deployment with extended resources was not sent to both webhooks")

    def topoguard_stopped(self):
        """Last: with topoguard down, claims fail closed, workloads fail open, UPDATEs of claims
        and DELETEs pass."""
        namespace = "outage"
        self.cluster.ensure_namespace(namespace)
        template = unaligned_template("kept", namespace)
        template["metadata"]["finalizers"] = ["example.com/hold"]
        ok, stored, _ = self.cluster.create(template)
        check(ok, "template before the outage: %s" % stored)
        stopping = time.monotonic()
        self.serve.stop()
        print("     topoguard stopped (SIGTERM, drained) in %.1f s" % (time.monotonic() - stopping))
        ok, error, _ = self.cluster.create(unaligned_template("during", namespace))
        check(not ok and 'failed calling webhook "claims.validate.topoguard.dev"' in error,
              "a template created while topoguard is down: %s" % error)
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "during", "namespace": namespace},
                 "spec": unaligned_template("x", namespace)["spec"]["spec"]}
        ok, error, _ = self.cluster.create(claim)
        check(not ok and "failed calling webhook" in error, "a claim while down: %s" % error)
        ok, stored, _ = self.cluster.create(gpu_deployment("during", namespace))
        check(ok, "a workload while topoguard is down: %s" % stored)
        ok, stored, _ = self.cluster.create(plain_pod("claims-during", namespace, claims=True))
        check(ok, "a pod with claims while topoguard is down: %s" % stored)
        self.cluster.kubectl("-n", namespace, "patch", "resourceclaimtemplate", "kept",
                             "--type=json", "-p",
                             '[{"op":"remove","path":"/metadata/finalizers"}]')
        self.cluster.kubectl("-n", namespace, "delete", "resourceclaimtemplate", "kept")
        self.cluster.kubectl("-n", namespace, "delete", "deployment", "during")


def run(plane, work, started):
    certs = dev_certs(work)
    serve = Serve(BINARY, work, certs)
    serve.use_policies([])
    serve.start()
    cluster = Cluster(plane, work)
    install_custom_kinds(cluster)
    register_webhooks(cluster, serve, open(os.path.join(certs, "ca.pem")).read())
    # The API server picks up new configurations asynchronously: wait until a template comes
    # back patched.
    cluster.ensure_namespace("probe")

    def patched_by_webhook():
        ok, stored, _ = cluster.create(unaligned_template("probe", "probe"), "--dry-run=server")
        return ok and devices_of(stored).get("constraints")
    wait_until(patched_by_webhook, "the webhooks to be called", 30)
    print("webhooks registered, ready after %.1f s" % (time.monotonic() - started), flush=True)
    suite = Suite(cluster, serve, work)
    for name in sorted(os.listdir(EXAMPLES)):
        suite.run("examples/manifests/" + name, suite.manifests, name,
                  os.path.join(EXAMPLES, name), [])
    for case, path, policies in golden_cases():
        suite.run("golden/" + case, suite.manifests, case, path, policies)
    suite.run("UPDATE: finalizer removed, scaled, relabelled", suite.update_finalizer_and_scale)
    suite.run("UPDATE: a stored violation scaled and annotated", suite.update_of_stored_violation)
    suite.run("DELETE: never sent", suite.delete_never_sent)
    suite.run("--dry-run=server: judged, nothing stored", suite.dry_run)
    suite.run("matchConditions: only DRA-bearing workloads sent", suite.match_conditions)
    suite.run("topoguard stopped: claims closed, workloads open", suite.topoguard_stopped)
    serve.stop()
    print("tallies: %s" % ", ".join("%s %d" % item for item in suite.tallies.items()))
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("webhook", run))
