#!/usr/bin/env python3
"""`topoguard ab` against the real kube-scheduler (issue 44): on a node shaped like the HGX H100
fixture (tests/sysfs/machines/hgx-h100.json), the node's ResourceSlices are written from its
`topoguard inventory` (GPUs by gpu.nvidia.com, RDMA NICs by dra.net, each with pcieRoot,
numaNode and pciBusID); `ab` from the inventory and from the slices writes the same templates;
the three ResourceClaimTemplates and Jobs are accepted by the API server; and a Pod made from
each Job's template is allocated by the scheduler exactly as its variant says: GPU and NIC on one
PCIe root, on two roots of one NUMA node, on two NUMA nodes. Another node with the same devices
stays unused (the Jobs are pinned). `topoguard evidence` then reads each Pod's allocation back and
gives the variant's verdict.

Usage: ab_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not built."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import Results, check, suite_main  # noqa: E402
from control_plane import wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
NODE, DECOY = "hgx-0", "hgx-1"
STANDARD = "resource.kubernetes.io/"


def device_class(name, driver):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "%s"' % driver}}]}}


def slice_of(node, driver, prefix, devices):
    """The node's pool of `driver`: one device per inventory entry, with the standard attributes."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "%s-%s" % (node, prefix)},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "%s-%d" % (prefix, index), "attributes": {
                         STANDARD + "pcieRoot": {"string": device["pcieRoot"]},
                         STANDARD + "numaNode": {"int": device["numaNode"]},
                         STANDARD + "pciBusID": {"string": device["pciBusID"]}}}
                         for index, device in enumerate(devices)]}}


def run(*arguments, expect=0):
    done = subprocess.run(arguments, capture_output=True, text=True, timeout=60)
    check(done.returncode == expect, "%s: exit %d: %s" % (arguments[:2], done.returncode, done.stderr))
    return done.stdout


