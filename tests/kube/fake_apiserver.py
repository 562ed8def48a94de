#!/usr/bin/python3
"""A fake Kubernetes API server for tests: Python 3 standard library only (http.server, ssl).

Only for what the real kube-apiserver cannot be made to do on demand. Whatever a real one can
reproduce runs against it (tests/e2e, the v1.37.2 control plane): webhook registration and calls,
RBAC of serve and of `audit --cluster` (tests/e2e/audit_cluster_suite.py replaced this fake's
audit_cluster_test), self-managed TLS through the configurations with rotation under load and
a second replica (tls_suite.py replaced serve_tls_test), reports by server-side apply, watches
across an API server restart. What stays here, by test file, and the fault it needs:
  api_client_test      revoked and rotated tokens mid-run, 429 with Retry-After, 5xx, a stream cut
                       or ended mid-chunk, chunked list bodies, TLS names and CA failures on demand
  reflector_test       in-stream 410 and HTTP 410 on watch, expired continue tokens, one byte per
                       chunk, malformed events, bookmarks on a schedule, a kind served and unserved
  list_test            continue tokens expiring between pages, pages handed over one at a time
  cluster_cache_test   a kind the cluster comes to serve, broken watches, a rotated token, expiry
  lease_lock_test      renewals failing while held, racing replicas with a controlled clock
  tls_controller_test  conflicts and refused writes between replicas, a Secret without its CA key
  report_sync_test     refused writes counted and retried, no fresh cache
  serve_cache_test, serve_feasibility_test, objects_test, discovery_test: request paths and
                       bodies recorded, objects loaded and changed instantly at 10,000-node scale

It answers as kube-apiserver does on the paths a list/watch client uses, so that topoguard's
client can be tested without a cluster, and it is itself checked against real clients
(tests/kube/python_client_test.py with Debian's python3-kubernetes, tests/kube/node_informer_test.mjs
with @kubernetes/client-node) so that it cannot drift from the real server:

- HTTPS on 127.0.0.1 with a certificate made at start (openssl CLI) for 127.0.0.1, ::1, localhost
  and kubernetes.default.svc; clients authenticate with bearer tokens (revocable: 401 with a
  Status body) or client certificates signed by the same CA.
- Resources are data: core (with secrets), apps, batch, resource.k8s.io/v1, scheduling.k8s.io/v1,
  coordination.k8s.io/v1 leases, admissionregistration.k8s.io/v1 validating and mutating webhook
  configurations, and as custom resources openreports.io/v1alpha1 reports and clusterreports,
  wgpolicyk8s.io/v1alpha2 policyreports and clusterpolicyreports, by default; more with
  --resources FILE or the control endpoint; any other path answers 404 with a Status.
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
- Writes through the API: POST (create), PUT (update: optimistic concurrency, 409 Conflict for a
  stale resourceVersion; a custom resource needs one: 422), PATCH, DELETE (DeleteOptions
  preconditions: 409; propagationPolicy). Bodies over maxBodyBytes (3 MiB) are 413
  RequestEntityTooLarge "Request entity too large: limit is 3145728"; an object whose JSON is
  over maxObjectBytes (1.5 MiB, etcd's default request limit) is refused as kube-apiserver
  passes etcd's refusal on: 500, no reason, "etcdserver: request is too large" (create, update
  and non-apply patch first retry without metadata.managedFields, as the real handlers do).
- PATCH by Content-Type: application/json-patch+json (RFC 6902 as json-patch.v4 applies it:
  decode errors 400 "error decoding patch: ...", more than 10000 operations 413, any failure
  while applying, a failing `test` included, 422 Invalid "the server rejected our request due
  to an error in our request"); application/merge-patch+json (RFC 7386; a body that is not an
  object 400); application/apply-patch+yaml (server-side apply, below). Anything else is 415
  UnsupportedMediaType: for built-in resources go-restful's "415: Unsupported Media Type", for
  custom resources the handler's list of accepted types. Strategic merge patch is NOT
  implemented: 415 (the real server takes it for built-in kinds, not for custom resources).
  A non-apply patch of an absent object is 404.
- Server-side apply: fieldManager is required (422 Invalid, PatchOptions.meta.k8s.io ""
  is invalid: fieldManager: Required value: is required for apply patch; the real code path is
  ValidatePatchOptions + errors.NewInvalid, a 422, not a 400); force=true; force on any other
  patch is 422. The body must be JSON (JSON is YAML): YAML-only syntax is answered 400 "error
  decoding YAML: ..." as the real server answers a body it cannot decode (not 415: the media
  type is one it accepts). apiVersion/kind other than the resource's is 400 "invalid object
  type: ..."; metadata.managedFields in the body is 400 "metadata.managedFields must be nil";
  an absent object is created (201); a resourceVersion in the body is a precondition (409).
- Field ownership, exposed as metadata.managedFields in the real shape (manager, operation
  Apply/Update, apiVersion, time, fieldsType FieldsV1, fieldsV1 in the "f:"/"k:"/"v:" trie with
  "."), computed as k8s.io/apimachinery's field manager over structured-merge-diff does: every
  create/update/non-apply patch makes its manager (fieldManager, else the User-Agent up to its
  first "/", else "unknown") own the fields it added or changed, taking them from others; an
  apply owns exactly the fields it sent, removes the fields it owned before and no longer sends
  unless another manager owns them, and conflicts (409 Conflict "Apply failed with N
  conflict(s): ...", details.causes type FieldManagerConflict, field ".spec.x") where a field
  it would change is owned by another manager, unless force=true (which takes the field).
  Objects without managedFields (e.g. from /_fake/objects) stay untracked until an apply, which
  gives what exists to "before-first-apply". Approximations: the schema is a small table, not
  OpenAPI (objects are structs except labels, annotations, Secret/ConfigMap data and webhook
  matchLabels, which are maps; lists are atomic except webhooks and matchConditions, keyed by
  name, ownerReferences by uid, finalizers a set), so fieldsV1 of a built-in kind may show "."
  where the real one does not (fields a typed empty object already has); no managers cap, no
  last-applied-configuration handling, no subresources, no dryRun (a dryRun write is made).
- Decoding defaults: Secret stringData is folded into data and type defaults to Opaque;
  admissionregistration/v1 webhook defaults (failurePolicy, matchPolicy, selectors,
  timeoutSeconds, reinvocationPolicy, rule scope, service port); empty labels, annotations,
  finalizers and ownerReferences are dropped. metadata.generation is 1 on create and counts
  changes outside metadata for custom resources and webhook configurations.
- No-op writes: an update, patch or apply that leaves the object as it is (managedFields times
  aside) is not written: same resourceVersion, no watch event (the etcd3 store compares the
  encodings; fieldmanager.IgnoreManagedFieldsTimestampsTransformer).
- Garbage collection (garbageCollection, default on): when an object is deleted (through the
  API or /_fake/objects), each object whose ownerReferences now all point at absent uids is
  deleted too (DELETED events, recursively); one that keeps an owner loses the dangling
  references (MODIFIED). At once, in the deleting request: background deletion without the
  delay; Foreground behaves as Background; Orphan (or orphanDependents) removes the reference.
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
  /_fake/conflict         {"count": N, "match": "path substring", "methods": ["PUT", "PATCH"]
                          (the default; POST and DELETE may be named), "touch": bool}: the next
                          N matching writes answer 409 Conflict (the optimistic-lock message)
                          as if another writer had changed the object; with "touch" the object
                          does get a new resourceVersion (a MODIFIED event) first
  /_fake/config           {"tooOldMode": "stream|http", "chunking": "random|event|byte",
                           "bookmarkInterval": S, "watchList": bool, "continueTtl": S,
                           "listChunked": bool (lists sent chunked too),
                           "idleTimeout": S (new connections close after S idle seconds),
                           "maxBodyBytes": N (3145728), "maxObjectBytes": N (1572864),
                           "garbageCollection": bool (true)}
  /_fake/resources        {"add": [{"group", "version", "resource", "kind", "namespaced",
                           "crd"}], "remove": [{"group", "version", "resource"}]}
  GET /_fake/requests     the requests served so far (method, path, query, auth, status,
                          contentType of writes, bodyBytes, userAgent)
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
    ("", "v1", "secrets", "Secret", True),
    ("coordination.k8s.io", "v1", "leases", "Lease", True),
    ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
     "ValidatingWebhookConfiguration", False),
    ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
     "MutatingWebhookConfiguration", False),
    # Custom resources (served by apiextensions-apiserver: no strategic merge patch, updates
    # need a resourceVersion, metadata.generation counts changes).
    ("openreports.io", "v1alpha1", "reports", "Report", True, True),
    ("openreports.io", "v1alpha1", "clusterreports", "ClusterReport", False, True),
    ("wgpolicyk8s.io", "v1alpha2", "policyreports", "PolicyReport", True, True),
    ("wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports", "ClusterPolicyReport", False, True),
]

# Kinds whose strategy counts metadata.generation (PrepareForCreate sets 1, PrepareForUpdate
# adds 1 when anything but metadata changes): the webhook configurations (registry/
# admissionregistration/*webhookconfiguration/strategy.go) and every custom resource.
GENERATION_KINDS = {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}

DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024        # apiserver's MaxRequestBodyBytes
DEFAULT_MAX_OBJECT_BYTES = 3 * 1024 * 1024 // 2  # etcd's default --max-request-bytes

PATCH_JSON = "application/json-patch+json"
PATCH_MERGE = "application/merge-patch+json"
PATCH_STRATEGIC = "application/strategic-merge-patch+json"
PATCH_APPLY = "application/apply-patch+yaml"

OPTIMISTIC_LOCK_MESSAGE = ("the object has been modified; please apply your changes to the "
                           "latest version and try again")

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
    if not reason:  # StatusReasonUnknown is "" and omitted
        del body["reason"]
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


def go_quote(text):
    """Go's %q of a string (close enough: JSON string syntax, non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)


