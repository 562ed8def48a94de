"""What the e2e suites share: manifests, topoguard's own verdict on an object (`topoguard
review` as the API server would call it), `topoguard serve` behind the shipped webhook
configurations, and kubectl against the control plane."""

import base64
import copy
import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

import yaml

from control_plane import SKIP, BinariesMissing, ControlPlane, read, wait_until

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(SOURCE_DIR, "tests", "golden", "cases")
EXAMPLES = os.path.join(SOURCE_DIR, "examples", "manifests")
DEFAULT_POLICY = os.path.join(SOURCE_DIR, "policies", "default.yaml")

# Kinds the webhook configurations send, with their resource names (the AdmissionReview's
# `resource`); other kinds are created too but never reach topoguard.
RESOURCES = {
    "ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates",
    "Pod": "pods", "ReplicationController": "replicationcontrollers",
    "Deployment": "deployments", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets",
    "ReplicaSet": "replicasets", "Job": "jobs", "CronJob": "cronjobs",
    "LeaderWorkerSet": "leaderworkersets", "DisaggregatedSet": "disaggregatedsets",
    "MPIJob": "mpijobs", "PyTorchJob": "pytorchjobs",
}

# Custom resources the configurations name, served here from schema-less CRDs so that the API
# server sends them as it would in a cluster with those operators.
CUSTOM_KINDS = [
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "leaderworkersets", ["v1"]),
    ("disaggregatedset.x-k8s.io", "DisaggregatedSet", "disaggregatedsets", ["v1"]),
    ("kubeflow.org", "MPIJob", "mpijobs", ["v2beta1"]),
    ("kubeflow.org", "PyTorchJob", "pytorchjobs", ["v1"]),
    ("k8s.cni.cncf.io", "NetworkAttachmentDefinition", "network-attachment-definitions", ["v1"]),
]


def suite_main(name, body, **plane_options):
    """What every suite's main does: the control plane up with `plane_options` (SKIP, exit 77,
    when it is not built), a work directory, `body(plane, work, started)` for the exit status,
    and both torn down whatever happens."""
    started = time.monotonic()
    try:
        plane = ControlPlane(**plane_options)
    except BinariesMissing as missing:
        print("SKIP: control-plane binaries not built: %s" % missing)
        return SKIP
    work = tempfile.mkdtemp(prefix="topoguard-e2e-%s-" % name)
    try:
        with plane:
            print("control plane v%s up in %.1f s" % (plane.release["version"],
                                                      time.monotonic() - started), flush=True)
            return body(plane, work, started)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def dev_certs(work):
    """A serving certificate for 127.0.0.1 and its CA (certs/generate-dev-certs.sh)."""
    certs = os.path.join(work, "certs")
    subprocess.run([os.path.join(SOURCE_DIR, "certs", "generate-dev-certs.sh"), "--out", certs,
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)
    return certs


class Failure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def documents(path):
    """The objects of a manifest file (List items flattened)."""
    with open(path) as handle:
        for document in yaml.safe_load_all(handle):
            if not document:
                continue
            if document.get("kind") == "List":
                yield from document.get("items", [])
            else:
                yield document


def review(binary, mode, obj, operation, policies, old=None, namespace_labels=None):
    """topoguard's answer (`topoguard review`) to the AdmissionReview the API server sends for
    `obj` under `policies` (the default policy when empty); `namespace_labels`: a file of the
    namespaces' labels, as the webhook's cluster cache would know them."""
    group, _, version = obj["apiVersion"].rpartition("/")
    kind = {"group": group, "version": version, "kind": obj["kind"]}
    resource = {"group": group, "version": version, "resource": RESOURCES[obj["kind"]]}
    request = {"uid": str(uuid.uuid4()), "kind": kind, "resource": resource,
               "requestKind": kind, "requestResource": resource,
               "name": obj["metadata"].get("name", ""),
               "namespace": obj["metadata"].get("namespace", "default"),
               "operation": operation,
               "userInfo": {"username": "admin", "groups": ["system:masters",
                                                            "system:authenticated"]},
               "object": obj, "oldObject": old, "dryRun": False}
    arguments = [binary, "review", "-", "--mode", mode]
    for path in policies or (DEFAULT_POLICY,):
        arguments += ["--policies", path]
    if namespace_labels:
        arguments += ["--namespace-labels", namespace_labels]
    done = subprocess.run(arguments, capture_output=True, text=True,
                          input=json.dumps({"apiVersion": "admission.k8s.io/v1",
                                            "kind": "AdmissionReview", "request": request}))
    check(done.returncode == 0, "topoguard review: %s" % done.stderr)
    return json.loads(done.stdout)["response"]


def json_pointer(path):
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]


