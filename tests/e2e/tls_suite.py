#!/usr/bin/env python3
"""Self-managed TLS against the real API server: `serve --self-managed-tls` as deploy/webhook's
ServiceAccount under the RBAC of deploy/webhook/base makes Secret topoguard-tls, puts its CA into
every caBundle of the registered configurations and repairs one emptied, and sets the claims
webhook, registered with Ignore, to the failurePolicy its annotation names (Fail); the API server
then calls it through the configurations' `service` reference and trusts the certificate it
made (the Service is an ExternalName to localhost, which the API server's service resolver
follows); and while clients create objects through the API server, the serving certificate is
renewed and the CA rotated with 0 failed admissions.

Usage: tls_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not built."""

import http.client
import json
import os
import socket
import ssl
import sys
import threading
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (AdminClient, Cluster, Results, Serve, check,  # noqa: E402
                               devices_of, service_account_kubeconfig, suite_main,
                               unaligned_template)
from control_plane import free_ports, wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
# The shortest lives serve accepts: the next CA at two thirds of 90 s, a certificate renewed at
# two thirds of 60 s, so one run of the load sees both.
CA_LIFETIME, CERT_LIFETIME = "90s", "1m"
LOAD_LIMIT = 120  # seconds the load may run waiting for a renewal and a CA rotation


