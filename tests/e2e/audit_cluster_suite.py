#!/usr/bin/env python3
"""`topoguard audit --cluster` against the real API server (what tests/kube's audit_cluster_test
did against the fake): dranet's AWS p4d ResourceSlices, its DeviceClass and its unaligned and
aligned templates in two namespaces, a Deployment naming the unaligned one and a Pod its
ReplicaSet controls. The unaligned template and the Deployment are flagged, each named by its
cluster source, the controlled Pod is not; `--namespace` keeps namespaced kinds to one namespace;
a kind the cluster does not serve (no Multus CRD) is named on stderr, and listed once its CRD is
installed; refused credentials and no server are an error naming the kubeconfig and context,
exit 2 and no report; SARIF, JUnit and the report CRDs render the same findings; manifest paths
are audited with the cluster.

Usage: audit_cluster_suite.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not
built."""

import json
import os
import subprocess
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admission_support import (Cluster, Results, check, documents,  # noqa: E402
                               install_custom_kinds, suite_main)
from control_plane import SKIP, read  # noqa: E402

BINARY, SOURCE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
P4D = os.path.join(os.path.dirname(SOURCE), "shared", "corpus", "dranet", "examples",
                   "aws_eks_examples", "gpu-efa")


def deployment(namespace, name, template):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "trainer"}},
                     "template": {"metadata": {"labels": {"app": "trainer"}},
                                  "spec": pod_spec(template)}}}


def pod_spec(template):
    return {"containers": [{"name": "trainer", "image": "registry.example.com/trainer:1",
                            "resources": {"claims": [{"name": "gpu-nic"}]}}],
            "resourceClaims": [{"name": "gpu-nic", "resourceClaimTemplateName": template}]}


