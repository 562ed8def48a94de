#!/usr/bin/env python3
"""topoguard reading a real cluster: `serve --kubeconfig` with the ServiceAccount token of
deploy/webhook/base under its ClusterRole (RBAC enforced by the real API server) syncs its cache
and becomes ready; with any one resource taken out of the role it stays not ready and logs the
refusal; behind the shipped webhook configurations it judges a Pod with the claim template the
Pod names (read from the cache); and `audit --cluster` over the same cluster reports what
`audit` reports on the same objects read back with kubectl; with deploy/webhook/self-managed's
RBAC, `serve --self-managed-tls` makes its Secret, fills every caBundle and repairs one emptied.

Usage: live_cluster_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not
built."""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (Cluster, Results, Serve, check, devices_of,  # noqa: E402
                               install_custom_kinds, register_webhooks,
                               service_account_kubeconfig, unaligned_template)
from control_plane import SKIP, BinariesMissing, ControlPlane, read, wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
SERVICE_ACCOUNT = "system:serviceaccount:topoguard:topoguard"
ROLE = "topoguard-cluster-cache"


def device_class(name, driver):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % driver}}]}}


class Suite(Results):
    def __init__(self, plane, cluster, work, certs):
        super().__init__()
        self.plane, self.cluster, self.work, self.certs = plane, cluster, work, certs
        rendered = cluster.kubectl("kustomize", os.path.join(SOURCE, "deploy", "webhook")).stdout
        self.rbac = [d for d in yaml.safe_load_all(rendered) if d and d["kind"] in (
            "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding")]
        self.role = next(d for d in self.rbac if d["kind"] == "ClusterRole")
        self.serve = None

    def service_account_kubeconfig(self):
        """The ServiceAccount's kubeconfig: a bound token from the TokenRequest API."""
        self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": self.rbac}))
        return service_account_kubeconfig(self.cluster,
                                          os.path.join(self.work, "serviceaccount.kubeconfig"))

    def start_serve(self, kubeconfig):
        serve = Serve(BINARY, self.work, self.certs, kubeconfig=kubeconfig)
        serve.use_policies([])
        serve.start()
        return serve

    def role_is_enough(self, kubeconfig):
        self.serve = self.start_serve(kubeconfig)
        wait_until(self.serve.ready, "serve to sync its cache as the ServiceAccount",
                   30, alive=lambda: self.serve.process.poll() is None)
        log = read(self.serve.log_path)
        check("forbidden" not in log.lower(), "a refusal in the log:\n" + log[-3000:])

    def each_rule_needed(self, kubeconfig):
        """Each resource of the role taken out in turn: the API server refuses it, serve stays
        not ready and says which resource. Then the role is restored."""
        missing, tried = [], 0
        for rule_index, rule in enumerate(self.role["rules"]):
            for resource in rule["resources"]:
                role = copy.deepcopy(self.role)
                role["rules"][rule_index]["resources"] = [r for r in rule["resources"]
                                                          if r != resource]
                role["rules"] = [r for r in role["rules"] if r["resources"]]
                self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(role))
                group = rule["apiGroups"][0]
                qualified = resource + ("." + group if group else "")
                wait_until(lambda: self.cluster.kubectl(
                    "auth", "can-i", "list", qualified, "--as", SERVICE_ACCOUNT,
                    check=False).stdout.strip() == "no", "the role change to take effect", 20)
                tried += 1
                serve = self.start_serve(kubeconfig)
                try:
                    def refused():
                        return resource in read(serve.log_path) and \
                            "forbidden" in read(serve.log_path).lower()
                    wait_until(refused, "serve to log the refusal of %s" % resource, 20,
                               alive=lambda: serve.process.poll() is None)
                    if serve.ready():
                        missing.append("%s: ready without it" % resource)
                finally:
                    serve.stop()
        self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(self.role))
        print("     %d resources taken out one at a time, each refused and not ready" % tried)
        check(tried == 7 and not missing, "\n".join(missing) or "%d resources" % tried)

    def watch_survives_restart(self):
        """The API server restarted under the running serve: it is ready again, and a template
        created afterwards reaches its cache (the Pod naming it is judged with it below)."""
        errors = self.serve.counter("topoguard_cluster_cache_watch_errors_total")
        self.plane.restart_apiserver()
        self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(
            unaligned_template("after-restart", "ml")))
        wait_until(self.serve.ready, "serve to be ready after the restart", 30)
        wait_until(lambda: self.serve.counter("topoguard_cluster_cache_objects",
                                              resource="resourceclaimtemplates.v1.resource.k8s.io") == 2,
                   "the template made after the restart to reach the cache", 30)
        print("     API server restarted; watch errors counted: %d -> %d" % (
            errors, self.serve.counter("topoguard_cluster_cache_watch_errors_total")))

    def pod_judged_with_template(self, template_name):
        """A Pod naming an unaligned template stored before the webhook: judged with it."""
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "uses-" + template_name,
                                                               "namespace": "ml"},
               "spec": {"resourceClaims": [{"name": "devices",
                                            "resourceClaimTemplateName": template_name}],
                        "containers": [{"name": "main", "image": "example.com/train:1",
                                        "resources": {"claims": [{"name": "devices"}]}}]}}
        offline = os.path.join(self.work, "pod-and-template.yaml")
        with open(offline, "w") as out:
            yaml.safe_dump_all([unaligned_template(template_name, "ml"), pod], out)
        audit = subprocess.run([BINARY, "audit", "--format", "json", "--fail-on", "never",
                                offline], capture_output=True, text=True, check=True)
        expected = [f for f in json.loads(audit.stdout)["findings"]
                    if f["resource"]["kind"] == "Pod"]
        check(expected, "offline audit has no finding on the Pod: %s" % audit.stdout)
        ok, answer, warnings = self.cluster.create(pod)
        print("     the Pod: %s, offline audit: %s" % (
            "admitted with warnings %s" % warnings if ok else answer.splitlines()[-1],
            [(f["rule"], f["action"]) for f in expected]))
        for finding in expected:
            if finding["action"] == "deny":
                check(not ok and finding["message"] in answer,
                      "the Pod is not denied with %r: %s" % (finding["message"], answer))
            elif finding["action"] == "warn":
                check(ok and finding["message"] in " ".join(warnings),
                      "the Pod lacks the warning %r: %s" % (finding["message"], warnings))
        if ok:
            self.cluster.delete(answer)

    def self_managed_tls(self):
        """deploy/webhook/self-managed's RBAC on top of the base: `serve --self-managed-tls` as
        the ServiceAccount makes Secret topoguard-tls, puts its CA into every caBundle of the
        registered configurations, and repairs a caBundle a re-apply emptied. (Calls are not
        made: its certificate names the Service, not 127.0.0.1.)"""
        rendered = self.cluster.kubectl("kustomize", os.path.join(
            SOURCE, "deploy", "webhook", "self-managed")).stdout
        documents = [d for d in yaml.safe_load_all(rendered) if d]
        rbac = [d for d in documents if d["kind"] in ("Role", "RoleBinding", "ClusterRole",
                                                        "ClusterRoleBinding")]
        configurations = [d for d in documents if d["kind"].endswith("WebhookConfiguration")]
        for configuration in configurations:
            for webhook in configuration["webhooks"]:
                path = webhook["clientConfig"].pop("service")["path"]
                webhook["clientConfig"] = {"url": "https://127.0.0.1:9%s" % path}
        self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": rbac + configurations}))
        os.environ["POD_NAME"] = "e2e-replica"  # the Lease holder, as the downward API sets it
        serve = Serve(BINARY, self.work, None, kubeconfig=self.service_account_kubeconfig(),
                      extra=["--self-managed-tls", "--tls-secret", "topoguard/topoguard-tls",
                             "--service", "topoguard/topoguard",
                             "--webhook-configuration", "topoguard"])
        serve.use_policies([])
        serve.start()
        try:
            def secret():
                done = self.cluster.kubectl("-n", "topoguard", "get", "secret", "topoguard-tls",
                                            "-o", "json", check=False)
                return json.loads(done.stdout)["data"] if done.returncode == 0 else None
            wait_until(lambda: secret() and {"ca.crt", "tls.crt", "tls.key"} <= set(secret()),
                       "Secret topoguard-tls", 30, alive=lambda: serve.process.poll() is None)

            def bundles():
                return [webhook["clientConfig"].get("caBundle")
                        for kind in ("validatingwebhookconfiguration",
                                     "mutatingwebhookconfiguration")
                        for webhook in json.loads(self.cluster.kubectl(
                            "get", kind, "topoguard", "-o", "json").stdout)["webhooks"]]
            wait_until(lambda: bundles() == [secret()["ca.crt"]] * 4,
                       "the CA in all four caBundles", 30)
            self.cluster.kubectl("patch", "validatingwebhookconfiguration", "topoguard",
                                 "--type=json", "-p",
                                 '[{"op":"remove","path":"/webhooks/0/clientConfig/caBundle"}]')
            wait_until(lambda: bundles() == [secret()["ca.crt"]] * 4,
                       "the emptied caBundle to be repaired", 30)
            check(serve.counter("topoguard_tls_cabundle_repairs_total") >= 1,
                  "no repair counted")
            wait_until(serve.ready, "serve to be ready with its own certificate", 30)
        finally:
            serve.stop()

    def audit_cluster(self):
        """`audit --cluster` (admin) against `audit` of the same objects read back."""
        live = subprocess.run([BINARY, "audit", "--cluster", "--kubeconfig",
                               self.plane.kubeconfig, "--format", "json", "--fail-on", "never"],
                              capture_output=True, text=True)
        check(live.returncode == 0, "audit --cluster: %s" % live.stderr)
        dumped = os.path.join(self.work, "cluster.yaml")
        with open(dumped, "w") as out:
            out.write(self.cluster.kubectl("get", "deviceclasses,resourceclaimtemplates,"
                                           "resourceclaims", "-A", "-o", "yaml").stdout)
        offline = subprocess.run([BINARY, "audit", "--format", "json", "--fail-on", "never",
                                  dumped], capture_output=True, text=True, check=True)

        def keys(report):
            return sorted((f["rule"], f["action"], f["resource"]["kind"],
                           f["resource"].get("namespace", ""), f["resource"]["name"])
                          for f in json.loads(report)["findings"])
        check(keys(live.stdout) == keys(offline.stdout),
              "audit --cluster %s\naudit of kubectl get %s" % (keys(live.stdout),
                                                               keys(offline.stdout)))
        check(any(key[4] == "legacy" for key in keys(live.stdout)),
              "the unaligned template is not reported")


