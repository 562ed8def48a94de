#!/usr/bin/env python3
"""The Helm chart (deploy/helm/topoguard) against its twin, the kustomize install in
deploy/webhook, without a cluster:

- each install path renders the same objects both ways, apart from Helm's labels and the
  Namespace (`helm install --create-namespace` makes it): the default values and
  deploy/webhook/base (`kubectl kustomize deploy/webhook` renders the same), values/existing-
  secret.yaml and deploy/webhook/existing-secret, values/cert-manager.yaml and
  deploy/webhook/cert-manager, values/reports.yaml and the reports
  component, the metrics objects and the monitoring component, values/mutual-tls.yaml and the
  mtls component (on base and on existing-secret);
- appVersion is the project's version (images: newTag, `topoguard --version`); Kubernetes 1.33
  is refused, 1.34 accepted (kubeVersion);
- `helm lint --strict` passes with the default values and each values file;
- every values field is typed in values.schema.json and listed in the chart's README, and the
  schema refuses wrong values with a message naming the field;
- each value set away from its default changes the rendering as documented (22 cases: flags,
  objects left out, namespaces, webhooks, certificates, policies);
- webhook configurations come after the Deployment and Service (helm's install order);
- `helm package` builds the chart archive, which renders the same objects as the folder.

Usage: helm_chart_test.py TOPOGUARD_BINARY OUTPUT_DIR (the chart archive is left there).
Exit 77 when helm or kubectl (kustomize v5) is not built.
"""

import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chart_support import (CHART, SKIP, SOURCE_DIR, VALUES, Helm, ToolMissing,  # noqa: E402
                           helm_binary, kubectl_binary, values_files, without_helm_labels)

BINARY, OUTPUT = sys.argv[1], sys.argv[2]
WEBHOOK = os.path.join(SOURCE_DIR, "deploy", "webhook")

# (what, helm values arguments, kustomize resources, kustomize components)
TWINS = [
    ("default values / base", [], ["base"], []),
    ("existing-secret.yaml / existing-secret", ["-f", "existing-secret.yaml"],
     ["existing-secret"], []),
    ("cert-manager.yaml / cert-manager", ["-f", "cert-manager.yaml"], ["cert-manager"], []),
    ("reports.yaml / base + reports", ["-f", "reports.yaml"], ["base"], ["reports"]),
    ("metrics / base + monitoring", ["--set", "metrics.serviceMonitor.enabled=true",
                                     "--set", "metrics.prometheusRule.enabled=true"],
     ["base"], ["monitoring"]),
    ("mutual-tls.yaml / base + mtls", ["-f", "mutual-tls.yaml"], ["base"], ["mtls"]),
    ("mutual-tls.yaml, existing Secret / existing-secret + mtls",
     ["-f", "existing-secret.yaml", "-f", "mutual-tls.yaml"], ["existing-secret"], ["mtls"]),
]

# Values the schema (or the chart) must refuse: (--set arguments, what the message must name).
WRONG_VALUES = [
    (["certificates.mode=vault"], "/certificates/mode"),
    (["replicas=0"], "/replicas"),
    (["webhooks.claims.validate.failurePolicy=Maybe"], "/webhooks/claims/validate/failurePolicy"),
    (["webhooks.claims.validate.timeoutSeconds=31"], "/webhooks/claims/validate/timeoutSeconds"),
    (["webhooks.claims.validate.timeout=5"], "timeout"),
    (["image.digest=latest"], "/image/digest"),
    (["reports.interval=five minutes"], "/reports/interval"),
    (["reports.format=json"], "/reports/format"),
    (["replica=3"], "replica"),
    (["extraArgs[0]=serve"], "/extraArgs/0"),
    (["webhooks.url=http://127.0.0.1:8443"], "/webhooks/url"),
    (["networkPolicy.apiServerPorts[0]=70000"], "/networkPolicy/apiServerPorts/0"),
    (["reports.enabled=true", "clusterCache.enabled=false"], "reports.enabled needs clusterCache"),
    (["webhooks.url=https://10.0.0.9:8443"], "webhooks.url needs certificates.mode"),
    (["mutualTls.clientCa=client-ca.pem"], "/mutualTls/clientCa"),
    (["mutualTls.enabled=yes"], "/mutualTls/enabled"),
]

