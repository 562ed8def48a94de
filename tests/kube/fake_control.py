"""Starting tests/kube/fake_apiserver.py from a Python test and driving its control endpoints."""

import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TRUE_VALUES = ("1", "t", "T", "true", "True", "TRUE")  # Go's strconv.ParseBool, as the server


def wait_until(predicate, what, limit=10.0):
    """Polls `predicate` until it holds; fails naming `what` when it still does not after
    `limit` seconds (instead of sleeping for a time the condition is hoped to take)."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %g s waiting for %s" % (limit, what))
        time.sleep(0.02)


def serving_metrics_listen(log_path):
    """The metrics address `topoguard serve` logged with its "serving" line in `log_path` (its
    JSON log), or None while it has not logged it."""
    for line in open(log_path):
        try:
            entry = json.loads(line)
        except ValueError:  # a line still being written
            continue
        if entry.get("msg") == "serving":
            return entry["metrics_listen"]
    return None


class FakeApiServer:
    """The fake API server as a child process on 127.0.0.1, with a fresh certificate."""

    def __init__(self, *arguments, tokens=("test-token",)):
        self.directory = tempfile.TemporaryDirectory(prefix="fake-apiserver-")
        command = [sys.executable, os.path.join(HERE, "fake_apiserver.py"), "--tls-dir",
                   os.path.join(self.directory.name, "tls")]
        for token in tokens:
            command += ["--token", token]
        command += list(arguments)
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the fake API server did not start")
        self.info = json.loads(line)
        self.server = self.info["server"]
        self.ca = self.info["ca"]
        self.context = ssl.create_default_context(cafile=self.ca)

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.directory.cleanup()

    def control(self, action, body=None):
        data = json.dumps(body or {}).encode()
        request = urllib.request.Request(self.server + "/_fake/" + action, data=data,
                                         method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=self.context) as response:
            return json.loads(response.read())

    def requests(self):
        with urllib.request.urlopen(self.server + "/_fake/requests",
                                    context=self.context) as response:
            return json.loads(response.read())

    def watches_started(self, path):
        """How many watches of `path` the server has opened so far."""
        return sum(1 for request in self.requests()
                   if request["path"] == path and request["status"] == 200 and
                   request["query"].get("watch", [""])[0] in TRUE_VALUES)

    def state(self):
        with urllib.request.urlopen(self.server + "/_fake/state",
                                    context=self.context) as response:
            return json.loads(response.read())

    def kubeconfig(self, token="test-token", client_cert=False):
        """Writes a kubeconfig for this server and returns its path."""
        user = {"token": token} if not client_cert else {
            "client-certificate": self.info["clientCert"], "client-key": self.info["clientKey"]}
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.server,
                                                       "certificate-authority": self.ca}}],
            "users": [{"name": "tester", "user": user}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "tester"}}],
        }
        path = os.path.join(self.directory.name, "kubeconfig-%s-%d" % (token, client_cert))
        with open(path, "w") as handle:
            json.dump(config, handle)  # JSON is YAML
        return path