def main():
    started = time.monotonic()
    try:
        plane = ControlPlane()
    except BinariesMissing as missing:
        print("SKIP: control-plane binaries not built: %s" % missing)
        return SKIP
    work = tempfile.mkdtemp(prefix="topoguard-e2e-live-")
    try:
        with plane:
            print("control plane up in %.1f s" % (time.monotonic() - started), flush=True)
            certs = os.path.join(work, "certs")
            subprocess.run([os.path.join(SOURCE, "certs/generate-dev-certs.sh"), "--out", certs,
                            "--quiet"], check=True, stdout=subprocess.DEVNULL)
            cluster = Cluster(plane, work)
            cluster.ensure_namespace("ml")
            install_custom_kinds(cluster)  # NetworkAttachmentDefinitions served, so watched
            for obj in (device_class("gpu.nvidia.com", "gpu.nvidia.com"),
                        device_class("dranet", "dra.net"), unaligned_template("legacy", "ml")):
                cluster.kubectl("create", "-f", "-", stdin=json.dumps(obj))
            suite = Suite(plane, cluster, work, certs)
            kubeconfig = suite.service_account_kubeconfig()
            suite.run("serve as the ServiceAccount: cache synced, ready", suite.role_is_enough,
                      kubeconfig)
            suite.run("each resource of the ClusterRole needed", suite.each_rule_needed,
                      kubeconfig)
            if suite.serve and suite.serve.listen:
                suite.run("the cache's watches survive an API server restart",
                          suite.watch_survives_restart)
                register_webhooks(cluster, suite.serve,
                                  read(os.path.join(certs, "ca.pem")))

                def webhook_called():
                    ok, stored, _ = cluster.create(unaligned_template("probe", "ml"),
                                                   "--dry-run=server")
                    return ok and devices_of(stored).get("constraints")
                wait_until(webhook_called, "the webhooks to be called", 30)
                suite.run("a Pod judged with the template it names",
                          suite.pod_judged_with_template, "legacy")
                suite.run("a Pod judged with a template made after the restart",
                          suite.pod_judged_with_template, "after-restart")
                suite.serve.stop()
            suite.run("audit --cluster equals audit of the objects", suite.audit_cluster)
            suite.run("self-managed TLS: Secret, caBundles, drift repaired",
                      suite.self_managed_tls)
        return suite.summary(started)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
