"""What the Helm chart's tests share (tests/deploy/helm_chart_test.py, tests/e2e/helm_suite.py):
helm and kubectl from their build caches, the chart rendered, and Helm's own labels."""

import os
import shutil
import subprocess

import yaml

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHART = os.path.join(SOURCE_DIR, "deploy", "helm", "topoguard")
VALUES = os.path.join(SOURCE_DIR, "deploy", "helm", "values")
SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests

# Labels the chart adds to what the kustomize install labels (the twin comparison ignores them).
HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/version",
               "app.kubernetes.io/managed-by")


class ToolMissing(Exception):
    """helm or kubectl is not built; the test reports itself skipped."""


def cached_tool(script, name):
    """NAME from the cache of tools/SCRIPT (`--cached`: nothing is built here)."""
    done = subprocess.run(["bash", os.path.join(SOURCE_DIR, "tools", script), "--cached"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ToolMissing(done.stderr.strip() or "%s --cached failed" % script)
    return os.path.join(done.stdout.strip().splitlines()[-1], name)


def helm_binary():
    return cached_tool("helm/build.sh", "helm")


def kubectl_binary():
    """The control plane's kubectl (kustomize v5), else one on PATH."""
    try:
        return cached_tool("control-plane/build.sh", "kubectl")
    except ToolMissing:
        found = shutil.which("kubectl")
        if not found:
            raise
        return found


class Helm:
    """helm with its own configuration and cache directories under `work` (never the user's)."""

    def __init__(self, binary, work, kubeconfig=None):
        self.binary = binary
        self.environment = dict(os.environ, HELM_CONFIG_HOME=os.path.join(work, "helm-config"),
                                HELM_CACHE_HOME=os.path.join(work, "helm-cache"),
                                HELM_DATA_HOME=os.path.join(work, "helm-data"))
        if kubeconfig:
            self.environment["KUBECONFIG"] = kubeconfig

    def run(self, *arguments, check=True, timeout=120):
        done = subprocess.run([self.binary, *arguments], capture_output=True, text=True,
                              env=self.environment, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError("helm %s: exit %d\n%s" % (" ".join(arguments), done.returncode,
                                                          done.stderr))
        return done

    def template(self, *values_arguments, chart=CHART, namespace="topoguard"):
        """The chart's objects rendered with these values arguments (-f FILE, --set ...)."""
        done = self.run("template", "topoguard", chart, "--namespace", namespace,
                        *values_arguments)
        return [document for document in yaml.safe_load_all(done.stdout) if document]


def without_helm_labels(obj):
    """`obj` without Helm's labels (and without an empty labels map left behind)."""
    labels = obj.get("metadata", {}).get("labels")
    if labels is not None:
        for name in HELM_LABELS:
            labels.pop(name, None)
        if not labels:
            del obj["metadata"]["labels"]
    return obj


def values_files():
    """The documented values files (deploy/helm/values), by name."""
    return sorted(name for name in os.listdir(VALUES) if name.endswith(".yaml"))