def compact_json(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def go_type_name(value):
    """How encoding/json names a JSON value's type in its UnmarshalTypeError."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def parse_json_like_go(data):
    """json.loads, with encoding/json's wording for syntax errors (approximated)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        return json.loads(text)
    except ValueError as error:
        if not text.strip():
            raise ValueError("unexpected end of JSON input")
        position = getattr(error, "pos", 0) or 0
        if position >= len(text.rstrip()):
            raise ValueError("unexpected end of JSON input")
        raise ValueError("invalid character %s looking for beginning of value"
                         % ("'%s'" % text[position]))


def value_equal(a, b):
    """structured-merge-diff's value.Equals: numbers compare as numbers, bools are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(value_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(value_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


# ---- JSON patch (RFC 6902) as gopkg.in/evanphx/json-patch.v4 (v4.13.0) applies it ------------
#
# kube-apiserver (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go, applyJSPatch)
# first decodes the body strictly into []{op, path, from string; value any} (fieldValidation
# defaults to Warn): a body that does not decode is 400 BadRequest "error decoding patch: ...";
# more than 10000 operations is 413; any error while applying (a failing `test` included) is
# errors.NewGenericServerResponse(422, ...): 422 reason Invalid with the generic message "the
# server rejected our request due to an error in our request" (the library's own text is
# lost). The library's quirks are kept: negative array indices count from the end
# (SupportNegativeIndices defaults to true), `replace` of an absent object key adds it, `test`
# treats an absent key and null alike, a path is split on "/" and its first segment ignored,
# "add" at the root ("") fails, "copy" may not grow the document by more than 3 MiB
# (JSONPatchMaxCopyBytes).

MAX_JSON_PATCH_OPERATIONS = 10000
JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024


class JsonPatchError(Exception):
    pass


def _patch_key(token):
    # RFC 6901: "~1" is "/", "~0" is "~" (one pass, as strings.NewReplacer does).
    return re.sub(r"~[01]", lambda match: "/" if match.group() == "~1" else "~", token)


def _array_index(key):
    if not re.fullmatch(r"[+-]?[0-9]+", key):  # strconv.Atoi
        raise JsonPatchError('strconv.Atoi: parsing %s: invalid syntax' % go_quote(key))
    return int(key)


def _container_get(container, key):
    if isinstance(container, dict):
        return container.get(key)
    index = _array_index(key)
    if index < 0:
        if index < -len(container):
            raise JsonPatchError("Unable to access invalid index: %d" % index)
        index += len(container)
    if index >= len(container):
        raise JsonPatchError("Unable to access invalid index: %d" % index)
    return container[index]


def _container_set(container, key, value):
    if isinstance(container, dict):
        container[key] = value
        return
    index = _array_index(key)
    if index < 0:
        if index < -len(container):
            raise JsonPatchError("Unable to access invalid index: %d" % index)
        index += len(container)
    container[index] = value


def _container_add(container, key, value):
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    index = _array_index(key)
    size = len(container) + 1
    if index >= size:
        raise JsonPatchError("Unable to access invalid index: %d" % index)
    if index < 0:
        if index < -size:
            raise JsonPatchError("Unable to access invalid index: %d" % index)
        index += size
    container.insert(index, value)


def _container_remove(container, key):
    if isinstance(container, dict):
        if key not in container:
            raise JsonPatchError("Unable to remove nonexistent key: %s" % key)
        del container[key]
        return
    index = _array_index(key)
    if index >= len(container):
        raise JsonPatchError("Unable to access invalid index: %d" % index)
    if index < 0:
        if index < -len(container):
            raise JsonPatchError("Unable to access invalid index: %d" % index)
        index += len(container)
    del container[index]


def _find_container(document, path):
    """findObject: the container holding the last token of path, and that token."""
    tokens = path.split("/")
    if len(tokens) < 2:
        return None, ""
    current = document
    for token in tokens[1:-1]:
        try:
            current = _container_get(current, _patch_key(token))
        except JsonPatchError:
            return None, ""
        if not isinstance(current, (dict, list)):
            return None, ""
    return current, _patch_key(tokens[-1])



def _require_container(document, path, message):
    """The container holding the last token of path, and that token; JsonPatchError(message)
    when there is none."""
    container, key = _find_container(document, path)
    if container is None:
        raise JsonPatchError(message)
    return container, key

def _operation_string(operation, name):
    value = operation.get(name)
    if value is None:
        raise JsonPatchError("operation missing %s field" % name)
    return value


def apply_json_patch(document, operations):
    """Applies decoded operations to document (changed in place); returns the new document."""
    copied = 0
    for operation in operations:
        if not isinstance(operation, dict):
            raise JsonPatchError("Unexpected kind: unknown")
        kind = operation.get("op") if isinstance(operation.get("op"), str) else "unknown"
        value = copy.deepcopy(operation.get("value"))
        if kind == "add":
            container, key = _require_container(
                document, _operation_string(operation, "path"),
                "add operation does not apply: doc is missing path")
            _container_add(container, key, value)
        elif kind == "remove":
            container, key = _require_container(
                document, _operation_string(operation, "path"),
                "remove operation does not apply: doc is missing path")
            _container_remove(container, key)
        elif kind == "replace":
            path = _operation_string(operation, "path")
            if path == "":
                if not isinstance(value, (dict, list)):
                    raise JsonPatchError("replace operation value must be object or array")
                document = value
                continue
            container, key = _require_container(
                document, path, "replace operation does not apply: doc is missing path")
            _container_get(container, key)
            _container_set(container, key, value)
        elif kind == "move":
            container, key = _require_container(
                document, _operation_string(operation, "from"),
                "move operation does not apply: doc is missing from path")
            moved = _container_get(container, key)
            _container_remove(container, key)
            container, key = _require_container(
                document, _operation_string(operation, "path"),
                "move operation does not apply: doc is missing destination")
            _container_add(container, key, moved)
        elif kind == "copy":
            container, key = _require_container(
                document, _operation_string(operation, "from"),
                "copy operation does not apply: doc is missing from path")
            source = _container_get(container, key)
            container, key = _require_container(
                document, _operation_string(operation, "path"),
                "copy operation does not apply: doc is missing destination")
            copied += len(compact_json(source))
            if copied > JSON_PATCH_MAX_COPY_BYTES:
                raise JsonPatchError("Unable to complete the copy")
            _container_add(container, key, copy.deepcopy(source))
        elif kind == "test":
            path = _operation_string(operation, "path")
            if path == "":
                if canonical_json(document) != canonical_json(value):
                    raise JsonPatchError("testing value %s failed: test failed" % path)
                continue
            container, key = _find_container(document, path)
            if container is None:
                raise JsonPatchError("test operation does not apply: is missing path")
            current = _container_get(container, key)
            if current is None:
                if value is None:
                    continue
                raise JsonPatchError("testing value %s failed: test failed" % path)
            if value is None or canonical_json(current) != canonical_json(value):
                raise JsonPatchError("testing value %s failed: test failed" % path)
        else:
            raise JsonPatchError("Unexpected kind: %s" % kind)
    return document


def decode_json_patch(data):
    """The operations of a JSON patch body, or ApiError 400/413 as the real server answers."""
    try:
        operations = parse_json_like_go(data)
    except ValueError as error:
        raise ApiError(400, "BadRequest", "error decoding patch: %s" % error)
    if operations is None:
        operations = []
    if not isinstance(operations, list):
        raise ApiError(400, "BadRequest", "error decoding patch: json: cannot unmarshal %s into "
                       "Go value of type []handlers.jsonPatchOp" % go_type_name(operations))
    for operation in operations:
        if operation is None:
            continue
        if not isinstance(operation, dict):
            raise ApiError(400, "BadRequest", "error decoding patch: json: cannot unmarshal %s "
                           "into Go value of type handlers.jsonPatchOp"
                           % go_type_name(operation))
        for field in ("op", "path", "from"):
            if operation.get(field) is not None and not isinstance(operation[field], str):
                raise ApiError(400, "BadRequest", "error decoding patch: json: cannot unmarshal "
                               "%s into Go struct field jsonPatchOp.%s of type string"
                               % (go_type_name(operation[field]), field))
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(413, "RequestEntityTooLarge",
                       "Request entity too large: The allowed maximum operations in a JSON "
                       "patch is %d, got %d" % (MAX_JSON_PATCH_OPERATIONS, len(operations)))
    return operations


# ---- JSON merge patch (RFC 7386), as json-patch.v4's MergePatch -------------------------------
#
# patch.go decodes a merge patch strictly into map[string]interface{} first: anything but an
# object or null is 400 "error decoding patch: ..."; null is jsonpatch.ErrBadJSONPatch, 400
# "Invalid JSON Patch". null members delete keys, objects merge recursively, anything else
# (arrays included) replaces; nulls inside a value merged where there was nothing are dropped.

def _prune_nulls(node):
    if isinstance(node, dict):
        for key in [k for k, v in node.items() if v is None]:
            del node[key]
        for value in node.values():
            _prune_nulls(value)
    elif isinstance(node, list):
        for value in node:
            if value is not None:
                _prune_nulls(value)


def _merge_patch_value(current, patch):
    if not isinstance(current, dict):
        _prune_nulls(patch)
        return patch
    if not isinstance(patch, dict):
        return patch
    _merge_patch_docs(current, patch)
    return current


def _merge_patch_docs(document, patch):
    for key, value in patch.items():
        if value is None:
            document.pop(key, None)
        elif document.get(key) is None:
            _prune_nulls(value)
            document[key] = value
        else:
            document[key] = _merge_patch_value(document[key], value)


def apply_merge_patch(document, data):
    try:
        patch = parse_json_like_go(data)
    except ValueError as error:
        raise ApiError(400, "BadRequest", "error decoding patch: %s" % error)
    if patch is None:
        raise ApiError(400, "BadRequest", "Invalid JSON Patch")
    if not isinstance(patch, dict):
        raise ApiError(400, "BadRequest", "error decoding patch: json: cannot unmarshal %s into "
                       "Go value of type map[string]interface {}" % go_type_name(patch))
    _merge_patch_docs(document, patch)
    return document


# ---- Field ownership: managedFields as the real field manager keeps them ----------------------
#
# A faithful-enough port of k8s.io/apimachinery/pkg/util/managedfields/internal (fieldmanager,
# structuredmerge, managedfieldsupdater, stripmeta, skipnonapplied, buildmanagerinfo) over
# sigs.k8s.io/structured-merge-diff (typed/compare.go, merge.go, remove.go, tofieldset.go,
# merge/update.go, fieldpath/serialize.go). What differs is the schema: instead of OpenAPI, a
# Shape says which objects are maps (their keys are owned one by one, so the map itself shows
# "." in fieldsV1: labels, annotations, Secret/ConfigMap data), which lists are associative
# (items keyed, "k:{...}": webhooks and matchConditions by name, ownerReferences by uid) or sets
# ("v:...": finalizers); every other object is a struct and every other list atomic (owned
# whole). Paths are tuples of fieldsV1 path elements ("f:spec", "k:{\"name\":\"x\"}").

SET_LIST = "set"
_ABSENT = object()


class Shape:
    def __init__(self, maps=(), lists=None):
        self.maps = {("metadata", "labels"), ("metadata", "annotations")} | set(maps)
        self.lists = {("metadata", "ownerReferences"): ("uid",),
                      ("metadata", "finalizers"): SET_LIST}
        self.lists.update(lists or {})


_WEBHOOK_SHAPE = Shape(
    maps=[("webhooks", "*", "namespaceSelector", "matchLabels"),
          ("webhooks", "*", "objectSelector", "matchLabels")],
    lists={("webhooks",): ("name",), ("webhooks", "*", "matchConditions"): ("name",)})
SHAPES = {
    "Secret": Shape(maps=[("data",), ("stringData",)]),
    "ConfigMap": Shape(maps=[("data",), ("binaryData",)]),
    "ValidatingWebhookConfiguration": _WEBHOOK_SHAPE,
    "MutatingWebhookConfiguration": _WEBHOOK_SHAPE,
}
DEFAULT_SHAPE = Shape()

# stripmeta.go: never part of any manager's set.
STRIPPED_FIELDS = frozenset([("f:apiVersion",), ("f:kind",), ("f:metadata",)] + [
    ("f:metadata", "f:" + name) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
        "generation", "managedFields", "resourceVersion")])


def _schema_path(path):
    return tuple(element[2:] if element.startswith("f:") else "*" for element in path)


def _item_elements(shape, spath, items):
    """The path elements of a list's items, or None where the list is atomic (by its shape, or
    because its items do not fit it: the real server would not accept those)."""
    kind = shape.lists.get(spath)
    if kind is None or not isinstance(items, list):
        return None
    elements = []
    for item in items:
        if kind == SET_LIST:
            if isinstance(item, (dict, list)) or item is None:
                return None
            element = "v:" + compact_json(item)
        else:
            if not isinstance(item, dict):
                return None
            key = {}
            for name in sorted(kind):
                if item.get(name) is None or isinstance(item[name], (dict, list)):
                    return None
                key[name] = item[name]
            element = "k:" + compact_json(key)
        if element in elements:
            return None
        elements.append(element)
    return elements


def field_set(shape, value, spath=(), path=(), out=None):
    """typed.ToFieldSet: the paths an applied configuration sets."""
    out = set() if out is None else out
    if isinstance(value, dict):
        is_map = spath in shape.maps
        for key, child in value.items():
            child_path = path + ("f:" + key,)
            field_set(shape, child, spath + (key,), child_path, out)
            if child is None or child == {} or is_map:
                out.add(child_path)
    elif isinstance(value, list):
        elements = _item_elements(shape, spath, value)
        if elements is None:
            out.add(path)
        else:
            for element, item in zip(elements, value):
                field_set(shape, item, spath + ("*",), path + (element,), out)
                out.add(path + (element,))
    elif path:
        out.add(path)
    return out


def all_paths(shape, value, spath=(), path=(), out=None):
    """ToFieldSet with EnsureNamedFieldsAreMembers: every field and item path of value."""
    out = set() if out is None else out
    if isinstance(value, dict):
        for key, child in value.items():
            out.add(path + ("f:" + key,))
            all_paths(shape, child, spath + (key,), path + ("f:" + key,), out)
    elif isinstance(value, list):
        elements = _item_elements(shape, spath, value)
        for element, item in zip(elements or [], value):
            out.add(path + (element,))
            all_paths(shape, item, spath + ("*",), path + (element,), out)
    return out


def named_fields_members(shape, paths):
    """Set.EnsureNamedFieldsAreMembers: struct fields above a path become members too (not list
    items, not map keys)."""
    out = set(paths)
    for path in paths:
        for end in range(1, len(path)):
            if path[end - 1].startswith("f:") and _schema_path(path[:end - 1]) not in shape.maps:
                out.add(path[:end])
    return out


def _subset(paths, element):
    return {path[1:] for path in paths if len(path) > 1 and path[0] == element}


def remove_items(shape, value, paths, spath=()):
    """typed.RemoveItems: value without the given paths (an emptied object or list is null)."""
    if isinstance(value, dict):
        if not value:
            return None
        out = {}
        for key, child in value.items():
            element = "f:" + key
            if (element,) in paths:
                continue
            below = _subset(paths, element)
            out[key] = remove_items(shape, child, below, spath + (key,)) if below else child
        return out or None
    if isinstance(value, list):
        elements = _item_elements(shape, spath, value)
        if not value or elements is None:
            return None
        out = []
        for element, item in zip(elements, value):
            if (element,) in paths:
                continue
            below = _subset(paths, element)
            out.append(remove_items(shape, item, below, spath + ("*",)) if below else item)
        return out or None
    return value


def drop_nulls(value):
    """Null members are not stored (typed objects and CRs with nullable: false drop them)."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


