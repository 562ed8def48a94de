#!/usr/bin/env python3
"""The native policies against the real kube-apiserver, with no webhook: every object `topoguard
policy compile --kubernetes-version 1.MINOR` emits for the release it runs against, for the
default policy and for each golden case's policies, is created for real (the API server
type-checks and costs each CEL expression at creation, and a ValidatingAdmissionPolicy's status
then carries its type-check warnings, which must be none). Then every ResourceClaim and
ResourceClaimTemplate of the golden cases and examples is created under them, and the API
server's verdict (denied by the deny policy, admitted with the warn policy's warnings, stored
with the MutatingAdmissionPolicy's patch) is set against topoguard's own (`topoguard review`,
/mutate then /validate).

Then 600 generated claims and templates (tests/native/claim_generator.mjs, the cases of the
JavaScript differential), created by server-side dry run under the default policy.

Every difference is printed. The native policies are documented to leave some claims to the
webhook (the compile header's "not compiled" and "limits" lists; the generator marks what in a
case falls under them): there they admit what topoguard would deny or warn on, and such a
difference is listed with its explanation, not failed; so is an object the API server's own
validation refuses. A native policy that denies or warns where topoguard allows, stores another
patch than topoguard's, or differs without an explanation, fails.

Usage: native_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not built.
"""

import copy
import json
import os
import shutil
import subprocess
import sys
import uuid

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (EXAMPLES, AdminClient, Cluster, Results, check,  # noqa: E402
                               devices_of, documents, expected_outcome, golden_cases,
                               suite_main)
from control_plane import wait_until  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
POLICY_WARNING = "Validation failed for ValidatingAdmissionPolicy"
# Differences known and explained, each (test, explanation); listed, not failed. A known
# difference is never one where the native policies deny or warn where topoguard does not.
# Kubernetes 1.37.2 cannot run a MutatingAdmissionPolicy matched through matchPolicy Equivalent
# on a claim sent as v1beta1 or v1beta2 (converting its patched v1 object back fails: "unknown
# conversion"), so the compiled fix runs only on claims sent as v1 (a matchCondition on
# request.requestKind.version), and the validating policies allow a beta-version claim the fix
# would change: the webhook patches and judges it.
BETA_LEFT_TO_WEBHOOK = (
    lambda obj, ours, theirs, patched: obj["apiVersion"] != "resource.k8s.io/v1" and
    patched and theirs == "allow",
    "a v1beta1/v1beta2 claim the fix would change: the native policies neither patch nor "
    "judge it (1.37.2 cannot convert the patch back), the webhook does")
KNOWN_DIFFERENCES = [BETA_LEFT_TO_WEBHOOK]
# What a generated case holds that `policy compile` leaves to the webhook (its header's "limits"),
# as claim_generator.mjs marks it: a difference on such a case is explained by it.
TRAITS = {
    "driverSelectors": "a selector names the driver: roles from it are left to the webhook",
    "derivedUnread": "a derived attribute named only a pattern accepts: left to the webhook",
    "derivedLarge": "derived attributes beyond 8 requests or 8 constraints: left to the webhook",
    "manySelectors": "more selectors than the compiled CEL reads: left to the webhook",
    "longSelectors": "a selector longer than the compiled CEL reads: left to the webhook",
}
GENERATED_COUNT, GENERATED_SEED = 600, 37
NODE = shutil.which("node") or "node"
GENERATOR = [NODE, os.path.join(SOURCE, "tests", "native", "claim_generator.mjs")]
NATIVE_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")


def compile_policies(policies, minor):
    """What `policy compile` emits for the release the suite runs against (1.34 and 1.35 get
    MutatingAdmissionPolicy v1beta1, which the launcher enables there)."""
    arguments = [BINARY, "policy", "compile", "--kubernetes-version", "1.%d" % minor,
                 "-o", "json"]
    for path in policies:
        arguments += ["--policies", path]
    done = subprocess.run(arguments, capture_output=True, text=True)
    check(done.returncode == 0, "policy compile %s: %s" % (policies, done.stderr))
    return json.loads(done.stdout)["items"]


