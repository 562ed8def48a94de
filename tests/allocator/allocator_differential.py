#!/usr/bin/env python3
"""Differential test of topoguard's feasibility check against the scheduler's structured
allocator (k8s.io/dynamic-resource-allocation v0.37.2, tools/dra-oracle/allocator-oracle).

Generates small clusters (1-3 nodes; GPUs and NICs on 1-3 PCIe roots and 2 NUMA nodes, some
without a root; device taints and DeviceTaintRules; NICs with consumable bandwidth shared between
claims; GPUs consuming shared counters; devices other claims hold, dedicated, shared or with
admin access) and one claim each (count, allocationMode All, firstAvailable, selectors,
tolerations, adminAccess, capacity requests, matchAttribute on pcieRoot or numaNode,
distinctAttribute), and sets topoguard's verdict
(feasibility_driver: fits / cannot be met now / never / allocation error / unknown) against the
allocator's outcome on the same objects. topoguard's unknown is counted with its reason, not
compared; every other difference fails.

Usage: allocator_differential.py --driver FEASIBILITY_DRIVER --source DIR [--pairs 2000]
[--seed 1] [--derived-attributes] [--list-attributes]. Exit 77 when the oracle cannot be built
(no Go toolchain)."""

import argparse
import collections
import json
import os
import random
import subprocess
import sys

GPU, NIC = "gpu.example.com", "nic.example.com"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
NUMA_NODE = "resource.kubernetes.io/numaNode"
TAINT_KEY = "example.com/unhealthy"
MAINTENANCE_KEY = "example.com/maintenance"  # only DeviceTaintRules set it
SKIP = 77


# A derived attribute standing for the pcieRoot (KEP-6080): bare, it fails on a device without
# one (a CEL runtime error, which aborts the allocation); guarded, it gives such a device "none".
DERIVED_ROOT = "derived.example.com/root"
ROOT_READ = 'device.attributes["resource.kubernetes.io"].pcieRoot'
ROOT_EXPRESSIONS = [ROOT_READ, 'has(%s) ? %s : "none"' % (ROOT_READ, ROOT_READ)]