DIGEST = "sha256:" + "ab" * 32


def objects_named(objects, kind, name=None):
    return [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]


def container(objects):
    return objects_named(objects, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]


def pod_spec(objects):
    return objects_named(objects, "Deployment")[0]["spec"]["template"]["spec"]


def webhooks(objects):
    return [w for o in objects if o["kind"].endswith("WebhookConfiguration") for w in o["webhooks"]]


def when_serving(objects):
    """The failurePolicy each configuration's annotation asks topoguard to set once it serves."""
    found = {}
    for o in objects:
        text = o["metadata"].get("annotations", {}).get(
            "topoguard.dev/failure-policy-when-serving") if o["kind"].endswith(
                "WebhookConfiguration") else None
        if text:
            found[o["kind"]] = json.loads(text)
    return found


def alerts(objects):
    """The PrometheusRule's alerts as text."""
    return yaml.safe_dump(objects_named(objects, "PrometheusRule")[0]["spec"], width=1000)


# Each value away from its default, and what it must change in the rendering:
# (what, helm arguments, predicate on the rendered objects).
EFFECTS = [
    ("image.tag", ["--set", "image.tag=9.9.9"],
     lambda o: container(o)["image"] == "topoguard/topoguard:9.9.9"),
    ("image.digest wins over the tag",
     ["--set", "image.digest=" + DIGEST, "--set", "image.tag=1.0.0"],
     lambda o: container(o)["image"] == "topoguard/topoguard@" + DIGEST),
    ("image.pullSecrets", ["--set", "image.pullSecrets[0]=registry"],
     lambda o: pod_spec(o)["imagePullSecrets"] == [{"name": "registry"}]),
    ("replicas", ["--set", "replicas=1"],
     lambda o: objects_named(o, "Deployment")[0]["spec"]["replicas"] == 1),
    ("no priority class: no quota", ["--set", "priorityClassName="],
     lambda o: "priorityClassName" not in pod_spec(o) and not objects_named(o, "ResourceQuota")),
    ("podDisruptionBudget off", ["--set", "podDisruptionBudget.enabled=false"],
     lambda o: not objects_named(o, "PodDisruptionBudget")),
    ("networkPolicy off", ["--set", "networkPolicy.enabled=false"],
     lambda o: not objects_named(o, "NetworkPolicy")),
    ("tolerations and nodeSelector", ["--set", "tolerations[0].key=gpu",
                                      "--set", "tolerations[0].operator=Exists",
                                      "--set", "nodeSelector.pool=system"],
     lambda o: pod_spec(o)["tolerations"] == [{"key": "gpu", "operator": "Exists"}] and
     pod_spec(o)["nodeSelector"] == {"kubernetes.io/os": "linux", "pool": "system"}),
    ("cluster cache off: no role, no token", ["--set", "clusterCache.enabled=false",
                                              "--set", "certificates.mode=existingSecret"],
     lambda o: "--cluster-cache=off" in container(o)["args"] and
     not objects_named(o, "ClusterRole") and pod_spec(o)["automountServiceAccountToken"] is False),
    ("reports in policyreport format", ["--set", "reports.enabled=true",
                                        "--set", "reports.format=policyreport",
                                        "--set", "reports.interval=1h", "--set", "reports.lease=r"],
     lambda o: container(o)["args"][-3:] == ["--report-interval=1h",
                                             "--report-format=policyreport", "--report-lease=r"]
     and objects_named(o, "Role", "topoguard-reports")[0]["rules"][0]["resourceNames"] == ["r"]),
    ("secretName, self-managed: flag, Secret and Lease",
     ["--set", "certificates.secretName=my-tls"],
     lambda o: "--tls-secret=topoguard/my-tls" in container(o)["args"] and
     [r.get("resourceNames") for r in objects_named(o, "Role", "topoguard-self-managed-tls")[0][
         "rules"]] == [["my-tls"], None, ["my-tls"], None]),
    ("secretName, existing Secret: the volume", ["--set", "certificates.secretName=my-tls",
                                                 "--set", "certificates.mode=existingSecret"],
     lambda o: pod_spec(o)["volumes"][0]["secret"]["secretName"] == "my-tls"),
    ("self-managed lifetimes", ["--set", "certificates.selfManaged.caLifetime=1000h",
                                "--set", "certificates.selfManaged.certLifetime=100h"],
     lambda o: {"--ca-lifetime=1000h", "--cert-lifetime=100h"} <= set(container(o)["args"])),
    ("failure policy and timeout per webhook: Fail once topoguard serves (install)",
     ["--set", "webhooks.workloads.mutate.failurePolicy=Fail",
      "--set", "webhooks.claims.mutate.timeoutSeconds=9"],
     lambda o: {w["name"]: (w["failurePolicy"], w["timeoutSeconds"]) for w in webhooks(o)} == {
         "claims.mutate.topoguard.dev": ("Ignore", 9),
         "workloads.mutate.topoguard.dev": ("Ignore", 5),
         "claims.validate.topoguard.dev": ("Ignore", 5),
         "workloads.validate.topoguard.dev": ("Ignore", 5)} and
     when_serving(o) == {
         "ValidatingWebhookConfiguration": {"claims.validate.topoguard.dev": "Fail"},
         "MutatingWebhookConfiguration": {"workloads.mutate.topoguard.dev": "Fail"}}),
    ("failure policy on upgrade: as configured (topoguard set it)",
     ["--is-upgrade", "--set", "webhooks.workloads.mutate.failurePolicy=Fail"],
     lambda o: {w["name"]: w["failurePolicy"] for w in webhooks(o)} == {
         "claims.mutate.topoguard.dev": "Ignore", "workloads.mutate.topoguard.dev": "Fail",
         "claims.validate.topoguard.dev": "Fail", "workloads.validate.topoguard.dev": "Ignore"}
     and when_serving(o)["ValidatingWebhookConfiguration"] == {
         "claims.validate.topoguard.dev": "Fail"}),
    ("failure policy, existing Secret: as configured from the start, no annotation",
     ["--set", "certificates.mode=existingSecret"],
     lambda o: [w["failurePolicy"] for w in webhooks(o) if w["name"].startswith("claims.val")]
     == ["Fail"] and when_serving(o) == {}),
    ("excluded namespaces, the release's always",
     ["--set", "webhooks.excludedNamespaces={gpu-ops}"],
     lambda o: all(w["namespaceSelector"]["matchExpressions"][0]["values"] ==
                   ["gpu-ops", "topoguard"] for w in webhooks(o))),
    ("webhooks.url instead of the Service", ["--set", "webhooks.url=https://10.0.0.9:8443/",
                                             "--set", "certificates.mode=existingSecret"],
     lambda o: {w["clientConfig"]["url"] for w in webhooks(o)} == {
         "https://10.0.0.9:8443/mutate", "https://10.0.0.9:8443/validate"}),
    ("existingSecret caBundle",
     ["--set", "certificates.mode=existingSecret",
      "--set", "certificates.existingSecret.caBundle=-----BEGIN CERTIFICATE-----x"],
     lambda o: {w["clientConfig"]["caBundle"] for w in webhooks(o)} == {
         "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0teA=="}),
    ("cert-manager with an issuer of yours",
     ["--set", "certificates.mode=certManager",
      "--set", "certificates.certManager.issuerRef.name=corp",
      "--set", "certificates.certManager.issuerRef.kind=ClusterIssuer"],
     lambda o: not objects_named(o, "Issuer") and [c["spec"]["issuerRef"] for c in
                                                   objects_named(o, "Certificate")] == [
         {"name": "corp", "kind": "ClusterIssuer"}]),
    ("policies inline", ["--set-string", "policies.files.platform\\.yaml=kind: AlignmentPolicy"],
     lambda o: objects_named(o, "ConfigMap")[0]["data"] == {
         "platform.yaml": "kind: AlignmentPolicy"}),
    ("policies from a ConfigMap of yours", ["--set", "policies.existingConfigMap=mine"],
     lambda o: not objects_named(o, "ConfigMap") and
     pod_spec(o)["volumes"][-1] == {"name": "policies", "configMap": {"name": "mine"}}),
    ("serve flags, extra args and env",
     ["--set", "serve.failureMode=open", "--set", "serve.threads=8",
                                         "--set", "extraArgs[0]=--log-level=debug",
                                         "--set", "extraEnv[0].name=TZ",
                                         "--set", "extraEnv[0].value=UTC"],
     lambda o: {"--failure-mode=open", "--threads=8"} <= set(container(o)["args"]) and
     container(o)["args"][-1] == "--log-level=debug" and
     container(o)["env"][-1] == {"name": "TZ", "value": "UTC"}),
    ("mutualTls with the client CA: its ConfigMap rendered, named as set",
     ["--set", "mutualTls.enabled=true", "--set", "mutualTls.clientCaConfigMap=api-clients",
      "--set", "mutualTls.clientCa=-----BEGIN CERTIFICATE-----x"],
     lambda o: objects_named(o, "ConfigMap", "api-clients")[0]["data"] == {
         "ca.crt": "-----BEGIN CERTIFICATE-----x\n"} and
     pod_spec(o)["volumes"][-1]["configMap"]["name"] == "api-clients" and
     container(o)["args"][-1] == "--client-ca=/etc/topoguard/client-ca/ca.crt"),
    ("mutualTls.clientCa without mutualTls.enabled: nothing", ["--set", "mutualTls.clientCa="
                                                               "-----BEGIN CERTIFICATE-----"],
     lambda o: not objects_named(o, "ConfigMap", "topoguard-client-ca") and
     not any(a.startswith("--client-ca") for a in container(o)["args"])),
    ("another namespace everywhere", ["--namespace", "ml-admission",
                                      "--set", "metrics.prometheusRule.enabled=true",
                                      "--set", "metrics.serviceMonitor.enabled=true"],
     lambda o: all(x["metadata"].get("namespace", "ml-admission") == "ml-admission" for x in o)
     and "--tls-secret=ml-admission/topoguard-tls" in container(o)["args"]
     and all(w["clientConfig"]["service"]["namespace"] == "ml-admission" for w in webhooks(o))
     and "ml-admission" in webhooks(o)[0]["namespaceSelector"]["matchExpressions"][0]["values"]
     and 'namespace="ml-admission"' in alerts(o) and 'namespace="topoguard"' not in alerts(o)
     and "-n topoguard" not in alerts(o)
     and objects_named(o, "ServiceMonitor")[0]["spec"]["namespaceSelector"] == {
         "matchNames": ["ml-admission"]}),
]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL " + message, flush=True)
    return condition


