#!/usr/bin/python3
"""A fake Kubernetes API server for tests: Python 3 standard library only (http.server, ssl).

It answers as kube-apiserver does on the paths a list/watch client uses, so that topoguard's
client can be tested without a cluster, and it is itself checked against real clients
(tests/kube/python_client_test.py with Debian's python3-kubernetes, tests/kube/node_informer_test.mjs
with @kubernetes/client-node) so that it cannot drift from the real server:

- HTTPS on 127.0.0.1 with a certificate made at start (openssl CLI) for 127.0.0.1, ::1, localhost
  and kubernetes.default.svc; clients authenticate with bearer tokens (revocable: 401 with a
  Status body) or client certificates signed by the same CA.
- Resources are data: core, apps, batch, resource.k8s.io/v1, scheduling.k8s.io/v1 by default,
  more with --resources FILE or the control endpoint; any other path answers 404 with a Status.
- LIST: items without kind/apiVersion, `limit` + `continue` pages served from a snapshot taken at
  the first page (one resourceVersion per list), continue tokens that expire (410 Expired; on
  command, after --continue-ttl seconds, or at compaction); resourceVersion together with
  continue is 400.
- WATCH (`watch=true`): chunked stream of newline-terminated JSON events. Chunk boundaries are
  random by default (events split across chunks, several events in one chunk); `event` gives one
  chunk per event as the real server, `byte` one chunk per byte. BOOKMARK events when
  allowWatchBookmarks (every --bookmark-interval seconds and just before the deadline); clean
  close at timeoutSeconds; a resourceVersion older than the last compaction is answered with an
  in-stream ERROR 410 event (as the watch cache does) or, configured, HTTP 410; a version newer
  than the server's is 504 with Retry-After; version "" or "0" replays the current objects as
  ADDED. Streaming lists (sendInitialEvents=true, resourceVersionMatch=NotOlderThan) when the
  WatchList gate is on (--watch-list), else 422 as the real server.
- 429 with Retry-After (and a Status with details.retryAfterSeconds) on command.
- Writes through the API: POST (create), PUT (update, optimistic concurrency), DELETE.
- /version, /api, /apis, /api/v1, /apis/GROUP, /apis/GROUP/VERSION discovery, /healthz, /readyz.

Control endpoints (tests only, no authentication), JSON bodies, POST unless noted:
  /_fake/objects          {"type": "ADDED|MODIFIED|DELETED", "object": {...}} or {"events": [...]}
  /_fake/tokens           {"add": [...], "revoke": [...]}
  /_fake/compact          {}: history up to now is gone (old watches and continue tokens: 410)
  /_fake/expire-watches   {}: open watches get an ERROR 410 event and end
  /_fake/close-watches    {}: open watches end cleanly (after a last bookmark, unless
                          {"bookmark": false}: as when the server goes away)
  /_fake/cut-watches      {}: open watches send half an event and drop the connection
  /_fake/inject           {"raw": TEXT}: open watches send TEXT as it is (a malformed event)
  /_fake/expire-continue  {}: every continue token issued so far expires; {"next": N}: and
                          the next N continue requests are answered 410 as well
  /_fake/throttle         {"count": N, "retryAfter": S, "status": 429, "match": "path substring"}
  /_fake/config           {"tooOldMode": "stream|http", "chunking": "random|event|byte",
                           "bookmarkInterval": S, "watchList": bool, "continueTtl": S,
                           "listChunked": bool (lists sent chunked too),
                           "idleTimeout": S (new connections close after S idle seconds)}
  /_fake/resources        {"add": [{"group", "version", "resource", "kind", "namespaced"}],
                           "remove": [{"group", "version", "resource"}]}
  GET /_fake/requests     the requests served so far (method, path, query, auth, status)
  GET /_fake/state        {"resourceVersion": ..., "watches": open watch count}

Start: fake_apiserver.py --tls-dir DIR [--port 0] [--token T]... [--state FILE]. When listening
it prints one JSON line on stdout: {"port", "ca", "clientCert", "clientKey", "server"}.
"""

import argparse
import base64
import copy
import datetime
import http.server
import json
import os
import random
import re
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
import uuid

