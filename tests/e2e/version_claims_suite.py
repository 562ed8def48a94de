#!/usr/bin/env python3
"""What the docs say a Kubernetes release serves, asked of that release's kube-apiserver.

The README, deploy/webhook/README.md, docs/dra.md and `policy compile` state which API versions
a release serves by default and which need `--runtime-config` or a feature gate: the DRA beta
versions the webhook configurations list, MutatingAdmissionPolicy's version (what `policy compile
--kubernetes-version` emits), and the scheduling.k8s.io version of Workload. This suite starts the
release in the build (the pinned 1.37, or another one through TOPOGUARD_CONTROL_PLANE_BIN, as
tools/control-plane/matrix.sh does) twice: with its own defaults, where discovery must list
exactly what CLAIMS says is served by default, and with the launcher's settings (control_plane.py),
where every version the suites use must be served. Then it checks that the objects `policy
compile` emits for this release are of versions the release serves.

Usage: version_claims_suite.py TOPOGUARD SOURCE_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import Results, check, suite_main  # noqa: E402
from control_plane import WORKLOAD_VERSION  # noqa: E402

BINARY = os.path.realpath(sys.argv[1])

# The claims, per minor release, as the docs state them (read from each release's
# pkg/controlplane/instance.go: new beta API versions are off by default; and its
# pkg/features/kube_features.go). Each: {group: {version: served by default}}.
DRA = {"v1": True, "v1beta1": False, "v1beta2": False}
CLAIMS = {
    34: {"resource.k8s.io": DRA,
         "admissionregistration.k8s.io": {"v1": True, "v1beta1": False}},
    35: {"resource.k8s.io": DRA,
         "admissionregistration.k8s.io": {"v1": True, "v1beta1": False},
         "scheduling.k8s.io": {"v1": True, "v1alpha1": False}},
    36: {"resource.k8s.io": DRA,
         "admissionregistration.k8s.io": {"v1": True, "v1beta1": False},
         "scheduling.k8s.io": {"v1": True, "v1alpha2": False}},
    37: {"resource.k8s.io": DRA,
         "admissionregistration.k8s.io": {"v1": True, "v1beta1": False},
         "scheduling.k8s.io": {"v1": True, "v1beta1": False}},
}
# Where MutatingAdmissionPolicy is served by default (GA in 1.36), else what enables it.
MAP_GA_MINOR = 36


def served_versions(plane, group):
    """The versions of `group` the API server lists in discovery."""
    done = plane.kubectl("get", "--raw", "/apis/" + group, check=False)
    if done.returncode != 0:
        return set()
    return {entry["version"] for entry in json.loads(done.stdout)["versions"]}


def resources_of(plane, group_version):
    done = plane.kubectl("get", "--raw", "/apis/" + group_version, check=False)
    if done.returncode != 0:
        return set()
    return {resource["kind"] for resource in json.loads(done.stdout)["resources"]}


def check_defaults(plane, claims):
    for group, versions in claims.items():
        served = served_versions(plane, group)
        wanted = {version for version, default in versions.items() if default}
        listed = {version for version in versions}
        check(served & listed == wanted,
              "%s by default: the docs say %s, the API server serves %s" % (
                  group, sorted(wanted), sorted(served & listed)))
    map_served = "MutatingAdmissionPolicy" in resources_of(plane, "admissionregistration.k8s.io/v1")
    check(map_served == (plane.release["minor"] >= MAP_GA_MINOR),
          "MutatingAdmissionPolicy v1 served by default: %s, the docs say from 1.%d" % (
              map_served, MAP_GA_MINOR))


def check_enabled(plane):
    needed = {"resource.k8s.io": set(DRA)}
    workload = WORKLOAD_VERSION.get(plane.release["minor"])
    if workload:
        group, version = workload.split("/")
        needed[group] = {version}
    for group, versions in needed.items():
        missing = versions - served_versions(plane, group)
        check(not missing, "%s with the launcher's settings: %s not served (runtime config: %s)" %
              (group, sorted(missing), plane.options["runtime_config"]))
    map_kinds = set()
    for version in ("v1", "v1beta1"):
        if "MutatingAdmissionPolicy" in resources_of(plane, "admissionregistration.k8s.io/" +
                                                     version):
            map_kinds.add(version)
    check(map_kinds, "MutatingAdmissionPolicy served in no version with the launcher's settings")


def check_compiled_versions(plane):
    """`policy compile --kubernetes-version` for this release emits only served versions."""
    minor = plane.release["minor"]
    done = subprocess.run([BINARY, "policy", "compile", "--kubernetes-version", "1.%d" % minor,
                           "-o", "json"], capture_output=True, text=True)
    check(done.returncode == 0, "policy compile: %s" % done.stderr)
    for item in json.loads(done.stdout)["items"]:
        group_version = item["apiVersion"]
        check(item["kind"] in resources_of(plane, group_version),
              "policy compile --kubernetes-version 1.%d emits %s %s, which 1.%d does not serve "
              "with the launcher's settings" % (minor, group_version, item["kind"], minor))


def run_defaults(plane, work, started):
    results = Results()
    claims = CLAIMS.get(plane.release["minor"])
    results.run("release %s is one the docs describe" % plane.release["version"],
                check, claims is not None, "no claims for 1.%d" % plane.release["minor"])
    if claims:
        results.run("served by default as documented", check_defaults, plane, claims)
    return results.summary(started)


def run_enabled(plane, work, started):
    results = Results()
    results.run("served with the launcher's gates and runtime config", check_enabled, plane)
    results.run("policy compile emits versions the release serves", check_compiled_versions,
                plane)
    return results.summary(started)


if __name__ == "__main__":
    status = suite_main("version-defaults", run_defaults, feature_gates={}, runtime_config="")
    sys.exit(status or suite_main("version-enabled", run_enabled))
