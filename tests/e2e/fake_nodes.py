"""Fake GPU nodes for the real scheduler: ResourceSlices as the corpus captured them (AWS p4d,
Azure GB300) or shaped like a DGX/HGX H100, published for Nodes without a kubelet.

Each helper returns plain objects (dicts) ready for `kubectl create`; `publish()` creates the
Nodes the slices name and then the slices."""

import copy
import json
import os

from admission_support import documents

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(SOURCE_DIR, "..", "shared", "corpus")
DRANET_EXAMPLES = os.path.join(CORPUS, "dranet", "examples")
# Captures `kubectl get resourceslices -o yaml` of real nodes, by the name the tools use.
CAPTURES = {
    "aws-p4d": [os.path.join(DRANET_EXAMPLES, "aws_eks_examples", "gpu-efa", name)
                for name in ("resourceslice-gpu.yaml", "resourceslice-dranet.yaml")],
    "azure-gb300": [os.path.join(DRANET_EXAMPLES, "azure_aks_examples", "gb300", name)
                    for name in ("resourceslice-gpu.yaml", "resourceslice-dranet.yaml")],
}
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
NUMA_NODE = "resource.kubernetes.io/numaNode"
SRIOV_DRIVER = "sriovnetwork.k8snetworkplumbingwg.io"
H100 = "NVIDIA H100 80GB HBM3"


def captured_slices(paths):
    """The ResourceSlices of captured files, as a client would create them again: name and spec
    kept; uid, ownerReferences (to a Node uid of another cluster), generateName and status
    dropped."""
    slices = []
    for path in paths:
        for obj in documents(path):
            if obj.get("kind") != "ResourceSlice":
                continue
            spec = copy.deepcopy(obj["spec"])
            spec["pool"].setdefault("generation", 1)
            slices.append({"apiVersion": obj["apiVersion"], "kind": "ResourceSlice",
                           "metadata": {"name": obj["metadata"]["name"]}, "spec": spec})
    return slices


def dgx_h100_slices(node):
    """A DGX/HGX H100-like node: 8 GPUs and 8 SR-IOV VFs on 4 PCIe roots (2 GPUs and 2 VFs on
    each), roots 0-1 on NUMA node 0 and roots 2-3 on NUMA node 1, devices listed in PCI order
    as drivers publish them."""
    roots = ["pci0000:15", "pci0000:36", "pci0000:97", "pci0000:b7"]

    def where(index):
        root = index // 2
        return {PCIE_ROOT: {"string": roots[root]}, NUMA_NODE: {"int": root // 2}}
    gpus = [{"name": "gpu-%d" % index,
             "attributes": dict(where(index), productName={"string": H100},
                                type={"string": "gpu"}, index={"int": index}),
             "capacity": {"memory": {"value": "80Gi"}}} for index in range(8)]
    vfs = [{"name": "vf-%d" % index,
            "attributes": dict(where(index), pfName={"string": "ens%df0" % (index // 2)},
                               vfID={"int": index % 2})} for index in range(8)]

    def pool(driver, devices):
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": "%s-%s" % (node, driver.split(".")[0])},
                "spec": {"driver": driver, "nodeName": node, "devices": devices,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}
    return [pool("gpu.nvidia.com", gpus), pool(SRIOV_DRIVER, vfs)]


def device_class(name, expression):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def default_classes():
    """DeviceClasses for the captures' devices: the corpus's EFA class (AWS), gpu.nvidia.com,
    dranet.net (RDMA NICs of DRANET) and the SR-IOV VFs'."""
    efa = list(documents(os.path.join(DRANET_EXAMPLES, "aws_eks_examples", "gpu-efa",
                                      "device-class.yaml")))
    return efa + [device_class("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"'),
                  device_class("dranet.net", 'device.driver == "dra.net" && '
                                             'device.attributes["dra.net"].rdma == true'),
                  device_class(SRIOV_DRIVER, 'device.driver == "%s"' % SRIOV_DRIVER)]


def publish(plane, slices):
    """Creates a Node (no kubelet) for every nodeName the slices name, then the slices."""
    nodes = sorted({piece["spec"]["nodeName"] for piece in slices})
    plane.create_nodes(nodes)
    plane.kubectl("create", "-f", "-",
                  stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": slices}))
    return nodes


def device_attributes(slices):
    """(driver, pool, device) -> the device's attributes, with unqualified names qualified by
    the driver as the allocator reads them."""
    found = {}
    for piece in slices:
        driver = piece["spec"]["driver"]
        for device in piece["spec"]["devices"]:
            found[(driver, piece["spec"]["pool"]["name"], device["name"])] = {
                (name if "/" in name else driver + "/" + name): next(iter(value.values()))
                for name, value in device.get("attributes", {}).items()}
    return found
