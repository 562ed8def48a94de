#!/usr/bin/env python3
"""A real Kubernetes control plane for the e2e suites: etcd and kube-apiserver, and on request
kube-scheduler and kube-controller-manager, run from the binaries tools/control-plane/build.sh
builds, on 127.0.0.1 with a throw-away PKI, as envtest runs them
(../shared/reference/control-plane.md).

From the shell (ctest FIXTURES_SETUP / FIXTURES_CLEANUP):
  control_plane.py up --dir D [--scheduler] [--controller-manager] [--user NAME[:GROUP,...]]...
                     [--webhook-client-certificate]
  control_plane.py down --dir D
`up` returns once the API server is ready; D then holds admin.kubeconfig, NAME.kubeconfig per
user, ca.crt, state.json (addresses and process ids) and logs/. From Python:
  with ControlPlane(scheduler=True) as cluster:
      cluster.kubectl("get", "nodes")

One supervisor process (`control_plane.py supervise`) owns the components: they run in one
process group of their own, and each dies with the supervisor (PR_SET_PDEATHSIG). The
supervisor tears everything down (the group, then its temporary directory) when it is told to,
when a component dies, after --max-lifetime, and when the process it watches exits: the test for
the context manager, ctest for `up`. So a failing test, or a runner killed with SIGKILL, leaves
no process behind.

Binaries: $TOPOGUARD_CONTROL_PLANE_BIN, else what `tools/control-plane/build.sh --cached` names.
When they are not built, `up` prints why and exits 77 (ctest's SKIP_RETURN_CODE), and the
context manager raises BinariesMissing.
"""

import argparse
import base64
import ctypes
import json
import os
import re
import select
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
SKIP = 77

# Identical for every component (a gate the API server and the scheduler see differently makes
# an object the one stores and the other cannot read): every feature topoguard reads that the
# release ships off is turned on (each release's pkg/features/kube_features.go), so the API server
# keeps the fields the golden cases carry. On 1.37 that is derivedAttributes (KEP-6080, alpha),
# list-valued attributes (alpha), PodGroup and Workload resourceClaims (beta, off; they need
# GenericWorkload); older releases also ship consumable capacity, partitionable devices, device
# taints, DeviceTaintRules (their own gate in 1.36) and MutatingAdmissionPolicy off. The
# release's own `--help` says which gates it knows and their defaults.
FEATURES_READ = ("DRAAdminAccess", "DRAConsumableCapacity", "DRADerivedAttributes",
                 "DRADeviceTaintRules", "DRADeviceTaints", "DRAListTypeAttributes",
                 "DRAPartitionableDevices", "DRAPrioritizedList", "DRAWorkloadResourceClaims",
                 "GenericWorkload", "MutatingAdmissionPolicy")
# Beta API versions are served only when asked for: the DRA versions the webhook configurations
# list, MutatingAdmissionPolicy while it is beta (1.34, 1.35), DeviceTaintRule while it is alpha,
# and the scheduling.k8s.io version of Workload and PodGroup in each release (k8s.io/api
# scheduling/*/types.go).
DRA_BETA_VERSIONS = "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"
WORKLOAD_VERSION = {35: "scheduling.k8s.io/v1alpha1", 36: "scheduling.k8s.io/v1alpha2",
                    37: "scheduling.k8s.io/v1beta1"}
GATE_HELP = re.compile(r"(?:\w+:)?(\w+)=true\|false \((ALPHA|BETA|GA|DEPRECATED) - default=(true|false)\)")


