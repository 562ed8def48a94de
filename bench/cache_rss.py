#!/usr/bin/python3
"""Resident memory of `topoguard serve --kubeconfig` against the fake API server
(tests/kube/fake_apiserver.py) holding a generated cluster: N nodes of 16 devices (8 GPUs with
NVIDIA's attribute set, each with its own uuid, and 8 RDMA VFs with dranet's, as in
bench/cache_bench.cpp), two ResourceSlices a node. Measured from /proc/PID/status, what the
kernel charges (not allocations):
  - sync peak: VmHWM once the server is ready (the initial list and the first snapshot);
  - steady: VmRSS a few seconds after that;
  - relist peak: VmHWM (reset through /proc/PID/clear_refs) while every watch expires (410) and
    every resource is listed again, as after an API-server outage, until the new snapshot;
  - steady after the relist.
Each against the objects' compact JSON (the items of the lists as the server sends them). The
bounds (issue 38): peaks <= 1.5x JSON + 32 MiB, steady <= 1.2x JSON + 32 MiB.

Usage: cache_rss.py --binary build/topoguard [--nodes 1000 5000 10000] [--check]
With --check the exit status is 1 when a bound is exceeded (the ctest cache_memory_bound runs
it at 1,000 nodes); 2 when the server cannot be measured (it did not start or sync).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))),
                                "tests", "kube"))
from fake_control import FakeApiServer, serving_metrics_listen  # noqa: E402 (found through the path above)

TOKEN = "bench-token"
MIB = 1 << 20
SHAPES = [("NVIDIA GB300", "Standard_ND128isr_GB300_v6", 4),
          ("NVIDIA H100 80GB HBM3", "Standard_ND96isr_H100_v5", 8),
          ("NVIDIA A100-SXM4-80GB", "Standard_ND96amsr_A100_v4", 4)]


class Unmeasurable(Exception):
    """The server could not be brought to the state to measure."""


def wait_for(predicate, what, limit):
    """predicate()'s first true value, polled until `limit` seconds have passed."""
    deadline = time.monotonic() + limit
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Unmeasurable("timed out after %d s waiting for %s" % (limit, what))
        time.sleep(0.1)


