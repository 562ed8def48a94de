#!/usr/bin/env python3
"""See a policy's effect before the cluster exists: stands up the real control plane (kube-apiserver,
kube-scheduler, kube-controller-manager 1.37.2) with fake GPU nodes from a corpus capture, puts
`topoguard serve` behind the shipped webhook configurations (reading that cluster, so feasibility
checks see its devices), creates the manifest's objects one by one through admission, and prints
what admission did to each and, for each Pod, what the scheduler allocated (devices with their
pcieRoot and NUMA node) or why it stays Pending.

  tests/e2e/try_manifest.py --capture dgx-h100 examples/manifests/some.yaml
  tests/e2e/try_manifest.py --capture aws-p4d --capture azure-gb300 --policies my-policy.yaml \\
      manifest.yaml

Captures: aws-p4d and azure-gb300 (the corpus's ResourceSlices of real nodes), dgx-h100 (8 GPUs
and 8 VFs on 4 PCIe roots, 2 NUMA nodes). DeviceClasses gpu.nvidia.com, dranet.net (RDMA NICs),
efa.networking.k8s.aws and sriovnetwork.k8snetworkplumbingwg.io are created unless the manifest
has its own. Pods are scheduled (Nodes have no kubelet, so they stay Pending after binding);
workloads (Deployments, Jobs, ...) are judged by admission but make no Pods here (no workload
controllers run). Exit 0 when it ran, 1 on an error, 77 when the control plane is not built
(tools/control-plane/build.sh)."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (Cluster, Serve, devices_of, documents,  # noqa: E402
                               register_webhooks, unaligned_template)
from control_plane import SKIP, BinariesMissing, ControlPlane, wait_until  # noqa: E402
from fake_nodes import (CAPTURES, NUMA_NODE, PCIE_ROOT, captured_slices,  # noqa: E402
                        default_classes, device_attributes, dgx_h100_slices, publish)

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHOICES = sorted(CAPTURES) + ["dgx-h100"]
SCHEDULE_LIMIT = 60


def capture_slices(names):
    slices = []
    for name in names:
        slices += dgx_h100_slices("dgx-h100") if name == "dgx-h100" else captured_slices(
            CAPTURES[name])
    return slices


def describe_allocation(cluster, pod, attributes):
    """One line per allocated device of the Pod's claims."""
    lines = []
    namespace = pod["metadata"]["namespace"]
    for status in pod.get("status", {}).get("resourceClaimStatuses", []) or []:
        claim = json.loads(cluster.kubectl("-n", namespace, "get", "resourceclaim",
                                           status["resourceClaimName"], "-o", "json").stdout)
        for result in claim.get("status", {}).get("allocation", {}).get("devices", {}).get(
                "results", []):
            found = attributes.get((result["driver"], result["pool"], result["device"]), {})
            lines.append("    %s/%s: %s %s (pcieRoot %s, NUMA %s)" % (
                status["resourceClaimName"], result["request"], result["driver"],
                result["device"], found.get(PCIE_ROOT, "-"), found.get(NUMA_NODE, "-")))
    return lines