DEFAULT_RESOURCES = [
    # group, version, resource, kind, namespaced
    ("", "v1", "namespaces", "Namespace", False),
    ("", "v1", "nodes", "Node", False),
    ("", "v1", "pods", "Pod", True),
    ("", "v1", "configmaps", "ConfigMap", True),
    ("", "v1", "services", "Service", True),
    ("apps", "v1", "deployments", "Deployment", True),
    ("apps", "v1", "daemonsets", "DaemonSet", True),
    ("apps", "v1", "statefulsets", "StatefulSet", True),
    ("apps", "v1", "replicasets", "ReplicaSet", True),
    ("batch", "v1", "jobs", "Job", True),
    ("batch", "v1", "cronjobs", "CronJob", True),
    ("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    ("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    ("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True),
    ("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    ("resource.k8s.io", "v1alpha3", "devicetaintrules", "DeviceTaintRule", False),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
]

TRUE_WORDS = {"1", "t", "T", "TRUE", "true", "True"}
FALSE_WORDS = {"0", "f", "F", "FALSE", "false", "False"}

CONTINUE_EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.")


def version_priority(version):
    """Sort key of Kubernetes version priority, as discovery lists a group's versions (the first
    is preferredVersion): GA before beta before alpha, higher numbers first, then others by
    name (apimachinery's version.CompareKubeAwareVersionStrings)."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0, version)
    level = {"alpha": 2, "beta": 1, None: 0}[match.group(2)]
    return (level, -int(match.group(1)), -int(match.group(3) or 0), version)


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_body(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return body


class ApiError(Exception):
    """An answer with a Status body (raised inside handlers)."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.body = status_body(code, reason, message, details)
        self.headers = headers or {}


def parse_bool(query, name):
    """Go's strconv.ParseBool, as the API server parses boolean query parameters."""
    values = query.get(name)
    if not values:
        return False
    value = values[0]
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ApiError(400, "BadRequest",
                   'strconv.ParseBool: parsing "%s": invalid syntax' % value)


def query_value(query, name, default=None):
    values = query.get(name)
    return values[0] if values else default


class Resource:
    def __init__(self, group, version, resource, kind, namespaced):
        self.group = group
        self.version = version
        self.resource = resource
        self.kind = kind
        self.namespaced = namespaced

    @property
    def api_version(self):
        return self.version if not self.group else "%s/%s" % (self.group, self.version)

    @property
    def key(self):
        return (self.group, self.version, self.resource)

    def discovery(self):
        singular = self.kind.lower()
        return {"name": self.resource, "singularName": singular, "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["create", "delete", "get", "list", "update", "watch"]}


class Store:
    """Objects per resource, the event history and everything the control endpoints change.
    One lock (and condition) guards it all; watches wait on the condition."""

    def __init__(self, config):
        self.cond = threading.Condition()
        self.resources = {}
        for entry in DEFAULT_RESOURCES:
            self.add_resource(Resource(*entry))
        self.objects = {}  # resource key -> {(namespace, name): object}
        self.history = []  # (rv, type, resource key, object) in rv order
        self.rv = 1000     # etcd-like revision; as strings on the wire
        self.compacted_rv = self.rv
        self.tokens = set()
        self.snapshots = {}  # continue snapshot id -> (rv, created, [objects sorted by key])
        self.throttle = []  # [{"count", "retryAfter", "status", "match"}]
        self.expire_next_continue = 0  # continue requests still to answer 410
        self.expire_generation = 0
        self.close_generation = 0
        self.close_with_bookmark = True
        self.cut_generation = 0
        self.injected = []  # (sequence, raw text) for open watches
        self.open_watches = 0
        self.requests = []
        self.config = config

    def add_resource(self, resource):
        self.resources[resource.key] = resource

    def find_resource(self, group, version, name):
        return self.resources.get((group, version, name))

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def bucket(self, resource):
        return self.objects.setdefault(resource.key, {})

    def apply(self, event_type, obj):
        """Applies an event (from the control endpoint or an API write); returns the object as
        stored. Called with the lock held."""
        resource = self.resource_for_object(obj)
        metadata = obj.setdefault("metadata", {})
        name = metadata.get("name")
        if not name:
            raise ApiError(422, "Invalid", "metadata.name: Required value: name is required")
        namespace = metadata.get("namespace", "") if resource.namespaced else ""
        if resource.namespaced and not namespace:
            raise ApiError(422, "Invalid", "metadata.namespace: Required value")
        if not resource.namespaced:
            metadata.pop("namespace", None)
        bucket = self.bucket(resource)
        key = (namespace, name)
        obj["apiVersion"] = resource.api_version
        obj["kind"] = resource.kind
        if event_type == "DELETED":
            old = bucket.pop(key, None)
            if old is None:
                raise ApiError(404, "NotFound", '%s "%s" not found' % (resource.resource, name),
                               {"name": name, "group": resource.group, "kind": resource.resource})
            stored = copy.deepcopy(old)
            stored["metadata"]["resourceVersion"] = self.next_rv()
        else:
            old = bucket.get(key)
            if event_type == "ADDED" and old is not None:
                event_type = "MODIFIED"
            if event_type == "MODIFIED" and old is None:
                event_type = "ADDED"
            if old is not None:
                metadata.setdefault("uid", old["metadata"].get("uid"))
                metadata.setdefault("creationTimestamp", old["metadata"].get("creationTimestamp"))
            metadata.setdefault("uid", str(uuid.uuid4()))
            metadata.setdefault("creationTimestamp", now_rfc3339())
            metadata["resourceVersion"] = self.next_rv()
            stored = copy.deepcopy(obj)
            bucket[key] = stored
        self.history.append((self.rv, event_type, resource.key, copy.deepcopy(stored)))
        self.cond.notify_all()
        return stored

    def resource_for_object(self, obj):
        api_version = obj.get("apiVersion", "")
        kind = obj.get("kind", "")
        group, _, version = api_version.rpartition("/")
        for resource in self.resources.values():
            if resource.group == group and resource.version == version and resource.kind == kind:
                return resource
        raise ApiError(404, "NotFound", "no resource for %s %s" % (api_version, kind))

    def compact(self):
        self.compacted_rv = self.rv
        self.history = [entry for entry in self.history if entry[0] > self.compacted_rv]
        self.snapshots.clear()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler, tls_context, store):
        self.tls_context = tls_context
        self.store = store
        super().__init__(address, handler)

    def finish_request(self, request, client_address):
        # The handshake runs on the connection's own thread, not on the accepting one.
        try:
            request.settimeout(self.store.config.get("idleTimeout", 30))
            tls = self.tls_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as error:
            if self.store.config.get("verbose"):
                sys.stderr.write("fake-apiserver: TLS handshake: %s\n" % error)
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        pass


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-apiserver"
    sys_version = ""

    def log_message(self, format, *args):  # noqa: A002 (BaseHTTPRequestHandler's name)
        if self.server.store.config.get("verbose"):
            sys.stderr.write("fake-apiserver: " + (format % args) + "\n")

    # ---- plumbing -------------------------------------------------------------------------

    @property
    def store(self):
        return self.server.store

    def read_body(self):
        data = self.raw_body
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            raise ApiError(400, "BadRequest", "the body is not JSON")

    def send_json(self, code, body, headers=None):
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.store.config.get("listChunked") and code == 200 and len(data) > 64:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.write_chunks(data, "random", random.Random(len(data)))
            self.write_raw(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.write_raw(data)
        self.record(code)

    def write_raw(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def write_chunks(self, data, mode, rng):
        offset = 0
        while offset < len(data):
            if mode == "byte":
                size = 1
            elif mode == "random":
                size = rng.randint(1, 400)
            else:
                size = len(data)
            piece = data[offset:offset + size]
            offset += len(piece)
            self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
        self.wfile.flush()

    def record(self, code):
        auth = getattr(self, "auth", "none")
        with self.store.cond:
            self.store.requests.append({
                "method": self.command, "path": self.parsed.path,
                "query": urllib.parse.parse_qs(self.parsed.query, keep_blank_values=True),
                "auth": auth, "status": code, "time": time.time(),
                "peer": self.client_address[1] if self.client_address else 0})
            del self.store.requests[:-20000]

    def authenticate(self):
        header = self.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            token = header[len("Bearer "):].strip()
            with self.store.cond:
                if token in self.store.tokens:
                    self.auth = "bearer:" + token
                    return
            self.auth = "bearer-rejected:" + token
            raise ApiError(401, "Unauthorized", "Unauthorized")
        certificate = self.connection.getpeercert()
        if certificate:
            for rdn in certificate.get("subject", ()):
                for name, value in rdn:
                    if name == "commonName":
                        self.auth = "cert:" + value
                        return
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def throttled(self):
        with self.store.cond:
            for rule in self.store.throttle:
                if rule["count"] > 0 and rule.get("match", "") in self.path:
                    rule["count"] -= 1
                    return rule
        return None

    # ---- dispatch -------------------------------------------------------------------------

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def dispatch(self):
        self.parsed = urllib.parse.urlsplit(self.path)
        self.query = urllib.parse.parse_qs(self.parsed.query, keep_blank_values=True)
        self.auth = "none"
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if self.headers.get("Transfer-Encoding"):
            self.send_error(411)
            self.close_connection = True
            return
        self.raw_body = self.rfile.read(length) if length > 0 else b""
        try:
            if self.parsed.path.startswith("/_fake/"):
                self.control()
                return
            self.authenticate()
            rule = self.throttled()
            if rule is not None:
                seconds = int(rule.get("retryAfter", 1))
                code = int(rule.get("status", 429))
                if code == 429:
                    raise ApiError(429, "TooManyRequests",
                                   "Too many requests, please try again later.",
                                   {"retryAfterSeconds": seconds},
                                   {"Retry-After": str(seconds)})
                raise ApiError(code, "ServiceUnavailable" if code == 503 else "InternalError",
                               "the server is currently unable to handle the request",
                               {"retryAfterSeconds": seconds}, {"Retry-After": str(seconds)})
            self.route()
        except ApiError as error:
            self.send_json(error.code, error.body, error.headers)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True
        except Exception as error:  # a bug of the fake or a malformed control body
            traceback.print_exc()
            self.send_json(500, status_body(500, "InternalError", "fake: %r" % error))

    def route(self):
        parts = [urllib.parse.unquote(p) for p in self.parsed.path.split("/") if p]
        if self.command == "GET" and self.parsed.path in ("/healthz", "/readyz", "/livez"):
            data = b"ok"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.write_raw(data)
            self.record(200)
            return
        if self.command == "GET" and parts == ["version"]:
            self.send_json(200, {"major": "1", "minor": "34", "gitVersion": "v1.34.0-fake",
                                 "gitCommit": "0" * 40, "gitTreeState": "clean",
                                 "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.24.0",
                                 "compiler": "gc", "platform": "linux/amd64"})
            return
        if parts and parts[0] == "api":
            if len(parts) == 1 and self.command == "GET":
                self.send_json(200, {"kind": "APIVersions", "versions": ["v1"],
                                     "serverAddressByClientCIDRs": [
                                         {"clientCIDR": "0.0.0.0/0",
                                          "serverAddress": "127.0.0.1:%d" %
                                          self.server.server_address[1]}]})
                return
            if len(parts) >= 2:
                self.resource_request("", parts[1], parts[2:])
                return
        if parts and parts[0] == "apis":
            if len(parts) == 1 and self.command == "GET":
                self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                     "groups": self.groups()})
                return
            if len(parts) == 2 and self.command == "GET":
                for group in self.groups():
                    if group["name"] == parts[1]:
                        body = dict(group)
                        body.update({"kind": "APIGroup", "apiVersion": "v1"})
                        self.send_json(200, body)
                        return
            if len(parts) >= 3:
                self.resource_request(parts[1], parts[2], parts[3:])
                return
        raise ApiError(404, "NotFound", "the server could not find the requested resource", {})

    def groups(self):
        with self.store.cond:
            versions = {}
            for resource in self.store.resources.values():
                if resource.group:
                    versions.setdefault(resource.group, [])
                    if resource.version not in versions[resource.group]:
                        versions[resource.group].append(resource.version)
        groups = []
        for name in sorted(versions):
            entries = [{"groupVersion": "%s/%s" % (name, v), "version": v}
                       for v in sorted(versions[name], key=version_priority)]
            groups.append({"name": name, "versions": entries, "preferredVersion": entries[0]})
        return groups

    def resource_request(self, group, version, rest):
        with self.store.cond:
            served = [r for r in self.store.resources.values()
                      if r.group == group and r.version == version]
        if not served:
            raise ApiError(404, "NotFound", "the server could not find the requested resource",
                           {})
        if not rest:
            if self.command != "GET":
                raise ApiError(405, "MethodNotAllowed",
                               "the server does not allow this method on the requested resource")
            self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                 "groupVersion": group + "/" + version if group else version,
                                 "resources": [r.discovery() for r in served]})
            return
        namespace = ""
        # /namespaces/NS/RESOURCE[/NAME]; /namespaces and /namespaces/NAME are the Namespace
        # resource itself.
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace = rest[1]
            rest = rest[2:]
        if len(rest) > 2:
            raise ApiError(404, "NotFound", "the server could not find the requested resource",
                           {})
        with self.store.cond:
            resource = self.store.find_resource(group, version, rest[0])
        if resource is None or (namespace and not resource.namespaced):
            raise ApiError(404, "NotFound", "the server could not find the requested resource",
                           {})
        name = rest[1] if len(rest) == 2 else None
        if name is None:
            if self.command == "GET":
                if parse_bool(self.query, "watch"):
                    self.watch(resource, namespace)
                else:
                    self.list(resource, namespace)
            elif self.command == "POST":
                self.create(resource, namespace)
            else:
                raise ApiError(405, "MethodNotAllowed",
                               "the server does not allow this method on the requested resource")
            return
        if resource.namespaced and not namespace:
            raise ApiError(404, "NotFound", "the server could not find the requested resource",
                           {})
        if self.command == "GET":
            self.get(resource, namespace, name)
        elif self.command == "PUT":
            self.update(resource, namespace, name)
        elif self.command == "DELETE":
            self.delete(resource, namespace, name)
        else:
            raise ApiError(405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource")

    # ---- reads ----------------------------------------------------------------------------

    def not_found(self, resource, name):
        return ApiError(404, "NotFound", '%s "%s" not found' % (
            resource.resource if not resource.group
            else resource.resource + "." + resource.group, name),
            {"name": name, "group": resource.group, "kind": resource.resource})

    def get(self, resource, namespace, name):
        with self.store.cond:
            obj = self.store.bucket(resource).get((namespace, name))
            obj = copy.deepcopy(obj)
        if obj is None:
            raise self.not_found(resource, name)
        self.send_json(200, obj)

    def selected(self, obj, namespace):
        metadata = obj.get("metadata", {})
        if namespace and metadata.get("namespace") != namespace:
            return False
        labels = metadata.get("labels") or {}
        selector = query_value(self.query, "labelSelector", "")
        for term in filter(None, selector.split(",")):
            if "!=" in term:
                key, value = term.split("!=", 1)
                if labels.get(key.strip()) == value.strip():
                    return False
            elif "=" in term:
                key, value = term.replace("==", "=").split("=", 1)
                if labels.get(key.strip()) != value.strip():
                    return False
            elif term.startswith("!"):
                if term[1:].strip() in labels:
                    return False
            elif term.strip() not in labels:
                return False
        fields = query_value(self.query, "fieldSelector", "")
        for term in filter(None, fields.split(",")):
            key, _, value = term.replace("==", "=").partition("=")
            if key == "metadata.name" and metadata.get("name") != value:
                return False
            if key == "metadata.namespace" and metadata.get("namespace") != value:
                return False
        return True

    def list(self, resource, namespace):
        continue_token = query_value(self.query, "continue", "")
        resource_version = query_value(self.query, "resourceVersion", "")
        limit_text = query_value(self.query, "limit", "0")
        try:
            limit = int(limit_text)
        except ValueError:
            raise ApiError(400, "BadRequest", "limit: Invalid value: %r" % limit_text)
        config = self.store.config
        with self.store.cond:
            if continue_token:
                if resource_version:
                    raise ApiError(400, "BadRequest",
                                   "specifying resource version is not allowed when using "
                                   "continue")
                try:
                    decoded = json.loads(base64.urlsafe_b64decode(continue_token + "==="))
                    snapshot_id, start = decoded["id"], decoded["start"]
                except (ValueError, KeyError, TypeError):
                    raise ApiError(400, "BadRequest", "continue key is not valid: %s"
                                   % "incorrect encoded start resourceVersion (version "
                                   "meta.k8s.io/v1)")
                snapshot = self.store.snapshots.get(snapshot_id)
                ttl = config.get("continueTtl", 300)
                if self.store.expire_next_continue > 0:
                    self.store.expire_next_continue -= 1
                    snapshot = None
                if snapshot is None or time.time() - snapshot[1] > ttl:
                    self.store.snapshots.pop(snapshot_id, None)
                    raise ApiError(410, "Expired", CONTINUE_EXPIRED_MESSAGE)
                rv, _, items = snapshot
            else:
                snapshot_id = uuid.uuid4().hex
                rv = str(self.store.rv)
                items = [copy.deepcopy(obj) for _, obj in
                         sorted(self.store.bucket(resource).items())
                         if self.selected(obj, namespace)]
                start = 0
            page = items[start:start + limit] if limit > 0 else items[start:]
            remaining = len(items) - start - len(page)
            metadata = {"resourceVersion": rv}
            if remaining > 0:
                self.store.snapshots[snapshot_id] = (rv, time.time() if not continue_token
                                                     else self.store.snapshots[snapshot_id][1],
                                                     items)
                token = {"v": "meta.k8s.io/v1", "rv": int(rv), "id": snapshot_id,
                         "start": start + len(page)}
                metadata["continue"] = base64.urlsafe_b64encode(
                    json.dumps(token).encode()).decode().rstrip("=")
                metadata["remainingItemCount"] = remaining
            elif continue_token:
                self.store.snapshots.pop(snapshot_id, None)
        out = []
        for obj in page:
            obj = dict(obj)
            obj.pop("kind", None)  # list items carry no kind (kubernetes#3030)
            obj.pop("apiVersion", None)
            out.append(obj)
        self.send_json(200, {"kind": resource.kind + "List", "apiVersion": resource.api_version,
                             "metadata": metadata, "items": out})

    def watch(self, resource, namespace):
        store = self.store
        config = store.config
        resource_version = query_value(self.query, "resourceVersion", "")
        bookmarks = parse_bool(self.query, "allowWatchBookmarks")
        initial_events = parse_bool(self.query, "sendInitialEvents")
        try:
            timeout = int(query_value(self.query, "timeoutSeconds", "1800"))
        except ValueError:
            raise ApiError(400, "BadRequest", "timeoutSeconds: invalid value")
        if "sendInitialEvents" in self.query:
            if not config.get("watchList"):
                raise ApiError(422, "Invalid",
                               "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: "
                               "Forbidden: sendInitialEvents is forbidden for watch unless the "
                               "WatchList feature gate is enabled")
            if (query_value(self.query, "resourceVersionMatch", "") != "NotOlderThan"
                    or not bookmarks):
                raise ApiError(422, "Invalid",
                               "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
                               "Forbidden: sendInitialEvents requires setting "
                               "resourceVersionMatch to NotOlderThan, allowWatchBookmarks: "
                               "Required value")
        too_old = False
        with store.cond:
            replay = resource_version in ("", "0") or initial_events
            if not replay or (initial_events and resource_version not in ("", "0")):
                try:
                    start_rv = int(resource_version)
                except ValueError:
                    raise ApiError(400, "BadRequest",
                                   "resourceVersion: Invalid value: %r" % resource_version)
                if start_rv > store.rv:
                    raise ApiError(504, "Timeout",
                                   "Too large resource version: %d, current: %d"
                                   % (start_rv, store.rv),
                                   {"causes": [{"reason": "ResourceVersionTooLarge",
                                                "message": "Too large resource version"}],
                                    "retryAfterSeconds": 1},
                                   {"Retry-After": "1"})
                if start_rv < store.compacted_rv:
                    too_old = True
                    if config.get("tooOldMode", "stream") == "http":
                        raise ApiError(410, "Expired", "too old resource version: %d (%d)"
                                       % (start_rv, store.compacted_rv))
            initial = []
            if replay:
                initial = [copy.deepcopy(obj) for _, obj in
                           sorted(store.bucket(resource).items()) if self.selected(obj, namespace)]
                cursor_rv = store.rv
            else:
                cursor_rv = int(resource_version)
            expire_generation = store.expire_generation
            close_generation = store.close_generation
            cut_generation = store.cut_generation
            injected_seen = len(store.injected)
            store.open_watches += 1
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.record(200)
            self.stream(resource, namespace, initial, initial_events, cursor_rv, too_old,
                        bookmarks, timeout, (expire_generation, close_generation,
                                             cut_generation, injected_seen))
        finally:
            with store.cond:
                store.open_watches -= 1

    def stream(self, resource, namespace, initial, initial_events, cursor_rv, too_old, bookmarks,
               timeout, generations):
        expire_generation, close_generation, cut_generation, injected_seen = generations
        store = self.store
        rng = random.Random(hash((cursor_rv, time.time())))
        deadline = time.monotonic() + timeout
        pending = []

        def event(kind, obj):
            return json.dumps({"type": kind, "object": obj}, separators=(",", ":")) + "\n"

        def bookmark(rv, annotations=None):
            metadata = {"resourceVersion": str(rv)}
            if annotations:
                metadata["annotations"] = annotations
            return event("BOOKMARK", {"kind": resource.kind, "apiVersion": resource.api_version,
                                      "metadata": metadata})

        if too_old:
            pending.append(event("ERROR", status_body(
                410, "Expired", "too old resource version: %d (%d)"
                % (cursor_rv, store.compacted_rv))))
            self.flush_events(pending, rng)
            self.write_raw(b"0\r\n\r\n")
            return
        for obj in initial:
            pending.append(event("ADDED", obj))
        if initial_events:
            pending.append(bookmark(cursor_rv, {"k8s.io/initial-events-end": "true"}))
        interval = store.config.get("bookmarkInterval", 60)
        next_bookmark = time.monotonic() + interval
        sent_rv = cursor_rv
        while True:
            self.flush_events(pending, rng)
            pending = []
            with store.cond:
                while True:
                    now = time.monotonic()
                    if store.expire_generation != expire_generation:
                        pending.append(event("ERROR", status_body(
                            410, "Expired", "too old resource version: %d (%d)"
                            % (sent_rv, store.rv))))
                        ending = "expired"
                        break
                    if store.close_generation != close_generation:
                        ending = "closed" if store.close_with_bookmark else "dropped"
                        break
                    if now >= deadline:
                        ending = "closed"
                        break
                    if store.cut_generation != cut_generation:
                        ending = "cut"
                        break
                    if len(store.injected) > injected_seen:
                        pending.extend(store.injected[injected_seen:])
                        injected_seen = len(store.injected)
                        ending = None
                        fresh = []
                        break
                    fresh = [entry for entry in store.history if entry[0] > cursor_rv]
                    if fresh:
                        ending = None
                        break
                    if bookmarks and now >= next_bookmark:
                        ending = None
                        break
                    wake = min(deadline, next_bookmark if bookmarks else deadline)
                    store.cond.wait(max(0.01, wake - now))
                if ending is None:
                    for rv, kind, key, obj in fresh:
                        cursor_rv = rv
                        if key == resource.key and self.selected(obj, namespace):
                            pending.append(event(kind, obj))
                            sent_rv = rv
                    if bookmarks and time.monotonic() >= next_bookmark:
                        pending.append(bookmark(store.rv))
                        cursor_rv = max(cursor_rv, store.rv)
                        next_bookmark = time.monotonic() + interval
            if ending == "cut":
                # Half an event, then the connection drops without the chunked terminator.
                self.flush_events(pending, rng)
                self.write_chunks(b'{"type":"ADDED","object":{"kind":', "event", rng)
                self.close_connection = True
                return
            if ending is not None:
                if ending == "closed" and bookmarks:
                    pending.append(bookmark(cursor_rv))
                self.flush_events(pending, rng)
                self.write_raw(b"0\r\n\r\n")
                return

    def flush_events(self, pending, rng):
        mode = self.store.config.get("chunking", "random")
        if mode == "event":
            for one in pending:
                self.write_chunks(one.encode(), mode, rng)
        elif pending:
            self.write_chunks("".join(pending).encode(), mode, rng)

    # ---- writes ---------------------------------------------------------------------------

    def body_object(self, resource, namespace):
        obj = self.read_body()
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body must be an object")
        obj["apiVersion"] = resource.api_version
        obj["kind"] = resource.kind
        metadata = obj.setdefault("metadata", {})
        if resource.namespaced:
            if metadata.get("namespace", namespace) != namespace:
                raise ApiError(400, "BadRequest",
                               "the namespace of the provided object does not match the "
                               "namespace sent on the request")
            metadata["namespace"] = namespace
        return obj

    def create(self, resource, namespace):
        obj = self.body_object(resource, namespace)
        metadata = obj["metadata"]
        if not metadata.get("name") and metadata.get("generateName"):
            metadata["name"] = metadata["generateName"] + uuid.uuid4().hex[:5]
        metadata.pop("resourceVersion", None)
        with self.store.cond:
            if (namespace, metadata.get("name")) in self.store.bucket(resource):
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (resource.resource, metadata.get("name")),
                               {"name": metadata.get("name"), "group": resource.group,
                                "kind": resource.resource})
            stored = self.store.apply("ADDED", obj)
        self.send_json(201, stored)

    def update(self, resource, namespace, name):
        obj = self.body_object(resource, namespace)
        metadata = obj["metadata"]
        if metadata.get("name", name) != name:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (metadata.get("name"), name))
        metadata["name"] = name
        with self.store.cond:
            old = self.store.bucket(resource).get((namespace, name))
            if old is None:
                raise self.not_found(resource, name)
            wanted = metadata.get("resourceVersion")
            if wanted and wanted != old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict",
                               'Operation cannot be fulfilled on %s "%s": the object has been '
                               'modified; please apply your changes to the latest version and '
                               'try again' % (resource.resource, name),
                               {"name": name, "group": resource.group,
                                "kind": resource.resource})
            stored = self.store.apply("MODIFIED", obj)
        self.send_json(200, stored)

    def delete(self, resource, namespace, name):
        self.read_body()  # DeleteOptions, ignored
        with self.store.cond:
            old = self.store.bucket(resource).get((namespace, name))
            if old is None:
                raise self.not_found(resource, name)
            stored = self.store.apply("DELETED", copy.deepcopy(old))
        self.send_json(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                             "status": "Success",
                             "details": {"name": name, "group": resource.group,
                                         "kind": resource.resource,
                                         "uid": stored["metadata"].get("uid")}})

    # ---- control --------------------------------------------------------------------------

    def control(self):
        store = self.store
        action = self.parsed.path[len("/_fake/"):]
        if self.command == "GET" and action == "requests":
            with store.cond:
                body = list(store.requests)
            self.send_json(200, body)
            return
        if self.command == "GET" and action == "state":
            with store.cond:
                body = {"resourceVersion": str(store.rv), "watches": store.open_watches,
                        "compactedResourceVersion": str(store.compacted_rv)}
            self.send_json(200, body)
            return
        if self.command != "POST":
            raise ApiError(405, "MethodNotAllowed", "control endpoints take POST")
        body = self.read_body() or {}
        result = {}
        with store.cond:
            if action == "objects":
                events = body.get("events") or [body]
                stored = [store.apply(e.get("type", "ADDED"), copy.deepcopy(e["object"]))
                          for e in events]
                result = {"resourceVersion": str(store.rv), "objects": stored}
            elif action == "tokens":
                store.tokens.update(body.get("add", []))
                store.tokens.difference_update(body.get("revoke", []))
            elif action == "compact":
                store.compact()
            elif action == "expire-watches":
                store.expire_generation += 1
            elif action == "close-watches":
                store.close_generation += 1
                store.close_with_bookmark = bool(body.get("bookmark", True))
            elif action == "cut-watches":
                store.cut_generation += 1
            elif action == "inject":
                store.injected.append(body["raw"])
            elif action == "expire-continue":
                store.snapshots.clear()
                store.expire_next_continue = int(body.get("next", 0))
            elif action == "throttle":
                store.throttle.append({"count": int(body.get("count", 1)),
                                       "retryAfter": int(body.get("retryAfter", 1)),
                                       "status": int(body.get("status", 429)),
                                       "match": body.get("match", "")})
            elif action == "config":
                store.config.update(body)
            elif action == "resources":
                for entry in body.get("add", []):
                    store.add_resource(Resource(entry.get("group", ""), entry["version"],
                                                entry["resource"], entry["kind"],
                                                bool(entry.get("namespaced", False))))
                for entry in body.get("remove", []):
                    store.resources.pop((entry.get("group", ""), entry["version"],
                                         entry["resource"]), None)
            else:
                raise ApiError(404, "NotFound", "no control action " + action)
            store.cond.notify_all()
        self.send_json(200, result)


