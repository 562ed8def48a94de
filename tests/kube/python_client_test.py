#!/usr/bin/python3
"""Checks the fake API server against a real client, Debian's python3-kubernetes: discovery,
paginated lists, watch events, bookmarks, 410 (in-stream, HTTP and expired continue), 401, 404,
429 and client certificates must all read as the client expects from kube-apiserver; so must the
writes: create/replace, JSON and merge patches, server-side apply with its conflicts, no-op
writes, size limits, garbage collection and injected conflicts. Run by ctest with
/usr/bin/python3 (Debian's interpreter, where the package is installed)."""

import base64
import json
import threading
import time
import unittest

try:
    import kubernetes
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError:  # pragma: no cover
    print("python3-kubernetes is not installed (tools/setup.sh installs it)")
    raise SystemExit(77)

from fake_control import FakeApiServer, wait_until


def namespace(name, labels=None):
    return client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=labels))


def lease(name, holder, ns="default"):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15}}


def webhook_configuration(name, service="topoguard"):
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
            "webhooks": [{"name": "pods.topoguard.example.com", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"],
                          "clientConfig": {"service": {"name": service,
                                                       "namespace": "topoguard"}},
                          "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                     "operations": ["CREATE"], "resources": ["pods"]}]}]}


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = FakeApiServer("--bookmark-interval", "0.3")

    @classmethod
    def tearDownClass(cls):
        cls.fake.close()

    def setUp(self):
        self.fake.control("config", {"tooOldMode": "stream", "bookmarkInterval": 0.3,
                                     "chunking": "random"})
        self.api_client = config.new_client_from_config(config_file=self.fake.kubeconfig())
        self.core = client.CoreV1Api(self.api_client)

    def tearDown(self):
        self.api_client.close()

    def status_of(self, error):
        body = json.loads(error.body)
        self.assertEqual(body["kind"], "Status")
        self.assertEqual(body["apiVersion"], "v1")
        self.assertEqual(body["status"], "Failure")
        self.assertEqual(body["code"], error.status)
        return body

    # Discovery documents deserialize into the client's models.
    def test_discovery(self):
        version = client.VersionApi(self.api_client).get_code()
        self.assertEqual(version.major, "1")
        self.assertTrue(version.git_version.startswith("v1."))
        self.assertEqual(client.CoreApi(self.api_client).get_api_versions().versions, ["v1"])
        groups = client.ApisApi(self.api_client).get_api_versions().groups
        names = {group.name for group in groups}
        self.assertIn("resource.k8s.io", names)
        self.assertIn("scheduling.k8s.io", names)
        resources = self.core.get_api_resources().resources
        self.assertIn("namespaces", {r.name for r in resources})

    # Pages of `limit` items chained by `continue` give every object once, at one version; the
    # items carry no kind.
    def test_paginated_list(self):
        names = ["page-%02d" % i for i in range(7)]
        for name in names:
            self.core.create_namespace(namespace(name, {"suite": "pages"}))
        seen, versions, token = [], set(), None
        while True:
            page = self.core.list_namespace(limit=3, _continue=token,
                                            label_selector="suite=pages")
            seen += [item.metadata.name for item in page.items]
            versions.add(page.metadata.resource_version)
            self.assertLessEqual(len(page.items), 3)
            token = page.metadata._continue
            if not token:
                break
            self.assertGreater(page.metadata.remaining_item_count, 0)
        self.assertEqual(seen, names)
        self.assertEqual(len(versions), 1)
        raw = self.core.list_namespace(limit=2, _preload_content=False)
        body = json.loads(raw.data)
        self.assertEqual(body["kind"], "NamespaceList")
        for item in body["items"]:
            self.assertNotIn("kind", item)
            self.assertNotIn("apiVersion", item)

    # A continue token the server no longer honours is 410 Expired with a Status body.
    def test_expired_continue(self):
        for i in range(4):
            self.core.create_namespace(namespace("expiring-%d" % i, {"suite": "expire"}))
        page = self.core.list_namespace(limit=2, label_selector="suite=expire")
        self.assertTrue(page.metadata._continue)
        self.fake.control("expire-continue")
        with self.assertRaises(ApiException) as caught:
            self.core.list_namespace(limit=2, _continue=page.metadata._continue,
                                     label_selector="suite=expire")
        self.assertEqual(caught.exception.status, 410)
        self.assertEqual(self.status_of(caught.exception)["reason"], "Expired")

    # resourceVersion with continue is refused, as by the real server.
    def test_version_with_continue_is_bad_request(self):
        for i in range(3):
            self.core.create_namespace(namespace("rvc-%d" % i, {"suite": "rvc"}))
        page = self.core.list_namespace(limit=1, label_selector="suite=rvc")
        with self.assertRaises(ApiException) as caught:
            self.core.list_namespace(limit=1, _continue=page.metadata._continue,
                                     resource_version=page.metadata.resource_version)
        self.assertEqual(caught.exception.status, 400)

    # ADDED, MODIFIED and DELETED arrive in order from the list's version, with bookmarks in
    # between, and the stream ends cleanly at timeoutSeconds.
    def test_watch_events_and_bookmarks(self):
        start = self.core.list_namespace().metadata.resource_version
        watches = self.fake.watches_started("/api/v1/namespaces")

        def mutate():
            wait_until(lambda: self.fake.watches_started("/api/v1/namespaces") > watches,
                       "the watch to open")
            self.core.create_namespace(namespace("watched", {"a": "1"}))
            current = self.core.read_namespace("watched")
            current.metadata.labels = {"a": "2"}
            self.core.replace_namespace("watched", current)
            self.core.delete_namespace("watched")

        writer = threading.Thread(target=mutate)
        writer.start()
        events = []
        began = time.monotonic()
        for event in watch.Watch().stream(self.core.list_namespace, resource_version=start,
                                          timeout_seconds=2, allow_watch_bookmarks=True):
            events.append(event)
        elapsed = time.monotonic() - began
        writer.join()
        typed = [(e["type"], e["raw_object"]["metadata"].get("name")) for e in events
                 if e["type"] != "BOOKMARK"]
        self.assertEqual(typed, [("ADDED", "watched"), ("MODIFIED", "watched"),
                                 ("DELETED", "watched")])
        modified = [e for e in events if e["type"] == "MODIFIED"][0]
        self.assertEqual(modified["object"].metadata.labels, {"a": "2"})
        bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
        self.assertTrue(bookmarks)
        for bookmark in bookmarks:
            self.assertEqual(set(bookmark["raw_object"]), {"kind", "apiVersion", "metadata"})
            self.assertEqual(set(bookmark["raw_object"]["metadata"]), {"resourceVersion"})
        self.assertGreaterEqual(elapsed, 1.5)
        self.assertLess(elapsed, 10)

    # Watching from a compacted version: the client sees the in-stream ERROR 410 as
    # ApiException(410) (it does not retry when timeout_seconds is given).
    def test_watch_too_old_in_stream(self):
        start = self.core.list_namespace().metadata.resource_version
        self.core.create_namespace(namespace("before-compaction"))
        self.fake.control("compact")
        with self.assertRaises(ApiException) as caught:
            for _ in watch.Watch().stream(self.core.list_namespace, resource_version=start,
                                          timeout_seconds=2):
                pass
        self.assertEqual(caught.exception.status, 410)
        self.assertIn("Expired", caught.exception.reason)

    # The same as an HTTP 410 answer: the watch call itself raises.
    def test_watch_too_old_http(self):
        start = self.core.list_namespace().metadata.resource_version
        self.core.create_namespace(namespace("before-compaction-http"))
        self.fake.control("compact")
        self.fake.control("config", {"tooOldMode": "http"})
        with self.assertRaises(ApiException) as caught:
            for _ in watch.Watch().stream(self.core.list_namespace, resource_version=start,
                                          timeout_seconds=2):
                pass
        self.assertEqual(caught.exception.status, 410)
        self.assertEqual(self.status_of(caught.exception)["reason"], "Expired")

    # An open watch told to expire gets ERROR 410, and without timeout_seconds the client
    # retries once from its last version (which then works, as nothing was compacted).
    def test_in_stream_expiry_then_client_retry(self):
        start = self.core.list_namespace().metadata.resource_version
        stream = watch.Watch()
        seen = []
        watches = self.fake.watches_started("/api/v1/namespaces")

        def drive():
            wait_until(lambda: self.fake.watches_started("/api/v1/namespaces") > watches,
                       "the watch to open")
            self.fake.control("expire-watches")
            wait_until(lambda: self.fake.watches_started("/api/v1/namespaces") > watches + 1,
                       "the client's second watch")
            self.core.create_namespace(namespace("after-expiry"))

        driver = threading.Thread(target=drive)
        driver.start()
        for event in stream.stream(self.core.list_namespace, resource_version=start):
            if event["type"] == "ADDED":
                seen.append(event["object"].metadata.name)
                stream.stop()
        driver.join()
        self.assertEqual(seen, ["after-expiry"])

    # A revoked token is 401 with a Status body.
    def test_revoked_token(self):
        self.fake.control("tokens", {"add": ["short-lived"]})
        api_client = config.new_client_from_config(
            config_file=self.fake.kubeconfig(token="short-lived"))
        core = client.CoreV1Api(api_client)
        core.list_namespace(limit=1)
        self.fake.control("tokens", {"revoke": ["short-lived"]})
        with self.assertRaises(ApiException) as caught:
            core.list_namespace(limit=1)
        self.assertEqual(caught.exception.status, 401)
        self.assertEqual(self.status_of(caught.exception)["reason"], "Unauthorized")
        api_client.close()

    # A client certificate signed by the cluster CA authenticates.
    def test_client_certificate(self):
        api_client = config.new_client_from_config(
            config_file=self.fake.kubeconfig(client_cert=True))
        client.CoreV1Api(api_client).list_namespace(limit=1)
        last = self.fake.requests()[-1]
        self.assertEqual(last["auth"], "cert:topoguard-test")
        api_client.close()

    # resource.k8s.io/v1 through the generic client: create, paginated list without kinds.
    def test_resource_slices(self):
        custom = client.CustomObjectsApi(self.api_client)
        for i in range(5):
            custom.create_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": "slice-%d" % i},
                "spec": {"driver": "gpu.example.com", "nodeName": "node-%d" % i,
                         "pool": {"name": "node-%d" % i, "generation": 1,
                                  "resourceSliceCount": 1}, "devices": []}})
        page = custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices",
                                                 limit=2)
        self.assertEqual(page["kind"], "ResourceSliceList")
        self.assertEqual(page["apiVersion"], "resource.k8s.io/v1")
        self.assertEqual(len(page["items"]), 2)
        self.assertNotIn("kind", page["items"][0])
        self.assertTrue(page["metadata"]["continue"])

    # A resource the server does not serve is 404 with a Status body.
    def test_absent_resource(self):
        custom = client.CustomObjectsApi(self.api_client)
        with self.assertRaises(ApiException) as caught:
            custom.list_namespaced_custom_object("k8s.cni.cncf.io", "v1", "default",
                                                 "network-attachment-definitions")
        self.assertEqual(caught.exception.status, 404)
        self.assertEqual(self.status_of(caught.exception)["reason"], "NotFound")

    # Throttling is 429 with Retry-After and details.retryAfterSeconds: urllib3 under the
    # client waits as told and retries.
    def test_throttled(self):
        self.fake.control("throttle", {"count": 1, "retryAfter": 1, "match": "/api/v1/nodes"})
        began = time.monotonic()
        self.core.list_node()
        self.assertGreaterEqual(time.monotonic() - began, 0.9)
        answers = [r["status"] for r in self.fake.requests() if r["path"] == "/api/v1/nodes"]
        self.assertEqual(answers[-2:], [429, 200])
        # Past its retries (3) the client gives up with the 429.
        self.fake.control("throttle", {"count": 5, "retryAfter": 1, "match": "/api/v1/pods"})
        with self.assertRaises((ApiException, Exception)) as caught:
            client.CoreV1Api(config.new_client_from_config(
                config_file=self.fake.kubeconfig())).list_pod_for_all_namespaces(
                    _request_timeout=30)
        self.assertIn("429", str(caught.exception))