def release(binaries):
    """What the release in `binaries` is and ships: {"version": "1.36.3", "minor": 36,
    "gates": {gate: default}} read from kube-apiserver itself."""
    apiserver = os.path.join(binaries, "kube-apiserver")
    version = subprocess.run([apiserver, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1].lstrip("v")
    usage = subprocess.run([apiserver, "--help"], capture_output=True, text=True).stdout
    gates = {match.group(1): match.group(3) == "true" for match in GATE_HELP.finditer(usage)}
    return {"version": version, "minor": int(version.split(".")[1]), "gates": gates}


def release_settings(shipped):
    """(feature gates, runtime config) for a `release()`, as described above."""
    gates = {gate: True for gate in FEATURES_READ if shipped["gates"].get(gate) is False}
    groups = [DRA_BETA_VERSIONS]
    if gates.get("MutatingAdmissionPolicy"):
        groups.append("admissionregistration.k8s.io/v1beta1=true")
    if gates.get("DRADeviceTaints"):  # alpha: DeviceTaintRule only in v1alpha3 (1.34, 1.35)
        groups.append("resource.k8s.io/v1alpha3=true")
    if shipped["minor"] in WORKLOAD_VERSION:
        groups.append(WORKLOAD_VERSION[shipped["minor"]] + "=true")
    return gates, ",".join(groups)


ADMIN = ("admin", ("system:masters",))
# The user of the client certificate the API server presents to webhooks
# (--webhook-client-certificate).
WEBHOOK_CLIENT = "kube-apiserver-webhook-client"
# The scheduler and the controller manager act with full rights: their own bootstrap roles assume
# per-controller service accounts, which nothing here mints.
COMPONENT_GROUPS = ("system:masters",)

# What kube-controller-manager runs: claims from a Pod's templates, owner-based deletion, and
# the type check whose warnings a ValidatingAdmissionPolicy's status reports. No node lifecycle
# (the Nodes have no kubelet) and no namespace deletion.
CONTROLLERS = ("resourceclaim-controller", "garbage-collector-controller",
               "validatingadmissionpolicy-status-controller")

START_TIMEOUT = 90.0  # seconds one component may take to become healthy on a busy 2-core machine
STOP_TIMEOUT = 15.0  # seconds the group may take to exit after SIGTERM before SIGKILL


class BinariesMissing(Exception):
    """The control-plane binaries are not built (tools/control-plane/build.sh)."""


def find_binaries():
    """The directory holding kube-apiserver, etcd, ..., or BinariesMissing saying why."""
    directory = os.environ.get("TOPOGUARD_CONTROL_PLANE_BIN")
    if not directory:
        done = subprocess.run(
            ["bash", os.path.join(SOURCE_DIR, "tools/control-plane/build.sh"), "--cached"],
            capture_output=True, text=True)
        if done.returncode != 0:
            raise BinariesMissing(done.stderr.strip() or "build.sh --cached failed")
        directory = done.stdout.strip().splitlines()[-1]
    for name in ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl"):
        if not os.access(os.path.join(directory, name), os.X_OK):
            raise BinariesMissing("%s not found in %s" % (name, directory))
    return directory


def free_ports(count):
    """Ports no socket holds, outside the ephemeral range (tools/free-ports.sh says why)."""
    done = subprocess.run(
        ["bash", "-c", 'source "$1" && free_ports "$2"', "free-ports",
         os.path.join(SOURCE_DIR, "tools/free-ports.sh"), str(count)],
        capture_output=True, text=True, check=True)
    return [int(port) for port in done.stdout.split()]


def wait_until(predicate, what, limit, alive=None):
    """Polls `predicate` every 100 ms until it holds; fails naming `what` after `limit` seconds,
    or at once when `alive` (if given) says the process it waits on has exited."""
    deadline = time.monotonic() + limit
    while True:
        if predicate():
            return
        if alive is not None and not alive():
            raise RuntimeError("%s: the process exited" % what)
        if time.monotonic() > deadline:
            raise RuntimeError("timed out after %g s waiting for %s" % (limit, what))
        time.sleep(0.1)


# --- the throw-away PKI (openssl) ---------------------------------------------------------------

def openssl(*arguments, stdin=None):
    subprocess.run(["openssl", *arguments], input=stdin, check=True, capture_output=True,
                   text=True)


def make_ca(directory):
    """An ECDSA P-256 CA for this run: ca.crt, ca.key."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", os.path.join(directory, "ca.key"),
            "-out", os.path.join(directory, "ca.crt"), "-days", "2",
            "-subj", "/CN=topoguard-e2e-ca")


def issue(directory, name, subject, extensions):
    """NAME.crt and NAME.key signed by the run's CA; `subject` like /O=group/CN=user."""
    key, csr = os.path.join(directory, name + ".key"), os.path.join(directory, name + ".csr")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", subject)
    extfile = os.path.join(directory, name + ".ext")
    with open(extfile, "w") as out:
        out.write(extensions)
    openssl("x509", "-req", "-in", csr, "-CA", os.path.join(directory, "ca.crt"),
            "-CAkey", os.path.join(directory, "ca.key"), "-CAcreateserial", "-days", "2",
            "-out", os.path.join(directory, name + ".crt"), "-extfile", extfile)
    return os.path.join(directory, name + ".crt"), key


def issue_user(directory, user, groups):
    subject = "".join("/O=" + group for group in groups) + "/CN=" + user
    return issue(directory, "user-" + user.replace(":", "_"), subject,
                 "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
                 "extendedKeyUsage=clientAuth\n")


def read(path):
    with open(path) as handle:
        return handle.read()


def webhook_client_configuration(pki):
    """An AdmissionConfiguration (--admission-control-config-file) whose webhook kubeconfig
    gives every webhook server ("*") a client certificate of the cluster CA, as a cluster
    whose webhooks demand mutual TLS is set up (k8s.io/apiserver/pkg/util/webhook,
    authentication.go); returns its path."""
    cert, key = issue_user(pki, WEBHOOK_CLIENT, ())
    kubeconfig_path = os.path.join(pki, "webhook-client.kubeconfig")
    write_json(kubeconfig_path, {"apiVersion": "v1", "kind": "Config", "users": [
        {"name": "*", "user": {"client-certificate": cert, "client-key": key}}]})
    path = os.path.join(pki, "admission-configuration.json")
    write_json(path, {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration",
                      "plugins": [{"name": plugin, "configuration": {
                          "apiVersion": "apiserver.config.k8s.io/v1",
                          "kind": "WebhookAdmissionConfiguration",
                          "kubeConfigFile": kubeconfig_path}}
                          for plugin in ("ValidatingAdmissionWebhook",
                                         "MutatingAdmissionWebhook")]})
    return path


def kubeconfig(server, ca, cert, key):
    """A self-contained kubeconfig (the PEMs inline)."""
    def data(path):
        return base64.b64encode(read(path).encode()).decode()
    return {"apiVersion": "v1", "kind": "Config", "current-context": "e2e",
            "clusters": [{"name": "e2e", "cluster": {"server": server,
                                                     "certificate-authority-data": data(ca)}}],
            "users": [{"name": "e2e", "user": {"client-certificate-data": data(cert),
                                               "client-key-data": data(key)}}],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}]}