def passed(before, message):
    """Prints `message` as a passed step when no check failed since `before` failures."""
    if len(failures) == before:
        print("ok   " + message, flush=True)


def keyed(objects):
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
            for o in objects}


def kustomize(kubectl, work, resources, components):
    """`kubectl kustomize` of deploy/webhook folders (a kustomization of its own for several)."""
    if len(resources) == 1 and not components:
        target = os.path.join(WEBHOOK, resources[0])
    else:
        target = tempfile.mkdtemp(dir=work)
        with open(os.path.join(target, "kustomization.yaml"), "w") as out:
            yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1",
                            "kind": "Kustomization",
                            "resources": [os.path.relpath(os.path.join(WEBHOOK, r), target)
                                          for r in resources],
                            "components": [os.path.relpath(os.path.join(WEBHOOK, c), target)
                                           for c in components]}, out)
    done = subprocess.run([kubectl, "kustomize", target], capture_output=True, text=True,
                          check=True)
    return [d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] != "Namespace"]


def twins(helm, kubectl, work):
    for what, arguments, resources, components in TWINS:
        before = len(failures)
        arguments = [os.path.join(VALUES, a) if a.endswith(".yaml") else a for a in arguments]
        chart = keyed(without_helm_labels(o) for o in helm.template(*arguments))
        twin = keyed(kustomize(kubectl, work, resources, components))
        check(sorted(chart) == sorted(twin), "%s: objects differ: only in the chart %s, only in "
              "kustomize %s" % (what, sorted(set(chart) - set(twin)),
                                sorted(set(twin) - set(chart))))
        for key in sorted(set(chart) & set(twin)):
            if chart[key] != twin[key]:
                diff = difflib.unified_diff(
                    yaml.safe_dump(twin[key], sort_keys=True).splitlines(),
                    yaml.safe_dump(chart[key], sort_keys=True).splitlines(),
                    "kustomize", "helm", lineterm="")
                check(False, "%s: %s differs:\n%s" % (what, "/".join(key), "\n".join(diff)))
        passed(before, "twin %-60s %d objects" % (what, len(chart)))