def controlled_pod(namespace):
    """A Pod its Deployment's ReplicaSet controls: audited through the Deployment."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "trainer-6d4cf56db6-x2x9z", "namespace": namespace,
                         "labels": {"app": "trainer"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "trainer-6d4cf56db6",
                                              "uid": "7d5ab4e0-0000-4000-8000-000000000002",
                                              "controller": True}]},
            "spec": pod_spec("gpu-efa-unaligned")}


def as_created(obj):
    """A captured object without what the API server sets (the capture's owner has no uid)."""
    for field in ("ownerReferences", "uid", "resourceVersion", "creationTimestamp",
                  "managedFields", "generation"):
        obj["metadata"].pop(field, None)
    return obj


def flagged(report, rule):
    return sorted("%s %s/%s" % (f["resource"]["kind"], f["resource"]["namespace"],
                                f["resource"]["name"])
                  for f in report["findings"] if f["rule"] == rule)


class Suite(Results):
    def __init__(self, plane, cluster, work):
        super().__init__()
        self.plane, self.cluster, self.work = plane, cluster, work
        config = json.loads(read(plane.kubeconfig))
        # Contexts the failure checks use: a token the API server refuses, a port nobody serves.
        config["users"].append({"name": "stranger", "user": {"token": "not-a-token"}})
        config["clusters"].append({"name": "closed", "cluster": dict(
            config["clusters"][0]["cluster"], server="https://127.0.0.1:1")})
        config["contexts"] += [
            {"name": "refused", "context": {"cluster": config["clusters"][0]["name"],
                                            "user": "stranger"}},
            {"name": "closed", "context": {"cluster": "closed",
                                           "user": config["users"][0]["name"]}}]
        self.context = config["current-context"]
        self.kubeconfig = os.path.join(work, "audit.kubeconfig")
        with open(self.kubeconfig, "w") as out:
            json.dump(config, out)

    def audit(self, *arguments):
        return subprocess.run([BINARY, "audit", "--cluster", "--kubeconfig", self.kubeconfig,
                               *arguments], capture_output=True, text=True, stdin=subprocess.DEVNULL)

    def load(self):
        objects = [as_created(o) for name in ("resourceslice-gpu.yaml",
                                               "resourceslice-dranet.yaml", "device-class.yaml")
                   for o in documents(os.path.join(P4D, name))]
        objects += documents(os.path.join(SOURCE, "tests", "data", "device-classes.yaml"))
        for namespace in ("inference", "other"):
            self.cluster.ensure_namespace(namespace)
            for template in documents(os.path.join(P4D, "resource-claim-template.yaml")):
                template["metadata"]["namespace"] = namespace
                objects.append(as_created(template))
        objects += [deployment("inference", "trainer", "gpu-efa-unaligned"),
                    controlled_pod("inference")]
        self.cluster.kubectl("create", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": objects}))

    def unaligned_template_and_its_deployment(self):
        """The unaligned template and the Deployment naming it flagged, each by its cluster
        source; the controlled Pod not; nothing skipped; the absent Multus CRD named."""
        run = self.audit("-o", "json", "--namespace", "inference")
        check(run.returncode == 1, "exit %d: %s" % (run.returncode, run.stderr))
        report = json.loads(run.stdout)
        check(flagged(report, "missing-pcie-alignment") == [
            "Deployment inference/trainer", "ResourceClaimTemplate inference/gpu-efa-unaligned"],
            flagged(report, "missing-pcie-alignment"))
        files = {f["source"]["file"] for f in report["findings"]}
        for source in ("cluster:resourceclaimtemplates.v1.resource.k8s.io/inference/"
                       "gpu-efa-unaligned", "cluster:deployments.v1.apps/inference/trainer"):
            check(source in files, "no finding at %s: %s" % (source, sorted(files)))
        check(all(f["resource"]["kind"] != "Pod" for f in report["findings"]),
              "the controlled Pod is flagged")
        check(report["summary"]["skipped"] == 0, report["summary"])
        check("skipped NetworkAttachmentDefinition.k8s.cni.cncf.io: the cluster does not serve "
              "it" in run.stderr, run.stderr)

    def namespace_restricts(self):
        """--namespace other: only that namespace's template (the restricted users of
        e2e_live_cluster prove the lists are namespaced: RBAC allows no other)."""
        run = self.audit("-o", "json", "--namespace", "other")
        check(run.returncode == 1, "exit %d: %s" % (run.returncode, run.stderr))
        found = flagged(json.loads(run.stdout), "missing-pcie-alignment")
        check(found == ["ResourceClaimTemplate other/gpu-efa-unaligned"], found)

    def every_namespace(self):
        """No --namespace: both namespaces; --policies and --fail-on combine with --cluster."""
        run = self.audit("-o", "json", "--fail-on", "never", "--policies",
                         os.path.join(SOURCE, "policies", "default.yaml"))
        check(run.returncode == 0, "exit %d: %s" % (run.returncode, run.stderr))
        found = flagged(json.loads(run.stdout), "missing-pcie-alignment")
        check(found == ["Deployment inference/trainer",
                        "ResourceClaimTemplate inference/gpu-efa-unaligned",
                        "ResourceClaimTemplate other/gpu-efa-unaligned"], found)

    def installed_crd_listed(self):
        """With the Multus CRD installed its objects are listed and nothing is named skipped."""
        install_custom_kinds(self.cluster)
        self.cluster.kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": "efa", "namespace": "inference"}, "spec": {"config": "{}"}}))
        run = self.audit("-o", "json", "--namespace", "inference")
        check(run.returncode == 1, "exit %d: %s" % (run.returncode, run.stderr))
        check("NetworkAttachmentDefinition" not in run.stderr, run.stderr)
        check(json.loads(run.stdout)["summary"]["resources"] >= 1, run.stdout[:300])

    def unreadable_cluster(self):
        """Refused credentials (401) and no server: an error naming kubeconfig and context,
        exit 2, no report."""
        for context, said in (("refused", "discovery: GET /api: 401 Unauthorized"),
                              ("closed", "discovery: GET /api: ")):
            run = self.audit("-o", "json", "--context", context)
            check(run.returncode == 2 and not run.stdout,
                  "%s: exit %d, stdout %r" % (context, run.returncode, run.stdout[:200]))
            expected = "topoguard audit: --cluster (kubeconfig %s, context %s): %s" % (
                self.kubeconfig, context, said)
            check(expected in run.stderr, "%s: %s" % (context, run.stderr))

    def every_format(self):
        """SARIF locates each result at its cluster source (escaped); JUnit and the report CRDs
        render the same findings with the same exit code."""
        run = self.audit("-o", "sarif", "--namespace", "inference")
        check(run.returncode == 1, "sarif: exit %d: %s" % (run.returncode, run.stderr))
        results = json.loads(run.stdout)["runs"][0]["results"]
        check(results, "no SARIF result")
        for result in results:
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            check(uri.startswith("cluster%3A"), uri)
        for format_name in ("junit", "policyreport", "openreports"):
            run = self.audit("-o", format_name, "--namespace", "inference")
            check(run.returncode == 1 and "gpu-efa-unaligned" in run.stdout,
                  "%s: exit %d: %s" % (format_name, run.returncode, run.stderr))
            if format_name != "junit":
                check(json.loads(run.stdout)["kind"] == "List", format_name)

    def with_manifest_paths(self):
        """Text names each finding by its cluster source; a manifest path is audited too."""
        run = self.audit("--namespace", "inference", os.path.join(
            SOURCE, "examples", "manifests", "unaligned-template-v1.yaml"))
        check(run.returncode == 1, "exit %d: %s" % (run.returncode, run.stderr))
        check("cluster:resourceclaimtemplates.v1.resource.k8s.io/inference/gpu-efa-unaligned: "
              "deny missing-pcie-alignment" in run.stdout, run.stdout)
        check("unaligned-template-v1.yaml:" in run.stdout, run.stdout)


def run(plane, work, started):
    suite = Suite(plane, Cluster(plane, work), work)
    suite.run("the p4d slices, classes, templates and workloads created", suite.load)
    suite.run("the unaligned template and its Deployment flagged",
              suite.unaligned_template_and_its_deployment)
    suite.run("--namespace keeps to one namespace", suite.namespace_restricts)
    suite.run("every namespace by default, with --policies", suite.every_namespace)
    suite.run("SARIF, JUnit and report formats", suite.every_format)
    suite.run("manifest paths audited with the cluster", suite.with_manifest_paths)
    suite.run("refused credentials and no server: exit 2", suite.unreadable_cluster)
    suite.run("an installed CRD's kind is listed", suite.installed_crd_listed)
    return suite.summary(started)


if __name__ == "__main__":
    if not os.path.isdir(P4D):
        print("SKIP: the corpus is not at %s" % P4D)
        sys.exit(SKIP)
    sys.exit(suite_main("audit", run))