class Generator:
    def __init__(self, seed, derived=False, lists=False):
        self.random = random.Random(seed)
        self.derived = derived
        self.lists = lists

    def chance(self, probability):
        return self.random.random() < probability

    def device(self, name, driver, roots, taints):
        attributes = {"index": {"int": int(name.split("-")[1])}}
        if not self.chance(0.1):
            root = self.random.randrange(roots)
            attributes[PCIE_ROOT] = {"string": "pci0000:%02x" % (0x20 * root)}
            attributes[NUMA_NODE] = {"int": root // 2}
            if self.lists and self.chance(0.3):
                # DRAListTypeAttributes: a device reachable from several roots (1-2 of them).
                spanned = sorted(self.random.sample(range(roots), self.random.randint(1, min(2, roots))))
                attributes[PCIE_ROOT] = {"strings": ["pci0000:%02x" % (0x20 * r) for r in spanned]}
                attributes[NUMA_NODE] = {"ints": sorted({r // 2 for r in spanned})}
        device = {"name": name, "attributes": attributes}
        if taints and self.chance(0.15):
            device["taints"] = [{"key": TAINT_KEY, "value": "true",
                                 "effect": self.random.choice(["NoSchedule", "NoExecute", "None"])}]
        return device

    def node(self, node):
        """The node's slices and the ids (driver, pool, device, shareable) of its devices."""
        roots = self.random.randint(1, 3)
        taints = self.chance(0.5)
        gpus = [self.device("gpu-%d" % i, GPU, roots, taints)
                for i in range(self.random.randint(0, 4))]
        nics = [self.device("nic-%d" % i, NIC, roots, taints)
                for i in range(self.random.randint(0, 4))]
        shared_bandwidth = self.chance(0.3)
        for nic in nics:
            if shared_bandwidth:
                nic["allowMultipleAllocations"] = True
                nic["capacity"] = {"bandwidth": {
                    "value": "%dGi" % self.random.choice([100, 200]),
                    "requestPolicy": {"default": "10Gi",
                                      "validRange": {"min": "10Gi", "step": "10Gi"}}}}
        counters = gpus and self.chance(0.25)
        if counters:
            for gpu in gpus:
                gpu["consumesCounters"] = [{"counterSet": "memory", "counters": {
                    "memory": {"value": "%dGi" % self.random.choice([40, 80])}}}]

        def piece(name, driver, devices, count):
            return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": "%s-%s" % (node, name)},
                    "spec": {"driver": driver, "nodeName": node, "devices": devices,
                             "pool": {"name": node, "generation": 1,
                                      "resourceSliceCount": count}}}
        slices = [piece("gpu", GPU, gpus, 2 if counters else 1), piece("nic", NIC, nics, 1)]
        if counters:
            counter_slice = piece("gpu-counters", GPU, [], 2)
            del counter_slice["spec"]["devices"]
            counter_slice["spec"]["sharedCounters"] = [{"name": "memory", "counters": {
                "memory": {"value": "%dGi" % self.random.choice([80, 160])}}}]
            slices.append(counter_slice)
        ids = [(GPU, node, gpu["name"], False) for gpu in gpus] + \
              [(NIC, node, nic["name"], shared_bandwidth) for nic in nics]
        return slices, ids

    def held(self, ids):
        """A claim of another Pod holding some devices (a shareable one by a share of it)."""
        results = []
        for driver, pool, device, shareable in self.random.sample(
                ids, min(len(ids), self.random.randint(1, 3))):
            result = {"request": "r", "driver": driver, "pool": pool, "device": device}
            if not shareable and self.chance(0.2):
                result["adminAccess"] = True  # holds nothing
            elif shareable:
                result["shareID"] = "9b7a3c1e-0000-4000-8000-%012d" % len(results)
                result["consumedCapacity"] = {"bandwidth": "%dGi" % self.random.choice(
                    [10, 50, 100, 200])}
            results.append(result)
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "other", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                    "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
                "status": {"allocation": {"devices": {"results": results}}}}

    def gpu_request(self):
        if self.chance(0.15):
            return {"name": "gpu", "firstAvailable": [
                {"name": "two", "deviceClassName": "gpu", "allocationMode": "ExactCount",
                 "count": 2},
                {"name": "one", "deviceClassName": "gpu", "allocationMode": "ExactCount",
                 "count": 1}]}
        # Objects as the API server stores them, defaulted: the allocator reads them so.
        exactly = {"deviceClassName": "gpu"}
        if self.chance(0.1):
            exactly["allocationMode"] = "All"
        else:
            exactly.update(allocationMode="ExactCount", count=self.random.choice([1, 1, 1, 2, 3]))
        if self.chance(0.2):
            exactly["selectors"] = [{"cel": {"expression":
                                             'device.attributes["%s"].index < %d'
                                             % (GPU, self.random.randint(1, 3))}}]
        if self.chance(0.25):
            exactly["tolerations"] = [self.random.choice([
                {"key": TAINT_KEY, "operator": "Exists"},
                {"key": TAINT_KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"},
                {"key": TAINT_KEY, "operator": "Equal", "value": "false"},
                {"operator": "Exists"},
                {"key": MAINTENANCE_KEY, "operator": "Exists", "effect": "NoExecute"}])]
        if self.chance(0.1):
            # Devices other claims hold may still be taken (allocateOne's in-use check).
            exactly["adminAccess"] = True
        return {"name": "gpu", "exactly": exactly}

    def nic_request(self):
        exactly = {"deviceClassName": "nic", "allocationMode": "ExactCount",
                   "count": self.random.choice([1, 1, 2])}
        if self.chance(0.3):
            exactly["capacity"] = {"requests": {"bandwidth": "%dGi" % self.random.choice(
                [5, 10, 40, 150])}}
        return {"name": "nic", "exactly": exactly}

    def claim(self):
        requests = [self.gpu_request()]
        if self.chance(0.8):
            requests.append(self.nic_request())
        names = [request["name"] for request in requests]
        constraints = []
        roll = self.random.random()
        if roll < 0.6:
            constraints.append({"requests": names, "matchAttribute": PCIE_ROOT})
        elif roll < 0.75:
            constraints.append({"requests": names, "matchAttribute": NUMA_NODE})
        if self.derived and constraints and self.chance(0.5):
            # The same constraint through a derived attribute on every request it covers.
            constraints[0]["matchAttribute"] = DERIVED_ROOT
            expression = self.random.choice(ROOT_EXPRESSIONS)
            for request in requests:
                for choice in [request.get("exactly")] + request.get("firstAvailable", []):
                    if choice:
                        choice["derivedAttributes"] = [{"name": DERIVED_ROOT,
                                                        "expression": expression}]
        if self.chance(0.2):
            constraints.append({"requests": ["gpu"], "distinctAttribute": PCIE_ROOT})
        devices = {"requests": requests}
        if constraints:
            devices["constraints"] = constraints
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "mine", "namespace": "default"},
                "spec": {"devices": devices}}

    def taint_rule(self, index, nodes):
        """A DeviceTaintRule (resource.k8s.io/v1 in 1.37): its taint on every device its selector
        names by driver, pool and device (an unset field matches all); no selector, no device."""
        spec = {"taint": {"key": self.random.choice([TAINT_KEY, MAINTENANCE_KEY]),
                          "value": "true",
                          "effect": self.random.choice(["NoSchedule", "NoExecute", "None"])}}
        if not self.chance(0.1):
            selector = {}
            if self.chance(0.6):
                selector["driver"] = self.random.choice([GPU, NIC])
            if self.chance(0.6):
                selector["pool"] = "node-%d" % self.random.randrange(nodes)
            if self.chance(0.4):
                selector["device"] = "%s-%d" % (self.random.choice(["gpu", "nic"]),
                                                self.random.randrange(4))
            spec["deviceSelector"] = selector
        return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                "metadata": {"name": "rule-%d" % index}, "spec": spec}

    def pair(self):
        objects = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"name": name},
                    "spec": {"selectors": [{"cel": {"expression":
                                                    'device.driver == "%s"' % driver}}]}}
                   for name, driver in (("gpu", GPU), ("nic", NIC))]
        ids = []
        nodes = self.random.randint(1, 3)
        for index in range(nodes):
            slices, node_ids = self.node("node-%d" % index)
            objects += slices
            ids += node_ids
        if ids and self.chance(0.35):
            objects.append(self.held(ids))
        if self.chance(0.2):
            objects += [self.taint_rule(index, nodes) for index in range(self.random.randint(1, 2))]
        return {"objects": objects, "claim": self.claim()}


