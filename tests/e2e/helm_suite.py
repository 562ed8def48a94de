#!/usr/bin/env python3
"""The Helm chart (deploy/helm/topoguard) against the real kube-apiserver:

- `helm template` with the default values and each values file of deploy/helm/values applied
  with `kubectl apply --dry-run=server` into a namespace that enforces and warns on the
  restricted Pod Security profile (cert-manager's and the Prometheus Operator's kinds served by
  schema-less CRDs: their content is checked by the kustomize twin's schema test);
- `helm install`, then topoguard on 127.0.0.1 as the chart's pod: the flags of the Deployment
  helm created (addresses and paths made local), the policies of the ConfigMap helm created and
  the ServiceAccount's token (its cluster cache syncs under the chart's ClusterRole); the
  configurations helm created call it (`webhooks.url`, the URL rewrite of the e2e suites, set as
  a value so that helm owns it); claim templates created the whole time from a second thread:
  0 failed admissions across `helm upgrade` and across a failed `--rollback-on-failure` upgrade,
  which puts the previous revision back; the caBundle unchanged;
- `helm uninstall`: both configurations gone (validating first) before the Deployment, and with
  topoguard stopped a claim template is admitted, never left failing closed;
- selfManaged (the default), the configurations calling the chart's Service (an ExternalName to
  localhost, topoguard on 127.0.0.1:443): claim templates created from a thread from before
  `helm install` until topoguard serves are all admitted (claims.validate is registered with
  Ignore, though nothing answers yet); `serve --self-managed-tls` with the chart's flags writes
  its CA into the caBundles of the configurations helm made and, once ready, sets claims.validate
  to Fail; then a template the policy denies is refused; `helm upgrade` (rendering Fail) applies
  without a conflict and keeps that CA; topoguard owns none of the fields it set, so `helm
  rollback` to the install revision (Ignore) applies without a conflict, and Fail is set again;
- mutual-tls.yaml: the API server presents a client certificate of the cluster CA to every
  webhook (the launcher's --webhook-client-certificate), the chart renders that CA as
  ConfigMap topoguard-client-ca and `--client-ca`: the API server's calls are answered, a
  client without a certificate is refused in the TLS handshake.

Usage: helm_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when helm or the control plane is not
built.
"""

import base64
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "deploy"))
from admission_support import (Cluster, Results, Serve, check, devices_of,  # noqa: E402
                               install_custom_kinds, service_account_kubeconfig,
                               unaligned_template)
from chart_support import (CHART, VALUES, Helm, ToolMissing, helm_binary,  # noqa: E402
                           values_files)
from control_plane import (SKIP, BinariesMissing, ControlPlane, free_ports, read,  # noqa: E402
                           wait_until)

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
NAMESPACE = "topoguard"
LOAD_NAMESPACE = "helm-load"
# A policy that denies an unaligned template, unpatched, in prod-* namespaces (and warns
# elsewhere, as in LOAD_NAMESPACE).
STRICT_POLICY = """apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata:
  name: deny-in-prod-unpatched
spec:
  rules:
    missing-pcie-alignment: {action: warn, mutate: false}
  actionOverrides:
  - namespaces: ['prod-.*']
    rules: [missing-pcie-alignment]
    action: deny
"""
STRICT_NAMESPACE = "prod-helm"
# The chart's Service port, where the API server calls the Service (an ExternalName here).
SERVICE_PORT = 443
CONFIGURATIONS = ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")
# Kinds of cert-manager and the Prometheus Operator that values files render.
OPERATOR_KINDS = [
    ("cert-manager.io", "Certificate", "certificates", ["v1"]),
    ("cert-manager.io", "Issuer", "issuers", ["v1"]),
    ("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", ["v1"]),
    ("monitoring.coreos.com", "PrometheusRule", "prometheusrules", ["v1"]),
]
# The Deployment's flags that name addresses and files of the pod, set by Serve for 127.0.0.1.
LOCAL_FLAGS = ("--listen=", "--metrics-listen=", "--tls-cert=", "--tls-key=", "--policies=",
               "--threads=", "--client-ca=")