def versions(helm):
    before = len(failures)
    with open(os.path.join(CHART, "Chart.yaml")) as handle:
        chart = yaml.safe_load(handle)
    with open(os.path.join(WEBHOOK, "base", "kustomization.yaml")) as handle:
        tag = yaml.safe_load(handle)["images"][0]["newTag"]
    binary = subprocess.run([BINARY, "--version"], capture_output=True, text=True).stdout
    check(chart["appVersion"] == tag,
          "appVersion %s, images: newTag %s" % (chart["appVersion"], tag))
    check(tag in binary.split(), "topoguard --version says %r, newTag is %s" % (binary, tag))
    check(chart["version"] == chart["appVersion"], "chart version %s moves with appVersion %s"
          % (chart["version"], chart["appVersion"]))
    check(chart["kubeVersion"] == ">=1.34.0-0", "kubeVersion %s" % chart["kubeVersion"])
    old = helm.run("template", "topoguard", CHART, "--kube-version", "1.33.5", check=False)
    check(old.returncode != 0 and "incompatible with Kubernetes v1.33.5" in old.stderr,
          "rendered for Kubernetes 1.33: %s" % old.stderr)
    check(helm.run("template", "topoguard", CHART, "--kube-version", "1.34.0",
                   check=False).returncode == 0, "not rendered for Kubernetes 1.34.0")
    passed(before, "versions: appVersion %s = newTag = topoguard --version; 1.33 refused" % tag)


