// Checks what `kubectl kustomize` rendered from deploy/webhook, as a cluster would see it:
//   1. every object validates against the OpenAPI schema of its kind (kubernetes-models for
//      built-in kinds, @kubernetes-models/cert-manager and /prometheus-operator for CRD kinds);
//   2. the kinds whose admission fails closed once topoguard serves, derived from the webhook
//      configurations' rules and failurePolicy (or the one their annotation
//      topoguard.dev/failure-policy-when-serving has topoguard set), are exactly the claim kinds;
//   3. the workload webhooks' matchConditions, evaluated with a reference CEL implementation,
//      send every pod spec that requests DRA claims or extended resources and skip the others;
//      the skipped sample objects are written out so the caller can audit them (they must be
//      clean: skipping may never hide a finding).
// usage: node validate_rendered.mjs NODE_DIR SAMPLES.json SKIPPED_OUT.yaml RENDERED.json...
// Each RENDERED.json is a JSON array of the documents of one overlay; SAMPLES.json an array of
// objects (manifests from the corpus and examples).
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [nodeDir, samplesPath, skippedPath, ...renderedPaths] = process.argv.slice(2);
if (!nodeDir || !samplesPath || !skippedPath || renderedPaths.length === 0) {
  console.error("usage: validate_rendered.mjs NODE_DIR SAMPLES.json SKIPPED_OUT.yaml RENDERED.json...");
  process.exit(2);
}

// The packages are ESM with an exports map; import their index files directly.
const load = (module) => import(pathToFileURL(`${nodeDir}/node_modules/${module}/index.js`).href);
const { run: runCel } = await import(
  pathToFileURL(`${nodeDir}/node_modules/@bufbuild/cel/dist/esm/index.js`).href);

const modelModules = {
  "cert-manager.io/": "@kubernetes-models/cert-manager/",
  "monitoring.coreos.com/": "@kubernetes-models/prometheus-operator/",
};
async function modelFor(apiVersion, kind) {
  let module = `kubernetes-models/${apiVersion}`;
  for (const [prefix, crdModule] of Object.entries(modelModules)) {
    if (apiVersion.startsWith(prefix)) module = crdModule + apiVersion;
  }
  try {
    return (await load(module))[kind];
  } catch {
    return undefined;
  }
}

const failures = [];
const fail = (message) => failures.push(message);

// The only kinds that may block a request when topoguard is unreachable.
const expectedFailClosed = [
  "resource.k8s.io/resourceclaims",
  "resource.k8s.io/resourceclaimtemplates",
];

const workloadWebhooks = [];
for (const path of renderedPaths) {
  const documents = JSON.parse(readFileSync(path, "utf8"));
  if (documents.length === 0) fail(`${path}: nothing rendered`);
  const kinds = new Map();
  for (const object of documents) {
    const name = `${path}: ${object.kind}/${object.metadata?.name}`;
    kinds.set(object.kind, (kinds.get(object.kind) ?? 0) + 1);
    const Model = await modelFor(object.apiVersion, object.kind);
    if (!Model) {
      fail(`${name}: no schema for ${object.apiVersion} ${object.kind}`);
      continue;
    }
    try {
      new Model(object).validate();
    } catch (error) {
      fail(`${name}: ${error.message}`);
    }
  }

  const failClosed = new Set();
  for (const configuration of documents) {
    if (!/^(Validating|Mutating)WebhookConfiguration$/.test(configuration.kind)) continue;
    const whenServing = JSON.parse(
      configuration.metadata.annotations?.["topoguard.dev/failure-policy-when-serving"] ?? "{}");
    for (const webhook of configuration.webhooks ?? []) {
      // failurePolicy defaults to Fail in admissionregistration/v1.
      const closed = (whenServing[webhook.name] ?? webhook.failurePolicy ?? "Fail") === "Fail";
      const resources = (webhook.rules ?? []).flatMap((rule) =>
        rule.apiGroups.flatMap((group) => rule.resources.map((resource) => ({ group, resource }))));
      for (const { group, resource } of resources) {
        if (closed) failClosed.add(`${group || "core"}/${resource}`);
      }
      // Claims are judged whatever they request; workloads only when they request devices.
      const claims = resources.every(({ group }) => group === "resource.k8s.io");
      if (claims === Boolean(webhook.matchConditions)) {
        fail(`${path}: ${webhook.name} ${claims ? "has" : "lacks"} matchConditions`);
      }
      if (webhook.matchConditions) workloadWebhooks.push({ path, webhook, resources });
    }
  }
  const actual = [...failClosed].sort();
  console.log(`${path}: ${documents.length} objects (${[...kinds].map(([k, n]) => `${n} ${k}`).join(", ")})`);
  console.log(`${path}: fails closed (once topoguard serves) for ${actual.join(", ")}`);
  if (JSON.stringify(actual) !== JSON.stringify(expectedFailClosed)) {
    fail(`${path}: fails closed for [${actual}], expected [${expectedFailClosed}]`);
  }
}

// --- matchConditions ---------------------------------------------------------------------------

