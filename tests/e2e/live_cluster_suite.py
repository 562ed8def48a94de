#!/usr/bin/env python3
"""topoguard reading a real cluster: `serve --kubeconfig` with the ServiceAccount token of
deploy/webhook/base under its ClusterRole (RBAC enforced by the real API server) syncs its cache
and becomes ready; with any one resource taken out of the role it stays not ready and logs the
refusal; behind the shipped webhook configurations it judges a Pod with the claim template the
Pod names (read from the cache); and `audit --cluster` over the same cluster reports what
`audit` reports on the same objects read back with kubectl. (Self-managed TLS: tls_suite.py.)

Usage: live_cluster_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not
built."""

import copy
import json
import os
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (Cluster, Results, Serve, check, dev_certs,  # noqa: E402
                               devices_of, install_custom_kinds, register_webhooks,
                               service_account_kubeconfig, suite_main, unaligned_template)
from control_plane import read, wait_until  # noqa: E402

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
        rendered = cluster.kubectl("kustomize", os.path.join(SOURCE, "deploy", "webhook",
                                                             "existing-secret")).stdout
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
        audit = subprocess.run([BINARY, "audit", "-o", "json", "--fail-on", "never",
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

    def audit_cluster(self):
        """`audit --cluster` (admin) against `audit` of the same objects read back."""
        live = subprocess.run([BINARY, "audit", "--cluster", "--kubeconfig",
                               self.plane.kubeconfig, "-o", "json", "--fail-on", "never"],
                              capture_output=True, text=True)
        check(live.returncode == 0, "audit --cluster: %s" % live.stderr)
        dumped = os.path.join(self.work, "cluster.yaml")
        with open(dumped, "w") as out:
            out.write(self.cluster.kubectl("get", "deviceclasses,resourceclaimtemplates,"
                                           "resourceclaims", "-A", "-o", "yaml").stdout)
        offline = subprocess.run([BINARY, "audit", "-o", "json", "--fail-on", "never",
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


class RestrictedAudit:
    """`audit --cluster` as users bound to deploy/audit's roles, under the real API server's RBAC:
    "ci-auditor" has both roles cluster-wide, "team-auditor" the cluster-state role cluster-wide
    and the namespaced one in namespace ml only."""

    USERS = [("ci-auditor", ()), ("team-auditor", ())]

    def __init__(self, plane, cluster):
        self.plane, self.cluster = plane, cluster
        self.roles = list(yaml.safe_load_all(open(os.path.join(SOURCE, "deploy", "audit",
                                                               "clusterrole.yaml"))))
        bindings = [self.binding("ClusterRoleBinding", "ci-auditor", role["metadata"]["name"])
                    for role in self.roles]
        bindings.append(self.binding("ClusterRoleBinding", "team-auditor",
                                     "topoguard-audit-cluster-state"))
        bindings.append(self.binding("RoleBinding", "team-auditor", "topoguard-audit-namespaced",
                                     namespace="ml"))
        cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": self.roles + bindings}))

    @staticmethod
    def binding(kind, user, role, namespace=None):
        metadata = {"name": "%s-%s" % (user, role)}
        if namespace:
            metadata["namespace"] = namespace
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                              "name": user}]}

    def audit(self, user, *flags):
        config = self.plane.state["users"][user] if user else self.plane.kubeconfig
        return subprocess.run([BINARY, "audit", "--cluster", "--kubeconfig", config, "-o",
                               "json", "--fail-on", "never", *flags],
                              capture_output=True, text=True)

    @staticmethod
    def keys(report):
        return sorted((f["rule"], f["action"], f["resource"]["kind"],
                       f["resource"].get("namespace", ""), f["resource"]["name"])
                      for f in json.loads(report)["findings"])

    def roles_are_enough(self):
        """Each user's audit equals admin's on what it may read."""
        for user, flags in (("ci-auditor", ()), ("team-auditor", ("-n", "ml"))):
            admin, restricted = self.audit(None, *flags), self.audit(user, *flags)
            check(restricted.returncode == 0, "%s: exit %d: %s" % (
                user, restricted.returncode, restricted.stderr[-2000:]))
            check(self.keys(restricted.stdout) == self.keys(admin.stdout),
                  "%s %s\nadmin %s" % (user, self.keys(restricted.stdout),
                                        self.keys(admin.stdout)))
            check(self.keys(admin.stdout), "nothing found, nothing compared")
        outside = self.audit("team-auditor")
        check(outside.returncode == 2 and "forbidden" in outside.stderr.lower() and
              not outside.stdout.strip(),
              "team-auditor across all namespaces: exit %d, stdout %r, stderr %s" % (
                  outside.returncode, outside.stdout[:200], outside.stderr[-1000:]))
        print("     ci-auditor cluster-wide and team-auditor in ml: the admin's findings; "
              "team-auditor across namespaces: exit 2, %s" % outside.stderr.strip()[-160:])

    # Taken out one at a time below: every cluster-scoped kind and the namespaced DRA and Multus
    # kinds, and two workload kinds for the rest (tests/deploy proves the roles equal what audit
    # reads; this proves a missing rule is an error, not a silent gap).
    TAKEN_OUT = {"deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io",
                 "devicetaintrules.resource.k8s.io", "namespaces",
                 "resourceclaimtemplates.resource.k8s.io", "resourceclaims.resource.k8s.io",
                 "network-attachment-definitions.k8s.cni.cncf.io", "deployments.apps", "pods"}

    def each_rule_needed(self):
        """Resources taken out of ci-auditor's roles in turn: the API server refuses them,
        audit exits 2 naming the resource and prints no report."""
        served = set(self.cluster.kubectl("api-resources", "--verbs=list", "-o",
                                          "name").stdout.split()) & self.TAKEN_OUT
        problems, tried = [], 0
        for role_index, role in enumerate(self.roles):
            for rule_index, rule in enumerate(role["rules"]):
                group = rule["apiGroups"][0]
                for resource in rule["resources"]:
                    qualified = resource + ("." + group if group else "")
                    if qualified not in served:
                        continue
                    changed = copy.deepcopy(role)
                    kept = [r for r in rule["resources"] if r != resource]
                    changed["rules"][rule_index]["resources"] = kept
                    changed["rules"] = [r for r in changed["rules"] if r["resources"]]
                    self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(changed))
                    wait_until(lambda: self.cluster.kubectl(
                        "auth", "can-i", "list", qualified, "--as", "ci-auditor",
                        check=False).stdout.strip() == "no", "the role change to take effect", 20)
                    tried += 1
                    done = self.audit("ci-auditor")
                    if done.returncode != 2 or resource not in done.stderr or done.stdout.strip():
                        problems.append("%s: exit %d, stderr %s" % (
                            qualified, done.returncode, done.stderr.strip()[-300:]))
                    self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
                        self.roles[role_index]))
                    wait_until(lambda: self.cluster.kubectl(
                        "auth", "can-i", "list", qualified, "--as", "ci-auditor",
                        check=False).stdout.strip() == "yes", "the role to be restored", 20)
        print("     %d resources taken out one at a time: each refused, exit 2, named" % tried)
        check(served == self.TAKEN_OUT, "not served: %s" % (self.TAKEN_OUT - served))
        check(not problems, "\n".join(problems))


