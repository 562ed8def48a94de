#!/usr/bin/env python3
"""The node inventory DaemonSet (deploy/inventory, issue 44) against the real kube-apiserver:

- the rendered overlay accepted by `kubectl apply --dry-run=server` in its namespace under the
  restricted Pod Security profile (enforce, warn, audit) with no warning, and a Pod made from its
  template accepted by enforcement; the host-sys component's Pod refused there (hostPath), so the
  check can fail;
- `topoguard inventory --cluster --report --interval 1s --metrics-listen` run as a process (no
  kubelet here) on the AWS p4d-like fixture sysfs, with the DaemonSet's ServiceAccount token and
  RBAC: one ClusterReport for the Node, named after its uid and owned by it, accepted by the
  OpenReports CRD's structural schema with nothing pruned, fields owned by topoguard (Apply); a
  driver publishing a wrong pcieRoot, numaNode and address shown as attribute-mismatch results;
  more passes write nothing (resourceVersion kept); the metrics scraped
  (topoguard_node_gpu_nic_pairs by relation); `topoguard evidence` of a Pod on the node adds the
  report's class of its GPU x NIC pair; the driver fixed, the report rewritten once;
- `topoguard topology` on the cluster's slices and inventory reports shows the node's sysfs beside
  the slices; SIGTERM ends the process.

Usage: inventory_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not
built."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (Cluster, Results, check, service_account_kubeconfig,  # noqa: E402
                               suite_main)
from control_plane import wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
SCHEMAS = os.path.join(SOURCE, "..", "shared", "reference", "schemas")
NAMESPACE = "topoguard-inventory"
NODE = "ip-192-168-153-160.ec2.internal"  # the node of tests/sysfs/slices/p4d-wrong-attributes.yaml
WRONG_SLICE = "p4d-gpu.example.com-abcde"


def render(cluster, work, with_host_sys=False):
    """The objects of deploy/inventory as `kubectl apply -k` renders them (with host-sys/)."""
    directory = os.path.join(SOURCE, "deploy", "inventory")
    if with_host_sys:
        # kustomize takes no absolute paths: a copy beside an overlay that adds the component.
        copy = os.path.join(work, "deploy")
        subprocess.run(["cp", "-r", os.path.join(SOURCE, "deploy", "inventory"), copy], check=True)
        directory = os.path.join(work, "with-host-sys")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "kustomization.yaml"), "w") as out:
            out.write("resources: [../deploy]\ncomponents: [../deploy/host-sys]\n")
    text = cluster.kubectl("kustomize", directory).stdout
    return [document for document in yaml.safe_load_all(text) if document]


def pod_from(daemonset):
    """The Pod the DaemonSet controller would make for NODE."""
    template = daemonset["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "inventory-probe", "namespace": NAMESPACE,
                         "labels": template["metadata"]["labels"]},
            "spec": dict(template["spec"], nodeName=NODE)}


class Suite(Results):
    def __init__(self, cluster, work):
        super().__init__()
        self.cluster, self.work = cluster, work
        self.objects = render(cluster, work)
        self.process = None
        self.port = None

    def by_kind(self, kind, objects=None):
        return [obj for obj in (objects or self.objects) if obj["kind"] == kind]

    def restricted_dry_run(self):
        namespace = self.by_kind("Namespace")[0]
        labels = namespace["metadata"]["labels"]
        check(labels["pod-security.kubernetes.io/enforce"] == "restricted", "enforce: %s" % labels)
        self.cluster.kubectl("apply", "-f", "-", stdin=json.dumps(namespace))
        rendered = {"apiVersion": "v1", "kind": "List", "items": self.objects}
        done = self.cluster.kubectl("apply", "--dry-run=server", "-f", "-",
                                    stdin=json.dumps(rendered), check=False)
        check(done.returncode == 0, "dry run refused: %s" % done.stderr)
        check("Warning" not in done.stderr, "warnings: %s" % done.stderr)
        daemonset = self.by_kind("DaemonSet")[0]
        container = daemonset["spec"]["template"]["spec"]["containers"][0]
        security = container["securityContext"]
        check(security["readOnlyRootFilesystem"] and security["capabilities"]["drop"] == ["ALL"]
              and not security["allowPrivilegeEscalation"] and security["runAsNonRoot"],
              "container securityContext: %s" % security)
        check({"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
              in container["env"], "node name from the downward API: %s" % container["env"])
        ok, detail, warnings = self.cluster.create(pod_from(daemonset), "--dry-run=server")
        check(ok and not warnings, "its Pod under enforce=restricted: %s %s" % (detail, warnings))
        host_sys = self.by_kind("DaemonSet", render(self.cluster, self.work, True))[0]
        ok, detail, _ = self.cluster.create(pod_from(host_sys), "--dry-run=server")
        check(not ok and "hostPath" in detail, "the host-sys Pod was not refused: %s" % detail)

    def start(self, sysfs):
        # The real objects the process needs: its ServiceAccount and RBAC (and the Namespace).
        needed = self.by_kind("ServiceAccount") + self.by_kind("ClusterRole") + \
            self.by_kind("ClusterRoleBinding")
        self.cluster.kubectl("apply", "-f", "-",
                             stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": needed}))
        token = service_account_kubeconfig(self.cluster, os.path.join(self.work, "sa.kubeconfig"),
                                           NAMESPACE, "topoguard-inventory")
        self.stderr = open(os.path.join(self.work, "inventory.stderr"), "w+")
        self.process = subprocess.Popen(
            [BINARY, "inventory", "--sysfs", sysfs, "--cluster", "--kubeconfig", token,
             "--node", NODE, "--report", "--interval", "1s", "--metrics-listen", "127.0.0.1:0"],
            stdout=subprocess.DEVNULL, stderr=self.stderr)

        def port():
            self.stderr.seek(0)
            found = re.search(r"metrics on 127\.0\.0\.1:(\d+)", self.stderr.read())
            self.port = int(found.group(1)) if found else None
            return self.port is not None
        wait_until(port, "the metrics port", 20, alive=lambda: self.process.poll() is None)

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read()[-2000:]

    def metrics(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port, timeout=5) as reply:
            return reply.read().decode()

    def metric(self, name, **labels):
        selector = ",".join('%s="%s"' % item for item in sorted(labels.items()))
        pattern = "^" + re.escape(name + ("{%s}" % selector if labels else "")) + r" (\S+)$"
        found = re.search(pattern, self.metrics(), re.M)
        return float(found.group(1)) if found else None

    def node_uid(self):
        return json.loads(self.cluster.kubectl("get", "node", NODE, "-o", "json").stdout)[
            "metadata"]["uid"]

    def report(self):
        done = self.cluster.kubectl("get", "clusterreports.openreports.io", self.node_uid(),
                                    "-o", "json", "--show-managed-fields", check=False)
        return json.loads(done.stdout) if done.returncode == 0 else None

    def report_written(self):
        wait_until(lambda: self.report() is not None, "the node's ClusterReport", 20,
                   alive=lambda: self.process.poll() is None)
        report = self.report()
        uid = self.node_uid()
        check(report["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": uid}],
            "owner: %s" % report["metadata"].get("ownerReferences"))
        check(report["scope"] == {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": uid},
              "scope: %s" % report["scope"])
        check(report["metadata"]["labels"].get("topoguard.dev/node-inventory") == "true",
              "labels: %s" % report["metadata"]["labels"])
        managed = report["metadata"]["managedFields"]
        check({(entry["manager"], entry["operation"]) for entry in managed} ==
              {("topoguard", "Apply")}, "managed fields: %s" % managed)
        # 8 GPUs and 4 EFA (12 pci-device results), 32 pairs, 3 findings: nothing pruned.
        rules = [result["rule"] for result in report["results"]]
        check(rules.count("pci-device") == 12 and rules.count("gpu-nic-path") == 32,
              "results by rule: %s" % {rule: rules.count(rule) for rule in set(rules)})
        check(report["summary"] == {"pass": 44, "fail": 0, "warn": 3, "error": 0, "skip": 0},
              "summary: %s" % report["summary"])
        device = next(result for result in report["results"] if result["rule"] == "pci-device")
        check(device["properties"] == {"kind": "gpu", "pciBusID": "0000:10:1c.0",
                                       "pcieRoot": "pci0000:10", "numaNode": "0",
                                       "attach": "pcie"}, "a device: %s" % device)

    def mismatches_reported(self):
        findings = [result for result in self.report()["results"]
                    if result["rule"] == "attribute-mismatch"]
        check(all(f["result"] == "warn" and f["resources"][0]["name"] == WRONG_SLICE
                  for f in findings), "findings: %s" % findings)
        published = sorted((f["properties"]["device"], f["properties"]["attribute"],
                            f["properties"]["published"], f["properties"]["sysfs"])
                           for f in findings)
        check([item[:2] for item in published] == [
            ("gpu-2", "resource.kubernetes.io/numaNode"),
            ("gpu-2", "resource.kubernetes.io/pcieRoot"),
            ("gpu-9", "resource.kubernetes.io/pciBusID")], "findings: %s" % published)
        check(self.metric("topoguard_node_attribute_mismatches") == 3, "mismatch gauge")

    def unchanged_writes_nothing(self):
        version = self.report()["metadata"]["resourceVersion"]
        passes = self.metric("topoguard_reports_passes_total")
        wait_until(lambda: self.metric("topoguard_reports_passes_total") >= passes + 3,
                   "three more passes", 20, alive=lambda: self.process.poll() is None)
        check(self.metric("topoguard_reports_writes_total") == 1,
              "writes: %s" % self.metric("topoguard_reports_writes_total"))
        check(self.metric("topoguard_reports_skipped_total") >= 3, "skipped")
        check(self.report()["metadata"]["resourceVersion"] == version,
              "the report changed while nothing did")

    def pair_metrics(self):
        counts = {relation: self.metric("topoguard_node_gpu_nic_pairs", relation=relation)
                  for relation in ("PIX", "PXB", "PHB", "NODE", "SYS", "unknown")}
        check(counts == {"PIX": 0, "PXB": 0, "PHB": 8, "NODE": 8, "SYS": 16, "unknown": 0},
              "pairs: %s" % counts)
        with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % self.port, timeout=5) as reply:
            check(reply.status == 200, "readyz")

    def evidence_with_inventory(self):
        # A claim allocated GPU gpu-0 (0000:10:1c.0) and the EFA on its root (0000:10:1b.0),
        # as the scheduler would write it, and a Pod on the node using it.
        requests = [{"name": name, "exactly": {"deviceClassName": name}} for name in ("gpu", "nic")]
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "pair", "namespace": "default"},
                 "spec": {"devices": {"requests": requests}}}
        self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(claim))
        results = [{"request": "gpu", "driver": "gpu.example.com", "pool": NODE, "device": "gpu-0"},
                   {"request": "nic", "driver": "dra.net", "pool": NODE,
                    "device": "pci-0000-10-1b-0"}]
        self.cluster.kubectl("patch", "resourceclaim", "pair", "-n", "default",
                             "--subresource=status", "--type=merge", "-p", json.dumps(
                                 {"status": {"allocation": {"devices": {"results": results}}}}))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bench", "namespace": "default"},
               "spec": {"nodeName": NODE, "resourceClaims": [{"name": "pair",
                                                               "resourceClaimName": "pair"}],
                        "containers": [{"name": "bench", "image": "registry.example/bench",
                                        "resources": {"claims": [{"name": "pair"}]}}]}}
        self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(pod))
        done = subprocess.run([BINARY, "evidence", "bench", "--kubeconfig",
                               self.cluster.plane.kubeconfig], capture_output=True, text=True,
                              timeout=30)
        check(done.returncode == 0, "evidence: %s" % done.stderr)
        document = json.loads(done.stdout)["claims"][0]
        inventory = document["nodeInventory"]
        check(inventory["source"] == "ClusterReport " + self.node_uid(), "source: %s" % inventory)
        check(inventory["paths"] == [{"gpu": "0000:10:1c.0", "nic": "0000:10:1b.0",
                                      "relation": "PHB"}], "paths: %s" % inventory["paths"])
        check("aligned" in done.stderr and "sysfs: PHB" in done.stderr, "verdict: %s" % done.stderr)

    def topology_beside(self):
        reports = os.path.join(self.work, "reports.yaml")
        slices = os.path.join(self.work, "slices.yaml")
        with open(reports, "w") as out:
            out.write(self.cluster.kubectl("get", "clusterreports.openreports.io", "-l",
                                           "topoguard.dev/node-inventory=true", "-o",
                                           "yaml").stdout)
        with open(slices, "w") as out:
            out.write(self.cluster.kubectl("get", "resourceslices", "-o", "yaml").stdout)
        done = subprocess.run([BINARY, "topology", "--cluster-state", slices, "--cluster-state",
                               reports], capture_output=True, text=True, timeout=30)
        check(done.returncode == 0, "topology: %s" % done.stderr)
        check("inventory of node %s (ClusterReport %s): 8 GPUs, 4 RDMA NICs" % (
            NODE, self.node_uid()) in done.stdout, "no inventory block: %s" % done.stdout)
        check("GPU x NIC pairs: PIX 0 PXB 0 PHB 8 NODE 8 SYS 16 ? 0" in done.stdout, "pairs line")
        check("warn attribute-mismatch" in done.stdout, "no finding: %s" % done.stdout)

    def fixed_driver_rewritten(self):
        self.cluster.kubectl("delete", "resourceslice", WRONG_SLICE)
        wait_until(lambda: self.report()["summary"]["warn"] == 0, "the report without findings",
                   20, alive=lambda: self.process.poll() is None)
        wait_until(lambda: self.metric("topoguard_reports_writes_total") == 2, "two writes", 10)
        check(self.metric("topoguard_node_attribute_mismatches") == 0, "mismatch gauge")

    def stops_on_sigterm(self):
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=15)
        check(code == 0, "exit %s after SIGTERM: %s" % (code, self.log()))


def run(plane, work, started):
    cluster = Cluster(plane, work)
    for name in ("openreports.io_clusterreports.yaml", "openreports.io_reports.yaml"):
        cluster.kubectl("create", "-f", os.path.join(SCHEMAS, name))
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
    plane.create_nodes([NODE])
    cluster.kubectl("create", "-f", os.path.join(SOURCE, "tests", "sysfs", "slices",
                                                 "p4d-wrong-attributes.yaml"))
    # DRANET publishing the node's first EFA as it is (no finding).
    cluster.kubectl("create", "-f", "-", stdin=json.dumps({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "p4d-dra.net"},
        "spec": {"driver": "dra.net", "nodeName": NODE,
                 "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "pci-0000-10-1b-0", "attributes": {
                     "dra.net/pciAddress": {"string": "0000:10:1b.0"},
                     "resource.kubernetes.io/pcieRoot": {"string": "pci0000:10"},
                     "dra.net/numaNode": {"int": 0}}}]}}))
    sysfs = os.path.join(work, "sysfs")
    subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "sysfs", "build_sysfs.py"),
                    os.path.join(SOURCE, "tests", "sysfs", "machines", "aws-p4d.json"), sysfs],
                   check=True)
    suite = Suite(cluster, work)
    suite.run("overlay accepted under restricted PSA (dry run); host-sys refused",
              suite.restricted_dry_run)
    suite.start(sysfs)
    try:
        suite.run("the node's ClusterReport applied, accepted, owned by the Node",
                  suite.report_written)
        suite.run("a driver's wrong attributes are attribute-mismatch results",
                  suite.mismatches_reported)
        suite.run("no write while nothing changes (3 passes)", suite.unchanged_writes_nothing)
        suite.run("metrics: topoguard_node_gpu_nic_pairs by relation", suite.pair_metrics)
        suite.run("evidence adds the node's report: the pair's class (PHB)",
                  suite.evidence_with_inventory)
        suite.run("topology shows the report's inventory beside the slices",
                  suite.topology_beside)
        suite.run("the driver fixed: the report rewritten once", suite.fixed_driver_rewritten)
        suite.run("SIGTERM ends the process", suite.stops_on_sigterm)
    finally:
        if suite.process.poll() is None:
            suite.process.kill()
            suite.process.wait()
        if suite.failed():
            print("inventory stderr:\n" + suite.log())
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("inventory", run))