def lint(helm):
    before = len(failures)
    for arguments in [[]] + [["-f", os.path.join(VALUES, name)] for name in values_files()]:
        done = helm.run("lint", "--strict", CHART, *arguments, check=False)
        check(done.returncode == 0, "helm lint --strict %s:\n%s%s" % (" ".join(arguments),
                                                                      done.stdout, done.stderr))
    passed(before, "helm lint --strict: default values and %d values files" % len(values_files()))


def fields(values, schema, prefix=""):
    """Every values field down to the free-form ones (k8s objects, maps of names), each checked
    against the schema; also the schema's properties that values.yaml leaves out."""
    properties = schema.get("properties", {})
    check(schema.get("additionalProperties") is False,
          "values.schema.json: %s accepts unknown fields" % (prefix or "the top level"))
    for name in sorted(set(properties) - set(values)):
        check(False, "values.schema.json has %s%s, values.yaml does not" % (prefix, name))
    for name, value in values.items():
        path = prefix + name
        if not check(name in properties, "values.yaml field %s is not in values.schema.json"
                     % path):
            continue
        if isinstance(value, dict) and value and "properties" in properties[name]:
            yield from fields(value, properties[name], path + ".")
        else:
            yield path


def documented():
    before = len(failures)
    with open(os.path.join(CHART, "values.yaml")) as handle:
        values = yaml.safe_load(handle)
    with open(os.path.join(CHART, "values.schema.json")) as handle:
        schema = json.load(handle)
    with open(os.path.join(CHART, "README.md")) as handle:
        readme = handle.read()
    listed = list(fields(values, schema))
    for path in listed:
        check("| `%s` |" % path in readme, "values field %s is not listed in the chart's README"
              % path)
    values_section = readme[readme.index("\n## Values\n"):].split("\n## ")[1]
    for path in re.findall(r"^\| `([A-Za-z.]+)` \|", values_section, re.M):
        check(path in listed, "the chart's README lists %s, values.yaml has no such field" % path)
    passed(before, "%d values fields: each in the schema and in the README" % len(listed))