class Admissions:
    """Claim templates created (server-side dry run, nothing stored) one after another from a
    thread while something else happens: each must be admitted with the pcieRoot patch, or,
    `patch_required` False, admitted at all."""

    def __init__(self, cluster, patch_required=True):
        self.cluster, self.patch_required = cluster, patch_required
        self.results = []  # (admitted (and patched), error text)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stopping.is_set():
            ok, stored, _ = self.cluster.create(unaligned_template("load", LOAD_NAMESPACE),
                                                "--dry-run=server")
            good = ok and (not self.patch_required or bool(devices_of(stored).get("constraints")))
            self.results.append((good, "" if good else str(stored)[:300]))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exception):
        count = len(self.results)
        # At least two more after the operation, so that its end is covered too.
        wait_until(lambda: len(self.results) >= count + 2, "admissions after the operation", 30)
        self.stopping.set()
        self.thread.join(timeout=30)

    def check_none_failed(self, what):
        failed = [error for ok, error in self.results if not ok]
        print("     %s: %d admissions, %d failed" % (what, len(self.results), len(failed)))
        check(len(self.results) >= 3, "%s: only %d admissions sampled" % (what, len(self.results)))
        check(not failed, "%s: %d of %d admissions failed, first: %s"
              % (what, len(failed), len(self.results), failed[:1]))


class RolloutStandIn:
    """Stands in for the deployment controller and the kubelets this control plane lacks: while
    it runs, a Deployment whose image is not UNPULLABLE is reported rolled out and ready at its
    generation (its status subresource, as the controller writes it); one with that image never
    is, like pods whose image cannot be pulled."""

    UNPULLABLE = "unpullable"

    def __init__(self, cluster):
        self.cluster = cluster
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stopping.wait(0.2):
            done = self.cluster.kubectl("-n", NAMESPACE, "get", "deployment", "topoguard", "-o",
                                        "json", check=False)
            if done.returncode != 0:
                continue
            deployment = json.loads(done.stdout)
            image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
            generation = deployment["metadata"]["generation"]
            if image.endswith(":" + self.UNPULLABLE) or \
                    deployment.get("status", {}).get("observedGeneration") == generation:
                continue
            replicas = deployment["spec"]["replicas"]
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            conditions = [{"type": "Available", "status": "True",
                           "reason": "MinimumReplicasAvailable", "lastUpdateTime": now,
                           "lastTransitionTime": now},
                          {"type": "Progressing", "status": "True",
                           "reason": "NewReplicaSetAvailable", "lastUpdateTime": now,
                           "lastTransitionTime": now}]
            self.cluster.kubectl("-n", NAMESPACE, "patch", "deployment", "topoguard",
                                 "--subresource=status", "--type=merge", "-p", json.dumps(
                                     {"status": {"observedGeneration": generation,
                                                 "replicas": replicas,
                                                 "updatedReplicas": replicas,
                                                 "readyReplicas": replicas,
                                                 "availableReplicas": replicas,
                                                 "conditions": conditions}}), check=False)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exception):
        self.stopping.set()
        self.thread.join(timeout=30)