def verdict(allowed, warnings):
    return "deny" if not allowed else ("warn" if warnings else "allow")


def probes(namespace):
    """Two templates every policy set has something to say about where it applies: an unaligned
    GPU and NIC (the fix patches it) and two GPUs with one NIC (no pairing to infer: denied, not
    patched). Their answers in a namespace tell when a set's mutating and its validating
    policies have both taken effect there, or both stopped."""
    def template(gpus):
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "probe-%s" % uuid.uuid4().hex[:8], "namespace": namespace},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                "count": gpus}},
                    {"name": "nic", "exactly": {"deviceClassName": "dranet"}}]}}}}
    return [template(1), template(2)]


class Suite(Results):
    def __init__(self, cluster, minor):
        super().__init__()
        self.cluster = cluster
        self.minor = minor
        self.compared = 0
        self.agreed = 0
        self.differences = []  # (where, topoguard, native, failing, known)
        self.objects_accepted = 0
        self.skipped = []  # objects this release's API cannot hold as written, and why

    def native_outcome(self, obj, *flags):
        """(verdict, message or warnings, stored object or None) under the native policies;
        warnings of other origin (a beta version's deprecation) do not count."""
        ok, stored, warnings = self.cluster.create(obj, *flags)
        if not ok:
            return "deny", stored, None
        warnings = [warning for warning in warnings if warning.startswith(POLICY_WARNING)]
        return verdict(True, warnings), warnings, stored

    def install(self, label, policies, namespaces):
        """Creates the compiled objects; returns them once the probes in `namespaces` are
        answered as topoguard answers them (the API server has picked them all up)."""
        items = compile_policies(policies, self.minor)
        check(items and all(item["kind"] in NATIVE_KINDS for item in items),
              "unexpected compile output: %s" % [item["kind"] for item in items])
        for item in items:
            done = self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(item), check=False)
            check(done.returncode == 0, "%s: the API server refused %s %s: %s"
                  % (label, item["kind"], item["metadata"]["name"], done.stderr))
            self.objects_accepted += 1
        for item in items:
            if item["kind"] != "ValidatingAdmissionPolicy":
                continue
            name = item["metadata"]["name"]

            def checked():
                got = json.loads(self.cluster.kubectl(
                    "get", "validatingadmissionpolicy", name, "-o", "json").stdout)
                return got.get("status", {}).get("observedGeneration") == \
                    got["metadata"]["generation"] and got
            wait_until(checked, "the type check of %s" % name, 30)
            warnings = checked()["status"].get("typeChecking", {}).get("expressionWarnings")
            check(not warnings, "%s: type-check warnings on %s: %s" % (label, name, warnings))
        self.wait_for_answers(label, policies, namespaces)
        return items

    def answers(self, namespaces):
        """The API server's answers to the probes in each namespace: [(verdict, constraints)]."""
        found = []
        for namespace in namespaces:
            for obj in probes(namespace):
                answer, _, stored = self.native_outcome(obj, "--dry-run=server")
                found.append((answer, devices_of(stored).get("constraints") if stored else None))
        return found

    def wait_for_answers(self, label, policies, namespaces):
        """Until the probes in every namespace the cases use are answered as topoguard answers
        them under `policies` (None: as with no policy at all, allowed and unpatched)."""
        namespaces = sorted(set(namespaces) | {"probe"})
        for namespace in namespaces:
            self.cluster.ensure_namespace(namespace)
        labels = self.cluster.namespace_labels()
        wanted = []
        for namespace in namespaces:
            for obj in probes(namespace):
                if policies is None:
                    wanted.append(("allow", None))
                    continue
                allowed, _, warnings, patched = expected_outcome(BINARY, obj, policies, labels)
                wanted.append((verdict(allowed, warnings), devices_of(patched).get("constraints")))
        wait_until(lambda: self.answers(namespaces) == wanted,
                   "the %s policies to %s in %s" % (
                       label, "stop taking effect" if policies is None else "take effect",
                       ", ".join(namespaces)), 30)

    def remove(self, label, items, namespaces):
        for item in items:
            self.cluster.kubectl("delete", item["kind"].lower(), item["metadata"]["name"])
        self.wait_for_answers(label, None, namespaces)

    def compare(self, label, path, policies):
        created = []
        for obj in documents(path):
            if obj["kind"] not in CLAIM_KINDS:
                continue
            unserved = self.cluster.unserved(obj)
            if unserved:
                self.skipped.append("%s: %s" % (label, unserved))
                continue
            namespace = obj["metadata"].get("namespace", "default")
            self.cluster.ensure_namespace(namespace)
            native = self.native_outcome(obj)
            if native[2] is not None:
                created.append(native[2])
            # As the JavaScript differential marks the golden cases.
            explanations = [TRAITS["driverSelectors"]] if "driver" in json.dumps(obj) else []
            self.record("%s: %s %s/%s" % (label, obj["kind"], namespace, obj["metadata"]["name"]),
                        obj, expected_outcome(BINARY, obj, policies,
                                              self.cluster.namespace_labels()),
                        native, explanations)
        for stored in created:
            self.cluster.delete(stored)

    def compare_generated(self, client, count, seed):
        """Generated claims and templates (tests/native/claim_generator.mjs, what the JavaScript
        differential judges) created by server-side dry run under the default policy."""
        cases = subprocess.run(GENERATOR + ["--count", str(count), "--seed", str(seed)],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        labels = self.cluster.namespace_labels()
        connection = client.connection()
        before, skipped_before = self.compared, len(self.skipped)
        for line in cases:
            case = json.loads(line)
            obj, traits = case["object"], sorted(k for k, v in case["traits"].items() if v)
            unserved = self.cluster.unserved(obj)
            if unserved:
                self.skipped.append("generated (seed %d): %s" % (seed, unserved))
                continue
            status, body, warnings = client.dry_run_create(connection, obj)
            if status == 201:
                policy_warnings = [w for w in warnings if w.startswith(POLICY_WARNING)]
                native = verdict(True, policy_warnings), policy_warnings, json.loads(body)
            else:
                native = "deny", json.loads(body).get("message", body), None
            where = "generated (seed %d): %s %s/%s%s" % (
                seed, obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"],
                " traits " + ",".join(traits) if traits else "")
            self.record(where, obj, expected_outcome(BINARY, obj, [], labels), native,
                        [TRAITS[t] for t in traits if t in TRAITS])
        connection.close()
        skipped = len(self.skipped) - skipped_before
        print("     %d generated claims and templates compared, %d not in this release's API" %
              (self.compared - before, skipped))
        check(self.compared - before + skipped == count,
              "%d of %d compared, %d skipped" % (self.compared - before, count, skipped))

    def record(self, where, obj, expected, native, explanations=()):
        """Sets the API server's outcome against topoguard's; `explanations`: why a difference
        on this object is expected (what the compiled policies leave to the webhook)."""
        allowed, message, warnings, patched = expected
        theirs, said, stored = native
        ours = verdict(allowed, warnings)
        self.compared += 1
        if theirs == "deny" and "ValidatingAdmissionPolicy" not in said:
            self.differences.append((where, ours, "refused by the API server: " + said,
                                     False, False))
            return
        # An empty list of constraints is stored as none.
        original = devices_of(obj).get("constraints") or None
        ours_patch = devices_of(patched).get("constraints") or None
        theirs_patch = (devices_of(stored).get("constraints") or None) if stored else None
        if ours == theirs and (stored is None or ours_patch == theirs_patch):
            self.agreed += 1
            return
        known = [why for test, why in KNOWN_DIFFERENCES
                 if test(obj, ours, theirs, ours_patch != original)] + list(explanations)
        stricter = (theirs == "deny" and ours != "deny") or (theirs == "warn" and
                                                            ours == "allow")
        # Another patch than topoguard's fails; no patch where topoguard patches is the
        # compiled policies leaving the claim to the webhook (the compile header's lists).
        other_patch = stored is not None and theirs_patch != original and \
            theirs_patch != ours_patch
        self.differences.append((
            where, "%s %s%s" % (ours, message or warnings or "",
                                " patch " + json.dumps(ours_patch)
                                if ours_patch != original else ""),
            "%s %s%s%s" % (theirs, said, " stored " + json.dumps(theirs_patch)
                           if stored is not None and theirs_patch != original else "",
                           "\n      known:     " + known[0] if known else ""),
            stricter or other_patch or not known, bool(known)))


def namespaces_with_labels(paths):
    """{name: labels} of the namespaces the cases use: as the first case input declaring a
    Namespace labels it, else as the claim generator labels it, else none."""
    labels = {}
    for path in paths:
        try:
            declared = [obj for obj in documents(path) if obj.get("kind") == "Namespace"]
        except yaml.YAMLError:  # a case about unreadable YAML declares nothing
            continue
        for obj in declared:
            labels.setdefault(obj["metadata"]["name"], obj["metadata"].get("labels") or {})
    for line in subprocess.run(GENERATOR + ["--namespaces"], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        namespace = json.loads(line)["metadata"]
        labels.setdefault(namespace["name"], namespace["labels"])
    return labels


def case_namespaces(cases):
    """The namespaces of the cases' claims and templates."""
    found = set()
    for _, path in cases:
        try:
            found |= {obj["metadata"].get("namespace", "default") for obj in documents(path)
                      if obj.get("kind") in CLAIM_KINDS}
        except yaml.YAMLError:
            continue
    return found


def run(plane, work, started):
    cluster = Cluster(plane, work)
    suite = Suite(cluster, plane.release["minor"])
    # Cases grouped by policy set, the default set first (examples and most cases).
    groups = {(): [("examples/" + name, os.path.join(EXAMPLES, name))
                   for name in sorted(os.listdir(EXAMPLES))]}
    for case, path, policies in golden_cases():
        groups.setdefault(tuple(policies), []).append(("golden/" + case, path))
    # Every namespace made first, with its labels, so that the native policies' namespace
    # selectors and topoguard (given the same labels) judge each case alike.
    for name, labels in namespaces_with_labels(
            path for cases in groups.values() for _, path in cases).items():
        cluster.ensure_namespace(name, labels)
    for policies, cases in groups.items():
        label = "default policy" if not policies else \
            "+".join(os.path.relpath(p, os.path.join(SOURCE, "tests/golden/cases"))
                     for p in policies)
        installed = []

        namespaces = case_namespaces(cases)

        def install(policies=policies, label=label, namespaces=namespaces):
            installed.extend(suite.install(label, list(policies), namespaces))
        suite.run("compiled %s: accepted, type-checked, in effect" % label, install)
        if not installed:
            continue
        for name, path in cases:
            suite.run("verdicts " + name, suite.compare, name, path, list(policies))
        if not policies:
            suite.run("verdicts of %d generated claims and templates" % GENERATED_COUNT,
                      suite.compare_generated, AdminClient(plane, work), GENERATED_COUNT,
                      GENERATED_SEED)
        suite.run("removed %s" % label, suite.remove, label, copy.copy(installed), namespaces)
    failing = [d for d in suite.differences if d[3]]
    known = [d for d in suite.differences if d[4]]
    print("\ncompiled objects accepted by the API server: %d" % suite.objects_accepted)
    if suite.skipped:
        print("not compared, not in the %s API: %d (%s)" % (
            plane.release["version"], len(suite.skipped),
            "; ".join(sorted({why.split(": ", 1)[1] for why in suite.skipped}))))
    print("claims and templates compared: %d, same verdict and patch: %d, different: %d "
          "(failing: stricter, another patch or unexplained: %d; known, left to the webhook: %d)"
          % (suite.compared, suite.agreed, len(suite.differences), len(failing), len(known)))
    for where, ours, theirs, bad, _ in suite.differences:
        print("  %s %s\n      topoguard: %s\n      native:    %s" % (
            "FAIL" if bad else "diff", where, ours, theirs))
    return suite.summary(started) or (1 if failing else 0)


if __name__ == "__main__":
    # The controller manager reports each policy's type check in its status.
    sys.exit(suite_main("native", run, controller_manager=True))