def gpu_slice(node, product, roots):
    name = "gpu-node-%d" % node
    devices = []
    for i in range(8):
        root = i * roots // 8
        devices.append({
            "name": "gpu-%d" % i,
            "attributes": {
                "addressingMode": {"string": "ATS"},
                "architecture": {"string": "Blackwell"},
                "brand": {"string": "Nvidia"},
                "cudaComputeCapability": {"version": "10.3.0"},
                "cudaDriverVersion": {"version": "13.0.0"},
                "driverVersion": {"version": "580.105.8"},
                "productName": {"string": product},
                "resource.kubernetes.io/pciBusID": {"string": "%04x:06:00.0" % root},
                "resource.kubernetes.io/pcieRoot": {"string": "pci%04x:00" % root},
                "type": {"string": "gpu"},
                "uuid": {"string": "GPU-%08x-7944-0f37-addf-%012x" % (node, i)}},
            "capacity": {"memory": {"value": "284208Mi"}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name + "-gpu.nvidia.com-27g7w"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def nic_slice(node, vm_size, roots):
    name = "gpu-node-%d" % node
    devices = []
    for i in range(8):
        root = i * roots // 8
        devices.append({
            "name": "pci-%04x-00-00-0" % (0x100 + i),
            "attributes": {
                "azure.dra.net/placementGroupId":
                    {"string": "c6c749e8-a38b-470e-8c94-%012x" % (node // 64)},
                "azure.dra.net/vmSize": {"string": vm_size},
                "dra.net/numaNode": {"int": root * 2 // roots},
                "dra.net/pciAddress": {"string": "%04x:00:00.0" % (0x100 + i)},
                "dra.net/pciDevice": {"string": "ConnectX Family mlx5Gen Virtual Function"},
                "dra.net/pciSubsystem": {"string": "0240"},
                "dra.net/pciVendor": {"string": "Mellanox Technologies"},
                "dra.net/rdma": {"bool": True},
                "dra.net/rdmaDevice": {"string": "mlx5_%d" % i},
                "resource.kubernetes.io/pcieRoot": {"string": "pci%04x:00" % root}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name + "-dra.net-x8k2p"},
            "spec": {"driver": "dra.net", "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def cluster(nodes):
    objects = []
    for driver in ("gpu.nvidia.com", "dra.net"):
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                        "metadata": {"name": driver},
                        "spec": {"selectors": [{"cel": {"expression":
                                                        'device.driver == "%s"' % driver}}]}})
    for node in range(nodes):
        product, vm_size, roots = SHAPES[node % len(SHAPES)]
        objects.append(gpu_slice(node, product, roots))
        objects.append(nic_slice(node, vm_size, roots))
    return objects


def list_json_bytes(fake, path):
    """The compact JSON of every item of the list at `path`, as the server sends them."""
    total, token = 0, ""
    while True:
        request = urllib.request.Request(
            fake.server + path + "?limit=500" + ("&continue=" + token if token else ""),
            headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(request, context=fake.context, timeout=120) as answer:
            page = json.loads(answer.read())
        total += sum(len(json.dumps(item, separators=(",", ":"))) for item in page["items"])
        token = page["metadata"].get("continue", "")
        if not token:
            return total


class Serve:
    def __init__(self, binary, work, tls, kubeconfig):
        self.log_path = os.path.join(work, "serve.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [binary, "serve", "--tls-cert", os.path.join(tls, "server.crt"),
                 "--tls-key", os.path.join(tls, "server.key"), "--listen", "127.0.0.1:0",
                 "--metrics-listen", "127.0.0.1:0", "--kubeconfig", kubeconfig,
                 "--failure-mode=closed", "--threads=4"],
                stdout=subprocess.DEVNULL, stderr=log)
        self.metrics_listen = wait_for(self.serving, "serve to start", 60)

    def serving(self):
        if self.process.poll() is not None:
            raise Unmeasurable("serve exited: " + open(self.log_path).read()[-2000:])
        return serving_metrics_listen(self.log_path)

    def get(self, path):
        try:
            with urllib.request.urlopen("http://%s%s" % (self.metrics_listen, path),
                                        timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, ""

    def metric(self, name):
        """{labels: value} of a metric family ("" for a metric without labels)."""
        _, text = self.get("/metrics")
        return {labels: float(value) for labels, value in
                re.findall(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(name), text, re.M)}

    def status_bytes(self, field):
        with open("/proc/%d/status" % self.process.pid) as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        raise Unmeasurable("no %s in /proc/%d/status" % (field, self.process.pid))

    def reset_peak(self):
        with open("/proc/%d/clear_refs" % self.process.pid, "w") as clear:
            clear.write("5")  # VmHWM := VmRSS

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def measure(binary, nodes, settle, work):
    state = os.path.join(work, "state.json")
    with open(state, "w") as out:
        json.dump(cluster(nodes), out)
    fake = FakeApiServer("--state", state, tokens=(TOKEN,))
    serve = None
    try:
        json_bytes = (list_json_bytes(fake, "/apis/resource.k8s.io/v1/resourceslices") +
                      list_json_bytes(fake, "/apis/resource.k8s.io/v1/deviceclasses"))
        kubeconfig = fake.kubeconfig(token=TOKEN)
        serve = Serve(binary, work, os.path.join(fake.directory.name, "tls"), kubeconfig)
        began = time.monotonic()
        wait_for(lambda: serve.get("/readyz")[0] == 200, "the first sync", 900)
        figures = {"nodes": nodes, "json": json_bytes, "sync_seconds": time.monotonic() - began,
                   "sync_peak": serve.status_bytes("VmHWM")}
        time.sleep(settle)  # steady: what stays after a while, not a wait for an event
        figures["steady"] = serve.status_bytes("VmRSS")

        listed = {resource: count for resource, count in
                  serve.metric("topoguard_cluster_cache_lists_total").items() if count > 0}
        snapshots = serve.metric("topoguard_cluster_cache_snapshots_total")[""]
        serve.reset_peak()
        fake.control("compact")
        fake.control("expire-watches")

        def relisted():
            now = serve.metric("topoguard_cluster_cache_lists_total")
            return all(now.get(resource, 0) > count for resource, count in listed.items())
        wait_for(relisted, "every resource to be listed again", 900)
        wait_for(lambda: serve.metric("topoguard_cluster_cache_snapshots_total")[""] > snapshots,
                 "a snapshot after the relist", 300)
        # The last list's snapshot is built within a publish interval and a build (~2 s at
        # 10,000 nodes) of its commit; the peak is the high-water mark once that is past.
        time.sleep(settle)
        figures["relist_peak"] = serve.status_bytes("VmHWM")
        figures["relist_steady"] = serve.status_bytes("VmRSS")
        return figures
    finally:
        if serve is not None:
            serve.stop()
        fake.close()


def bounds(json_bytes):
    return 1.5 * json_bytes + 32 * MIB, 1.2 * json_bytes + 32 * MIB


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds between a sync and the steady figure")
    parser.add_argument("--check", action="store_true", help="exit 1 when a bound is exceeded")
    args = parser.parse_args()

    print("%6s %8s %8s | %-16s %-16s | %-16s %-16s | %s" % (
        "nodes", "JSON MiB", "sync s", "sync peak", "steady", "relist peak", "relist steady",
        "bounds peak/steady MiB"))
    exceeded = []
    for nodes in args.nodes:
        with tempfile.TemporaryDirectory(prefix="topoguard-cache-rss-") as work:
            try:
                figures = measure(os.path.realpath(args.binary), nodes, args.settle, work)
            except Unmeasurable as error:
                print("%d nodes: cannot measure: %s" % (nodes, error), file=sys.stderr)
                return 2
        peak_bound, steady_bound = bounds(figures["json"])
        cells = []
        for key, bound in (("sync_peak", peak_bound), ("steady", steady_bound),
                           ("relist_peak", peak_bound), ("relist_steady", steady_bound)):
            value = figures[key]
            cells.append("%6.1f (%4.2fx)%s" % (value / MIB, value / figures["json"],
                                               "!" if value > bound else " "))
            if value > bound:
                exceeded.append("%d nodes: %s %.1f MiB > %.1f MiB" % (
                    nodes, key, value / MIB, bound / MIB))
        print("%6d %8.1f %8.1f | %s %s | %s %s | %.1f / %.1f" % (
            nodes, figures["json"] / MIB, figures["sync_seconds"], *cells,
            peak_bound / MIB, steady_bound / MIB), flush=True)
    for line in exceeded:
        print("over the bound: " + line)
    return 1 if exceeded and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