def apply_patch(obj, patch):
    """RFC 6902 add/remove/replace, what topoguard's patches use."""
    obj = copy.deepcopy(obj)
    for operation in patch:
        *parents, last = json_pointer(operation["path"])
        target = obj
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if operation["op"] == "add" and isinstance(target, list):
            index = len(target) if last == "-" else int(last)
            target.insert(index, operation["value"])
        elif operation["op"] in ("add", "replace"):
            target[int(last) if isinstance(target, list) else last] = operation["value"]
        elif operation["op"] == "remove":
            del target[int(last) if isinstance(target, list) else last]
        else:
            raise Failure("patch operation %s not expected" % operation["op"])
    return obj


def expected_outcome(binary, obj, policies, namespace_labels=None):
    """(allowed, message, warnings, stored devices) the API server should end with, from the
    engine: /mutate (claims are patched, workloads never), then /validate on the result."""
    mutated = review(binary, "mutate", obj, "CREATE", policies,
                     namespace_labels=namespace_labels)
    warnings = list(mutated.get("warnings", []))
    patched = obj
    if mutated.get("patch"):
        patched = apply_patch(obj, json.loads(base64.b64decode(mutated["patch"])))
    validated = review(binary, "validate", patched, "CREATE", policies,
                       namespace_labels=namespace_labels)
    warnings += validated.get("warnings", [])
    allowed = mutated["allowed"] and validated["allowed"]
    denial = validated if not validated["allowed"] else mutated
    message = "" if allowed else denial.get("status", {}).get("message", "")
    return allowed, message, warnings, patched


def devices_of(obj):
    spec = obj.get("spec", {})
    return (spec.get("spec", spec)).get("devices", {})


# Fields of DRA objects and the first minor release whose API has them (k8s.io/api
# resource/*/types.go of each release). An older API server drops or refuses them, so a case
# holding one is not what a client of that release can send; the suites skip it there and say so.
FIELDS_FROM = {"derivedAttributes": 37}


def newer_fields(obj, minor):
    """The fields in `obj` that release 1.`minor` does not have, sorted."""
    found = set()
    pending = [obj]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            found.update(key for key in value if FIELDS_FROM.get(key, 0) > minor)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return sorted(found)


class Cluster:
    def __init__(self, plane, work):
        self.plane, self.work = plane, work
        # name -> labels, with the name label the API server adds to every Namespace
        self.namespaces = {name: {"kubernetes.io/metadata.name": name} for name in (
            "default", "kube-system", "kube-public", "kube-node-lease")}
        self.served_kinds = {}  # (apiVersion, kind) -> served

    def kubectl(self, *arguments, **options):
        return self.plane.kubectl("--cache-dir", os.path.join(self.work, "kube-cache"),
                                  *arguments, **options)

    def create(self, obj, *flags):
        """kubectl create of one object: (ok, stored object or error text, warnings)."""
        done = self.kubectl("create", "-f", "-", "-o", "json", *flags, stdin=json.dumps(obj),
                            check=False)
        warnings = [line[len("Warning: "):] for line in done.stderr.splitlines()
                    if line.startswith("Warning: ")]
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines()
                      if not line.startswith("Warning: ")]
            return False, "\n".join(errors), warnings
        return True, json.loads(done.stdout), warnings

    def ensure_namespace(self, name, labels=None):
        if name in self.namespaces:
            return
        self.kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels or {}}}))
        self.namespaces[name] = {**(labels or {}), "kubernetes.io/metadata.name": name}

    def namespace_labels(self):
        """A file of the labels of the namespaces made here (`--namespace-labels`)."""
        path = os.path.join(self.work, "namespace-labels.json")
        with open(path, "w") as out:
            json.dump(self.namespaces, out)
        return path

    def delete(self, obj):
        namespace = obj["metadata"].get("namespace")
        done = self.kubectl("delete", obj["kind"] + "." + obj["apiVersion"].split("/")[0]
                            if "/" in obj["apiVersion"] else obj["kind"],
                            obj["metadata"]["name"], *(["-n", namespace] if namespace else []),
                            "--wait=false", check=False)
        return done

    def unserved(self, obj):
        """Why this release cannot take `obj` as written (its kind, or a field newer than the
        release), or None."""
        if not self.served(obj):
            return "%s %s is not served here" % (obj["apiVersion"], obj["kind"])
        minor = self.plane.release["minor"]
        fields = newer_fields(obj, minor)
        if fields:
            return "%s: not in the 1.%d API (from 1.%d)" % (
                ", ".join(fields), minor, max(FIELDS_FROM[field] for field in fields))
        return None

    def served(self, obj):
        """Whether the API server serves the object's apiVersion and kind."""
        key = (obj["apiVersion"], obj["kind"])
        if key not in self.served_kinds:
            group, _, version = obj["apiVersion"].rpartition("/")
            done = self.kubectl("get", "--raw", "/apis/%s/%s" % (group, version) if group
                                else "/api/%s" % version, check=False)
            self.served_kinds[key] = done.returncode == 0 and any(
                resource["kind"] == obj["kind"] for resource in json.loads(done.stdout)["resources"])
        return self.served_kinds[key]