def run_openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_certificates(directory):
    """A CA, the server's certificate and a client certificate, with the openssl CLI."""
    os.makedirs(directory, exist_ok=True)

    def path(name):
        return os.path.join(directory, name)

    if all(os.path.exists(path(n)) for n in ("ca.crt", "server.crt", "server.key", "client.crt",
                                             "client.key")):
        return
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run_openssl("req", "-x509", *ec, "-keyout", path("ca.key"), "-out", path("ca.crt"), "-days",
                "2", "-subj", "/CN=fake-apiserver-ca")
    leaves = {
        "server": ("/CN=kube-apiserver",
                   "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,"
                   "DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n"),
        "client": ("/O=system:masters/CN=topoguard-test", "extendedKeyUsage=clientAuth\n"),
    }
    for name, (subject, extensions) in leaves.items():
        with open(path(name + ".ext"), "w") as handle:
            handle.write(extensions)
        run_openssl("req", *ec, "-keyout", path(name + ".key"), "-out", path(name + ".csr"),
                    "-subj", subject)
        run_openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.crt"), "-CAkey",
                    path("ca.key"), "-set_serial", str(random.randint(1, 2**62)), "-days", "2",
                    "-out", path(name + ".crt"), "-extfile", path(name + ".ext"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tls-dir", required=True,
                        help="where ca.crt, server.* and client.* are (made when absent)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", action="append", default=[], help="an accepted bearer token")
    parser.add_argument("--state", help="a JSON file: a list of objects to start with")
    parser.add_argument("--resources",
                        help="a JSON file: more resources [{group, version, resource, kind, "
                             "namespaced}]")
    parser.add_argument("--chunking", default="random", choices=["random", "event", "byte"])
    parser.add_argument("--bookmark-interval", type=float, default=60.0)
    parser.add_argument("--continue-ttl", type=float, default=300.0)
    parser.add_argument("--too-old", default="stream", choices=["stream", "http"])
    parser.add_argument("--watch-list", action="store_true",
                        help="the WatchList feature gate (sendInitialEvents)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    make_certificates(args.tls_dir)
    config = {"chunking": args.chunking, "bookmarkInterval": args.bookmark_interval,
              "continueTtl": args.continue_ttl, "tooOldMode": args.too_old,
              "watchList": args.watch_list, "verbose": args.verbose, "listChunked": False}
    store = Store(config)
    store.tokens.update(args.token)
    if args.resources:
        with open(args.resources) as handle:
            for entry in json.load(handle):
                store.add_resource(Resource(entry.get("group", ""), entry["version"],
                                            entry["resource"], entry["kind"],
                                            bool(entry.get("namespaced", False))))
    if args.state:
        with open(args.state) as handle:
            with store.cond:
                for obj in json.load(handle):
                    store.apply("ADDED", obj)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.path.join(args.tls_dir, "server.crt"),
                            os.path.join(args.tls_dir, "server.key"))
    context.load_verify_locations(os.path.join(args.tls_dir, "ca.crt"))
    context.verify_mode = ssl.CERT_OPTIONAL
    context.set_alpn_protocols(["http/1.1"])

    server = Server((args.host, args.port), Handler, context, store)
    port = server.server_address[1]
    host = "[%s]" % args.host if ":" in args.host else args.host
    print(json.dumps({"port": port, "server": "https://%s:%d" % (host, port),
                      "ca": os.path.join(args.tls_dir, "ca.crt"),
                      "clientCert": os.path.join(args.tls_dir, "client.crt"),
                      "clientKey": os.path.join(args.tls_dir, "client.key")}), flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