def served_certificate(port):
    """The DER certificate serve presents on 127.0.0.1:port (not verified: only compared)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="topoguard.topoguard.svc") as tls:
            return tls.getpeercert(binary_form=True)


class Suite(Results):
    def __init__(self, plane, cluster, work):
        super().__init__()
        self.plane, self.cluster, self.work = plane, cluster, work
        self.port = free_ports(1)[0]
        self.serve = None

    def install(self):
        """deploy/webhook/base rendered: its RBAC and configurations applied, the
        configurations' service port set to serve's, the Service an ExternalName to localhost."""
        rendered = self.cluster.kubectl("kustomize", os.path.join(
            SOURCE, "deploy", "webhook", "base")).stdout
        documents = [d for d in yaml.safe_load_all(rendered) if d]
        kept = [d for d in documents if d["kind"] in (
            "Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
            "ClusterRoleBinding", "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration")]
        self.configurations = [d for d in kept if d["kind"].endswith("WebhookConfiguration")]
        check(len(self.configurations) == 2, "base renders %d configurations"
              % len(self.configurations))
        for configuration in self.configurations:
            for webhook in configuration["webhooks"]:
                service = webhook["clientConfig"]["service"]
                check((service["namespace"], service["name"]) == ("topoguard", "topoguard"),
                      "a webhook names another Service: %s" % service)
                service["port"] = self.port
                webhook["clientConfig"].pop("caBundle", None)
        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "topoguard", "namespace": "topoguard"},
                   "spec": {"type": "ExternalName", "externalName": "localhost"}}
        self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": kept + [service]}))

    def secret(self):
        done = self.cluster.kubectl("-n", "topoguard", "get", "secret", "topoguard-tls",
                                    "-o", "json", check=False)
        return json.loads(done.stdout)["data"] if done.returncode == 0 else None

    def bundles(self):
        return [webhook["clientConfig"].get("caBundle")
                for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")
                for webhook in json.loads(self.cluster.kubectl(
                    "get", kind, "topoguard", "-o", "json").stdout)["webhooks"]]

    def secret_and_bundles(self):
        """serve as the ServiceAccount: the Secret made, the CA in all four caBundles."""
        os.environ["POD_NAME"] = "e2e-replica"  # the Lease holder, as the downward API sets it
        self.serve = Serve(BINARY, self.work, None, kubeconfig=service_account_kubeconfig(
                               self.cluster, os.path.join(self.work, "serviceaccount.kubeconfig")),
                           extra=["--self-managed-tls", "--tls-secret", "topoguard/topoguard-tls",
                                  "--service", "topoguard/topoguard",
                                  "--webhook-configuration", "topoguard",
                                  "--ca-lifetime", CA_LIFETIME,
                                  "--cert-lifetime", CERT_LIFETIME])
        self.serve.use_policies([])
        self.serve.start(listen="127.0.0.1:%d" % self.port)
        wait_until(lambda: self.secret() and {"ca.crt", "tls.crt", "tls.key"} <= set(
            self.secret()), "Secret topoguard-tls", 30,
            alive=lambda: self.serve.process.poll() is None)
        wait_until(lambda: self.bundles() == [self.secret()["ca.crt"]] * 4,
                   "the CA in all four caBundles", 30)
        wait_until(lambda: self.serve.ready(), "serve to be ready with its own certificate", 30)
        # serve counts the change once it has the API server's answer, after it is stored.
        wait_until(lambda: self.serve.counter("topoguard_tls_failure_policy_changes_total") == 1,
                   "the claims webhook set to Fail once serve is ready", 30)
        check(self.failure_policies() == ["Fail", "Ignore", "Ignore", "Ignore"],
              "failure policies: %s" % self.failure_policies())

    def failure_policies(self):
        """claims.validate, workloads.validate, claims.mutate, workloads.mutate."""
        return [webhook["failurePolicy"]
                for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")
                for webhook in json.loads(self.cluster.kubectl(
                    "get", kind, "topoguard", "-o", "json").stdout)["webhooks"]]

    def drift_repaired(self):
        """A caBundle removed by a patch is put back and counted."""
        self.cluster.kubectl("patch", "validatingwebhookconfiguration", "topoguard",
                             "--type=json", "-p",
                             '[{"op":"remove","path":"/webhooks/0/clientConfig/caBundle"}]')
        wait_until(lambda: self.bundles() == [self.secret()["ca.crt"]] * 4,
                   "the emptied caBundle to be repaired", 30)
        check(self.serve.counter("topoguard_tls_cabundle_repairs_total") >= 1,
              "no repair counted")

    def called_through_service(self):
        """The API server resolves the configurations' Service, verifies serve's own
        certificate against the caBundle for topoguard.topoguard.svc, and applies its patch."""
        before = self.serve.requests()

        def patched():
            ok, stored, _ = self.cluster.create(unaligned_template("probe", "ml"),
                                                "--dry-run=server")
            return ok and devices_of(stored).get("constraints")
        wait_until(patched, "the API server to call serve through the Service", 30)
        check(self.serve.requests() > before, "serve counted no admission request")

    def second_replica(self):
        """A second replica (another POD_NAME): ready with the Secret's certificate, not the
        leader, no Secret write; SIGTERM makes the first give the Lease up and the second leads;
        the API server keeps calling through the Service (the second serves the port now)."""
        lease = ["-n", "topoguard", "get", "lease", "topoguard-tls", "-o",
                 "jsonpath={.spec.holderIdentity}"]
        holder = self.cluster.kubectl(*lease).stdout
        check(holder, "no Lease holder")
        os.environ["POD_NAME"] = "e2e-replica-2"
        second = Serve(BINARY, self.work, None, kubeconfig=self.serve.kubeconfig,
                       extra=self.serve.extra)
        second.use_policies([])
        second.start(listen="127.0.0.1:0")
        try:
            wait_until(lambda: second.ready(), "the second replica to be ready", 30,
                       alive=lambda: second.process.poll() is None)
            port = int(second.listen.rsplit(":", 1)[1])
            # Equal once both have read the Secret (a renewal may fall between the two reads).
            wait_until(lambda: served_certificate(port) == served_certificate(self.port),
                       "both replicas to serve the Secret's certificate", 15)
            check(second.counter("topoguard_tls_leader") == 0, "two leaders")
            check(second.counter("topoguard_tls_secret_writes_total") == 0,
                  "the second replica wrote the Secret")
            self.serve.stop()
            check(self.serve.process.returncode == 0, "exit %s" % self.serve.process.returncode)
            check(self.cluster.kubectl(*lease).stdout != holder, "the Lease is still %s" % holder)
            wait_until(lambda: second.counter("topoguard_tls_leader") == 1,
                       "the second replica to lead", 30)
        finally:
            second.stop()

    def rotation_under_load(self):
        """Two clients create templates (server-side dry run, both webhooks) while the serving
        certificate is renewed and the CA rotated: every request admitted and patched."""
        client = AdminClient(self.plane, self.work)
        counts = {"admitted": 0, "failed": []}
        lock = threading.Lock()
        stop = threading.Event()
        renewals = self.serve.counter("topoguard_tls_certificate_renewals_total")
        rotations = self.serve.counter("topoguard_tls_ca_rotations_total")
        certificates = {served_certificate(self.port)}

        def load(worker):
            connection = client.connection()
            sequence = 0
            while not stop.is_set():
                sequence += 1
                template = unaligned_template("load-%d-%d" % (worker, sequence), "ml")
                try:
                    status, body, _ = client.dry_run_create(connection, template)
                    outcome = None if status == 201 and devices_of(json.loads(body)).get(
                        "constraints") else "%d %s" % (status, body[:300])
                except (OSError, http.client.HTTPException) as error:
                    connection.close()
                    connection = client.connection()
                    outcome = "connection: %s" % error
                with lock:
                    if outcome:
                        counts["failed"].append(outcome)
                    else:
                        counts["admitted"] += 1
            connection.close()

        workers = [threading.Thread(target=load, args=(index,)) for index in range(2)]
        started = time.monotonic()
        for worker in workers:
            worker.start()
        try:
            def rotated():
                certificates.add(served_certificate(self.port))
                return (self.serve.counter("topoguard_tls_certificate_renewals_total") > renewals
                        and self.serve.counter("topoguard_tls_ca_rotations_total") > rotations)
            wait_until(rotated, "a certificate renewal and a CA rotation", LOAD_LIMIT,
                       alive=lambda: self.serve.process.poll() is None)
            time.sleep(2)  # requests in flight across the last switch finish under load
        finally:
            stop.set()
            for worker in workers:
                worker.join(timeout=60)
        print("     %d admitted, %d failed in %.0f s; renewals %d -> %d, CA rotations %d -> %d, "
              "%d distinct certificates served" % (
                  counts["admitted"], len(counts["failed"]), time.monotonic() - started,
                  renewals, self.serve.counter("topoguard_tls_certificate_renewals_total"),
                  rotations, self.serve.counter("topoguard_tls_ca_rotations_total"),
                  len(certificates)))
        check(not counts["failed"], "failed admissions:\n" + "\n".join(counts["failed"][:10]))
        check(counts["admitted"] > 0, "no request made")
        check(len(certificates) >= 2, "serve presented one certificate all along")


def run(plane, work, started):
    cluster = Cluster(plane, work)
    cluster.ensure_namespace("ml")
    suite = Suite(plane, cluster, work)
    suite.install()
    try:
        suite.run("Secret made, CA in every caBundle, ready, claims webhook set to Fail",
                  suite.secret_and_bundles)
        if suite.serve and suite.serve.ready():
            suite.run("an emptied caBundle repaired", suite.drift_repaired)
            suite.run("called through the Service, own certificate trusted",
                      suite.called_through_service)
            suite.run("renewal and CA rotation under load: 0 failed admissions",
                      suite.rotation_under_load)
            suite.run("a second replica: same certificate, no write; Lease handed over",
                      suite.second_replica)
    finally:
        if suite.serve:
            suite.serve.stop()
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("tls", run))
