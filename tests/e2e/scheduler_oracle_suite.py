#!/usr/bin/env python3
"""The real kube-scheduler as the oracle for the failure mode topoguard prevents. Fake Nodes (no
kubelet) carry the ResourceSlices the corpus captured on an AWS p4d and an Azure GB300 node and
those of a DGX/HGX H100-like node (8 GPUs and 8 VFs on 4 PCIe roots, 2 NUMA nodes); Pods name
claim templates; kube-controller-manager makes the claims and kube-scheduler (DynamicResources)
allocates them and binds the Pods. Each outcome is read from the claim's status.allocation and the
devices' attributes and set against topoguard's verdict on the same template:

- the corpus's aligned p4d template: a GPU and an EFA NIC on one pcieRoot;
- a NUMA-only template on the H100 node, whose root-0 VFs another Pod holds: the scheduler gives
  it a GPU and a VF on the same NUMA node but on different roots (the seed's failure mode), and
  topoguard denies that template at admission (numa-only-alignment);
- the same template with the constraint topoguard's /mutate adds: a GPU and a VF on one root;
- a pcieRoot-aligned template for the GB300 GPUs, whose captured NICs publish no pcieRoot:
  topoguard calls it unsatisfiable-alignment and the Pod stays Pending with the scheduler's
  "cannot allocate all claims"; the templates topoguard calls satisfiable are all scheduled.

Usage: scheduler_oracle_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is
not built."""

import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (Cluster, Results, check, documents,  # noqa: E402
                               expected_outcome, review, suite_main)
from control_plane import wait_until  # noqa: E402
from fake_nodes import (CAPTURES, DRANET_EXAMPLES, H100, NUMA_NODE, PCIE_ROOT,  # noqa: E402
                        SRIOV_DRIVER, captured_slices, default_classes, device_attributes,
                        dgx_h100_slices, publish)

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
NAMESPACE = "ml"
H100_NODE = "dgx-h100"
HELD_ROOT = "pci0000:15"  # the H100 node's first root, whose two VFs the holder Pod takes
SCHEDULE_LIMIT = 60  # seconds for the scheduler to bind a Pod or give up on it


def template(name, requests, constraints=()):
    devices = {"requests": requests}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"spec": {"devices": devices}}}


def request(name, device_class_name, *selectors, count=1):
    exactly = {"deviceClassName": device_class_name, "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": text}} for text in selectors]
    return {"name": name, "exactly": exactly}


def pod_for(template_name):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": template_name, "namespace": NAMESPACE},
            "spec": {"resourceClaims": [{"name": "devices",
                                         "resourceClaimTemplateName": template_name}],
                     "containers": [{"name": "main", "image": "example.com/train:1",
                                     "resources": {"claims": [{"name": "devices"}]}}]}}


def on_root(root):
    return 'device.attributes["resource.kubernetes.io"].pcieRoot == "%s"' % root


def product(name):
    return 'device.attributes["gpu.nvidia.com"].productName == "%s"' % name


