#!/usr/bin/env python3
"""The allocator differential (tests/allocator) through the real kube-scheduler: generated small
clusters and claims, each pair in a namespace of its own with its own drivers, DeviceClasses and
Nodes (without a kubelet), all created at once; other claims' allocations written to their
status; one Pod per pair naming its claim. The scheduler's outcome (Pod bound, with the claim
allocated; Unschedulable; SchedulerError, the allocator failing with an error) is set against
topoguard's verdict on the same objects (tests/allocator/feasibility_driver): fits / cannot be met
now or never / allocation error. topoguard's unknown is counted, not compared; the documented
limits of the allocator differential are counted apart; every other difference fails.

Usage: allocator_scheduler_suite.py TOPOGUARD_BINARY SOURCE_DIR FEASIBILITY_DRIVER [--pairs 250]
[--seed 7]. Exit 77 when the control plane is not built."""

import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "allocator"))
from allocator_differential import GPU, NIC, KNOWN_LIMITS, Generator, run  # noqa: E402
from control_plane import SKIP, BinariesMissing, ControlPlane, wait_until  # noqa: E402

SETTLE_LIMIT = 300  # seconds for the scheduler to decide every Pod


def isolated(pair, index):
    """The pair with names of its own: namespace p<index>, drivers, classes, nodes and pools
    prefixed, so that no two pairs share a device, a class or a node."""
    prefix = "p%d-" % index
    text = json.dumps(pair)
    for driver in (GPU, NIC):
        text = text.replace('"%s"' % driver, '"%s%s"' % (prefix, driver))
        text = text.replace('\\"%s\\"' % driver, '\\"%s%s\\"' % (prefix, driver))
    text = text.replace('"node-', '"%snode-' % prefix)
    pair = json.loads(text)
    objects = []
    for obj in pair["objects"]:
        selector = obj["spec"].get("deviceSelector")
        if obj["kind"] == "DeviceTaintRule" and selector is not None and "driver" not in selector:
            # A rule for every driver would taint other pairs' devices: one per driver of the
            # pair, which taint the same devices of it.
            objects += [dict(obj, spec=dict(obj["spec"], deviceSelector=dict(
                selector, driver=prefix + driver))) for driver in (GPU, NIC)]
        else:
            objects.append(obj)
    pair["objects"] = objects
    rules = 0
    for obj in pair["objects"] + [pair["claim"]]:
        if obj["kind"] == "DeviceTaintRule":
            obj["metadata"] = {"name": "%srule-%d" % (prefix, rules)}
            rules += 1
        if obj["kind"] == "DeviceClass":
            obj["metadata"]["name"] = prefix + obj["metadata"]["name"]
        if obj["kind"] == "ResourceClaim":
            obj["metadata"]["namespace"] = prefix.rstrip("-")
            for request in obj["spec"]["devices"]["requests"]:
                for choice in [request.get("exactly")] + request.get("firstAvailable", []):
                    if choice:
                        choice["deviceClassName"] = prefix + choice["deviceClassName"]
    return pair


def pod_for(claim):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pod", "namespace": claim["metadata"]["namespace"]},
            "spec": {"resourceClaims": [{"name": "devices", "resourceClaimName": "mine"}],
                     "containers": [{"name": "main", "image": "example.com/x:1",
                                     "resources": {"claims": [{"name": "devices"}]}}]}}


def outcome_of(pod):
    """fits / not (Unschedulable) / error (SchedulerError) / None (not decided yet)."""
    if pod["spec"].get("nodeName"):
        return "fits"
    for condition in pod.get("status", {}).get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return {"Unschedulable": "not", "SchedulerError": "error"}.get(condition.get("reason"))
    return None


