// Validates topoguard's report files against the published schemas, as the consuming tools
// would read them. Usage:
//   node validate_reports.mjs SCHEMA_DIR FILE...
// SCHEMA_DIR holds sarif-schema-2.1.0.json and the four report CRDs converted to JSON
// (<crd file name>.json). A file's format comes from its name: *.sarif, *.openreports.json,
// *.policyreport.json. Exit 0 when every file is valid, 1 otherwise (every problem is listed).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";

const require = createRequire(join(process.cwd(), "tests", "node", "package.json"));
const Ajv = require("ajv");
const addFormats = require("ajv-formats");

const [schemaDir, ...files] = process.argv.slice(2);
if (!schemaDir || files.length === 0) {
  console.error("usage: node validate_reports.mjs SCHEMA_DIR FILE...");
  process.exit(2);
}
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

// The API server keeps only fields its structural schema declares (it prunes the rest
// silently), so a report field the CRD does not know is an error here: every object schema
// with `properties` and no `additionalProperties` gets `additionalProperties: false`.
// Kubernetes extensions (x-kubernetes-*) are dropped; ajv does not know them.
function structural(schema) {
  if (Array.isArray(schema)) {
    return schema.map(structural);
  }
  if (schema === null || typeof schema !== "object") {
    return schema;
  }
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!key.startsWith("x-kubernetes-")) {
      out[key] = key === "properties"
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structural(v)]))
        : structural(value);
    }
  }
  if (out.type === "object" && out.properties && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

function crdValidator(ajv, crdFile, version) {
  const crd = readJson(join(schemaDir, crdFile + ".json"));
  const served = crd.spec.versions.find((v) => v.name === version);
  if (!served || !served.served) {
    throw new Error(`${crdFile}: version ${version} is not served`);
  }
  return { kind: crd.spec.names.kind, group: crd.spec.group, scope: crd.spec.scope,
           validate: ajv.compile(structural(served.schema.openAPIV3Schema)) };
}

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
// The SARIF schema declares draft-04, which ajv 8 does not load; it uses nothing whose meaning
// changed in draft-07 (no boolean exclusiveMinimum/Maximum) except the root `id`, so it is read
// as draft-07 with `$id`.
const { $schema: _draft04, id: sarifId, ...sarifSchema } =
  readJson(join(schemaDir, "sarif-schema-2.1.0.json"));
const sarif = ajv.compile({ $id: sarifId, ...sarifSchema });
const apis = {
  openreports: [crdValidator(ajv, "openreports.io_reports.yaml", "v1alpha1"),
                crdValidator(ajv, "openreports.io_clusterreports.yaml", "v1alpha1")],
  policyreport: [crdValidator(ajv, "wgpolicyk8s.io_policyreports.yaml", "v1alpha2"),
                 crdValidator(ajv, "wgpolicyk8s.io_clusterpolicyreports.yaml", "v1alpha2")],
};
const versions = { openreports: "v1alpha1", policyreport: "v1alpha2" };

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const statuses = ["pass", "fail", "warn", "error", "skip"];

function schemaErrors(validate, document, where) {
  return validate(document) ? []
    : validate.errors.map((e) => `${where}${e.instancePath || "/"}: ${e.message} ${JSON.stringify(e.params)}`);
}

// Beyond the schema: what kubectl apply and Policy Reporter rely on.
function checkReports(document, format) {
  const problems = [];
  if (document.apiVersion !== "v1" || document.kind !== "List" || !Array.isArray(document.items)) {
    return ["not a v1 List of reports"];
  }
  document.items.forEach((item, index) => {
    const where = `/items/${index}`;
    const api = apis[format].find((candidate) => candidate.kind === item.kind);
    if (!api) {
      problems.push(`${where}: kind ${item.kind} is not a ${format} kind`);
      return;
    }
    if (item.apiVersion !== `${api.group}/${versions[format]}`) {
      problems.push(`${where}: apiVersion ${item.apiVersion}`);
    }
    problems.push(...schemaErrors(api.validate, item, where));
    const name = item.metadata?.name ?? "";
    if (!dnsSubdomain.test(name) || name.length > 253) {
      problems.push(`${where}/metadata/name: "${name}" is not a DNS subdomain`);
    }
    const namespaced = api.scope === "Namespaced";
    if (namespaced !== (typeof item.metadata?.namespace === "string")) {
      problems.push(`${where}/metadata/namespace: ${namespaced ? "missing" : "set on a cluster report"}`);
    }
    // A namespace's report is scoped to its Namespace, a resource's report to the resource.
    const scopeNamespace =
      item.scope?.kind === "Namespace" ? item.scope.name : item.scope?.namespace;
    if (namespaced && scopeNamespace !== item.metadata.namespace) {
      problems.push(`${where}/scope: not in the report's namespace`);
    }
    if (!namespaced && item.scope && item.scope.namespace !== undefined) {
      problems.push(`${where}/scope: a cluster report scoped to a namespaced object`);
    }
    for (const owner of item.metadata?.ownerReferences ?? []) {
      if (!owner.uid || !owner.kind || !owner.name || !owner.apiVersion) {
        problems.push(`${where}/metadata/ownerReferences: incomplete owner`);
      }
      if (item.scope && (owner.uid !== item.scope.uid || owner.name !== item.scope.name)) {
        problems.push(`${where}/metadata/ownerReferences: the owner is not the scope`);
      }
    }
    const counted = Object.fromEntries(statuses.map((s) => [s, 0]));
    for (const result of item.results ?? []) {
      counted[result.result] += 1;
      if (result.source !== "topoguard") {
        problems.push(`${where}: result source ${result.source}`);
      }
      for (const resource of result.resources ?? []) {
        if (namespaced && resource.namespace !== item.metadata.namespace) {
          problems.push(`${where}: result for ${resource.kind} ${resource.namespace}/${resource.name} in another namespace's report`);
        }
      }
    }
    for (const status of statuses) {
      if ((item.summary?.[status] ?? 0) !== counted[status]) {
        problems.push(`${where}/summary/${status}: ${item.summary?.[status]} but ${counted[status]} results`);
      }
    }
  });
  return problems;
}

function checkSarif(document) {
  const problems = schemaErrors(sarif, document, "");
  for (const run of document.runs ?? []) {
    const rules = run.tool?.driver?.rules ?? [];
    for (const result of run.results ?? []) {
      if (rules[result.ruleIndex]?.id !== result.ruleId) {
        problems.push(`result ${result.ruleId}: ruleIndex ${result.ruleIndex} names another rule`);
      }
    }
  }
  return problems;
}

let failed = false;
for (const file of files) {
  const name = basename(file);
  const format = name.endsWith(".sarif") ? "sarif"
    : name.endsWith(".openreports.json") ? "openreports"
    : name.endsWith(".policyreport.json") ? "policyreport" : undefined;
  let problems;
  try {
    const document = readJson(file);
    problems = format === undefined ? [`unknown format (file name)`]
      : format === "sarif" ? checkSarif(document) : checkReports(document, format);
  } catch (error) {
    problems = [String(error)];
  }
  if (problems.length > 0) {
    failed = true;
    console.log(`FAIL ${file}`);
    problems.forEach((problem) => console.log(`  ${problem}`));
  } else {
    console.log(`ok   ${file} (${format})`);
  }
}
process.exit(failed ? 1 : 0);