def write_json(path, value):
    """Written whole or not at all (readers poll for it)."""
    with open(path + ".partial", "w") as out:
        json.dump(value, out, indent=1)
    os.replace(path + ".partial", path)


# --- the supervisor -----------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1


def die_with_parent(expected_parent):
    """preexec of every component: SIGKILL when the supervisor dies, and not started at all if
    it already has (the prctl came too late to notice)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        os._exit(126)
    if os.getppid() != expected_parent:
        os._exit(126)


class Supervisor:
    def __init__(self, options, binaries):
        self.options = options
        self.binaries = binaries
        self.directory = options.dir
        self.logs = os.path.join(self.directory, "logs")
        self.run_dir = tempfile.mkdtemp(prefix="topoguard-cp-")
        self.components = {}  # name -> Popen
        self.arguments = {}  # name -> its command-line arguments, for a restart
        self.health = {}  # name -> (URL, SSL context) of its health check
        self.group = 0  # the components' process group, once the first has started
        self.state = {}
        self.restart_requested = False
        write_json(os.path.join(self.directory, "supervisor.json"),
                   {"pid": os.getpid(), "run_dir": self.run_dir})

    def start(self, name, arguments):
        log = open(os.path.join(self.logs, name + ".log"), "a")  # a restart appends
        me = os.getpid()
        process = subprocess.Popen(
            [os.path.join(self.binaries, name), *arguments], stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, process_group=self.group,
            preexec_fn=lambda: die_with_parent(me))
        log.close()
        if not self.group:
            self.group = process.pid
        self.components[name] = process
        self.arguments[name] = arguments
        return process

    def wait_healthy(self, name, url, context=None):
        process = self.components[name]
        self.health[name] = (url, context)

        def healthy():
            try:
                with urllib.request.urlopen(url, context=context, timeout=2) as answer:
                    return answer.status == 200
            except (urllib.error.URLError, OSError):
                return False
        try:
            wait_until(healthy, "%s at %s" % (name, url), self.options.start_timeout,
                       alive=lambda: process.poll() is None)
        except RuntimeError as error:
            tail = read(os.path.join(self.logs, name + ".log"))[-4000:]
            raise RuntimeError("%s\n--- last lines of logs/%s.log ---\n%s" % (error, name, tail))

    def bring_up(self):
        pki = os.path.join(self.run_dir, "pki")
        os.makedirs(pki)
        make_ca(pki)
        ca = os.path.join(pki, "ca.crt")
        serving = issue(pki, "apiserver", "/CN=kube-apiserver",
                        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
                        "extendedKeyUsage=serverAuth\n"
                        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n")
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", os.path.join(pki, "sa.key"))
        openssl("pkey", "-in", os.path.join(pki, "sa.key"), "-pubout",
                "-out", os.path.join(pki, "sa.pub"))
        shutil.copy(ca, os.path.join(self.directory, "ca.crt"))

        etcd_port, etcd_peer_port, apiserver_port, scheduler_port, manager_port = free_ports(5)
        etcd_url = "http://127.0.0.1:%d" % etcd_port
        self.start("etcd", [
            "--name=e2e", "--data-dir=" + os.path.join(self.run_dir, "etcd"),
            "--listen-client-urls=" + etcd_url, "--advertise-client-urls=" + etcd_url,
            "--listen-peer-urls=http://127.0.0.1:%d" % etcd_peer_port,
            "--initial-advertise-peer-urls=http://127.0.0.1:%d" % etcd_peer_port,
            "--initial-cluster=e2e=http://127.0.0.1:%d" % etcd_peer_port,
            "--unsafe-no-fsync=true", "--log-level=warn"])
        self.wait_healthy("etcd", etcd_url + "/health")

        gates = ",".join("%s=%s" % (gate, "true" if on else "false")
                         for gate, on in sorted(self.options.feature_gates.items()))
        gate_flags = ["--feature-gates=" + gates] if gates else []
        server = "https://127.0.0.1:%d" % apiserver_port
        admission = (["--admission-control-config-file=" + webhook_client_configuration(pki)]
                     if self.options.webhook_client_certificate else [])
        self.start("kube-apiserver", [*admission,
            "--etcd-servers=" + etcd_url, "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", "--secure-port=%d" % apiserver_port,
            "--cert-dir=" + os.path.join(self.run_dir, "apiserver"),
            "--tls-cert-file=" + serving[0], "--tls-private-key-file=" + serving[1],
            "--client-ca-file=" + ca, "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-account-key-file=" + os.path.join(pki, "sa.pub"),
            "--service-account-signing-key-file=" + os.path.join(pki, "sa.key"),
            "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
            "--endpoint-reconciler-type=none",
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            *(["--runtime-config=" + self.options.runtime_config]
              if self.options.runtime_config else []), *gate_flags])

        users = {}
        for user, groups in [ADMIN] + self.options.user:
            cert, key = issue_user(pki, user, groups)
            users[user] = os.path.join(self.directory, user.replace(":", "_") + ".kubeconfig")
            write_json(users[user], kubeconfig(server, ca, cert, key))
        admin_cert = issue_user(pki, ADMIN[0], ADMIN[1])
        context = ssl.create_default_context(cafile=ca)
        context.load_cert_chain(*admin_cert)
        self.wait_healthy("kube-apiserver", server + "/readyz", context)

        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # their self-signed serving certificates
        for wanted, name, port, extra in (
                (self.options.scheduler, "kube-scheduler", scheduler_port, []),
                (self.options.controller_manager, "kube-controller-manager", manager_port,
                 ["--controllers=" + ",".join(CONTROLLERS)])):
            if not wanted:
                continue
            component_config = os.path.join(self.run_dir, name + ".kubeconfig")
            cert, key = issue_user(pki, "system:" + name, COMPONENT_GROUPS)
            write_json(component_config, kubeconfig(server, ca, cert, key))
            self.start(name, [
                "--kubeconfig=" + component_config, "--leader-elect=false",
                "--bind-address=127.0.0.1", "--secure-port=%d" % port,
                "--cert-dir=" + os.path.join(self.run_dir, name), *gate_flags, *extra])
            self.wait_healthy(name, "https://127.0.0.1:%d/healthz" % port, insecure)

        self.state = {
            "server": server, "ca": os.path.join(self.directory, "ca.crt"),
            "kubeconfig": users[ADMIN[0]], "users": users, "binaries": self.binaries,
            "feature_gates": gates, "supervisor": os.getpid(), "group": self.group,
            "run_dir": self.run_dir, "directory": self.directory, "restarts": 0}
        self.write_state()

    def write_state(self):
        self.state["pids"] = {name: process.pid for name, process in self.components.items()}
        write_json(os.path.join(self.directory, "state.json"), self.state)

    def restart(self, name):
        """Stops `name` (SIGTERM, SIGKILL after the bound) and starts it again with the same
        arguments, on the same port; the state's restart count says when it is healthy."""
        process = self.components[name]
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self.start(name, self.arguments[name])
        self.wait_healthy(name, *self.health[name])
        self.state["restarts"] += 1
        self.write_state()
        print("supervisor: %s restarted" % name, flush=True)

    def serve(self, watched):
        """Waits for a reason to stop (other than a signal, which raises Stop); returns the
        exit status."""
        watched_fd = os.pidfd_open(watched) if watched else None
        deadline = time.monotonic() + self.options.max_lifetime
        while True:
            readable, _, _ = select.select([watched_fd] if watched_fd is not None else [], [], [],
                                           0.2)
            if self.restart_requested:
                self.restart_requested = False
                self.restart("kube-apiserver")
            if watched_fd in readable:
                print("supervisor: process %d exited: tearing down" % watched, flush=True)
                return 0
            for name, process in self.components.items():
                if process.poll() is not None:
                    print("supervisor: %s exited with %s: tearing down\n"
                          "--- last lines of logs/%s.log ---\n%s" % (
                              name, process.returncode, name,
                              read(os.path.join(self.logs, name + ".log"))[-4000:]), flush=True)
                    return 1
            if time.monotonic() > deadline:
                print("supervisor: --max-lifetime passed: tearing down", flush=True)
                return 1

    def tear_down(self):
        """SIGTERM to each component, the last started first (the API server stops while etcd
        still answers it), then SIGKILL to whatever is left of the group; then the run
        directory."""
        deadline = time.monotonic() + STOP_TIMEOUT
        for process in reversed(list(self.components.values())):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        if self.group:
            try:
                os.killpg(self.group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for process in self.components.values():
            process.wait()
        shutil.rmtree(self.run_dir, ignore_errors=True)


class Stop(BaseException):
    """SIGTERM, SIGINT or SIGHUP reached the supervisor: tear down, at any point."""


def raise_stop(number, frame):
    raise Stop(signal.Signals(number).name)


def supervise(options):
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, raise_stop)
    os.makedirs(os.path.join(options.dir, "logs"), exist_ok=True)
    supervisor = Supervisor(options, options.binaries)
    # SIGUSR1: restart the API server (what a test of a watch across a restart asks for).
    signal.signal(signal.SIGUSR1,
                  lambda number, frame: setattr(supervisor, "restart_requested", True))
    status = 1
    try:
        supervisor.bring_up()
        status = supervisor.serve(options.watch_pid)
    except Stop as stop:
        print("supervisor: %s: tearing down" % stop, flush=True)
        status = 0
    except Exception as error:  # any failure to start: reported to the waiting parent
        write_json(os.path.join(options.dir, "failed.json"), {"error": str(error)})
        print("supervisor: %s" % error, flush=True)
    finally:
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN)  # the teardown is not to be interrupted
        supervisor.tear_down()
        if os.path.exists(os.path.join(options.dir, "state.json")):
            os.unlink(os.path.join(options.dir, "state.json"))  # no longer true
        write_json(os.path.join(options.dir, "stopped.json"), {"status": status})
    return status