def refused(helm):
    before = len(failures)
    for settings, field in WRONG_VALUES:
        arguments = [argument for setting in settings for argument in ("--set", setting)]
        done = helm.run("template", "topoguard", CHART, *arguments, check=False)
        check(done.returncode != 0 and field in done.stderr,
              "--set %s: expected a refusal naming %s, got exit %d: %s"
              % (",".join(settings), field, done.returncode, done.stderr.strip()[:400]))
    passed(before, "%d wrong values refused, each naming its field" % len(WRONG_VALUES))


def effects(helm):
    before = len(failures)
    for what, arguments, predicate in EFFECTS:
        namespace = arguments[1] if arguments[0] == "--namespace" else "topoguard"
        rendered = helm.template(*arguments[2 if arguments[0] == "--namespace" else 0:],
                                 namespace=namespace)
        try:
            ok = predicate(rendered)
        except (KeyError, IndexError) as error:
            ok = False
            what += " (%r missing)" % error
        check(ok, "value not in effect: %s (%s)" % (what, " ".join(arguments)))
    passed(before, "%d values away from their default, each in effect" % len(EFFECTS))


def install_order(helm):
    before = len(failures)
    for arguments in [[]] + [["-f", os.path.join(VALUES, name)] for name in values_files()]:
        kinds = [o["kind"] for o in helm.template(*arguments)]
        configurations = [i for i, kind in enumerate(kinds)
                          if kind.endswith("WebhookConfiguration")]
        served_by = [i for i, kind in enumerate(kinds) if kind in ("Deployment", "Service")]
        check(len(configurations) == 2 and min(configurations) > max(served_by),
              "%s: webhook configurations before the Deployment or Service: %s"
              % (arguments, kinds))
    passed(before, "webhook configurations installed after the Deployment and Service")


def package(helm):
    before = len(failures)
    done = helm.run("package", CHART, "--destination", OUTPUT)
    archive = done.stdout.strip().rsplit(" ", 1)[-1]
    check(os.path.isfile(archive), "helm package wrote no archive: %s" % done.stdout)
    check(helm.template(chart=archive) == helm.template(),
          "the packaged chart renders other objects than the folder")
    lint_done = helm.run("lint", "--strict", archive, check=False)
    check(lint_done.returncode == 0, "helm lint --strict of the archive: %s" % lint_done.stdout)
    passed(before, "helm package: %s, %d bytes" % (archive, os.path.getsize(archive)))


def main():
    try:
        helm_path, kubectl = helm_binary(), kubectl_binary()
    except ToolMissing as missing:
        print("SKIPPED: the chart tests need helm (tools/helm/build.sh) and kubectl with "
              "kustomize v5 (tools/control-plane/build.sh): %s" % missing)
        return SKIP
    with tempfile.TemporaryDirectory(prefix="topoguard-chart-") as work:
        helm = Helm(helm_path, work)
        for step in (lambda: versions(helm), lambda: lint(helm), lambda: twins(helm, kubectl, work), documented,
                     lambda: refused(helm), lambda: effects(helm), lambda: install_order(helm),
                     lambda: package(helm)):
            step()
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
