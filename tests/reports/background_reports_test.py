#!/usr/bin/env python3
"""Background reports end to end: `topoguard serve --report-interval 1s --kubeconfig ...` against
tests/kube/fake_apiserver.py. The reports it writes are validated with ajv against the
OpenReports and wg-policy CRD schemas in ../shared/reference/schemas (validate_reports.mjs); they
follow the cluster (fail, then pass once the template is fixed, gone once it is deleted); an
unchanged cluster costs no write over several intervals; /metrics counts writes and skips.
Usage: background_reports_test.py BINARY SOURCE_DIR"""

import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "kube"))
from fake_control import serving_metrics_listen  # noqa: E402 (found through the path above)

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
SCHEMAS = os.path.join(SOURCE, "..", "shared", "reference", "schemas")
TOKEN = "test-token"
STARTED = []  # every process this test starts, killed at the end whatever happens


def eventually(predicate, what, limit=20.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


class Fake:
    def __init__(self, work):
        self.process = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(SOURCE, "tests/kube/fake_apiserver.py"),
             "--tls-dir", os.path.join(work, "tls"), "--token", TOKEN],
            stdout=subprocess.PIPE, text=True)
        STARTED.append(self.process)
        self.info = json.loads(self.process.stdout.readline())
        self.context = ssl.create_default_context(cafile=self.info["ca"])

    def call(self, method, path, body=None, token=True):
        request = urllib.request.Request(
            self.info["server"] + path, method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"})
        if token:
            request.add_header("Authorization", "Bearer " + TOKEN)
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def event(self, kind, obj):
        status, answer = self.call("POST", "/_fake/objects", {"type": kind, "object": obj}, False)
        assert status == 200, answer
        return answer

    def items(self, path):
        """The objects of a list, with the kind and apiVersion the list's items leave out."""
        status, answer = self.call("GET", path)
        assert status == 200, answer
        for item in answer["items"]:
            item.setdefault("apiVersion", answer["apiVersion"])
            item.setdefault("kind", answer["kind"].removesuffix("List"))
        return answer["items"]

    def report_writes(self):
        _, requests = self.call("GET", "/_fake/requests", token=False)
        return sum(1 for r in requests if r["method"] != "GET" and
                   ("/openreports.io/" in r["path"] or "/wgpolicyk8s.io/" in r["path"]))

    def stop(self):
        self.process.terminate()
        self.process.wait()


def device_class(name, expression):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def claim_template(name, aligned):
    devices = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                            {"name": "nic", "exactly": {"deviceClassName": "dra.net"}}]}
    if aligned:
        devices["constraints"] = [{"requests": ["gpu", "nic"],
                                   "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ml"}, "spec": {"spec": {"devices": devices}}}


class Serve:
    def __init__(self, work, kubeconfig, *extra):
        self.log_path = os.path.join(work, "serve-%d.log" % time.monotonic_ns())
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [BINARY, "serve", "--tls-cert", os.path.join(work, "certs", "server.pem"),
             "--tls-key", os.path.join(work, "certs", "server.key"), "--listen", "127.0.0.1:0",
             "--metrics-listen", "127.0.0.1:0", "--kubeconfig", kubeconfig, *extra],
            stdout=subprocess.DEVNULL, stderr=self.log)
        STARTED.append(self.process)

        def serving():
            listen = serving_metrics_listen(self.log_path)
            assert listen is not None or self.process.poll() is None, open(self.log_path).read()
            return listen
        self.metrics_listen = eventually(serving, "serve to start")

    def metrics(self):
        url = "http://%s/metrics" % self.metrics_listen
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.read().decode()

    def metric(self, name):
        match = re.search(r"^%s (\S+)$" % re.escape(name), self.metrics(), re.M)
        return float(match.group(1)) if match else None

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=60) == 0, open(self.log_path).read()