def pod_decided(cluster, namespace, name):
    pod = json.loads(cluster.kubectl("-n", namespace, "get", "pod", name, "-o", "json").stdout)
    if pod["spec"].get("nodeName"):
        return pod
    for condition in pod.get("status", {}).get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return pod
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("manifests", nargs="+", help="YAML or JSON files (List items expanded)")
    parser.add_argument("--capture", action="append", choices=CHOICES, required=True,
                        help="fake nodes to stand up (repeat for more)")
    parser.add_argument("--policies", action="append", default=[],
                        help="policy files for topoguard serve (default: the built-in policy)")
    parser.add_argument("--topoguard", default=os.path.join(SOURCE, "build", "topoguard"),
                        help="the topoguard binary (default: build/topoguard)")
    options = parser.parse_args()
    objects = [obj for path in options.manifests for obj in documents(path)]
    started = time.monotonic()
    try:
        plane = ControlPlane(scheduler=True, controller_manager=True)
    except BinariesMissing as missing:
        print("SKIP: control-plane binaries not built: %s" % missing)
        return SKIP
    work = tempfile.mkdtemp(prefix="topoguard-try-")
    try:
        with plane:
            cluster = Cluster(plane, work)
            slices = capture_slices(options.capture)
            nodes = publish(plane, slices)
            manifest_classes = {obj["metadata"]["name"] for obj in objects
                                if obj.get("kind") == "DeviceClass"}
            cluster.kubectl("create", "-f", "-", stdin=json.dumps({
                "apiVersion": "v1", "kind": "List",
                "items": [c for c in default_classes()
                          if c["metadata"]["name"] not in manifest_classes]}))
            certs = os.path.join(work, "certs")
            subprocess.run([os.path.join(SOURCE, "certs/generate-dev-certs.sh"), "--out", certs,
                            "--quiet"], check=True, stdout=subprocess.DEVNULL)
            serve = Serve(os.path.realpath(options.topoguard), work, certs,
                          kubeconfig=plane.kubeconfig)
            serve.use_policies(options.policies)
            serve.start()
            register_webhooks(cluster, serve, open(os.path.join(certs, "ca.pem")).read())
            cluster.ensure_namespace("topoguard-probe")

            def webhook_called():
                ok, stored, _ = cluster.create(unaligned_template("probe", "topoguard-probe"),
                                               "--dry-run=server")
                return ok and stored["spec"]["spec"]["devices"].get("constraints")
            wait_until(webhook_called, "the webhooks to be called", 30)
            print("control plane, %d fake nodes (%s) and topoguard serve up in %.1f s\n"
                  % (len(nodes), ", ".join(nodes), time.monotonic() - started))

            pods = []
            print("admission:")
            for obj in objects:
                namespace = obj.get("metadata", {}).get("namespace")
                if namespace and obj.get("kind") != "Namespace":
                    cluster.ensure_namespace(namespace)
                ok, stored, warnings = cluster.create(obj)
                what = "%s %s" % (obj.get("kind"), obj.get("metadata", {}).get("name"))
                if not ok:
                    print("  DENIED   %s: %s" % (what, stored.strip()))
                    continue
                # Only claims and templates are patched (workloads never); what the API server
                # defaults elsewhere is no patch.
                constraints = None
                if stored.get("kind") in ("ResourceClaim", "ResourceClaimTemplate"):
                    constraints = devices_of(stored).get("constraints")
                    if constraints == devices_of(obj).get("constraints"):
                        constraints = None
                print("  %s %s" % ("PATCHED " if constraints else "admitted", what))
                if constraints:
                    print("           constraints now: %s" % json.dumps(constraints))
                for warning in warnings:
                    print("           warning: %s" % warning)
                if stored.get("kind") == "Pod":
                    pods.append((stored["metadata"]["namespace"], stored["metadata"]["name"]))

            attributes = device_attributes(slices)
            print("\nscheduling:" if pods else "\nno Pod was admitted: nothing to schedule")
            for namespace, name in pods:
                wait_until(lambda: pod_decided(cluster, namespace, name),
                           "the scheduler to decide pod %s/%s" % (namespace, name), SCHEDULE_LIMIT)
                pod = pod_decided(cluster, namespace, name)
                if pod["spec"].get("nodeName"):
                    print("  Pod %s/%s bound to %s" % (namespace, name, pod["spec"]["nodeName"]))
                    for line in describe_allocation(cluster, pod, attributes):
                        print(line)
                else:
                    condition = [c for c in pod["status"]["conditions"]
                                 if c["type"] == "PodScheduled"][0]
                    print("  Pod %s/%s Pending (%s): %s" % (namespace, name,
                                                            condition.get("reason"),
                                                            condition.get("message")))
            serve.stop()
        return 0
    except RuntimeError as error:
        print("try_manifest.py: %s" % error, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