class Serve:
    """`topoguard serve` on 127.0.0.1 with its policies in a directory the suite rewrites."""

    def __init__(self, binary, work, certs, kubeconfig=None, extra=()):
        """Without `kubeconfig` no cluster cache; with it, the cache reads the cluster. `certs`:
        the directory of server.pem and server.key, or None (--self-managed-tls in `extra`).
        `extra`: more flags."""
        self.binary, self.work, self.certs, self.kubeconfig = binary, work, certs, kubeconfig
        self.extra = list(extra)
        self.policies = os.path.join(work, "policies")
        os.makedirs(self.policies, exist_ok=True)
        self.loaded = None
        self.process = None
        self.listen = None

    def start(self, listen="127.0.0.1:0"):
        self.log_path = os.path.join(self.work, "serve-%d.log" % time.monotonic_ns())
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [self.binary, "serve", *(["--tls-cert", os.path.join(self.certs, "server.pem"),
                                          "--tls-key", os.path.join(self.certs, "server.key")]
                                         if self.certs else []), "--listen", listen,
                 "--metrics-listen", "127.0.0.1:0", "--policies", self.policies,
                 "--reload-interval", "1", "--threads", "2",
                 *(["--kubeconfig", self.kubeconfig] if self.kubeconfig
                   else ["--cluster-cache", "off"]), *self.extra,
                 # A drain waits for the API server's idle connections to time out (20 s by
                 # default); the outage check stops the server.
                 "--keep-alive-timeout", "5"],
                stdout=subprocess.DEVNULL, stderr=log)
        serving = {}

        def logged():
            for line in open(self.log_path):
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("msg") == "serving":
                    serving.update(entry)
                    return True
            return False
        wait_until(logged, "topoguard serve to start", 30,
                   alive=lambda: self.process.poll() is None)
        self.listen, self.metrics_listen = serving["listen"], serving["metrics_listen"]

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)

    def ready(self):
        """Whether /readyz answers 200 (policies loaded, certificate trusted, cache synced)."""
        try:
            with urllib.request.urlopen("http://%s/readyz" % self.metrics_listen, timeout=5) as r:
                return r.status == 200
        except urllib.error.HTTPError:
            return False

    def metrics(self):
        with urllib.request.urlopen("http://%s/metrics" % self.metrics_listen, timeout=10) as r:
            return r.read().decode()

    def counter(self, name, **labels):
        """The sum of a counter over the series whose labels include `labels`."""
        total = 0.0
        for match in re.finditer(r"^%s(?:\{([^}]*)\})? (\S+)$" % re.escape(name), self.metrics(),
                                 re.M):
            series = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or ""))
            if all(series.get(key) == value for key, value in labels.items()):
                total += float(match.group(2))
        return total

    def requests(self, **labels):
        return self.counter("topoguard_admission_requests_total", **labels)

    def use_policies(self, files):
        """Serves exactly `files` (the default policy when empty), waiting for the reload."""
        files = tuple(files) or (DEFAULT_POLICY,)
        if files == self.loaded:
            return
        running = self.process is not None and self.process.poll() is None
        reloads = self.counter("topoguard_policy_reloads_total", result="ok") if running else 0
        for name in os.listdir(self.policies):
            os.unlink(os.path.join(self.policies, name))
        for index, path in enumerate(files):  # prefixed: the files load in the order given
            shutil.copy(path, os.path.join(self.policies, "%02d-%s" % (index,
                                                                        os.path.basename(path))))
        if running:
            wait_until(lambda: self.counter("topoguard_policy_reloads_total", result="ok") >
                       reloads, "topoguard to reload its policies", 20)
        self.loaded = files


def service_account_kubeconfig(cluster, path, namespace="topoguard", account="topoguard"):
    """Writes to `path` a kubeconfig of the ServiceAccount (which must exist): a bound token from
    the TokenRequest API, what the kubelet mounts in a pod. Returns `path`."""
    token = cluster.kubectl("-n", namespace, "create", "token", account,
                            "--duration=1h").stdout.strip()
    state = cluster.plane.state
    with open(path, "w") as out:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "sa",
                   "clusters": [{"name": "e2e", "cluster": {
                       "server": state["server"],
                       "certificate-authority-data": base64.b64encode(
                           read(state["ca"]).encode()).decode()}}],
                   "users": [{"name": "sa", "user": {"token": token}}],
                   "contexts": [{"name": "sa", "context": {"cluster": "e2e", "user": "sa"}}]},
                  out)
    return path