def validate(work, name, fmt, reports):
    """ajv (validate_reports.mjs) on the reports as a v1 List."""
    path = os.path.join(work, "out", "%s.%s.json" % (name, fmt))
    with open(path, "w") as out:
        json.dump({"apiVersion": "v1", "kind": "List", "items": reports}, out)
    done = subprocess.run(["node", os.path.join(SOURCE, "tests/reports/validate_reports.mjs"),
                           os.path.join(work, "schemas"), path],
                          cwd=SOURCE, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def main():
    work = tempfile.mkdtemp(prefix="topoguard-bg-reports-")
    try:
        os.makedirs(os.path.join(work, "schemas"))
        os.makedirs(os.path.join(work, "out"))
        shutil.copy(os.path.join(SCHEMAS, "sarif-schema-2.1.0.json"), os.path.join(work, "schemas"))
        for crd in os.listdir(SCHEMAS):
            if crd.endswith(".yaml"):
                with open(os.path.join(SCHEMAS, crd)) as source, \
                        open(os.path.join(work, "schemas", crd + ".json"), "w") as out:
                    json.dump(yaml.safe_load(source), out)
        subprocess.run([os.path.join(SOURCE, "certs/generate-dev-certs.sh"), "--out",
                        os.path.join(work, "certs"), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        fake = Fake(work)
        kubeconfig = os.path.join(work, "kubeconfig")
        with open(kubeconfig, "w") as out:
            yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "fake",
                            "clusters": [{"name": "fake", "cluster": {
                                "server": fake.info["server"],
                                "certificate-authority": fake.info["ca"]}}],
                            "contexts": [{"name": "fake",
                                          "context": {"cluster": "fake", "user": "u"}}],
                            "users": [{"name": "u", "user": {"token": TOKEN}}]}, out)
        fake.event("ADDED", device_class("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"'))
        fake.event("ADDED", device_class("dra.net", 'device.driver == "dra.net"'))
        fake.event("ADDED", device_class("broken", "device.driver =="))
        added = fake.event("ADDED", claim_template("prefill", False))
        prefill = added["objects"][0]["metadata"]["uid"]
        fake.event("ADDED", claim_template("decode", True))

        reports_path = "/apis/openreports.io/v1alpha1/reports"
        serve = Serve(work, kubeconfig, "--report-interval", "1s")
        eventually(lambda: len(fake.items(reports_path)) == 2, "two Reports")
        eventually(lambda: len(fake.items("/apis/openreports.io/v1alpha1/clusterreports")) == 1,
                   "a ClusterReport")
        report = {r["metadata"]["name"]: r for r in fake.items(reports_path)}[prefill]
        assert report["summary"]["fail"] == 1, report
        assert report["scope"]["uid"] == prefill, report
        validate(work, "openreports", "openreports", fake.items(reports_path) +
                 fake.items("/apis/openreports.io/v1alpha1/clusterreports"))

        # Several intervals with nothing changed: no write.
        eventually(lambda: (serve.metric("topoguard_reports_passes_total") or 0) >= 1, "a pass")
        writes = fake.report_writes()
        passes = serve.metric("topoguard_reports_passes_total")
        eventually(lambda: serve.metric("topoguard_reports_passes_total") >= passes + 3,
                   "three more passes")
        assert fake.report_writes() == writes, "writes while nothing changed"
        assert serve.metric("topoguard_reports_skipped_total") >= 9
        assert serve.metric("topoguard_reports_writes_total") == 3

        # Fixed: pass. Deleted: gone.
        fake.event("MODIFIED", claim_template("prefill", True))
        eventually(lambda: {r["metadata"]["name"]: r for r in fake.items(reports_path)}[prefill]
                   ["summary"]["fail"] == 0, "the fixed template's report to pass")
        fake.event("DELETED", claim_template("prefill", True))
        eventually(lambda: prefill not in [r["metadata"]["name"] for r in fake.items(reports_path)],
                   "the deleted template's report to go")
        serve.stop()

        # The wg-policy format, from a fresh start.
        serve = Serve(work, kubeconfig, "--report-interval", "1s", "--report-format",
                      "policyreport")
        policy_path = "/apis/wgpolicyk8s.io/v1alpha2/policyreports"
        eventually(lambda: len(fake.items(policy_path)) == 1, "a PolicyReport")
        eventually(lambda: len(fake.items(
            "/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports")) == 1, "a ClusterPolicyReport")
        validate(work, "policyreport", "policyreport", fake.items(policy_path) + fake.items(
            "/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports"))
        serve.stop()

        # A broken report is refused by the validator (so it cannot pass while checking nothing).
        broken = fake.items(reports_path)
        broken[0]["results"][0]["result"] = "passed"
        try:
            validate(work, "broken", "openreports", broken)
        except AssertionError:
            pass
        else:
            raise AssertionError("the validator accepted a broken report")
        print("background reports: ok")
    finally:
        for process in STARTED:
            if process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