class Suite(Results):
    def __init__(self, plane, cluster, helm, work):
        super().__init__()
        self.plane, self.cluster, self.helm, self.work = plane, cluster, helm, work
        self.certs = os.path.join(work, "certs")
        subprocess.run([os.path.join(SOURCE, "certs/generate-dev-certs.sh"), "--out", self.certs,
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
        ca_pem = read(os.path.join(self.certs, "ca.pem"))
        self.ca_bundle = base64.b64encode(ca_pem.encode()).decode()
        self.serve = None
        self.port = free_ports(1)[0]

    # --- helpers ----------------------------------------------------------------------------

    def configurations(self):
        """Both configurations as stored, by kind (None when absent)."""
        found = {}
        for kind in CONFIGURATIONS:
            done = self.cluster.kubectl("get", kind, "topoguard", "-o", "json", check=False)
            found[kind] = json.loads(done.stdout) if done.returncode == 0 else None
        return found

    def webhooks(self):
        return [webhook for configuration in self.configurations().values() if configuration
                for webhook in configuration["webhooks"]]

    def deployment_args(self):
        manifest = self.helm.run("get", "manifest", "topoguard", "-n", NAMESPACE).stdout
        deployment = next(d for d in yaml.safe_load_all(manifest)
                          if d and d["kind"] == "Deployment")
        return deployment["spec"]["template"]["spec"]["containers"][0]["args"]

    def start_as_pod(self, certs, port=None):
        """topoguard on 127.0.0.1:port (self.port unless given) with the flags, policies and
        ServiceAccount the chart gave its pod."""
        args = self.deployment_args()
        check(args[0] == "serve", "the Deployment runs %s" % args[:1])
        extra = [arg for arg in args[1:] if not arg.startswith(LOCAL_FLAGS)]
        policies = json.loads(self.cluster.kubectl("-n", NAMESPACE, "get", "configmap",
                                                   "topoguard-policies", "-o", "json").stdout)
        directory = os.path.join(self.work, "chart-policies")
        os.makedirs(directory, exist_ok=True)
        files = []
        for name, text in sorted(policies["data"].items()):
            files.append(os.path.join(directory, name))
            with open(files[-1], "w") as out:
                out.write(text)
        if any(arg.startswith("--client-ca=") for arg in args):
            client_ca = json.loads(self.cluster.kubectl(
                "-n", NAMESPACE, "get", "configmap", "topoguard-client-ca", "-o",
                "json").stdout)["data"]["ca.crt"]
            extra.append("--client-ca=" + os.path.join(self.work, "client-ca.pem"))
            with open(extra[-1].split("=", 1)[1], "w") as out:
                out.write(client_ca)
        kubeconfig = service_account_kubeconfig(self.cluster,
                                                os.path.join(self.work, "sa.kubeconfig"))
        os.environ["POD_NAME"] = "topoguard-e2e"  # the downward API's pod name (Lease identity)
        self.serve = Serve(BINARY, os.path.join(self.work, "serve"), certs, kubeconfig=kubeconfig,
                           extra=extra)
        self.serve.use_policies(files)
        self.serve.start(listen="127.0.0.1:%d" % (port or self.port))
        print("     serve %s" % " ".join(extra))

    def patched(self):
        ok, stored, _ = self.cluster.create(unaligned_template("probe", LOAD_NAMESPACE),
                                            "--dry-run=server")
        return ok and bool(devices_of(stored).get("constraints"))

    # --- the checks -------------------------------------------------------------------------

    def dry_run(self, values_file):
        arguments = ["-f", os.path.join(VALUES, values_file)] if values_file else []
        rendered = self.helm.run("template", "topoguard", CHART, "-n", NAMESPACE,
                                 *arguments).stdout
        done = self.cluster.kubectl("apply", "--dry-run=server", "-f", "-", stdin=rendered,
                                    check=False)
        check(done.returncode == 0, "kubectl apply --dry-run=server: %s" % done.stderr)
        warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning")]
        check(not warnings, "API server warnings: %s" % warnings)
        count = len([line for line in done.stdout.splitlines() if "(server dry run)" in line])
        print("     %d objects accepted" % count)

    def install(self):
        done = self.helm.run("install", "topoguard", CHART, "-n", NAMESPACE, "--create-namespace",
                             "-f", os.path.join(VALUES, "existing-secret.yaml"),
                             "--set-file", "certificates.existingSecret.caBundle=" +
                             os.path.join(self.certs, "ca.pem"),
                             "--set", "webhooks.url=https://127.0.0.1:%d" % self.port)
        check("STATUS: deployed" in done.stdout, "helm install: %s" % done.stdout)
        # No pod yet: only claims and templates wait for topoguard; a pod does not.
        ok, error, _ = self.cluster.create(unaligned_template("early", LOAD_NAMESPACE))
        check(not ok and 'failed calling webhook "claims.validate.topoguard.dev"' in error,
              "a template before topoguard is up: %s" % error)
        ok, error, _ = self.cluster.create(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "early",
                                                             "namespace": LOAD_NAMESPACE},
             "spec": {"containers": [{"name": "main", "image": "example.com/app:1"}]}},
            "--dry-run=server")
        check(ok, "a pod before topoguard is up: %s" % error)
        webhooks = self.webhooks()
        check(len(webhooks) == 4, "%d webhooks registered" % len(webhooks))
        for webhook in webhooks:
            path = "/mutate" if ".mutate." in webhook["name"] else "/validate"
            check(webhook["clientConfig"] == {"url": "https://127.0.0.1:%d%s" % (self.port, path),
                                              "caBundle": self.ca_bundle},
                  "%s: clientConfig %s" % (webhook["name"], webhook["clientConfig"]))
        self.start_as_pod(self.certs)
        wait_until(self.patched, "the webhooks helm registered to call topoguard", 30)
        wait_until(self.serve.ready,
                   "topoguard's cluster cache to sync as the chart's ServiceAccount",
                   30, alive=lambda: self.serve.process.poll() is None)
        check("forbidden" not in read(self.serve.log_path).lower(),
              "a refusal in the log: %s" % read(self.serve.log_path)[-2000:])

    def upgrade(self):
        with Admissions(self.cluster) as admissions:
            self.helm.run("upgrade", "topoguard", CHART, "-n", NAMESPACE,
                          "--reset-then-reuse-values",
                          "--set", "webhooks.claims.validate.timeoutSeconds=10",
                          "--set", "replicas=2")
        admissions.check_none_failed("helm upgrade")
        webhooks = self.webhooks()
        check([w["timeoutSeconds"] for w in webhooks if w["name"].startswith("claims.validate")]
              == [10], "claims.validate timeout after the upgrade: %s" % webhooks)
        check(all(w["clientConfig"].get("caBundle") == self.ca_bundle for w in webhooks),
              "a caBundle changed across the upgrade")
        status = json.loads(self.helm.run("status", "topoguard", "-n", NAMESPACE, "-o",
                                          "json").stdout)
        check(status["version"] == 2 and status["info"]["status"] == "deployed",
              "release after the upgrade: version %s, %s" % (status["version"],
                                                             status["info"]["status"]))

    def failed_upgrade_rolled_back(self):
        """--rollback-on-failure: the new revision's image cannot be pulled (its pods never
        become ready), so helm puts revision 2 back, webhook configurations included."""
        with RolloutStandIn(self.cluster), Admissions(self.cluster) as admissions:
            done = self.helm.run("upgrade", "topoguard", CHART, "-n", NAMESPACE,
                                 "--reset-then-reuse-values",
                                 "--set", "image.tag=" + RolloutStandIn.UNPULLABLE,
                                 "--set", "webhooks.claims.validate.timeoutSeconds=7",
                                 "--rollback-on-failure", "--wait", "--timeout", "5s",
                                 check=False)
        admissions.check_none_failed("failed upgrade and rollback")
        output = done.stdout + done.stderr
        check(done.returncode != 0 and "rolled back" in output.lower() and
              "error occurred while rolling back" not in output,
              "the upgrade did not fail and roll back: %s" % output)
        timeouts = [w["timeoutSeconds"] for w in self.webhooks()
                    if w["name"].startswith("claims.validate")]
        check(timeouts == [10], "claims.validate timeout after the rollback: %s" % timeouts)
        history = json.loads(self.helm.run("history", "topoguard", "-n", NAMESPACE, "-o",
                                           "json").stdout)
        check(history[-1]["status"] == "deployed" and "Rollback to 2" in history[-1]["description"],
              "last revision: %s" % history[-1])
        image = json.loads(self.cluster.kubectl("-n", NAMESPACE, "get", "deployment", "topoguard",
                                                "-o", "json").stdout)["spec"]["template"]["spec"][
                                                    "containers"][0]["image"]
        check(not image.endswith(RolloutStandIn.UNPULLABLE), "the Deployment runs %s" % image)

    def uninstall(self):
        done = self.helm.run("uninstall", "topoguard", "-n", NAMESPACE, "--debug")
        log = done.stdout + done.stderr
        order = [kind for kind in re.findall(r'(ValidatingWebhookConfiguration|'
                                             r'MutatingWebhookConfiguration|Deployment|Service)\b',
                                             log)]
        print("     deleted in order: %s" % " ".join(dict.fromkeys(order)))
        check(order[:2] == ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"],
              "helm uninstall deleted, in order: %s" % order)
        check(self.configurations() == dict.fromkeys(CONFIGURATIONS),
              "configurations left after uninstall")
        self.serve.stop()
        ok, stored, _ = self.cluster.create(unaligned_template("after", LOAD_NAMESPACE))
        check(ok, "a template after uninstall, topoguard stopped: %s" % stored)
        self.cluster.kubectl("-n", LOAD_NAMESPACE, "delete", "resourceclaimtemplate", "after")

    def failure_policies(self):
        return {w["name"]: w["failurePolicy"] for w in self.webhooks()}

    def mutual_tls(self):
        """mutual-tls.yaml with the cluster CA as client CA: the API server, presenting its
        webhook client certificate (signed by that CA), is answered; a client without one is
        refused in the TLS handshake."""
        self.helm.run("install", "topoguard", CHART, "-n", NAMESPACE, "--set", "replicas=1",
                      "-f", os.path.join(VALUES, "existing-secret.yaml"),
                      "-f", os.path.join(VALUES, "mutual-tls.yaml"),
                      "--set-file", "certificates.existingSecret.caBundle=" +
                      os.path.join(self.certs, "ca.pem"),
                      "--set-file", "mutualTls.clientCa=" + self.plane.state["ca"],
                      "--set", "webhooks.url=https://127.0.0.1:%d" % self.port)
        self.start_as_pod(self.certs)
        check("--client-ca=" in " ".join(self.serve.extra), "serve runs without --client-ca")
        wait_until(self.patched, "the API server's calls, with its client certificate", 30,
                   alive=lambda: self.serve.process.poll() is None)
        context = ssl.create_default_context(cafile=os.path.join(self.certs, "ca.pem"))
        refusal = None
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    # TLS 1.3: the server checks the client's certificate after the client's
                    # handshake is done; its refusal arrives on the first read.
                    tls.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 0"
                                b"\r\n\r\n")
                    answer = tls.recv(100)
                    refusal = None if answer else "closed"
        except (ssl.SSLError, ConnectionError) as error:
            refusal = str(error)
        print("     without a client certificate: %s" % refusal)
        check(refusal, "a client without a certificate got an HTTP answer")
        self.helm.run("uninstall", "topoguard", "-n", NAMESPACE)
        self.serve.stop()

    def service_to_localhost(self, local):
        """Stands in for the cluster's network (no kube-proxy here): the chart's Service made an
        ExternalName to localhost, which the API server's service resolver follows to
        localhost:443 while it verifies the certificate for topoguard.topoguard.svc (as
        e2e_self_managed_tls does), or put back as helm made it."""
        spec = ({"type": "ExternalName", "externalName": "localhost", "clusterIP": None,
                 "clusterIPs": None, "ipFamilies": None, "ipFamilyPolicy": None,
                 "internalTrafficPolicy": None} if local else
                {"type": "ClusterIP", "externalName": None})
        self.cluster.kubectl("-n", NAMESPACE, "patch", "service", "topoguard", "--type=merge",
                             "-p", json.dumps({"spec": spec}))

    def self_managed_install_never_blocks(self):
        """selfManaged (the default), the configurations calling the Service: claim templates
        created from a thread from before `helm install` until topoguard serves are all
        admitted, though nothing answers at the Service yet (claims.validate registered with
        Ignore); once topoguard is ready it sets Fail, and then a template its policy denies is
        refused."""
        self.cluster.ensure_namespace(STRICT_NAMESPACE)
        strict_policy = os.path.join(self.work, "deny-in-prod-unpatched.yaml")
        with open(strict_policy, "w") as out:
            out.write(STRICT_POLICY)
        with Admissions(self.cluster, patch_required=False) as admissions:
            wait_until(lambda: len(admissions.results) >= 1, "a first admission", 30)
            self.helm.run("install", "topoguard", CHART, "-n", NAMESPACE, "--set", "replicas=1",
                          "--set-file", "policies.files.strict\\.yaml=" + strict_policy)
            policies = self.failure_policies()
            check(policies["claims.validate.topoguard.dev"] == "Ignore",
                  "claims.validate registered with %s" % policies)
            registered = len(admissions.results)
            self.service_to_localhost(True)
            # Admissions while the configurations call a Service nothing answers: with Fail
            # from the start, each of these would be refused.
            wait_until(lambda: len(admissions.results) >= registered + 3,
                       "admissions with the configurations registered, topoguard not running", 60)
            unserved = len(admissions.results) - registered
            self.start_as_pod(None, port=SERVICE_PORT)
            # Counted once topoguard has the API server's answer, after the change is stored.
            wait_until(lambda: self.serve.counter(
                "topoguard_tls_failure_policy_changes_total") == 1,
                "topoguard to set claims.validate to Fail once it serves", 30,
                alive=lambda: self.serve.process.poll() is None)
        print("     %d admissions before topoguard served, %d in all" % (
            unserved, len(admissions.results)))
        admissions.check_none_failed("helm install, topoguard starting")
        check(self.serve.ready(), "topoguard set Fail before it was ready")
        check(self.failure_policies() == {
            "claims.validate.topoguard.dev": "Fail", "workloads.validate.topoguard.dev": "Ignore",
            "claims.mutate.topoguard.dev": "Ignore", "workloads.mutate.topoguard.dev": "Ignore"},
            "failure policies once serving: %s" % self.failure_policies())
        ok, error, _ = self.cluster.create(unaligned_template("bad", STRICT_NAMESPACE),
                                           "--dry-run=server")
        # The mutating webhook, called first, already answers with the denial.
        check(not ok and re.search(r'admission webhook "claims\.(mutate|validate)\.topoguard\.dev" '
                                   r'denied the request: .*missing-pcie-alignment', error, re.S),
              "a template the policy denies, once topoguard serves: %s" % error)

    def self_managed_ca_kept(self):
        """`helm upgrade` renders the configured Fail, which topoguard already set: applied
        without a conflict, and topoguard's CA stays in the caBundles."""
        def bundles():
            return [w["clientConfig"].get("caBundle") for w in self.webhooks()]

        def secret_ca():
            done = self.cluster.kubectl("-n", NAMESPACE, "get", "secret", "topoguard-tls", "-o",
                                        "jsonpath={.data.ca\\.crt}", check=False)
            return done.stdout if done.returncode == 0 else None
        wait_until(lambda: secret_ca() and bundles() == [secret_ca()] * 4,
                   "topoguard's CA in the four caBundles helm left empty", 30,
                   alive=lambda: self.serve.process.poll() is None)
        written = bundles()
        self.service_to_localhost(False)
        repairs = self.serve.counter("topoguard_tls_cabundle_repairs_total")
        self.helm.run("upgrade", "topoguard", CHART, "-n", NAMESPACE,
                      "--reset-then-reuse-values",
                      "--set", "webhooks.claims.validate.timeoutSeconds=10")
        check([w["timeoutSeconds"] for w in self.webhooks()
               if w["name"].startswith("claims.validate")] == [10], "the upgrade was not applied")
        check(bundles() == written, "helm upgrade changed the caBundles topoguard wrote")
        check(self.serve.counter("topoguard_tls_cabundle_repairs_total") == repairs,
              "topoguard had to repair a caBundle after the upgrade")
        check(self.failure_policies()["claims.validate.topoguard.dev"] == "Fail",
              "claims.validate after the upgrade: %s" % self.failure_policies())
        check(self.serve.counter("topoguard_tls_failure_policy_changes_total") == 1,
              "topoguard had to set a failurePolicy again after the upgrade")
        # topoguard owns none of what it set, so the install revision (Ignore) applies again
        # without a conflict (as `--rollback-on-failure` of the first upgrade would apply it),
        # and topoguard sets Fail again.
        managers = {entry["manager"] for kind in CONFIGURATIONS for entry in json.loads(
            self.cluster.kubectl("get", kind, "topoguard", "--show-managed-fields", "-o",
                                 "json").stdout)["metadata"]["managedFields"]}
        check("topoguard-tls" not in managers, "topoguard owns fields: %s" % managers)
        done = self.helm.run("rollback", "topoguard", "1", "-n", NAMESPACE, check=False)
        check(done.returncode == 0, "helm rollback to the install revision: %s" % done.stderr)
        wait_until(lambda: self.serve.counter("topoguard_tls_failure_policy_changes_total") == 2,
                   "topoguard to set Fail again after the rollback", 30)
        check(self.failure_policies()["claims.validate.topoguard.dev"] == "Fail",
              "claims.validate after the rollback: %s" % self.failure_policies())
        check(bundles() == written, "the rollback changed the caBundles topoguard wrote")
        self.helm.run("uninstall", "topoguard", "-n", NAMESPACE)
        self.serve.stop()
        check(secret_ca(), "Secret topoguard-tls (topoguard's, not the release's) is gone")