class PythonClientWriteTest(unittest.TestCase):
    """Writes through the real client: what it sends and how it reads the answers."""

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeApiServer()

    @classmethod
    def tearDownClass(cls):
        cls.fake.close()

    def setUp(self):
        self.fake.control("config", {"maxBodyBytes": 3145728, "maxObjectBytes": 1572864,
                                     "garbageCollection": True})
        self.api_client = config.new_client_from_config(config_file=self.fake.kubeconfig())
        self.core = client.CoreV1Api(self.api_client)
        self.leases = client.CoordinationV1Api(self.api_client)
        self.webhooks = client.AdmissionregistrationV1Api(self.api_client)
        self.custom = client.CustomObjectsApi(self.api_client)

    def tearDown(self):
        self.api_client.close()

    def status_of(self, error):
        body = json.loads(error.body)
        self.assertEqual(body["kind"], "Status")
        self.assertEqual(body["status"], "Failure")
        self.assertEqual(body["code"], error.status)
        return body

    def call(self, method, path, body, content_type, query=None):
        """A request the typed API cannot make (a merge patch, an apply) through the client's
        own call_api; the apply body goes as text (JSON is YAML)."""
        if content_type == "application/apply-patch+yaml" and not isinstance(body, str):
            body = json.dumps(body)
        data, status, _ = self.api_client.call_api(
            path, method, {}, list((query or {}).items()),
            {"Content-Type": content_type, "Accept": "application/json"}, body=body,
            response_type="object", auth_settings=["BearerToken"],
            _return_http_data_only=False, _preload_content=True)
        return data, status

    def apply(self, path, body, manager="topoguard", force=None):
        query = {"fieldManager": manager} if manager is not None else {}
        if force is not None:
            query["force"] = force
        return self.call("PATCH", path, body, "application/apply-patch+yaml", query)

    def requests_to(self, path):
        return [r for r in self.fake.requests() if r["path"] == path]

    # Discovery offers patch for every resource, the new ones included.
    def test_discovery_verbs(self):
        resources = client.CoordinationV1Api(self.api_client).get_api_resources().resources
        self.assertIn("patch", [r for r in resources if r.name == "leases"][0].verbs)
        groups = {g.name for g in client.ApisApi(self.api_client).get_api_versions().groups}
        self.assertTrue({"admissionregistration.k8s.io", "openreports.io",
                         "wgpolicyk8s.io"} <= groups)

    # Secret: create (stringData becomes data), read, replace; an unchanged replace writes
    # nothing; a stale resourceVersion is 409.
    def test_secret_create_read_replace(self):
        created = self.core.create_namespaced_secret("default", client.V1Secret(
            metadata=client.V1ObjectMeta(name="tls"), string_data={"tls.crt": "PEM"}))
        self.assertEqual(created.type, "Opaque")
        self.assertEqual(created.data, {"tls.crt": base64.b64encode(b"PEM").decode()})
        entry = created.metadata.managed_fields[0]
        self.assertEqual((entry.manager, entry.operation, entry.api_version, entry.fields_type),
                         ("OpenAPI-Generator", "Update", "v1", "FieldsV1"))
        self.assertEqual(entry.fields_v1["f:data"], {".": {}, "f:tls.crt": {}})
        read = self.core.read_namespaced_secret("tls", "default")
        self.assertEqual(read.metadata.resource_version, created.metadata.resource_version)
        read.data["tls.key"] = base64.b64encode(b"KEY").decode()
        replaced = self.core.replace_namespaced_secret("tls", "default", read)
        self.assertNotEqual(replaced.metadata.resource_version, read.metadata.resource_version)
        same = self.core.replace_namespaced_secret("tls", "default", replaced)
        self.assertEqual(same.metadata.resource_version, replaced.metadata.resource_version)
        same.type = "kubernetes.io/tls"
        with self.assertRaises(ApiException) as caught:
            self.core.replace_namespaced_secret("tls", "default", same)
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(self.status_of(caught.exception)["message"], 'Secret "tls" is invalid: '
                         'type: Invalid value: "kubernetes.io/tls": field is immutable')
        with self.assertRaises(ApiException) as caught:
            self.core.replace_namespaced_secret("tls", "default", read)  # stale
        self.assertEqual(caught.exception.status, 409)
        body = self.status_of(caught.exception)
        self.assertEqual(body["reason"], "Conflict")
        self.assertEqual(body["message"], 'Operation cannot be fulfilled on secrets "tls": the '
                         "object has been modified; please apply your changes to the latest "
                         "version and try again")

    # JSON patch (the typed client sends a list as application/json-patch+json): escaped keys,
    # a passing and a failing test op (422 Invalid with the server's generic message), array
    # append and index on a webhook configuration.
    def test_json_patch(self):
        self.leases.create_namespaced_lease("default", lease("json", "a"))
        patched = self.leases.patch_namespaced_lease("json", "default", [
            {"op": "test", "path": "/spec/holderIdentity", "value": "a"},
            {"op": "replace", "path": "/spec/holderIdentity", "value": "b"},
            {"op": "add", "path": "/metadata/annotations", "value": {}},
            {"op": "add", "path": "/metadata/annotations/example.com~1owner", "value": "x"}])
        self.assertEqual(patched.spec.holder_identity, "b")
        self.assertEqual(patched.metadata.annotations, {"example.com/owner": "x"})
        self.assertEqual(self.requests_to("/apis/coordination.k8s.io/v1/namespaces/default/"
                                          "leases/json")[-1]["contentType"],
                         "application/json-patch+json")
        with self.assertRaises(ApiException) as caught:
            self.leases.patch_namespaced_lease("json", "default", [
                {"op": "test", "path": "/spec/holderIdentity", "value": "a"},
                {"op": "replace", "path": "/spec/holderIdentity", "value": "c"}])
        self.assertEqual(caught.exception.status, 422)
        body = self.status_of(caught.exception)
        self.assertEqual(body["reason"], "Invalid")
        self.assertEqual(body["message"],
                         "the server rejected our request due to an error in our request")
        with self.assertRaises(ApiException) as caught:
            self.leases.patch_namespaced_lease("json", "default", [{"op": "nonsense"}])
        self.assertEqual(caught.exception.status, 422)
        with self.assertRaises(ApiException) as caught:
            self.leases.patch_namespaced_lease("absent", "default", [
                {"op": "remove", "path": "/spec"}])
        self.assertEqual(caught.exception.status, 404)

        self.webhooks.create_validating_webhook_configuration(webhook_configuration("jp"))
        second = dict(webhook_configuration("jp")["webhooks"][0], name="b.topoguard.example.com")
        patched = self.webhooks.patch_validating_webhook_configuration("jp", [
            {"op": "add", "path": "/webhooks/-", "value": second},
            {"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "Q0E="},
            {"op": "test", "path": "/webhooks/1/name", "value": "b.topoguard.example.com"},
            {"op": "copy", "from": "/webhooks/0/clientConfig/caBundle",
             "path": "/webhooks/1/clientConfig/caBundle"}])
        self.assertEqual([w.name for w in patched.webhooks],
                         ["pods.topoguard.example.com", "b.topoguard.example.com"])
        self.assertEqual([w.client_config.ca_bundle for w in patched.webhooks],
                         ["Q0E=", "Q0E="])
        self.assertEqual(patched.webhooks[1].timeout_seconds, 10)  # defaulted
        self.assertEqual(patched.metadata.generation, 2)
        with self.assertRaises(ApiException) as caught:
            self.webhooks.patch_validating_webhook_configuration("jp", [
                {"op": "remove", "path": "/webhooks/2"}])
        self.assertEqual(caught.exception.status, 422)

    # Merge patch (RFC 7386): members merge, null deletes, lists replace.
    def test_merge_patch(self):
        self.leases.create_namespaced_lease("default", dict(
            lease("merge", "a"), metadata={"name": "merge", "annotations": {"k": "v"}}))
        path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/merge"
        data, status = self.call("PATCH", path, {"metadata": {"annotations": {"k": None}},
                                                 "spec": {"holderIdentity": "b"}},
                                 "application/merge-patch+json")
        self.assertEqual(status, 200)
        self.assertEqual(data["spec"], {"holderIdentity": "b", "leaseDurationSeconds": 15})
        self.assertNotIn("annotations", data["metadata"])
        self.assertEqual(self.requests_to(path)[-1]["contentType"],
                         "application/merge-patch+json")
        managers = {(e["manager"], e["operation"]) for e in data["metadata"]["managedFields"]}
        self.assertEqual(managers, {("OpenAPI-Generator", "Update")})
        # A webhook configuration: the list is replaced whole; the generation counts it.
        self.webhooks.create_validating_webhook_configuration(webhook_configuration("mp"))
        replacement = webhook_configuration("mp", service="other")["webhooks"]
        data, _ = self.call("PATCH", "/apis/admissionregistration.k8s.io/v1/"
                            "validatingwebhookconfigurations/mp", {"webhooks": replacement},
                            "application/merge-patch+json", {"fieldManager": "merger"})
        self.assertEqual(data["webhooks"][0]["clientConfig"]["service"]["name"], "other")
        self.assertEqual(data["metadata"]["generation"], 2)
        with self.assertRaises(ApiException) as caught:
            self.call("PATCH", path, [1, 2], "application/merge-patch+json")
        self.assertEqual(caught.exception.status, 400)
        # Strategic merge patch (what the typed client sends for a dict) is not implemented.
        with self.assertRaises(ApiException) as caught:
            self.leases.patch_namespaced_lease("merge", "default", {"spec": {}})
        self.assertEqual(caught.exception.status, 415)
        self.assertEqual(self.status_of(caught.exception)["reason"], "UnsupportedMediaType")

    # Server-side apply: creates (201), owns what it sent, conflicts with another manager (409
    # with FieldManagerConflict causes) unless forced, prunes what it stops sending, and an
    # unchanged apply writes nothing.
    def test_server_side_apply(self):
        path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/applied"
        data, status = self.apply(path, lease("applied", "topoguard-0"))
        self.assertEqual(status, 201)
        entry, = data["metadata"]["managedFields"]
        self.assertEqual((entry["manager"], entry["operation"], entry["fieldsType"]),
                         ("topoguard", "Apply", "FieldsV1"))
        self.assertEqual(entry["fieldsV1"], {"f:spec": {"f:holderIdentity": {},
                                                        "f:leaseDurationSeconds": {}}})
        version = data["metadata"]["resourceVersion"]
        again, status = self.apply(path, lease("applied", "topoguard-0"))
        self.assertEqual(status, 200)
        self.assertEqual(again["metadata"]["resourceVersion"], version)
        self.assertEqual(self.leases.read_namespaced_lease(
            "applied", "default").metadata.resource_version, version)

        with self.assertRaises(ApiException) as caught:
            self.apply(path, lease("applied", "intruder"), manager="intruder")
        self.assertEqual(caught.exception.status, 409)
        body = self.status_of(caught.exception)
        self.assertEqual(body["reason"], "Conflict")
        self.assertEqual(body["message"], 'Apply failed with 1 conflict: conflict with '
                         '"topoguard": .spec.holderIdentity')
        self.assertEqual(body["details"]["causes"], [{
            "type": "FieldManagerConflict", "message": 'conflict with "topoguard"',
            "field": ".spec.holderIdentity"}])
        # Same values are shared, not conflicts.
        self.apply(path, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                          "metadata": {"name": "applied"},
                          "spec": {"leaseDurationSeconds": 15}}, manager="sharer")
        data, status = self.apply(path, lease("applied", "intruder"), manager="intruder",
                                  force=True)
        self.assertEqual((status, data["spec"]["holderIdentity"]), (200, "intruder"))
        owners = {e["manager"]: e["fieldsV1"] for e in data["metadata"]["managedFields"]}
        self.assertEqual(owners["topoguard"], {"f:spec": {"f:leaseDurationSeconds": {}}})
        # topoguard stops sending leaseDurationSeconds: still there, sharer owns it too.
        data, _ = self.apply(path, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "applied"}, "spec": {}})
        self.assertEqual(data["spec"]["leaseDurationSeconds"], 15)
        # An update by someone else takes the field over, without conflicts.
        data, _ = self.call("PATCH", path, {"spec": {"leaseDurationSeconds": 30}},
                            "application/merge-patch+json", {"fieldManager": "editor"})
        self.assertIn("editor", {e["manager"] for e in data["metadata"]["managedFields"]})
        with self.assertRaises(ApiException) as caught:
            self.apply(path, dict(lease("applied", "intruder"), spec={
                "holderIdentity": "intruder", "leaseDurationSeconds": 15}), manager="sharer")
        self.assertIn('conflict with "editor" using coordination.k8s.io/v1',
                      self.status_of(caught.exception)["message"])

    # A webhook configuration by apply: another manager's caBundle (an update inside a
    # webhook) neither conflicts with nor is pruned by the next apply.
    def test_apply_webhook_configuration(self):
        path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/applied"
        data, status = self.apply(path, webhook_configuration("applied"))
        self.assertEqual(status, 201)
        self.assertEqual(data["webhooks"][0]["failurePolicy"], "Fail")  # defaulted
        version = data["metadata"]["resourceVersion"]
        patched = self.webhooks.patch_validating_webhook_configuration("applied", [
            {"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "Q0E="}],
            field_manager="cert-rotator")
        self.assertNotEqual(patched.metadata.resource_version, version)
        data, status = self.apply(path, webhook_configuration("applied"))
        self.assertEqual(status, 200)
        self.assertEqual(data["webhooks"][0]["clientConfig"]["caBundle"], "Q0E=")
        self.assertEqual(data["metadata"]["resourceVersion"], patched.metadata.resource_version)
        rotator = [e for e in data["metadata"]["managedFields"]
                   if e["manager"] == "cert-rotator"][0]
        self.assertEqual(rotator["fieldsV1"], {"f:webhooks": {
            'k:{"name":"pods.topoguard.example.com"}': {"f:clientConfig": {"f:caBundle": {}}}}})

    # What apply refuses: no fieldManager (422, as ValidatePatchOptions), managedFields in the
    # body, the wrong kind, a body that is not JSON; force on a non-apply patch.
    def test_apply_refusals(self):
        path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/refused"
        with self.assertRaises(ApiException) as caught:
            self.apply(path, lease("refused", "a"), manager=None)
        self.assertEqual(caught.exception.status, 422)
        body = self.status_of(caught.exception)
        self.assertEqual(body["message"], 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: '
                         "Required value: is required for apply patch")
        self.assertEqual(body["details"]["causes"][0]["type"], "FieldValueRequired")
        with_fields = lease("refused", "a")
        with_fields["metadata"]["managedFields"] = []
        with self.assertRaises(ApiException) as caught:
            self.apply(path, with_fields)
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(self.status_of(caught.exception)["message"],
                         "metadata.managedFields must be nil")
        with self.assertRaises(ApiException) as caught:
            self.apply(path, dict(lease("refused", "a"), kind="Secret"))
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(self.status_of(caught.exception)["message"],
                         "invalid object type: coordination.k8s.io/v1, Kind=Secret")
        with self.assertRaises(ApiException) as caught:
            self.apply(path, "kind: Lease\n")
        self.assertEqual(caught.exception.status, 400)
        self.leases.create_namespaced_lease("default", lease("refused", "a"))
        with self.assertRaises(ApiException) as caught:
            self.call("PATCH", path, {"spec": {}}, "application/merge-patch+json",
                      {"force": True})
        self.assertEqual(caught.exception.status, 422)

    # Bodies over 3 MiB are 413 before anything is decoded; objects over the etcd limit are
    # 500 "etcdserver: request is too large"; both limits can be lowered.
    def test_size_limits(self):
        big = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="big"),
                                 data={"blob": "x" * (4 * 1024 * 1024)})
        with self.assertRaises(ApiException) as caught:
            self.core.create_namespaced_config_map("default", big)
        self.assertEqual(caught.exception.status, 413)
        body = self.status_of(caught.exception)
        self.assertEqual((body["reason"], body["message"]), (
            "RequestEntityTooLarge", "Request entity too large: limit is 3145728"))
        self.fake.control("config", {"maxObjectBytes": 2048})
        with self.assertRaises(ApiException) as caught:
            self.core.create_namespaced_config_map("default", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="large"), data={"blob": "x" * 3000}))
        self.assertEqual(caught.exception.status, 500)
        body = self.status_of(caught.exception)
        self.assertEqual(body["message"], "etcdserver: request is too large")
        self.assertNotIn("reason", body)
        self.fake.control("config", {"maxBodyBytes": 1000})
        with self.assertRaises(ApiException) as caught:
            self.core.create_namespaced_config_map("default", client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="medium"), data={"blob": "x" * 1500}))
        self.assertEqual(caught.exception.status, 413)
        self.assertEqual(self.status_of(caught.exception)["message"],
                         "Request entity too large: limit is 1000")

    # Deleting a ConfigMap garbage-collects the Report it owns (DELETED on the watch); a
    # Report with another owner only loses the dangling reference.
    def test_garbage_collection(self):
        owner = self.core.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="owner")))
        other = self.core.create_namespaced_config_map("default", client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="other-owner")))

        def reference(obj):
            return {"apiVersion": "v1", "kind": "ConfigMap", "name": obj.metadata.name,
                    "uid": obj.metadata.uid}

        def report(name, owners):
            return {"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
                    "metadata": {"name": name, "ownerReferences": owners},
                    "summary": {"pass": 1}, "results": []}

        self.custom.create_namespaced_custom_object(
            "openreports.io", "v1alpha1", "default", "reports", report("owned", [reference(owner)]))
        kept = self.custom.create_namespaced_custom_object(
            "openreports.io", "v1alpha1", "default", "reports",
            report("shared", [reference(owner), reference(other)]))
        self.assertEqual(kept["metadata"]["generation"], 1)
        start = self.custom.list_namespaced_custom_object(
            "openreports.io", "v1alpha1", "default", "reports")["metadata"]["resourceVersion"]
        self.core.delete_namespaced_config_map("owner", "default")
        with self.assertRaises(ApiException) as caught:
            self.custom.get_namespaced_custom_object("openreports.io", "v1alpha1", "default",
                                                     "reports", "owned")
        self.assertEqual(caught.exception.status, 404)
        shared = self.custom.get_namespaced_custom_object("openreports.io", "v1alpha1",
                                                          "default", "reports", "shared")
        self.assertEqual([r["name"] for r in shared["metadata"]["ownerReferences"]],
                         ["other-owner"])
        events = [(e["type"], e["object"]["metadata"]["name"]) for e in watch.Watch().stream(
            self.custom.list_namespaced_custom_object, "openreports.io", "v1alpha1", "default",
            "reports", resource_version=start, timeout_seconds=1)]
        self.assertEqual(events, [("DELETED", "owned"), ("MODIFIED", "shared")])

    # /_fake/conflict: the next matching write is 409 as if someone else wrote first; the
    # request log shows the PUTs and their content types.
    def test_injected_conflict(self):
        self.leases.create_namespaced_lease("default", lease("contended", "a"))
        path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/contended"
        self.fake.control("conflict", {"count": 1, "match": "/leases/contended",
                                       "methods": ["PUT"]})
        current = self.leases.read_namespaced_lease("contended", "default")
        current.spec.holder_identity = "b"
        with self.assertRaises(ApiException) as caught:
            self.leases.replace_namespaced_lease("contended", "default", current)
        self.assertEqual(caught.exception.status, 409)
        self.assertEqual(self.status_of(caught.exception)["reason"], "Conflict")
        replaced = self.leases.replace_namespaced_lease("contended", "default", current)
        self.assertEqual(replaced.spec.holder_identity, "b")
        puts = [r for r in self.requests_to(path) if r["method"] == "PUT"]
        self.assertEqual([r["status"] for r in puts], [409, 200])
        self.assertEqual(puts[0]["contentType"], "application/json")
        # A custom resource needs a resourceVersion to be replaced.
        self.custom.create_namespaced_custom_object("wgpolicyk8s.io", "v1alpha2", "default",
                                                    "policyreports", {
                                                        "apiVersion": "wgpolicyk8s.io/v1alpha2",
                                                        "kind": "PolicyReport",
                                                        "metadata": {"name": "pr"}})
        with self.assertRaises(ApiException) as caught:
            self.custom.replace_namespaced_custom_object(
                "wgpolicyk8s.io", "v1alpha2", "default", "policyreports", "pr", {
                    "apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
                    "metadata": {"name": "pr"}, "results": []})
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(self.status_of(caught.exception)["message"],
                         'policyreports.wgpolicyk8s.io "pr" is invalid: metadata.resourceVersion:'
                         " Invalid value: 0: must be specified for an update")


if __name__ == "__main__":
    print("python3-kubernetes", kubernetes.__version__)
    unittest.main(verbosity=2)
