#!/usr/bin/env python3
"""Background reports against the real kube-apiserver: the OpenReports CRDs from
../shared/reference/schemas installed, `topoguard serve --report-interval 1s --kubeconfig`
writes one Report per claim template by server-side apply, and the API server's structural schema
accepts them; the fields are owned by topoguard's field manager; nothing is written while nothing
changes (the reports' resourceVersions stay and the writes counter stands still over several
passes); a deleted template's report goes (ownerReferences, garbage collector).

Usage: reports_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not
built."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import Cluster, Results, Serve, check, dev_certs, suite_main  # noqa: E402
from control_plane import wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
SCHEMAS = os.path.join(SOURCE, "..", "shared", "reference", "schemas")


def template(name, aligned):
    devices = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                            {"name": "nic", "exactly": {"deviceClassName": "dranet"}}]}
    if aligned:
        devices["constraints"] = [{"requests": ["gpu", "nic"],
                                   "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ml"}, "spec": {"spec": {"devices": devices}}}


class Suite(Results):
    def __init__(self, cluster, serve):
        super().__init__()
        self.cluster, self.serve = cluster, serve

    def reports(self):
        return json.loads(self.cluster.kubectl("get", "reports.openreports.io", "-n", "ml",
                                               "-o", "json", "--show-managed-fields").stdout)["items"]

    def uid(self, name):
        return json.loads(self.cluster.kubectl("-n", "ml", "get", "resourceclaimtemplate", name,
                                               "-o", "json").stdout)["metadata"]["uid"]

    def written_and_accepted(self):
        wait_until(lambda: len(self.reports()) == 2, "two Reports in ml", 30)
        by_name = {report["metadata"]["name"]: report for report in self.reports()}
        prefill, decode = by_name[self.uid("prefill")], by_name[self.uid("decode")]
        check(prefill["summary"]["fail"] == 1 and decode["summary"]["fail"] == 0,
              "summaries: %s / %s" % (prefill["summary"], decode["summary"]))
        check(prefill["metadata"]["ownerReferences"][0]["uid"] == self.uid("prefill"),
              "owner: %s" % prefill["metadata"].get("ownerReferences"))
        managers = {entry["manager"] for entry in prefill["metadata"]["managedFields"]}
        operations = {entry["operation"] for entry in prefill["metadata"]["managedFields"]}
        check(managers == {"topoguard"} and operations == {"Apply"},
              "managed fields: %s" % prefill["metadata"]["managedFields"])

    def idle_writes_nothing(self):
        versions = {r["metadata"]["name"]: r["metadata"]["resourceVersion"]
                    for r in self.reports()}
        writes = self.serve.counter("topoguard_reports_writes_total")
        passes = self.serve.counter("topoguard_reports_passes_total")
        wait_until(lambda: self.serve.counter("topoguard_reports_passes_total") >= passes + 3,
                   "three more passes", 30)
        check(self.serve.counter("topoguard_reports_writes_total") == writes,
              "writes while nothing changed")
        check({r["metadata"]["name"]: r["metadata"]["resourceVersion"]
               for r in self.reports()} == versions, "a report changed while nothing did")

    def deleted_template_report_gone(self):
        gone = self.uid("prefill")
        self.cluster.kubectl("-n", "ml", "delete", "resourceclaimtemplate", "prefill")
        wait_until(lambda: gone not in [r["metadata"]["name"] for r in self.reports()],
                   "the deleted template's report to go", 30)


def run(plane, work, started):
    cluster = Cluster(plane, work)
    crds = [os.path.join(SCHEMAS, name) for name in sorted(os.listdir(SCHEMAS))
            if name.endswith(".yaml")]
    for crd in crds:
        cluster.kubectl("create", "-f", crd)
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
    cluster.ensure_namespace("ml")
    for obj in ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                 "metadata": {"name": "gpu.nvidia.com"}, "spec": {"selectors": [
                     {"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]}},
                template("prefill", False), template("decode", True)):
        cluster.kubectl("create", "-f", "-", stdin=json.dumps(obj))
    serve = Serve(BINARY, work, dev_certs(work), kubeconfig=plane.kubeconfig,
                  extra=["--report-interval", "1s"])
    serve.use_policies([])
    serve.start()
    suite = Suite(cluster, serve)
    suite.run("%d CRDs installed; reports applied and accepted, owned by topoguard"
              % len(crds), suite.written_and_accepted)
    suite.run("no write while nothing changes (3 passes)", suite.idle_writes_nothing)
    suite.run("a deleted template's report goes", suite.deleted_template_report_gone)
    serve.stop()
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("reports", run, controller_manager=True))  # the garbage collector