class Suite(Results):
    def __init__(self, cluster, work):
        super().__init__()
        self.cluster, self.work = cluster, work
        self.slices = (captured_slices(CAPTURES["aws-p4d"]) +
                       captured_slices(CAPTURES["azure-gb300"]) + dgx_h100_slices(H100_NODE))
        self.attributes = device_attributes(self.slices)
        self.templates = {}

    # --- the cluster -------------------------------------------------------------------------

    def set_up(self):
        publish(self.cluster.plane, self.slices)
        self.cluster.ensure_namespace(NAMESPACE)
        self.create(*default_classes())
        aligned_p4d = [obj for obj in documents(os.path.join(
            DRANET_EXAMPLES, "aws_eks_examples", "gpu-efa", "resource-claim-template.yaml"))
            if obj["metadata"]["name"] == "gpu-efa-aligned"][0]
        aligned_p4d["metadata"]["namespace"] = NAMESPACE
        numa_only = template("h100-numa-only",
                             [request("gpu", "gpu.nvidia.com", product(H100)),
                              request("vf", SRIOV_DRIVER)],
                             [{"requests": ["gpu", "vf"], "matchAttribute": NUMA_NODE}])
        for obj in (aligned_p4d, numa_only,
                    template("h100-root0-vfs", [request("vfs", SRIOV_DRIVER, on_root(HELD_ROOT),
                                                        count=2)]),
                    template("gb300-aligned",
                             [request("gpu", "gpu.nvidia.com", product("NVIDIA GB300")),
                              request("nic", "dranet.net")],
                             [{"requests": ["gpu", "nic"], "matchAttribute": PCIE_ROOT}])):
            self.templates[obj["metadata"]["name"]] = obj

    def create(self, *objects):
        self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": list(objects)}))

    def get(self, kind, name):
        return json.loads(self.cluster.kubectl("-n", NAMESPACE, "get", kind, name,
                                               "-o", "json").stdout)

    def schedule(self, name):
        """Creates the template `name` (topoguard is not in front of this API server: what is
        judged is what the scheduler does with the template as written) and a Pod naming it."""
        self.create(self.templates[name], pod_for(name))

    def bound(self, name):
        """Waits for the Pod to be bound; its node and allocated devices as
        [(request, node, {attribute: value})], sorted by request."""
        wait_until(lambda: self.get("pod", name)["spec"].get("nodeName"),
                   "the scheduler to bind pod %s" % name, SCHEDULE_LIMIT)
        pod = self.get("pod", name)
        claim = self.get("resourceclaim", pod["status"]["resourceClaimStatuses"][0]
                         ["resourceClaimName"])
        results = claim["status"]["allocation"]["devices"]["results"]
        return pod["spec"]["nodeName"], sorted(
            (result["request"], result["device"],
             self.attributes[(result["driver"], result["pool"], result["device"])])
            for result in results)

    def topoguard_audit(self, names):
        """topoguard's findings on the templates `names` against the cluster's own state
        (`kubectl get resourceslices,deviceclasses,resourceclaims`): {template: {rule}}."""
        state = os.path.join(self.work, "state.json")
        with open(state, "w") as out:
            out.write(self.cluster.kubectl("get", "resourceslices,deviceclasses,resourceclaims",
                                           "-A", "-o", "json").stdout)
        manifests = os.path.join(self.work, "templates.json")
        with open(manifests, "w") as out:
            json.dump({"apiVersion": "v1", "kind": "List",
                       "items": [self.templates[name] for name in names]}, out)
        done = subprocess.run([BINARY, "audit", "-q", "-o", "json", "--fail-on", "never",
                               "--cluster-state", state, manifests],
                              capture_output=True, text=True)
        check(done.returncode == 0, "topoguard audit: %s" % done.stderr)
        rules = {name: set() for name in names}
        for finding in json.loads(done.stdout)["findings"]:
            # The state's own claims are audited too; only the templates asked about count.
            if finding["resource"]["kind"] == "ResourceClaimTemplate":
                rules[finding["resource"]["name"]].add(finding["rule"])
        return rules

    # --- the checks --------------------------------------------------------------------------

    def aligned_p4d(self):
        self.schedule("gpu-efa-aligned")
        node, devices = self.bound("gpu-efa-aligned")
        roots = {attributes[PCIE_ROOT] for _, _, attributes in devices}
        check(node == "ip-192-168-153-160.ec2.internal" and len(devices) == 2 and len(roots) == 1,
              "p4d aligned: node %s, devices %s" % (node, devices))
        print("     p4d: %s" % ", ".join("%s=%s (%s)" % (request_name, device, attributes[PCIE_ROOT])
                                         for request_name, device, attributes in devices))

    def numa_only_split_by_scheduler(self):
        self.schedule("h100-root0-vfs")
        node, held = self.bound("h100-root0-vfs")
        check(node == H100_NODE and {a[PCIE_ROOT] for _, _, a in held} == {HELD_ROOT},
              "holder: node %s, devices %s" % (node, held))
        self.schedule("h100-numa-only")
        node, devices = self.bound("h100-numa-only")
        (_, gpu, gpu_attributes), (_, vf, vf_attributes) = devices
        check(node == H100_NODE and gpu_attributes[NUMA_NODE] == vf_attributes[NUMA_NODE] and
              gpu_attributes[PCIE_ROOT] != vf_attributes[PCIE_ROOT],
              "NUMA-only: expected one NUMA node and two roots, got %s on %s" % (devices, node))
        print("     NUMA-only: %s on %s (NUMA %d), %s on %s (NUMA %d)" % (
            gpu, gpu_attributes[PCIE_ROOT], gpu_attributes[NUMA_NODE], vf,
            vf_attributes[PCIE_ROOT], vf_attributes[NUMA_NODE]))

    def numa_only_denied_and_fixed(self):
        numa_only = self.templates["h100-numa-only"]
        validated = review(BINARY, "validate", numa_only, "CREATE", [])
        check(not validated["allowed"] and
              "numa-only-alignment" in json.dumps(validated.get("status", {})),
              "topoguard /validate on the NUMA-only template: %s" % validated)
        allowed, _, _, patched = expected_outcome(BINARY, numa_only, [])
        constraints = patched["spec"]["spec"]["devices"]["constraints"]
        check(allowed and {"requests": ["gpu", "vf"], "matchAttribute": PCIE_ROOT} in constraints,
              "topoguard's fix: allowed %s, constraints %s" % (allowed, constraints))
        fixed = copy.deepcopy(patched)
        fixed["metadata"]["name"] = "h100-fixed"
        self.templates["h100-fixed"] = fixed

    def fixed_template_aligned(self):
        self.schedule("h100-fixed")
        node, devices = self.bound("h100-fixed")
        (_, gpu, gpu_attributes), (_, vf, vf_attributes) = devices
        check(node == H100_NODE and gpu_attributes[PCIE_ROOT] == vf_attributes[PCIE_ROOT] and
              gpu_attributes[PCIE_ROOT] != HELD_ROOT,
              "fixed template: expected one root other than the held one, got %s" % devices)
        print("     with topoguard's constraint: %s and %s on %s" % (gpu, vf,
                                                                       gpu_attributes[PCIE_ROOT]))

    def unsatisfiable_stays_pending(self):
        names = ["gpu-efa-aligned", "h100-fixed", "gb300-aligned"]
        rules = self.topoguard_audit(names)
        check("unsatisfiable-alignment" in rules["gb300-aligned"] and
              not any("unsatisfiable-alignment" in rules[name] for name in names[:2]),
              "topoguard's findings: %s" % rules)
        self.schedule("gb300-aligned")

        def unschedulable():
            conditions = self.get("pod", "gb300-aligned").get("status", {}).get("conditions", [])
            return [c for c in conditions if c["type"] == "PodScheduled" and
                    c["status"] == "False" and c.get("reason") == "Unschedulable"]
        wait_until(unschedulable, "the scheduler to give up on gb300-aligned", SCHEDULE_LIMIT)
        message = unschedulable()[0].get("message", "")
        pod = self.get("pod", "gb300-aligned")
        check("cannot allocate all claims" in message and not pod["spec"].get("nodeName"),
              "gb300-aligned: %s / node %s" % (message, pod["spec"].get("nodeName")))
        print("     gb300-aligned Pending: %s" % message)


def run_suite(plane, work, started):
    suite = Suite(Cluster(plane, work), work)
    suite.set_up()
    suite.run("p4d capture: the corpus's aligned template gets GPU and EFA on one root",
              suite.aligned_p4d)
    suite.run("H100: NUMA-only template gets GPU and VF on two roots of one NUMA node",
              suite.numa_only_split_by_scheduler)
    suite.run("H100: topoguard denies the NUMA-only template, /mutate adds pcieRoot",
              suite.numa_only_denied_and_fixed)
    suite.run("H100: the template as topoguard fixes it gets GPU and VF on one root",
              suite.fixed_template_aligned)
    suite.run("GB300: unsatisfiable-alignment for topoguard, Pending for the scheduler",
              suite.unsatisfiable_stays_pending)
    return suite.summary(started)


if __name__ == "__main__":
    sys.exit(suite_main("oracle", run_suite, scheduler=True, controller_manager=True))