def register_webhooks(cluster, serve, ca_pem):
    """The shipped configurations of an install with a certificate of its own (existing-secret/:
    the claims webhook fails closed from the start), pointed at the local server."""
    rendered = cluster.kubectl("kustomize", os.path.join(SOURCE_DIR, "deploy", "webhook",
                                                         "existing-secret")).stdout
    configurations = [document for document in yaml.safe_load_all(rendered)
                      if document and document["kind"] in ("ValidatingWebhookConfiguration",
                                                            "MutatingWebhookConfiguration")]
    check(len(configurations) == 2, "existing-secret/ renders %d webhook configurations"
          % len(configurations))
    bundle = base64.b64encode(ca_pem.encode()).decode()
    for configuration in configurations:
        for webhook in configuration["webhooks"]:
            service = webhook["clientConfig"].pop("service")
            webhook["clientConfig"] = {"url": "https://%s%s" % (serve.listen, service["path"]),
                                       "caBundle": bundle}
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": configurations}))
    return configurations


class AdminClient:
    """Creates objects through the API server directly (no kubectl process per object), as the
    control plane's admin: its client certificate from the kubeconfig, one connection per
    thread."""

    def __init__(self, plane, work):
        config = json.loads(read(plane.kubeconfig))
        user = config["users"][0]["user"]
        cluster = config["clusters"][0]["cluster"]
        paths = {}
        for field in ("client-certificate-data", "client-key-data"):
            paths[field] = os.path.join(work, field)
            with open(paths[field], "wb") as out:
                out.write(base64.b64decode(user[field]))
        self.context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        self.context.load_cert_chain(paths["client-certificate-data"],
                                     paths["client-key-data"])
        self.server = urllib.parse.urlsplit(cluster["server"])

    def connection(self):
        return http.client.HTTPSConnection(self.server.hostname, self.server.port,
                                           context=self.context, timeout=30)

    @staticmethod
    def dry_run_create(connection, obj):
        """(HTTP status, body, API warnings) of a server-side dry-run CREATE of a namespaced
        object: admission runs (webhooks, admission policies), nothing is stored."""
        group, _, version = obj["apiVersion"].rpartition("/")
        path = "%s/namespaces/%s/%s?dryRun=All" % (
            "/apis/%s/%s" % (group, version) if group else "/api/" + version,
            obj["metadata"].get("namespace", "default"), RESOURCES[obj["kind"]])
        connection.request("POST", path, body=json.dumps(obj),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        # RFC 7234 warn-text as the API server writes it: 299 - "text"
        warnings = [re.sub(r'^299 - "(.*)"$', r"\1", value, flags=re.S)
                    for name, value in response.getheaders() if name.lower() == "warning"]
        return response.status, response.read().decode(), warnings


def install_custom_kinds(cluster, kinds=CUSTOM_KINDS):
    """Schema-less CRDs serving `kinds` ((group, kind, plural, versions)), established."""
    crds = []
    for group, kind, plural, versions in kinds:
        crds.append({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "%s.%s" % (plural, group)},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                               "listKind": kind + "List"},
                     "versions": [{"name": version, "served": True, "storage": index == 0,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}}}
                                  for index, version in enumerate(versions)]}})
    cluster.kubectl("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                            "items": crds}))
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                    *["crd/%s.%s" % (plural, group) for group, _, plural, _ in kinds])


class Results:
    """Named checks, each timed and reported as it ends; a failure does not stop the rest."""

    def __init__(self):
        self.results = []  # (name, seconds, error or None)

    def run(self, name, function, *arguments):
        started = time.monotonic()
        try:
            function(*arguments)
            error = None
        except Failure as failure:
            error = str(failure)
        except Exception:  # a broken check is a failure of its own, reported with the rest
            error = traceback.format_exc()
        seconds = time.monotonic() - started
        self.results.append((name, seconds, error))
        print("%s %-60s %6.2f s%s" % ("FAIL" if error else "ok  ", name, seconds,
                                       "\n     " + error.replace("\n", "\n     ") if error else ""),
              flush=True)

    def failed(self):
        return [result for result in self.results if result[2]]

    def summary(self, started):
        """Prints the closing count; the exit status of the suite (1 when a check failed)."""
        print("%d checks, %d failed, %.1f s in all" % (len(self.results), len(self.failed()),
                                                       time.monotonic() - started))
        return 1 if self.failed() else 0


def unaligned_template(name, namespace):
    """A v1 template with a GPU and a NIC request and no constraint between them."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                {"name": "nic", "exactly": {"deviceClassName": "dranet"}}]}}}}


def golden_cases():
    """(name, input path, policy paths) of every golden case."""
    for case in sorted(os.listdir(CASES)):
        with open(os.path.join(CASES, case, "case.yaml")) as handle:
            meta = yaml.safe_load(handle) or {}
        yield (case, os.path.join(CASES, case, "input.yaml"),
               [os.path.join(CASES, case, path) for path in meta.get("policies", [])])