def all_mode_under_constraint(pair):
    """Whether the claim has an allocationMode All request under a constraint."""
    devices = pair["claim"]["spec"]["devices"]
    all_mode = {request["name"] for request in devices["requests"]
                if request.get("exactly", {}).get("allocationMode") == "All"}
    return any(set(constraint.get("requests") or all_mode) & all_mode
               for constraint in devices.get("constraints", []))


def all_blocked_before_refused(pair, mine, reference):
    """The allocator takes an All request's devices in order and fails with an error at the
    first one a constraint refuses; a device another claim holds, or an untolerated taint, only
    fails the request when the allocator reaches it first. topoguard rules the request out on a
    node as soon as any of its devices is held or tainted, before its search looks at the
    constraint: where a refused device comes first, the allocator errs (docs/dra-feasibility.md,
    "Not modelled")."""
    return (all_mode_under_constraint(pair) and
            "error" in (reference["outcome"], reference.get("free")) and
            any("(allocationMode All) takes every device" in reason and
                "cannot have some" in reason for reason in mine.get("nodes", {}).values()))


# Differences explained by a documented limit: (name, predicate on the pair and both answers).
KNOWN_LIMITS = [
    ("allocationMode All: a held or tainted device before one the constraint refuses",
     all_blocked_before_refused),
]


def run(command, requests):
    done = subprocess.run(command, input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("%s failed (%d): %s" % (command[0], done.returncode, done.stderr))
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != len(requests):
        sys.exit("%s: %d answers to %d requests" % (command[0], len(answers), len(requests)))
    return answers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=10, help="differences printed in full")
    parser.add_argument("--derived-attributes", action="store_true",
                        help="half the pcieRoot constraints through a derived attribute, with "
                        "DRADerivedAttributes on in the allocator")
    parser.add_argument("--list-attributes", action="store_true",
                        help="some pcieRoot and numaNode attributes as lists, with "
                        "DRAListTypeAttributes on in the allocator")
    options = parser.parse_args()
    build = subprocess.run(["bash", os.path.join(options.source, "tools/dra-oracle/build.sh")],
                           capture_output=True, text=True)
    if build.returncode == SKIP:
        print("SKIP: %s" % build.stderr.strip())
        return SKIP
    if build.returncode != 0:
        sys.exit("tools/dra-oracle/build.sh: %s" % build.stderr)
    oracle = os.path.join(build.stdout.strip().splitlines()[-1], "allocator-oracle")

    generator = Generator(options.seed, options.derived_attributes, options.list_attributes)
    pairs = [generator.pair() for _ in range(options.pairs)]
    ours = run([options.driver], pairs)
    gates = [flag for flag, on in (("--derived-attributes", options.derived_attributes),
                                   ("--list-attributes", options.list_attributes)) if on]
    theirs = run([oracle] + gates, pairs)

    same = collections.Counter()
    unknown = collections.Counter()
    known = collections.Counter()
    differences = []
    for pair, mine, reference in zip(pairs, ours, theirs):
        for side in (mine, reference):
            if "bad_request" in side or side.get("outcome") == "bad_request":
                sys.exit("bad request: %s\n%s" % (side, json.dumps(pair)))
        if mine["outcome"] == "unknown":
            unknown[reference["outcome"]] += 1
            continue
        if mine["outcome"] == reference["outcome"]:
            same[mine["outcome"]] += 1
            continue
        limit = next((name for name, applies in KNOWN_LIMITS if applies(pair, mine, reference)),
                     None)
        if limit:
            known[limit] += 1
        else:
            differences.append((pair, mine, reference))

    print("allocator differential: %d generated clusters and claims (seed %d)"
          % (len(pairs), options.seed))
    print("  same outcome: %d (%s)" % (sum(same.values()), ", ".join(
        "%s %d" % item for item in sorted(same.items()))))
    print("  unknown for topoguard (not compared; the allocator said %s)" % (", ".join(
        "%s %d" % item for item in sorted(unknown.items())) or "nothing"))
    for limit, number in sorted(known.items()):
        print("  different, a documented limit (%s): %d" % (limit, number))
    print("  differences: %d" % len(differences))
    kinds = collections.Counter((mine["outcome"], reference["outcome"])
                                for _, mine, reference in differences)
    for (mine, reference), number in sorted(kinds.items()):
        print("    topoguard %s, allocator %s: %d" % (mine, reference, number))
    for pair, mine, reference in differences[:options.show]:
        print("DIFFERENCE topoguard %s, allocator %s\n  %s" % (
            json.dumps(mine), json.dumps(reference), json.dumps(pair)))
    return 1 if differences or not same else 0


if __name__ == "__main__":
    sys.exit(main())