def taint_rule_version(plane):
    """The resource.k8s.io version the release serves DeviceTaintRule in (v1 from 1.37,
    v1beta2 in 1.36, v1alpha3 before, enabled by the launcher); the generator writes v1."""
    for version in ("v1", "v1beta2", "v1alpha3"):
        done = plane.kubectl("get", "--raw", "/apis/resource.k8s.io/" + version, check=False)
        if done.returncode == 0 and any(resource["kind"] == "DeviceTaintRule"
                                        for resource in json.loads(done.stdout)["resources"]):
            return "resource.k8s.io/" + version
    raise RuntimeError("DeviceTaintRule is served in no version")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("source")
    parser.add_argument("driver")
    parser.add_argument("--pairs", type=int, default=250)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    started = time.monotonic()
    try:
        plane = ControlPlane(scheduler=True)
    except BinariesMissing as missing:
        print("SKIP: control-plane binaries not built: %s" % missing)
        return SKIP
    generator = Generator(options.seed)
    pairs = [isolated(generator.pair(), index) for index in range(options.pairs)]
    ours = run([options.driver], pairs)
    with plane:
        print("control plane up in %.1f s" % (time.monotonic() - started), flush=True)
        nodes = sorted({obj["spec"]["nodeName"] for pair in pairs for obj in pair["objects"]
                        if obj["kind"] == "ResourceSlice"})
        plane.create_nodes(nodes)
        # Labelled for claims with adminAccess (the API server refuses them elsewhere).
        namespaces = [{"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": pair["claim"]["metadata"]["namespace"],
                                    "labels": {"resource.kubernetes.io/admin-access": "true"}}}
                      for pair in pairs]
        held = [obj for pair in pairs for obj in pair["objects"] if obj["kind"] == "ResourceClaim"]
        rule_version = taint_rule_version(plane)
        objects = namespaces + [
            dict(obj, apiVersion=rule_version) if obj["kind"] == "DeviceTaintRule" else obj
            for pair in pairs for obj in pair["objects"] if obj["kind"] != "ResourceClaim"]
        specs_only = [dict(claim, status={}) for claim in held]
        plane.kubectl("create", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List",
             "items": objects + specs_only + [pair["claim"] for pair in pairs]}), timeout=300)
        if held:  # the allocations of other claims, as their status, in one request
            plane.kubectl("apply", "--server-side", "--subresource=status",
                          "--field-manager=allocator-scheduler-suite", "-f", "-",
                          stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": held}),
                          timeout=300)
        print("%d pairs: %d nodes, %d objects, %d held claims created in %.1f s"
              % (len(pairs), len(nodes), len(objects) + len(specs_only) + len(pairs), len(held),
                 time.monotonic() - started), flush=True)
        plane.kubectl("create", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List",
             "items": [pod_for(pair["claim"]) for pair in pairs]}), timeout=300)
        decided = {}

        def all_decided():
            pods = json.loads(plane.kubectl("get", "pods", "-A", "-o", "json",
                                            timeout=120).stdout)["items"]
            for pod in pods:
                outcome = outcome_of(pod)
                if outcome:
                    decided[pod["metadata"]["namespace"]] = outcome
            return len(decided) == len(pairs)
        wait_until(all_decided, "the scheduler to decide every Pod", SETTLE_LIMIT)
        print("scheduler decided %d Pods; %.1f s in all" % (len(decided),
                                                            time.monotonic() - started))
    same, unknown, known, differences = collections.Counter(), 0, collections.Counter(), []
    for index, (pair, mine) in enumerate(zip(pairs, ours)):
        theirs = decided["p%d" % index]
        if mine["outcome"] == "unknown":
            unknown += 1
            continue
        expected = {"fits": "fits", "now": "not", "never": "not", "error": "error"}[mine["outcome"]]
        if expected == theirs:
            same[theirs] += 1
            continue
        reference = {"outcome": {"not": "never"}.get(theirs, theirs)}
        limit = next((name for name, applies in KNOWN_LIMITS
                      if applies(pair, mine, reference)), None)
        if limit:
            known[limit] += 1
        else:
            differences.append((index, mine, theirs))
    print("kube-scheduler differential: %d pairs (topoguard: %s)" % (len(pairs), ", ".join(
        "%s %d" % item for item in sorted(collections.Counter(
            mine["outcome"] for mine in ours).items()))))
    print("  same outcome: %d (%s)" % (sum(same.values()), ", ".join(
        "%s %d" % item for item in sorted(same.items()))))
    print("  unknown for topoguard (not compared): %d" % unknown)
    for limit, number in sorted(known.items()):
        print("  different, a documented limit (%s): %d" % (limit, number))
    print("  differences: %d" % len(differences))
    for index, mine, theirs in differences[:10]:
        print("DIFFERENCE pair p%d: topoguard %s, kube-scheduler %s\n  %s"
              % (index, json.dumps(mine), theirs, json.dumps(pairs[index])))
    return 1 if differences or not same else 0


if __name__ == "__main__":
    sys.exit(main())