class Suite(Results):
    def __init__(self, plane, work):
        super().__init__()
        self.plane, self.work = plane, work
        sysfs = os.path.join(work, "sysfs")
        run(sys.executable, os.path.join(SOURCE, "tests/sysfs/build_sysfs.py"),
            os.path.join(SOURCE, "tests/sysfs/machines/hgx-h100.json"), sysfs)
        self.inventory_path = os.path.join(work, "inventory.json")
        with open(self.inventory_path, "w") as out:
            out.write(run(BINARY, "inventory", "--sysfs", sysfs, "-o", "json"))
        with open(self.inventory_path) as source:
            self.inventory = json.load(source)
        nics = [nic for nic in self.inventory["nics"] if "physfn" not in nic]
        self.slices = [slice_of(node, driver, prefix, devices)
                       for node in (NODE, DECOY)
                       for driver, prefix, devices in (("gpu.nvidia.com", "gpu", self.inventory["gpus"]),
                                                       ("dra.net", "nic", nics))]
        self.slices_path = os.path.join(work, "slices.json")
        with open(self.slices_path, "w") as out:
            json.dump({"apiVersion": "v1", "kind": "List", "items": self.slices}, out)
        self.by_device = {}  # (pool, device) -> attributes
        for item in self.slices:
            for device in item["spec"]["devices"]:
                self.by_device[(item["spec"]["pool"]["name"], device["name"])] = device["attributes"]

    def ab(self, *source):
        return run(BINARY, "ab", "--node", NODE, *source, "--gpu-class", "gpu", "--nic-class", "rdma",
                   "--image", "registry.example/nccl-tests:2.13", "--command",
                   "all_reduce_perf -b 8 -e 4G | tee /results/$TOPOGUARD_AB_VARIANT.txt",
                   "-n", "bench")

    def same_from_inventory_and_slices(self):
        from_inventory = self.ab("--inventory", self.inventory_path)
        from_slices = self.ab("--cluster-state", self.slices_path)
        check(from_inventory == from_slices, "ab differs:\n%s\n---- from slices:\n%s"
              % (from_inventory, from_slices))
        self.manifests = from_inventory

    def accepted(self):
        self.plane.kubectl("create", "-f", "-", stdin=self.manifests)
        jobs = json.loads(self.plane.kubectl("-n", "bench", "get", "jobs", "-o", "json").stdout)
        check(sorted(job["metadata"]["name"] for job in jobs["items"]) ==
              ["ab-aligned", "ab-cross-numa", "ab-same-numa"], "jobs: %s" % jobs)
        self.jobs = jobs["items"]

    def allocated_as_intended(self):
        # No job controller runs here: one Pod per Job, from its template, as the Job would make.
        pods = [{"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": job["metadata"]["name"], "namespace": "bench",
                              "labels": job["spec"]["template"]["metadata"]["labels"]},
                 "spec": job["spec"]["template"]["spec"]} for job in self.jobs]
        self.plane.kubectl("create", "-f", "-",
                           stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))

        def pod(name):
            return json.loads(self.plane.kubectl("-n", "bench", "get", "pod", name, "-o", "json").stdout)
        for job in self.jobs:
            name = job["metadata"]["name"]
            wait_until(lambda: pod(name)["spec"].get("nodeName"), "the scheduler to bind " + name, 60)
        claims = json.loads(self.plane.kubectl("-n", "bench", "get", "resourceclaims", "-o",
                                               "json").stdout)["items"]
        check(len(claims) == 3, "claims: %d" % len(claims))
        for claim in claims:
            variant = claim["metadata"]["ownerReferences"][0]["name"].split("ab-", 1)[1]
            node = pod("ab-" + variant)["spec"]["nodeName"]
            check(node == NODE, "%s bound to %s, not %s" % (variant, node, NODE))
            chosen = {r["request"]: self.by_device[(r["pool"], r["device"])]
                      for r in claim["status"]["allocation"]["devices"]["results"]}
            gpu, nic = chosen["gpu"], chosen["nic"]
            roots = (gpu[STANDARD + "pcieRoot"]["string"], nic[STANDARD + "pcieRoot"]["string"])
            numa = (gpu[STANDARD + "numaNode"]["int"], nic[STANDARD + "numaNode"]["int"])
            relation = ("aligned" if roots[0] == roots[1] else
                        "same-numa" if numa[0] == numa[1] else "cross-numa")
            check(relation == variant, "%s allocated %s (roots %s, NUMA %s)"
                  % (variant, relation, roots, numa))
            print("     %-10s GPU %s NIC %s: roots %s, NUMA %s" % (
                variant, gpu[STANDARD + "pciBusID"]["string"], nic[STANDARD + "pciBusID"]["string"],
                roots, numa), flush=True)

    def evidence_gives_each_verdict(self):
        expected = {"aligned": "aligned", "same-numa": "same NUMA other root",
                    "cross-numa": "across NUMA"}
        for variant, verdict in expected.items():
            done = subprocess.run([BINARY, "evidence", "ab-" + variant, "-n", "bench",
                                   "--kubeconfig", self.plane.kubeconfig],
                                  capture_output=True, text=True, timeout=60)
            check(done.returncode == 0, "evidence %s: exit %d: %s" % (variant, done.returncode, done.stderr))
            document = json.loads(done.stdout)
            claim = document["claims"][0]
            check(document["pod"]["node"] == NODE and claim["verdict"] == verdict and
                  len(claim["devices"]) == 2 and
                  all(STANDARD + "pciBusID" in device["attributes"] for device in claim["devices"]),
                  "evidence %s: %s" % (variant, json.dumps(document)[:600]))
            check(done.stderr.startswith("bench/") and verdict in done.stderr, done.stderr)
        done = subprocess.run([BINARY, "evidence", "--claim", "bench/none", "--kubeconfig",
                               self.plane.kubeconfig], capture_output=True, text=True, timeout=60)
        check(done.returncode == 2 and ("404" in done.stderr or "not found" in done.stderr),
              "missing claim: exit %d: %s" % (done.returncode, done.stderr))

    def inventory_agrees_with_the_cluster(self):
        done = subprocess.run([BINARY, "inventory", "--sysfs", os.path.join(self.work, "sysfs"),
                               "--node", NODE, "--cluster", "--kubeconfig", self.plane.kubeconfig],
                              capture_output=True, text=True, timeout=60)
        check(done.returncode == 0 and
              "16 devices with a PCI address, 0 without, 0 mismatches" in done.stdout,
              "inventory --cluster: exit %d: %s %s" % (done.returncode, done.stdout[-300:], done.stderr))

    def one_root_node_says_so(self):
        sysfs = os.path.join(self.work, "gb200")
        run(sys.executable, os.path.join(SOURCE, "tests/sysfs/build_sysfs.py"),
            os.path.join(SOURCE, "tests/sysfs/machines/gb200.json"), sysfs)
        done = subprocess.run([BINARY, "ab", "--node", "gb", "--sysfs", sysfs, "--gpu-class", "gpu",
                               "--nic-class", "rdma", "--image", "i", "--command", "c"],
                              capture_output=True, text=True, timeout=60)
        check(done.returncode == 0 and "no aligned pair on this node" in done.stderr and
              "ab-aligned" not in done.stdout and "ab-same-numa" in done.stdout,
              "gb200: exit %d, stderr %s" % (done.returncode, done.stderr))


def run_suite(plane, work, started):
    suite = Suite(plane, work)
    plane.create_nodes([NODE, DECOY])
    plane.kubectl("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        device_class("gpu", "gpu.nvidia.com"), device_class("rdma", "dra.net"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}] + suite.slices}))
    suite.run("ab from the inventory = ab from the node's ResourceSlices",
              suite.same_from_inventory_and_slices)
    suite.run("3 ResourceClaimTemplates and 3 Jobs accepted by the API server", suite.accepted)
    suite.run("the scheduler allocates each variant as intended, on the pinned node",
              suite.allocated_as_intended)
    suite.run("evidence: each Pod's allocation with its verdict", suite.evidence_gives_each_verdict)
    suite.run("inventory --cluster: the node's slices agree with its sysfs",
              suite.inventory_agrees_with_the_cluster)
    suite.run("GB200-like node: no aligned pair, said so", suite.one_root_node_says_so)
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("ab", run_suite, scheduler=True, controller_manager=True))