# --- the two front ends -------------------------------------------------------------------------

def pid_alive(pid):
    """Whether `pid` exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def group_alive(group):
    try:
        os.killpg(group, 0)
        return True
    except ProcessLookupError:
        return False


class Running:
    """What the suites use of a started control plane: kubectl of the same build, Nodes."""

    def __init__(self, state):
        self.state = state
        self.binaries = state["binaries"]

    @classmethod
    def attach(cls, directory):
        """The control plane `up` started in `directory` (a ctest fixture), or None when there
        is none (`up` skipped)."""
        path = os.path.join(directory, "state.json")
        return cls(json.loads(read(path))) if os.path.exists(path) else None

    @property
    def kubeconfig(self):
        return self.state["kubeconfig"]

    def kubectl(self, *arguments, user=None, check=True, stdin=None, timeout=60):
        """kubectl against this control plane (admin unless `user`): the CompletedProcess."""
        config = self.state["users"][user] if user else self.kubeconfig
        done = subprocess.run([os.path.join(self.binaries, "kubectl"), "--kubeconfig", config,
                               *arguments], input=stdin, capture_output=True, text=True,
                              timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError("kubectl %s: exit %d\n%s%s" % (" ".join(arguments),
                                                             done.returncode, done.stdout,
                                                             done.stderr))
        return done

    def restart_apiserver(self):
        """Restarts kube-apiserver on the same port and data; returns once it is ready."""
        restarts = self.state["restarts"]
        path = os.path.join(self.state["directory"], "state.json")
        os.kill(self.state["supervisor"], signal.SIGUSR1)

        def restarted():
            try:
                return json.loads(read(path))["restarts"] > restarts
            except (FileNotFoundError, ValueError):
                return False
        wait_until(restarted, "kube-apiserver to restart", START_TIMEOUT + STOP_TIMEOUT)
        self.state = json.loads(read(path))

    def create_nodes(self, names, cpu="64", memory="512Gi", pods="110", labels=None):
        """Nodes without a kubelet, with the capacity and allocatable the scheduler reads."""
        resources = {"cpu": cpu, "memory": memory, "pods": pods}
        nodes = [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": dict(labels or {},
                                                             **{"kubernetes.io/hostname": name})},
                  "status": {"capacity": resources, "allocatable": resources,
                             "conditions": [{"type": "Ready", "status": "True",
                                             "reason": "KubeletReady",
                                             "message": "no kubelet: created by the test"}]}}
                 for name in names]
        self.kubectl("create", "-f", "-",
                     stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))


class ControlPlane(Running):
    """A control plane for one suite, as a context manager (or start()/stop())."""

    def __init__(self, directory=None, scheduler=False, controller_manager=False, users=(),
                 feature_gates=None, runtime_config=None, watch_pid=None,
                 start_timeout=START_TIMEOUT, max_lifetime=3600.0,
                 webhook_client_certificate=False):
        super().__init__({"binaries": find_binaries()})
        self.release = release(self.binaries)
        release_gates, release_runtime_config = release_settings(self.release)
        self.owns_directory = directory is None
        self.directory = directory or tempfile.mkdtemp(prefix="topoguard-e2e-")
        self.options = dict(scheduler=scheduler, controller_manager=controller_manager,
                            users=list(users), start_timeout=start_timeout,
                            max_lifetime=max_lifetime,
                            feature_gates=release_gates if feature_gates is None else feature_gates,
                            runtime_config=(release_runtime_config if runtime_config is None
                                            else runtime_config),
                            webhook_client_certificate=webhook_client_certificate)
        self.watch_pid = os.getpid() if watch_pid is None else watch_pid
        self.supervisor = None

    def start(self):
        os.makedirs(os.path.join(self.directory, "logs"), exist_ok=True)
        for stale in ("state.json", "failed.json", "stopped.json", "supervisor.json"):
            if os.path.exists(os.path.join(self.directory, stale)):
                os.unlink(os.path.join(self.directory, stale))
        command = [sys.executable, os.path.abspath(__file__), "supervise", "--dir", self.directory,
                   "--binaries", self.binaries, "--watch-pid", str(self.watch_pid),
                   "--start-timeout", str(self.options["start_timeout"]),
                   "--max-lifetime", str(self.options["max_lifetime"]),
                   "--feature-gates", json.dumps(self.options["feature_gates"]),
                   "--runtime-config", self.options["runtime_config"]]
        if self.options["scheduler"]:
            command.append("--scheduler")
        if self.options["controller_manager"]:
            command.append("--controller-manager")
        if self.options["webhook_client_certificate"]:
            command.append("--webhook-client-certificate")
        for user, groups in self.options["users"]:
            command += ["--user", user + (":" + ",".join(groups) if groups else "")]
        with open(os.path.join(self.directory, "logs", "supervisor.log"), "w") as log:
            # Its own session: a Ctrl-C meant for the test reaches the supervisor only as the
            # watched process's exit, and `up` may exit while it runs on.
            self.supervisor = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                               stderr=subprocess.STDOUT, start_new_session=True)
        state_path = os.path.join(self.directory, "state.json")
        failed_path = os.path.join(self.directory, "failed.json")
        components = 2 + self.options["scheduler"] + self.options["controller_manager"]
        wait_until(lambda: os.path.exists(state_path) or os.path.exists(failed_path),
                   "the control plane to start", self.options["start_timeout"] * components + 30,
                   alive=lambda: self.supervisor.poll() is None or os.path.exists(failed_path))
        if os.path.exists(failed_path):
            self.supervisor.wait(timeout=STOP_TIMEOUT * 2)
            raise RuntimeError("the control plane did not start: " +
                               json.loads(read(failed_path))["error"])
        self.state = json.loads(read(state_path))
        return self

    def stop(self):
        """Tears down and checks that no component is left; idempotent."""
        if self.supervisor is not None:
            stop_supervisor(self.directory, self.supervisor.pid)
            self.supervisor.wait(timeout=STOP_TIMEOUT * 2 + 10)
            self.supervisor = None
            # A component that died under the suite took the control plane with it: say which
            # and why before its logs go.
            said = read(os.path.join(self.directory, "logs", "supervisor.log"))
            if " exited with " in said:
                sys.stderr.write(said[said.index("supervisor: "):][-6000:] + "\n")
        if self.owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exception):
        self.stop()


def stop_supervisor(directory, pid):
    """SIGTERM to the supervisor, then waits (bounded) for it and every component to be gone;
    RuntimeError naming whatever is left."""
    state_path = os.path.join(directory, "state.json")
    state = json.loads(read(state_path)) if os.path.exists(state_path) else {}
    if pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
    pids = list(state.get("pids", {}).values())
    group = state.get("group")
    wait_until(lambda: not pid_alive(pid) and not any(pid_alive(p) for p in pids) and
               not (group and group_alive(group)),
               "the control plane to stop", STOP_TIMEOUT * 2 + 10)


def command_up(options):
    try:
        plane = ControlPlane(
            directory=os.path.abspath(options.dir), scheduler=options.scheduler,
            controller_manager=options.controller_manager, users=options.user,
            watch_pid=os.getppid() if options.watch_pid is None else options.watch_pid,
            start_timeout=options.start_timeout,
            max_lifetime=options.max_lifetime,
            webhook_client_certificate=options.webhook_client_certificate)
    except BinariesMissing as missing:
        print("SKIP: control-plane binaries not built: %s" % missing)
        return SKIP
    try:
        plane.start()
    except RuntimeError as error:
        print("control_plane.py up: %s" % error, file=sys.stderr)
        return 1
    print("control plane up: %s (kubeconfig %s)" % (plane.state["server"],
                                                   plane.state["kubeconfig"]))
    return 0


def command_down(options):
    directory = os.path.abspath(options.dir)
    path = os.path.join(directory, "supervisor.json")
    if not os.path.exists(path):
        print("nothing to stop in %s" % directory)
        return 0
    supervisor = json.loads(read(path))
    stop_supervisor(directory, supervisor["pid"])
    shutil.rmtree(supervisor["run_dir"], ignore_errors=True)  # if the supervisor was killed
    os.unlink(path)
    print("control plane down")
    return 0


def parse_user(text):
    user, _, groups = text.partition(":")
    return (user, tuple(group for group in groups.split(",") if group))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start and return once ready")
    down = commands.add_parser("down", help="stop what `up` started in --dir")
    supervisor = commands.add_parser("supervise", help="(internal) the supervisor process")
    for command in (up, down, supervisor):
        command.add_argument("--dir", required=True)
    for command in (up, supervisor):
        command.add_argument("--scheduler", action="store_true")
        command.add_argument("--controller-manager", action="store_true")
        command.add_argument("--user", action="append", default=[], type=parse_user,
                             help="NAME[:GROUP,...]: a client-certificate user and kubeconfig")
        command.add_argument("--start-timeout", type=float, default=START_TIMEOUT)
        command.add_argument("--max-lifetime", type=float, default=3600.0,
                             help="seconds after which everything is torn down regardless")
        command.add_argument("--webhook-client-certificate", action="store_true",
                             help="the API server presents a client certificate of the "
                             "cluster CA (ca.crt) to every webhook (CN %s)" % WEBHOOK_CLIENT)
    up.add_argument("--watch-pid", type=int,
                    help="tear down when this process exits (default: the caller, such as "
                    "ctest; 0: only `down` or --max-lifetime)")
    supervisor.add_argument("--binaries", required=True)
    supervisor.add_argument("--watch-pid", type=int, default=0)
    supervisor.add_argument("--feature-gates", type=json.loads, default={})
    supervisor.add_argument("--runtime-config", default="")
    options = parser.parse_args(argv)
    if options.command == "up":
        return command_up(options)
    if options.command == "down":
        return command_down(options)
    return supervise(options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