// Resource plural of a workload kind, as the API server puts it in request.resource.
const pluralOf = (kind) => `${kind.toLowerCase()}s`;
const groupOf = (apiVersion) => (apiVersion.includes("/") ? apiVersion.split("/")[0] : "");

function sends(webhook, object) {
  const request = {
    kind: { group: groupOf(object.apiVersion), kind: object.kind },
    resource: { group: groupOf(object.apiVersion), resource: pluralOf(object.kind) },
    operation: "CREATE",
  };
  return webhook.matchConditions.every((condition) => {
    const result = runCel(condition.expression, { object, request, oldObject: null });
    if (typeof result !== "boolean") {
      throw new Error(`matchCondition ${condition.name} gave ${String(result)} for ${object.kind}`);
    }
    return result;
  });
}

const podSpec = (extra) => ({ containers: [{ name: "main", image: "x", ...extra }] });
const withResources = (resources) => podSpec({ resources });
const template = (spec) => ({ metadata: {}, spec });
const synthetic = [
  // [expected to be sent, object]
  [false, { apiVersion: "v1", kind: "Pod", metadata: { name: "plain" },
    spec: withResources({ requests: { cpu: "1", memory: "1Gi", "hugepages-2Mi": "1Gi" } }) }],
  [false, { apiVersion: "v1", kind: "Pod", metadata: { name: "no-resources" }, spec: podSpec({}) }],
  [true, { apiVersion: "v1", kind: "Pod", metadata: { name: "gpu-limit" },
    spec: withResources({ limits: { "nvidia.com/gpu": 1 } }) }],
  [true, { apiVersion: "v1", kind: "Pod", metadata: { name: "claim" },
    spec: { ...podSpec({}), resourceClaims: [{ name: "gpu", resourceClaimTemplateName: "t" }] } }],
  [true, { apiVersion: "v1", kind: "Pod", metadata: { name: "init-nic" },
    spec: { ...podSpec({}), initContainers: [{ name: "i", resources: { requests: { "rdma/hca": 1 } } }] } }],
  [false, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" },
    spec: { selector: {}, template: template(withResources({ limits: { cpu: "2" } })) } }],
  [true, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "trainer" },
    spec: { selector: {}, template: template(withResources({ limits: { "amd.com/gpu": 2 } })) } }],
  [false, { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "backup" },
    spec: { schedule: "@daily", jobTemplate: { spec: { template: template(podSpec({})) } } } }],
  [true, { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "nightly-train" },
    spec: { schedule: "@daily", jobTemplate: { spec: { template: template(
      { ...podSpec({}), resourceClaims: [{ name: "pair", resourceClaimTemplateName: "t" }] }) } } } }],
  // Pod templates elsewhere than spec.template: never skipped.
  [true, { apiVersion: "leaderworkerset.x-k8s.io/v1", kind: "LeaderWorkerSet", metadata: { name: "lws" },
    spec: { leaderWorkerTemplate: { workerTemplate: template(podSpec({})) } } }],
  [true, { apiVersion: "kubeflow.org/v2beta1", kind: "MPIJob", metadata: { name: "mpi" },
    spec: { mpiReplicaSpecs: { Worker: { template: template(podSpec({})) } } } }],
];

const samples = JSON.parse(readFileSync(samplesPath, "utf8"));
const skipped = [];
let sampleSent = 0;
if (workloadWebhooks.length === 0) fail("no webhook has matchConditions");
for (const { path, webhook, resources } of workloadWebhooks) {
  const matches = (object) => resources.some(({ group, resource }) =>
    group === groupOf(object.apiVersion) && resource === pluralOf(object.kind));
  for (const [expected, object] of synthetic) {
    if (!matches(object)) {
      fail(`${path}: ${webhook.name} does not match ${object.kind}`);
      continue;
    }
    try {
      if (sends(webhook, object) !== expected) {
        fail(`${path}: ${webhook.name} ${expected ? "skips" : "sends"} ${object.kind}/${object.metadata.name}`);
      }
    } catch (error) {
      fail(`${path}: ${webhook.name}: ${error.message}`);
    }
  }
  // The corpus: every object a workload webhook matches is evaluated; each skipped one once.
  for (const object of samples) {
    if (!object?.apiVersion || !object?.kind || !matches(object)) continue;
    try {
      if (sends(webhook, object)) {
        ++sampleSent;
      } else if (path === workloadWebhooks[0].path && webhook === workloadWebhooks[0].webhook) {
        skipped.push(object);
      }
    } catch (error) {
      fail(`${path}: ${webhook.name} on ${object.kind}/${object.metadata?.name}: ${error.message}`);
    }
  }
}
console.log(`matchConditions: ${workloadWebhooks.length} webhooks, corpus objects sent ${sampleSent} ` +
  `times, ${skipped.length} objects skipped (written to ${skippedPath})`);
if (sampleSent === 0) fail("matchConditions sent no corpus object: the samples are not exercised");
writeFileSync(skippedPath, skipped.map((object) => `---\n${JSON.stringify(object)}\n`).join(""));

for (const message of failures) console.error(`FAIL ${message}`);
process.exit(failures.length === 0 ? 0 : 1);