class Comparison:
    def __init__(self):
        self.added, self.removed, self.modified = set(), set(), set()


def _atom(value):
    if value is _ABSENT:
        return None
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    return "null" if value is None else "scalar"


def compare_values(shape, lhs, rhs):
    """TypedValue.Compare: the paths rhs added, removed and modified relative to lhs."""
    comparison = Comparison()
    _compare(shape, (), (), lhs, rhs, comparison)
    return comparison


def _compare(shape, spath, path, lhs, rhs, comparison):
    left, right = _atom(lhs), _atom(rhs)
    # A null takes the other side's kind (deduceAtom keeps the schema's atom for null).
    if left == "null" and right in ("map", "list"):
        left = right
    if right == "null" and left in ("map", "list"):
        right = left
    if right is None:
        in_leaf = _compare_atom(shape, spath, path, left, lhs, rhs, comparison)
    elif left is None or left == right:
        in_leaf = _compare_atom(shape, spath, path, right, lhs, rhs, comparison)
    else:
        _compare_atom(shape, spath, path, left, lhs, rhs, comparison)
        in_leaf = _compare_atom(shape, spath, path, right, lhs, rhs, comparison)
    if not in_leaf and path:
        if lhs is _ABSENT:
            comparison.added.add(path)
        elif rhs is _ABSENT:
            comparison.removed.add(path)