def run(plane, work, started):
    certs = dev_certs(work)
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
    suite.run("each resource of the ClusterRole needed", suite.each_rule_needed, kubeconfig)
    if suite.serve and suite.serve.listen:
        suite.run("the cache's watches survive an API server restart",
                  suite.watch_survives_restart)
        register_webhooks(cluster, suite.serve, read(os.path.join(certs, "ca.pem")))

        def webhook_called():
            ok, stored, _ = cluster.create(unaligned_template("probe", "ml"), "--dry-run=server")
            return ok and devices_of(stored).get("constraints")
        wait_until(webhook_called, "the webhooks to be called", 30)
        suite.run("a Pod judged with the template it names", suite.pod_judged_with_template,
                  "legacy")
        suite.run("a Pod judged with a template made after the restart",
                  suite.pod_judged_with_template, "after-restart")
        suite.serve.stop()
    suite.run("audit --cluster equals audit of the objects", suite.audit_cluster)
    restricted = RestrictedAudit(plane, cluster)
    suite.run("audit --cluster as deploy/audit's users: their roles are enough",
              restricted.roles_are_enough)
    suite.run("audit --cluster: each resource of deploy/audit's roles needed",
              restricted.each_rule_needed)
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("live", run, users=RestrictedAudit.USERS))