def main():
    work = tempfile.mkdtemp(prefix="topoguard-e2e-helm-")
    started = time.monotonic()
    try:
        try:
            helm_path = helm_binary()
            # Its client certificate reaches topoguard only when --client-ca asks for one.
            plane = ControlPlane(webhook_client_certificate=True)
        except (ToolMissing, BinariesMissing) as missing:
            print("SKIP: helm or the control plane is not built: %s" % missing)
            return SKIP
        with plane:
            print("control plane up in %.1f s" % (time.monotonic() - started), flush=True)
            cluster = Cluster(plane, work)
            helm = Helm(helm_path, work, kubeconfig=plane.kubeconfig)
            cluster.ensure_namespace(NAMESPACE, {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/warn": "restricted"})
            cluster.ensure_namespace(LOAD_NAMESPACE)
            install_custom_kinds(cluster, OPERATOR_KINDS)
            suite = Suite(plane, cluster, helm, work)
            for name in [None] + values_files():
                suite.run("dry-run=server: %s" % (name or "default values"), suite.dry_run, name)
            suite.run("install: webhooks call topoguard as the chart's pod", suite.install)
            if not suite.failed():
                suite.run("upgrade: 0 failed admissions, caBundle kept", suite.upgrade)
                suite.run("upgrade --rollback-on-failure: revision 2 back",
                          suite.failed_upgrade_rolled_back)
                suite.run("uninstall: configurations first, claims admitted", suite.uninstall)
                suite.run("selfManaged install: no claim refused while topoguard starts, "
                          "Fail once it serves", suite.self_managed_install_never_blocks)
                suite.run("selfManaged: helm upgrade keeps topoguard's CA and Fail, rollback to "
                          "the install revision",
                          suite.self_managed_ca_kept)
                suite.run("mutual-tls.yaml: the API server's client certificate, no other",
                          suite.mutual_tls)
            if suite.serve:
                suite.serve.stop()
        return suite.summary(started)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