def _compare_leaf(path, lhs, rhs, comparison):
    if lhs is _ABSENT:
        comparison.added.add(path)
    elif rhs is _ABSENT:
        comparison.removed.add(path)
    elif not value_equal(lhs, rhs):
        comparison.modified.add(path)
    return True


def _compare_atom(shape, spath, path, atom, lhs, rhs, comparison):
    if atom == "map":
        left = lhs if isinstance(lhs, dict) else None
        right = rhs if isinstance(rhs, dict) else None
        if not left and not right:
            return _compare_leaf(path, lhs, rhs, comparison)
        keys = list(left or {}) + [k for k in (right or {}) if k not in (left or {})]
        for key in keys:
            _compare(shape, spath + (key,), path + ("f:" + key,),
                     left.get(key, _ABSENT) if left is not None else _ABSENT,
                     right.get(key, _ABSENT) if right is not None else _ABSENT, comparison)
        return False
    if atom == "list":
        left = lhs if isinstance(lhs, list) else None
        right = rhs if isinstance(rhs, list) else None
        left_elements = _item_elements(shape, spath, left or [])
        right_elements = _item_elements(shape, spath, right or [])
        if (not left and not right) or left_elements is None or right_elements is None:
            return _compare_leaf(path, lhs, rhs, comparison)
        left_items = dict(zip(left_elements, left or []))
        right_items = dict(zip(right_elements, right or []))
        for element in left_elements + [e for e in right_elements if e not in left_items]:
            _compare(shape, spath + ("*",), path + (element,), left_items.get(element, _ABSENT),
                     right_items.get(element, _ABSENT), comparison)
        return False
    return _compare_leaf(path, lhs, rhs, comparison)


def merge_values(shape, lhs, rhs, spath=()):
    """TypedValue.Merge: rhs (an applied configuration) over lhs (the live object)."""
    if rhs is _ABSENT:
        return lhs
    if lhs is _ABSENT:
        return rhs
    if rhs is None and isinstance(lhs, dict) and lhs:
        return lhs
    if isinstance(lhs, dict) and isinstance(rhs, dict):
        if not lhs and not rhs:
            return rhs
        out = {}
        for key, value in lhs.items():
            out[key] = merge_values(shape, value, rhs.get(key, _ABSENT), spath + (key,))
        for key, value in rhs.items():
            if key not in lhs:
                out[key] = value
        return out
    if isinstance(lhs, list) and isinstance(rhs, list) and (lhs or rhs):
        left_elements = _item_elements(shape, spath, lhs)
        right_elements = _item_elements(shape, spath, rhs)
        if left_elements is None or right_elements is None:
            return rhs
        return _merge_items(shape, spath, lhs, rhs, left_elements, right_elements)
    return rhs


def _merge_items(shape, spath, lhs, rhs, left_elements, right_elements):
    # mergingWalker.visitListItems: items in the applied order, live-only items kept in place.
    left_items = dict(zip(left_elements, lhs))
    right_items = dict(zip(right_elements, rhs))
    shared = [e for e in right_elements if e in left_items]
    next_shared = shared.pop(0) if shared else None
    merged_right = set()
    out = []
    li = ri = 0

    def merge_item(element):
        return merge_values(shape, left_items.get(element, _ABSENT),
                            right_items.get(element, _ABSENT), spath + ("*",))

    while li < len(left_elements) or ri < len(right_elements):
        if li < len(left_elements) and ri < len(right_elements):
            element = left_elements[li]
            if element == right_elements[ri]:
                merged_right.add(element)
                out.append(merge_item(element))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if element in right_items and next_shared is not None and next_shared != element:
                li += 1
                continue
        if li < len(left_elements):
            element = left_elements[li]
            if element not in right_items:
                out.append(left_items[element])
                li += 1
                continue
            if element in merged_right:
                li += 1
        if ri < len(right_elements):
            element = right_elements[ri]
            merged_right.add(element)
            out.append(merge_item(element))
            ri += 1
            if next_shared is not None and next_shared == element:
                next_shared = shared.pop(0) if shared else None
    return out


# ---- managedFields entries ---------------------------------------------------------------------

class Owner:
    """One managedFields entry: a manager's set of paths (fieldpath.VersionedSet + time)."""

    def __init__(self, manager, operation, api_version, time_, fields, subresource=""):
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.time = time_
        self.fields = set(fields)
        self.subresource = subresource

    @property
    def identifier(self):
        return manager_identifier(self.manager, self.operation, self.api_version,
                                  self.subresource)


def manager_identifier(manager, operation, api_version, subresource=""):
    """BuildManagerIdentifier: the entry as JSON without time and fields; appliers without
    apiVersion (so an applier is one entry whatever version it applies)."""
    entry = {}
    if manager:
        entry["manager"] = manager
    entry["operation"] = operation
    if operation != "Apply" and api_version:
        entry["apiVersion"] = api_version
    if subresource:
        entry["subresource"] = subresource
    return compact_json(entry)


def describe_manager(identifier):
    """conflict.go printManager."""
    entry = json.loads(identifier)
    text = go_quote(entry.get("manager", ""))
    if entry.get("subresource"):
        text += " with subresource %s" % go_quote(entry["subresource"])
    if entry.get("operation") == "Update":
        text += " using %s" % entry.get("apiVersion", "")
    return text


def path_string(path):
    """fieldpath.Path.String: .name for fields, [key=value] for items."""
    text = ""
    for element in path:
        kind, body = element[:2], element[2:]
        if kind == "f:":
            text += "." + body
        elif kind == "k:":
            key = json.loads(body)
            text += "[" + ",".join("%s=%s" % (k, go_quote(v) if isinstance(v, str) else
                                              compact_json(v)) for k, v in key.items()) + "]"
        elif kind == "v:":
            text += "[=%s]" % body
        else:
            text += "[%s]" % body
    return text


def _element_order(element):
    rank = {"f:": 0, "k:": 1, "v:": 2, "i:": 3}.get(element[:2], 4)
    body = element[2:]
    if rank == 3 and re.fullmatch(r"-?[0-9]+", body):
        return (rank, int(body), "")
    return (rank, 0, body)


def encode_fields(paths):
    """fieldpath.Set.ToJSON (FieldsV1): a trie; "." marks a member that also has children."""
    root = {}
    for path in paths:
        children, node = root, None
        for element in path:
            node = children.setdefault(element, {"self": False, "children": {}})
            children = node["children"]
        if node is not None:
            node["self"] = True

    def emit(children):
        out = {}
        for element in sorted(children, key=_element_order):
            node = children[element]
            if node["children"]:
                body = {".": {}} if node["self"] else {}
                body.update(emit(node["children"]))
                out[element] = body
            else:
                out[element] = {}
        return out

    return emit(root)


def decode_fields(fields, prefix=()):
    """fieldpath.Set.FromJSON."""
    if not isinstance(fields, dict):
        raise ValueError("fieldsV1 must be an object")
    out = set()
    for element, body in fields.items():
        if element == ".":
            if not prefix:
                raise ValueError('"." at the top of fieldsV1')
            out.add(prefix)
            continue
        if element[:2] not in ("f:", "k:", "v:", "i:"):
            raise ValueError("unknown path element %s" % element)
        if element[:2] in ("k:", "v:"):
            json.loads(element[2:])
        if not isinstance(body, dict):
            raise ValueError("fieldsV1 must be an object")
        if body:
            out |= decode_fields(body, prefix + (element,))
        else:
            out.add(prefix + (element,))
    return out


