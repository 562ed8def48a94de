#!/usr/bin/python3
"""Checks the fake API server against a real client, Debian's python3-kubernetes: discovery,
paginated lists, watch events, bookmarks, 410 (in-stream, HTTP and expired continue), 401, 404,
429 and client certificates must all read as the client expects from kube-apiserver. Run by
ctest with /usr/bin/python3 (Debian's interpreter, where the package is installed)."""

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

from fake_control import FakeApiServer


def namespace(name, labels=None):
    return client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=labels))


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

        def mutate():
            time.sleep(0.3)
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

        def drive():
            time.sleep(0.3)
            self.fake.control("expire-watches")
            time.sleep(0.3)
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


if __name__ == "__main__":
    print("python3-kubernetes", kubernetes.__version__)
    unittest.main(verbosity=2)