def canonical_time(text):
    """metav1.Time as the server writes it (RFC 3339, seconds, UTC), or text when unreadable."""
    try:
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return text
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def decode_managed_fields(entries):
    """DecodeManagedFields: {identifier: Owner}; ValueError where the real server fails."""
    managed = {}
    for index, entry in enumerate(entries or []):
        if not isinstance(entry, dict):
            raise ValueError("managed fields entry %d is not an object" % index)
        if entry.get("operation") not in ("Apply", "Update"):
            raise ValueError("operation must be `Apply` or `Update`")
        if not entry.get("apiVersion"):
            raise ValueError("apiVersion must not be empty")
        if entry.get("fieldsType") != "FieldsV1":
            raise ValueError("missing or invalid fieldsType in managed fields entry %d" % index)
        owner = Owner(entry.get("manager", ""), entry["operation"], entry["apiVersion"],
                      canonical_time(entry["time"]) if entry.get("time") else None,
                      decode_fields(entry.get("fieldsV1") or {}), entry.get("subresource", ""))
        managed[owner.identifier] = owner
    return managed


def _time_seconds(text):
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        return 0


def encode_managed_fields(managed):
    """encodeManagedFields: entries sorted by operation, time, manager, apiVersion."""
    if not managed:
        return None
    owners = sorted(managed.values(), key=lambda o: (
        o.operation, int(_time_seconds(o.time)) if o.time else 0, o.manager, o.api_version,
        o.subresource))
    entries = []
    for owner in owners:
        entry = {}
        if owner.manager:
            entry["manager"] = owner.manager
        entry["operation"] = owner.operation
        entry["apiVersion"] = owner.api_version
        if owner.time:
            entry["time"] = owner.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = encode_fields(owner.fields)
        if owner.subresource:
            entry["subresource"] = owner.subresource
        entries.append(entry)
    return entries


def set_managed_fields(obj, managed):
    entries = encode_managed_fields(managed)
    metadata = obj.setdefault("metadata", {})
    if entries:
        metadata["managedFields"] = entries
    else:
        metadata.pop("managedFields", None)


def without_managed_fields(obj):
    out = copy.deepcopy(obj)
    if isinstance(out.get("metadata"), dict):
        out["metadata"].pop("managedFields", None)
    return out


def user_agent_manager(user_agent):
    """prefixFromUserAgent (handlers/create.go): what precedes the first "/", printable
    characters only, at most 128 bytes."""
    out = ""
    for char in (user_agent or "").split("/")[0]:
        if not char.isprintable():
            continue
        if len((out + char).encode()) > 128:
            break
        out += char
    return out


def _track_update(shape, live, new, managed, manager, api_version):
    """managedFieldsUpdater.Update over stripMetaManager and merge.Updater.Update: whoever
    changes a field owns it (no conflicts for updates); the others lose it."""
    comparison = compare_values(shape, live, new)
    changed = comparison.added | comparison.modified
    for identifier in list(managed):
        owner = managed[identifier]
        owner.fields -= changed
        owner.fields -= comparison.removed
        if not owner.fields:
            del managed[identifier]
    taken = changed - STRIPPED_FIELDS
    if taken:
        identifier = manager_identifier(manager or "unknown", "Update", api_version)
        previous = managed.get(identifier)
        managed[identifier] = Owner(manager or "unknown", "Update", api_version, now_rfc3339(),
                                    taken | (previous.fields if previous else set()))
    return managed


def field_manager_update(resource, live, new, manager):
    """FieldManager.UpdateNoErrors for a create (live None), update or non-apply patch: new gets
    the metadata.managedFields the real server would store."""
    shape = SHAPES.get(resource.kind, DEFAULT_SHAPE)
    live_entries = (live or {}).get("metadata", {}).get("managedFields")
    new_entries = new.setdefault("metadata", {}).get("managedFields")
    # decodeLiveOrNew: the request's managedFields win unless absent, empty or unreadable; []
    # or [{}] resets them.
    if isinstance(new_entries, list) and (not new_entries or new_entries == [{}]):
        managed = {}
    else:
        try:
            managed = decode_managed_fields(new_entries) if isinstance(new_entries, list) else {}
        except ValueError:
            managed = {}
        if not managed:
            try:
                managed = decode_managed_fields(live_entries)
            except ValueError:
                managed = {}
    new["metadata"].pop("managedFields", None)
    if not managed and live is not None:
        # skipNonApplied: an object that has no managedFields is not tracked until an apply.
        return new
    managed = _track_update(shape, without_managed_fields(live) if live else {},
                            without_managed_fields(new), managed, manager, resource.api_version)
    set_managed_fields(new, managed)
    return new


class ApplyConflict(Exception):
    def __init__(self, conflicts):
        super().__init__("conflicts")
        self.conflicts = conflicts  # [(manager identifier, path)]

    def api_error(self):
        """conflict.go NewConflictError: 409 Conflict, one cause per conflicting field."""
        causes = [{"type": "FieldManagerConflict",
                   "message": "conflict with %s" % describe_manager(manager),
                   "field": path_string(path)} for manager, path in self.conflicts]
        if len(self.conflicts) == 1:
            manager, path = self.conflicts[0]
            message = "Apply failed with 1 conflict: conflict with %s: %s" % (
                describe_manager(manager), path_string(path))
        else:
            lines = []
            for manager in sorted({m for m, _ in self.conflicts}):
                lines.append("conflicts with %s:" % describe_manager(manager))
                lines += ["- %s" % path_string(p) for m, p in self.conflicts if m == manager]
            message = "Apply failed with %d conflicts: %s" % (len(self.conflicts),
                                                             "\n".join(lines))
        return ApiError(409, "Conflict", message, {"causes": causes})


def _iterate_paths(paths):
    """fieldpath.Set.Iterate order: a level's members, then each child's subtree."""
    members = sorted({p[0] for p in paths if len(p) == 1}, key=_element_order)
    children = sorted({p[0] for p in paths if len(p) > 1}, key=_element_order)
    out = [(m,) for m in members]
    for child in children:
        out += [(child,) + rest for rest in _iterate_paths(_subset(paths, child))]
    return out


def _prune(shape, merged, managed, applier, last):
    """Updater.prune: drop what the applier applied last time and no longer applies, unless
    another manager owns it."""
    if not last:
        return merged
    last = named_fields_members(shape, last)
    pruned = remove_items(shape, merged, last) or {}
    owned = set()
    for owner in managed.values():
        owned |= owner.fields
    owned = named_fields_members(shape, owned)
    merged_paths = all_paths(shape, merged)
    pruned = remove_items(shape, merged, merged_paths - (all_paths(shape, pruned) | owned)) or {}
    return remove_items(shape, merged, (merged_paths - all_paths(shape, pruned)) & last) or {}


def field_manager_apply(resource, live, config, manager, force):
    """FieldManager.Apply (server-side apply) of config over live (None: the object is absent).
    Returns the new object (None when nothing would change but managedFields) and the
    managedFields it gets; raises ApiError (400) or ApplyConflict."""
    shape = SHAPES.get(resource.kind, DEFAULT_SHAPE)
    api_version = resource.api_version
    # versionCheckManager.Apply
    if config.get("apiVersion") != api_version or config.get("kind") != resource.kind:
        group, _, version = str(config.get("apiVersion") or "").rpartition("/")
        raise ApiError(400, "BadRequest", "invalid object type: %s/%s, Kind=%s"
                       % (group, version, config.get("kind") or ""))
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("managedFields"), list):
        raise ApiError(400, "BadRequest", "metadata.managedFields must be nil")
    try:
        managed = decode_managed_fields((live or {}).get("metadata", {}).get("managedFields"))
    except ValueError as error:
        raise ApiError(500, "", "failed to decode managed fields: %s" % error)
    live_object = without_managed_fields(live) if live is not None else {}
    if not managed and live is not None:
        # skipNonAppliedManager.Apply: what exists is owned by "before-first-apply".
        managed = _track_update(shape, {}, live_object, managed, "before-first-apply",
                                api_version)
    applier = manager_identifier(manager, "Apply", api_version)
    # merge.Updater.Apply
    merged = merge_values(shape, live_object, config)
    last = managed.get(applier)
    managed[applier] = Owner(manager, "Apply", api_version, last.time if last else None,
                             field_set(shape, config))
    merged = drop_nulls(_prune(shape, merged, managed, applier, last.fields if last else None))
    comparison = compare_values(shape, live_object, merged)
    changed = comparison.added | comparison.modified
    conflicts = []
    for identifier in sorted(managed):
        if identifier != applier:
            conflicts += [(identifier, path) for path in
                          _iterate_paths(managed[identifier].fields & changed)]
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    for identifier in list(managed):
        if identifier != applier:
            managed[identifier].fields -= changed | comparison.removed
        if not managed[identifier].fields:
            del managed[identifier]
    if value_equal(live_object, merged):
        merged = None
    # stripMetaManager, then managedFieldsUpdater.Apply (the time moves when the object does)
    if applier in managed:
        managed[applier].fields -= STRIPPED_FIELDS
        if not managed[applier].fields:
            del managed[applier]
        elif merged is not None:
            managed[applier].time = now_rfc3339()
    return merged, managed


class Resource:
    def __init__(self, group, version, resource, kind, namespaced, crd=False):
        self.group = group
        self.version = version
        self.resource = resource
        self.kind = kind
        self.namespaced = namespaced
        self.crd = crd

    @property
    def qualified(self):
        """schema.GroupResource.String(), as messages name the resource."""
        return self.resource if not self.group else self.resource + "." + self.group

    @property
    def qualified_kind(self):
        """schema.GroupKind.String()."""
        return self.kind if not self.group else self.kind + "." + self.group

    @property
    def counts_generation(self):
        return self.crd or self.kind in GENERATION_KINDS

    def details(self, name):
        return {"name": name, "group": self.group, "kind": self.resource}

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
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}


def _without_times(obj):
    out = copy.deepcopy(obj)
    metadata = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    metadata.pop("resourceVersion", None)
    for entry in metadata.get("managedFields") or []:
        if isinstance(entry, dict):
            entry.pop("time", None)
    return out


def _same_but_times(old, new):
    return canonical_json(_without_times(old)) == canonical_json(_without_times(new))


def _encoded_size(obj):
    # What etcd is sent, about: the object with the resourceVersion it will get.
    return len(compact_json(obj).encode()) + len(',"resourceVersion":"0000000000"')


def default_object(resource, obj):
    """What decoding a request applies to the kinds the fake knows: Secret stringData is
    merged into data (base64) and dropped, type defaults to Opaque (core/v1 conversion and
    defaults); admissionregistration/v1 webhook defaults (apis/admissionregistration/v1/
    defaults.go: failurePolicy Fail, matchPolicy Equivalent, empty namespace and object
    selectors, timeoutSeconds 10, reinvocationPolicy Never for mutating webhooks, rule scope
    "*", service port 443). Every kind's metadata goes through metav1.ObjectMeta (custom
    resources' too), whose empty labels, annotations, finalizers and ownerReferences are
    omitted."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        for field in ("labels", "annotations", "finalizers", "ownerReferences"):
            if metadata.get(field) in ({}, []):
                del metadata[field]
    if resource.kind == "Secret":
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            if not isinstance(obj.get("data"), dict):
                obj["data"] = {}
            for key, value in string_data.items():
                obj["data"][key] = base64.b64encode(str(value).encode()).decode()
        if not obj.get("type"):
            obj["type"] = "Opaque"
    if resource.kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        for hook in obj.get("webhooks") or []:
            if not isinstance(hook, dict):
                continue
            hook.setdefault("failurePolicy", "Fail")
            hook.setdefault("matchPolicy", "Equivalent")
            hook.setdefault("namespaceSelector", {})
            hook.setdefault("objectSelector", {})
            hook.setdefault("timeoutSeconds", 10)
            if resource.kind == "MutatingWebhookConfiguration":
                hook.setdefault("reinvocationPolicy", "Never")
            for rule in hook.get("rules") or []:
                if isinstance(rule, dict):
                    rule.setdefault("scope", "*")
            service = (hook.get("clientConfig") or {}).get("service")
            if isinstance(service, dict):
                service.setdefault("port", 443)
    return obj


def _content(obj):
    return canonical_json({k: v for k, v in obj.items() if k != "metadata"})


def prepare_update(resource, old, new):
    """rest.BeforeUpdate and the strategies' PrepareForUpdate: uid kept (a different one is
    invalid: immutable), creationTimestamp and generation kept, generation + 1 where the kind
    counts it and anything but metadata changed."""
    metadata = new.setdefault("metadata", {})
    old_metadata = old["metadata"]
    uid = metadata.get("uid")
    if not uid:
        metadata["uid"] = old_metadata.get("uid")
    elif uid != old_metadata.get("uid"):
        raise ApiError(422, "Invalid", '%s "%s" is invalid: metadata.uid: Invalid value: %s: '
                       "field is immutable" % (resource.qualified_kind, metadata.get("name"),
                                               go_quote(uid)),
                       {"name": metadata.get("name"), "group": resource.group,
                        "kind": resource.kind,
                        "causes": [{"type": "FieldValueInvalid", "field": "metadata.uid",
                                    "message": "Invalid value: %s: field is immutable"
                                    % go_quote(uid)}]})
    if resource.kind == "Secret" and new.get("type") != old.get("type"):
        # ValidateSecretUpdate: ValidateImmutableField(type)
        value = go_quote(new.get("type") or "")
        raise ApiError(422, "Invalid", 'Secret "%s" is invalid: type: Invalid value: %s: field '
                       "is immutable" % (metadata.get("name"), value),
                       {"name": metadata.get("name"), "group": "", "kind": "Secret",
                        "causes": [{"type": "FieldValueInvalid", "field": "type",
                                    "message": "Invalid value: %s: field is immutable" % value}]})
    if old_metadata.get("creationTimestamp"):
        metadata["creationTimestamp"] = old_metadata["creationTimestamp"]
    if "generation" in old_metadata:
        metadata["generation"] = old_metadata["generation"]
    else:
        metadata.pop("generation", None)
    if resource.counts_generation and _content(old) != _content(new):
        metadata["generation"] = int(old_metadata.get("generation") or 0) + 1
    return new


def check_resource_version(resource, old, new, name):
    """The registry's optimistic concurrency (registry/store.go Update): a resourceVersion that
    is not the stored one is 409; none at all is allowed unless the strategy refuses
    unconditional updates (custom resources: 422)."""
    wanted = new.get("metadata", {}).get("resourceVersion")
    if not wanted:
        if resource.crd:
            # (Kubernetes 1.34 renders the value as JSON, "0"; older releases printed "0x0".)
            raise ApiError(422, "Invalid", '%s "%s" is invalid: metadata.resourceVersion: '
                           "Invalid value: 0: must be specified for an update"
                           % (resource.qualified, name),
                           {"name": name, "group": resource.group, "kind": resource.resource,
                            "causes": [{"type": "FieldValueInvalid",
                                        "message": "Invalid value: 0: must be specified "
                                                   "for an update",
                                        "field": "metadata.resourceVersion"}]})
        return
    if wanted != old["metadata"]["resourceVersion"]:
        raise conflict_error(resource, name)


def conflict_error(resource, name, reason=OPTIMISTIC_LOCK_MESSAGE):
    """errors.NewConflict."""
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (resource.qualified, name, reason), resource.details(name))


def precondition_error(resource, namespace, name, what, wanted, actual):
    """A storage precondition that failed, as storeerr.InterpretUpdateError/DeleteError turn
    it into errors.NewConflict (storage.NewInvalidObjError's text)."""
    key = "/registry/%s%s/%s%s" % (resource.group + "/" if resource.group else "",
                                  resource.resource, namespace + "/" if namespace else "", name)
    return conflict_error(resource, name, "StorageError: invalid object, Code: 4, Key: %s, "
                          "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: %s in "
                          "precondition: %s, %s in object meta: %s"
                          % (key, what, wanted, what, actual))


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
        self.closed_peers = []  # client ports of connections closed, for tests to wait on
        self.requests = []
        self.conflicts = []  # [{"count", "match", "methods", "touch"}]
        self.config = config
        config.setdefault("maxBodyBytes", DEFAULT_MAX_BODY_BYTES)
        config.setdefault("maxObjectBytes", DEFAULT_MAX_OBJECT_BYTES)
        config.setdefault("garbageCollection", True)

    def add_resource(self, resource):
        self.resources[resource.key] = resource

    def find_resource(self, group, version, name):
        return self.resources.get((group, version, name))

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def bucket(self, resource):
        return self.objects.setdefault(resource.key, {})

    def apply(self, event_type, obj, collect=True):
        """Applies an event (from the control endpoint or an API write); returns the object as
        stored. A deletion is followed by garbage collection unless collect is False. Called
        with the lock held."""
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
                raise ApiError(404, "NotFound", '%s "%s" not found' % (resource.qualified, name),
                               resource.details(name))
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
        if event_type == "DELETED" and collect:
            self.collect_garbage(stored["metadata"].get("uid"))
        return stored

    def commit(self, resource, obj, old, drop_managed_fields_if_too_large=True):
        """Stores an API write as the registry and the etcd3 store do; returns (object, written).
        obj is complete but for its resourceVersion; old is the stored object (None: a create).

        - No-op: etcd3 store.GuaranteedUpdate does not write when the new encoding equals the
          stored one (after fieldmanager.IgnoreManagedFieldsTimestampsTransformer put back the
          managedFields times): the old object is the answer, same resourceVersion, no event.
        - Size: etcd refuses a request over --max-request-bytes ("etcdserver: request is too
          large", gRPC InvalidArgument); kube-apiserver does not map it to a Status, so
          responsewriters.ErrorToAPIStatus answers 500 with that message and no reason
          (kubernetes#112152 is still open). Create, update and non-apply patch first retry
          without metadata.managedFields (handlers/create.go, update.go, patch.go
          isTooLargeError). The size here is the object's compact JSON."""
        if old is not None and _same_but_times(old, obj):
            return old, False
        limit = int(self.config.get("maxObjectBytes", DEFAULT_MAX_OBJECT_BYTES))
        if _encoded_size(obj) > limit and drop_managed_fields_if_too_large:
            obj.get("metadata", {}).pop("managedFields", None)
        if _encoded_size(obj) > limit:
            raise ApiError(500, "", "etcdserver: request is too large")
        return self.apply("ADDED" if old is None else "MODIFIED", obj), True

    def live_uids(self):
        return {obj["metadata"].get("uid") for bucket in self.objects.values()
                for obj in bucket.values()}

    def dependents(self, uid):
        """(resource, object) of every object with an ownerReference to uid."""
        out = []
        for resource_key, bucket in self.objects.items():
            resource = self.resources.get(resource_key)
            for obj in list(bucket.values()):
                references = obj.get("metadata", {}).get("ownerReferences") or []
                if resource is not None and any(isinstance(r, dict) and r.get("uid") == uid
                                                for r in references):
                    out.append((resource, obj))
        return out

    def collect_garbage(self, uid):
        """The garbage collector's background deletion, at once: a dependent of a deleted owner
        whose ownerReferences now all point at absent objects is deleted (and its dependents
        after it); one that still has an owner only loses the dangling references
        (garbagecollector.go attemptToDeleteItem: solid owners keep an object, dangling
        references are patched away). Owners are looked up by uid."""
        if not uid or not self.config.get("garbageCollection", True):
            return
        for resource, obj in self.dependents(uid):
            metadata = obj["metadata"]
            if self.bucket(resource).get((metadata.get("namespace", ""), metadata["name"])) \
                    is not obj:
                continue  # already collected
            live = self.live_uids()
            references = metadata.get("ownerReferences") or []
            remaining = [r for r in references if isinstance(r, dict) and r.get("uid") in live]
            if remaining:
                self.set_owner_references(resource, obj, remaining)
            else:
                self.apply("DELETED", copy.deepcopy(obj))

    def orphan_dependents(self, uid):
        """propagationPolicy=Orphan: dependents only lose their reference to the owner (also the
        garbage collector's work: nothing happens with garbageCollection off)."""
        if not uid or not self.config.get("garbageCollection", True):
            return
        for resource, obj in self.dependents(uid):
            remaining = [r for r in obj["metadata"].get("ownerReferences") or []
                         if not (isinstance(r, dict) and r.get("uid") == uid)]
            self.set_owner_references(resource, obj, remaining)

    def set_owner_references(self, resource, obj, references):
        # The garbage collector patches through the API as kube-controller-manager.
        new = copy.deepcopy(obj)
        if references:
            new["metadata"]["ownerReferences"] = references
        else:
            new["metadata"].pop("ownerReferences", None)
        new["metadata"].pop("resourceVersion", None)
        new = field_manager_update(resource, obj, new, "kube-controller-manager")
        self.commit(resource, new, obj)

    def take_conflict(self, method, path):
        """The first injected conflict rule matching this write, counted down."""
        for rule in self.conflicts:
            if rule["count"] > 0 and method in rule["methods"] and rule["match"] in path:
                rule["count"] -= 1
                return rule
        return None

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
            with self.store.cond:
                self.store.closed_peers.append(client_address[1] if client_address else 0)

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
                "contentType": (self.headers.get("Content-Type")
                                if self.command in ("POST", "PUT", "PATCH", "DELETE") else None),
                "bodyBytes": len(getattr(self, "raw_body", b"")),
                "userAgent": self.headers.get("User-Agent", ""),
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
        elif self.command == "PATCH":
            self.patch(resource, namespace, name)
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

    def check_body_size(self):
        """handlers/rest.go limitedReadBody: a write body over MaxRequestBodyBytes (3 MiB) is
        413 "Request entity too large: limit is N" (create, update, patch and delete read the
        body this way)."""
        limit = int(self.store.config.get("maxBodyBytes", DEFAULT_MAX_BODY_BYTES))
        if limit > 0 and len(self.raw_body) > limit:
            raise ApiError(413, "RequestEntityTooLarge",
                           "Request entity too large: limit is %d" % limit)

    def field_manager(self, options_kind):
        """The fieldManager query parameter (validated as ValidateFieldManager does: at most
        128 bytes, printable), or the User-Agent's prefix (handlers managerOrUserAgent)."""
        manager = query_value(self.query, "fieldManager", "")
        causes = []
        if len(manager.encode()) > 128:
            causes.append({"type": "FieldValueTooLong", "field": "fieldManager",
                           "message": "Too long: may not be more than 128 bytes"})
        for index, char in enumerate(manager):
            if not char.isprintable():
                causes.append({"type": "FieldValueInvalid", "field": "fieldManager",
                               "message": "Invalid value: %s: invalid character U+%04X (at "
                                          "position %d)" % (go_quote(manager), ord(char),
                                                            index)})
        if causes:
            raise self.options_invalid(options_kind, causes)
        return manager or user_agent_manager(self.headers.get("User-Agent", ""))

    @staticmethod
    def options_invalid(options_kind, causes):
        """errors.NewInvalid(GroupKind{meta.k8s.io, *Options}, "", errs): 422."""
        text = ", ".join("%s: %s" % (c["field"], c["message"]) for c in causes)
        if len(causes) > 1:
            text = "[" + text + "]"
        return ApiError(422, "Invalid", '%s.meta.k8s.io "" is invalid: %s' % (options_kind, text),
                        {"group": "meta.k8s.io", "kind": options_kind, "causes": causes})

    def injected_conflict(self, resource, namespace, name, old):
        """A conflict injected with /_fake/conflict: 409 as if another writer had changed the
        object first (which it does, a resourceVersion bump, with "touch")."""
        rule = self.store.take_conflict(self.command, self.path)
        if rule is None:
            return
        if rule.get("touch") and old is not None:
            touched = copy.deepcopy(old)
            touched["metadata"].pop("resourceVersion", None)
            self.store.apply("MODIFIED", touched)
        raise conflict_error(resource, name)

    def body_object(self, resource, namespace):
        obj = self.read_body()
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body must be an object")
        obj["apiVersion"] = resource.api_version
        obj["kind"] = resource.kind
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise ApiError(400, "BadRequest", "metadata must be an object")
        self.check_namespace(resource, namespace, metadata)
        return obj

    @staticmethod
    def check_namespace(resource, namespace, metadata):
        # rest.EnsureObjectNamespaceMatchesRequestNamespace
        if resource.namespaced:
            if metadata.get("namespace", namespace) not in ("", namespace):
                raise ApiError(400, "BadRequest",
                               "the namespace of the provided object does not match the "
                               "namespace sent on the request")
            metadata["namespace"] = namespace
        else:
            metadata.pop("namespace", None)

    @staticmethod
    def check_name(obj, name):
        # handlers/rest.go checkName
        if obj["metadata"].get("name", "") != name:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (obj["metadata"].get("name", ""), name))

    def create(self, resource, namespace):
        self.check_body_size()
        manager = self.field_manager("CreateOptions")
        obj = self.body_object(resource, namespace)
        metadata = obj["metadata"]
        if not metadata.get("name") and metadata.get("generateName"):
            metadata["name"] = metadata["generateName"] + uuid.uuid4().hex[:5]
        # rest.WipeObjectMetaSystemFields; the store sets uid, creationTimestamp and
        # resourceVersion.
        for field in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "selfLink"):
            metadata.pop(field, None)
        if resource.counts_generation:
            metadata["generation"] = 1
        default_object(resource, obj)
        name = metadata.get("name")
        with self.store.cond:
            if (namespace, name) in self.store.bucket(resource):
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (resource.qualified, name), resource.details(name))
            self.injected_conflict(resource, namespace, name, None)
            obj = field_manager_update(resource, None, obj, manager)
            stored, _ = self.store.commit(resource, obj, None)
        self.send_json(201, stored)

    def update(self, resource, namespace, name):
        self.check_body_size()
        manager = self.field_manager("UpdateOptions")
        obj = self.body_object(resource, namespace)
        self.check_name(obj, name)
        default_object(resource, obj)
        with self.store.cond:
            old = self.store.bucket(resource).get((namespace, name))
            if old is None:
                raise self.not_found(resource, name)
            self.injected_conflict(resource, namespace, name, old)
            # A PUT's uid is a storage precondition (DefaultUpdatedObjectInfo.Preconditions).
            uid = obj["metadata"].get("uid")
            if uid and uid != old["metadata"].get("uid"):
                raise precondition_error(resource, namespace, name, "UID", uid,
                                         old["metadata"].get("uid"))
            check_resource_version(resource, old, obj, name)
            obj = field_manager_update(resource, old, obj, manager)
            prepare_update(resource, old, obj)
            stored, _ = self.store.commit(resource, obj, old)
        self.send_json(200, stored)

    def patch(self, resource, namespace, name):
        """PATCH (handlers/patch.go PatchResource): JSON patch, merge patch, server-side apply."""
        content_type = self.headers.get("Content-Type") or ""
        if ";" in content_type[1:]:
            content_type = content_type[:content_type.index(";", 1)]
        self.check_patch_type(resource, content_type)
        self.check_body_size()
        apply = content_type == PATCH_APPLY
        force = False
        if "force" in self.query:
            force = parse_bool(self.query, "force")
            if not apply:
                raise self.options_invalid("PatchOptions", [{
                    "type": "FieldValueForbidden", "field": "force",
                    "message": "Forbidden: may not be specified for non-apply patch"}])
        if apply and not query_value(self.query, "fieldManager", ""):
            # This field is defaulted to "kubectl" by kubectl, but HAS TO be explicitly set by
            # controllers (ValidatePatchOptions); a 422, not a 400.
            raise self.options_invalid("PatchOptions", [{
                "type": "FieldValueRequired", "field": "fieldManager",
                "message": "Required value: is required for apply patch"}])
        manager = self.field_manager("PatchOptions")
        with self.store.cond:
            old = self.store.bucket(resource).get((namespace, name))
            if old is None and not apply:
                # registry Update: no create on update for a non-apply patch
                raise self.not_found(resource, name)
            self.injected_conflict(resource, namespace, name, old)
            if apply:
                new = self.server_side_apply(resource, namespace, name, old, manager, force)
            else:
                current = copy.deepcopy(old)
                if content_type == PATCH_JSON:
                    operations = decode_json_patch(self.raw_body)
                    try:
                        new = apply_json_patch(current, operations)
                    except JsonPatchError:
                        raise ApiError(422, "Invalid", "the server rejected our request due to "
                                       "an error in our request", {})
                else:
                    new = apply_merge_patch(current, self.raw_body)
                if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
                    raise ApiError(422, "Invalid", ' "" is invalid: patch: Invalid value: %s: '
                                   "the patched object is not an object with metadata"
                                   % go_quote(compact_json(new)), {"causes": [{
                                       "type": "FieldValueInvalid", "field": "patch"}]})
                # Decoded as the resource's kind whatever the patch did to apiVersion and kind.
                new["apiVersion"] = resource.api_version
                new["kind"] = resource.kind
                default_object(resource, new)
                new = field_manager_update(resource, old, new, manager)
                self.check_namespace(resource, namespace, new["metadata"])
                self.check_name(new, name)
                check_resource_version(resource, old, new, name)
                prepare_update(resource, old, new)
            created = old is None
            stored, _ = self.store.commit(resource, new, old,
                                          drop_managed_fields_if_too_large=not apply)
        self.send_json(201 if created else 200, stored)

    def check_patch_type(self, resource, content_type):
        """415 for a patch type the resource does not take. Built-in resources are served by
        go-restful, whose route has Consumes(json-patch, merge-patch, strategic-merge-patch,
        apply-patch+yaml): another type is its ServiceError "415: Unsupported Media Type" made a
        Status by serviceErrorHandler (details {}). Custom resources go straight to
        PatchResource: "the body of the request was in an unknown format - accepted media types
        include: ..." (no strategic merge patch). The fake does not implement strategic merge
        patch at all: for built-in resources that is its own 415 (the real server takes it)."""
        accepted = [PATCH_JSON, PATCH_MERGE, PATCH_APPLY]
        if content_type in accepted:
            return
        if not resource.crd:
            offered = set(accepted) | {PATCH_STRATEGIC}
            given = [t.split(";")[0].strip() for t in (self.headers.get("Content-Type")
                                                        or "application/octet-stream")
                     .split(",")]
            if not any(t in offered for t in given):
                if self.raw_body:
                    raise ApiError(415, "UnsupportedMediaType", "415: Unsupported Media Type",
                                   {})
                raise ApiError(415, "UnsupportedMediaType", "415: Unsupported Media Type\n\n"
                               "Available representations: ", {})
            if content_type == PATCH_STRATEGIC:
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: %s (strategic merge patch is not "
                               "implemented by the fake API server)" % ", ".join(accepted))
        raise ApiError(415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media "
                       "types include: %s" % ", ".join(accepted))

    def server_side_apply(self, resource, namespace, name, old, manager, force):
        """applyPatcher (patch.go) + FieldManager.Apply. The body is decoded as YAML by the real
        server; the fake reads only JSON (which is YAML) and answers a body that is not JSON as
        the real server answers one it cannot decode: 400 "error decoding YAML: ..."."""
        text = self.raw_body.decode("utf-8", "replace").strip()
        try:
            config = json.loads(text) if text else None
        except ValueError as error:
            raise ApiError(400, "BadRequest", "error decoding YAML: error converting YAML to "
                           "JSON: the fake API server reads only the JSON subset of YAML: %s"
                           % error)
        if config is None:
            config = {}
        if not isinstance(config, dict):
            raise ApiError(400, "BadRequest", "error decoding YAML: error unmarshaling JSON: "
                           "while decoding JSON: json: cannot unmarshal %s into Go value of "
                           "type map[string]interface {}" % go_type_name(config))
        try:
            merged, managed = field_manager_apply(resource, old, config, manager, force)
        except ApplyConflict as conflict:
            raise conflict.api_error()
        new = copy.deepcopy(old) if merged is None else merged
        new["apiVersion"] = resource.api_version
        new["kind"] = resource.kind
        metadata = new.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise ApiError(400, "BadRequest", "metadata must be an object")
        default_object(resource, new)
        set_managed_fields(new, managed)
        if old is None:
            # patcher.applyPatch: a uid given for an object that does not exist
            if metadata.get("uid"):
                raise conflict_error(resource, name, "uid mismatch: the provided object "
                                     "specified uid %s, and no existing object was found"
                                     % metadata["uid"])
            self.check_namespace(resource, namespace, metadata)
            self.check_name(new, name)
            for field in ("resourceVersion", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "selfLink"):
                metadata.pop(field, None)
            if resource.counts_generation:
                metadata["generation"] = 1
            return new
        self.check_namespace(resource, namespace, metadata)
        self.check_name(new, name)
        # An applied resourceVersion is a precondition; none means the stored one.
        wanted = metadata.get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise conflict_error(resource, name)
        metadata["resourceVersion"] = old["metadata"]["resourceVersion"]
        return prepare_update(resource, old, new)

    def delete(self, resource, namespace, name):
        """DELETE with DeleteOptions (body or query): preconditions (uid, resourceVersion: 409)
        and propagationPolicy (Orphan, or orphanDependents: dependents keep living without the
        reference; Background and Foreground: garbage collection, at once)."""
        self.check_body_size()
        options = self.read_body() or {}
        if not isinstance(options, dict):
            options = {}
        policy = options.get("propagationPolicy") or query_value(self.query,
                                                                 "propagationPolicy", "")
        if options.get("orphanDependents") is True or (
                "orphanDependents" in self.query and parse_bool(self.query, "orphanDependents")):
            policy = "Orphan"
        preconditions = options.get("preconditions") or {}
        with self.store.cond:
            old = self.store.bucket(resource).get((namespace, name))
            if old is None:
                raise self.not_found(resource, name)
            self.injected_conflict(resource, namespace, name, old)
            for field, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                wanted = preconditions.get(field)
                if wanted and wanted != old["metadata"].get(field):
                    raise precondition_error(resource, namespace, name, what, wanted,
                                             old["metadata"].get(field))
            stored = self.store.apply("DELETED", copy.deepcopy(old),
                                      collect=policy != "Orphan")
            if policy == "Orphan":
                self.store.orphan_dependents(stored["metadata"].get("uid"))
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
                        "compactedResourceVersion": str(store.compacted_rv),
                        "closedPeers": list(store.closed_peers)}
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
            elif action == "conflict":
                methods = body.get("methods") or ["PUT", "PATCH"]
                store.conflicts.append({"count": int(body.get("count", 1)),
                                        "match": body.get("match", ""),
                                        "methods": [m.upper() for m in methods],
                                        "touch": bool(body.get("touch", False))})
            elif action == "config":
                store.config.update(body)
            elif action == "resources":
                for entry in body.get("add", []):
                    store.add_resource(Resource(entry.get("group", ""), entry["version"],
                                                entry["resource"], entry["kind"],
                                                bool(entry.get("namespaced", False)),
                                                bool(entry.get("crd", False))))
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
                                            bool(entry.get("namespaced", False)),
                                            bool(entry.get("crd", False))))
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
