// Differential test of `topoguard policy compile` against the engine it compiles.
//
// The emitted ValidatingAdmissionPolicies and MutatingAdmissionPolicy are evaluated the way the
// API server does (matchConstraints, matchConditions, then variables in order, then validations;
// an error under failurePolicy Ignore allows), with two CEL implementations: @bufbuild/cel
// (RE2) and @marcbachmann/cel-js (homogeneous literals, as Kubernetes' environment). Each object
// validates against kubernetes-models. Cases: every claim and template of the golden cases (with
// their policies and cluster state) and generated resource.k8s.io/v1 claims and templates up to
// the API's maximum sizes. The engine's verdict is `topoguard audit` on the same objects.
//
// Must hold, in both CEL implementations:
//   - never: the compiled policy denies where the engine denies nothing;
//   - equal verdicts (rule and action of the compiled rules) on every case whose roles come from
//     class names and that the compiled CEL reads exactly (within its documented limits);
//   - the MutatingAdmissionPolicy's JSONPatch applies (fast-json-patch), the engine passes the
//     patched object, and a second pass patches nothing.
//
//   node native_differential.mjs --topoguard BIN --repo DIR [--count 10000] [--seed 24]
//     [--examples-count 1000] [--work DIR] [--report FILE]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { claimGenerator } from "./claim_generator.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => {
    if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const repo = args.repo;
const topoguard = args.topoguard;
const count = Number(args.count ?? 10000);
const work = args.work ?? path.join(process.env.TMPDIR ?? "/tmp", `native-diff-${process.pid}`);
mkdirSync(work, { recursive: true });

const nodeDir = path.join(repo, "tests/node");
const require = createRequire(path.join(nodeDir, "package.json"));
const buf = require("@bufbuild/cel");
const yaml = require("js-yaml");
const jsonpatch = require("fast-json-patch");
const celjs = await import(
  pathToFileURL(path.join(nodeDir, "node_modules/@marcbachmann/cel-js/lib/index.js")).href);
const load = (module) =>
  import(pathToFileURL(path.join(nodeDir, "node_modules", module, "index.js")).href);

// ---- CEL engines ------------------------------------------------------------------------------

class CelFailure extends Error {}

// CEL values as plain JSON (ints as numbers).
function plain(value) {
  if (typeof value === "bigint") return Number(value);
  if (value === null || typeof value !== "object") return value;
  if (buf.isCelError(value)) throw new CelFailure(String(value._cause ?? "error"));
  if (Array.isArray(value)) return value.map(plain);
  if (buf.isCelList(value)) return [...value].map(plain);
  if (buf.isCelMap(value) || value instanceof Map) {
    const out = {};
    for (const [key, entry] of value.entries()) out[String(key)] = plain(entry);
    return out;
  }
  const out = {};
  for (const [key, entry] of Object.entries(value)) out[key] = plain(entry);
  return out;
}

// JSON as CEL input: integers are CEL ints (the API server decodes them as int64).
function celInput(value) {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(celInput);
  if (value && typeof value === "object") {
    const out = {};
    for (const [key, entry] of Object.entries(value)) out[key] = celInput(entry);
    return out;
  }
  return value;
}

// A JSONPatch{...} literal as a map: neither implementation has Kubernetes' JSONPatch type.
const withoutPatchType = (expression) =>
  expression
    .replaceAll("JSONPatch{op: ", "{'op': ")
    .replaceAll(", path: ", ", 'path': ")
    .replaceAll(", value: ", ", 'value': ");

function engine(name, compile) {
  const cache = new Map();
  return {
    name,
    evaluate(expression, context) {
      let program = cache.get(expression);
      if (!program) {
        program = compile(expression);
        cache.set(expression, program);
      }
      return plain(program(context));
    },
  };
}

// The activation as CEL maps and lists, each object converted once: given plain objects,
// @bufbuild/cel converts a level at every access, which is most of this test's time. The values
// never change once made (celInput builds them); `variables` grows, so it is wrapped per call.
const bufValues = new WeakMap();
function bufValue(value) {
  if (value === null || typeof value !== "object") return value;
  let converted = bufValues.get(value);
  if (!converted) {
    converted = Array.isArray(value)
      ? buf.celList(value.map(bufValue))
      : buf.celMap(new Map(Object.entries(value).map(([key, entry]) => [key, bufValue(entry)])));
    bufValues.set(value, converted);
  }
  return converted;
}
const bufActivations = new WeakMap();  // context -> {variables: how many, activation}
function bufActivation(context) {
  const variables = Object.keys(context.variables ?? {}).length;
  const known = bufActivations.get(context);
  if (known && known.variables === variables) return known.activation;
  const activation = Object.fromEntries(Object.entries(context).map(([name, value]) => [name,
    name === "variables"
      ? buf.celMap(new Map(Object.entries(value).map(([key, entry]) => [key, bufValue(entry)])))
      : bufValue(value)]));
  bufActivations.set(context, { variables, activation });
  return activation;
}

const bufEnv = buf.celEnv();
const strict = new celjs.Environment({ unlistedVariablesAreDyn: true });
const lax = new celjs.Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false });
const engines = [
  engine("@bufbuild/cel", (expression) => {
    const program = buf.plan(bufEnv, buf.parse(expression));
    return (context) => program(bufActivation(context));
  }),
  engine("@marcbachmann/cel-js", (expression) => {
    const program = (expression.includes("'op': ") ? lax : strict).parse(expression);
    return (context) => program(context);
  }),
];

// ---- admission, as the API server runs it -----------------------------------------------------

function labelsMatch(selector, labels) {
  if (!selector) return true;
  labels ??= {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    if (operator === "In" && !(has && values.includes(labels[key]))) return false;
    if (operator === "NotIn" && has && values.includes(labels[key])) return false;
    if (operator === "Exists" && !has) return false;
    if (operator === "DoesNotExist" && has) return false;
  }
  return true;
}

const plural = { ResourceClaim: "resourceclaims", ResourceClaimTemplate: "resourceclaimtemplates" };

// `sentAs`: the version the client sent (request.requestKind); `object` is always the v1 form.
function admissionContext(object, namespaceLabels, sentAs) {
  return {
    object: celInput(object),
    request: celInput({
      namespace: object.metadata.namespace, name: object.metadata.name ?? "",
      kind: { group: "resource.k8s.io", version: "v1", kind: object.kind },
      requestKind: { group: "resource.k8s.io", version: sentAs, kind: object.kind },
    }),
    namespaceObject: celInput({
      metadata: { name: object.metadata.namespace, labels: namespaceLabels },
    }),
  };
}

// Variables in order (an error leaves the variable out: any use of it is an error too), or null
// when the policy does not apply (match, or a matchCondition false or failing).
function prepare(cel, policy, object, namespaceLabels, sentAs) {
  const spec = policy.spec;
  const rule = spec.matchConstraints.resourceRules[0];
  if (!rule.resources.includes(plural[object.kind])) return null;
  if (!labelsMatch(spec.matchConstraints.namespaceSelector, namespaceLabels)) return null;
  if (!labelsMatch(spec.matchConstraints.objectSelector, object.metadata.labels)) return null;
  const context = admissionContext(object, namespaceLabels, sentAs);
  for (const condition of spec.matchConditions ?? []) {
    try {
      if (cel.evaluate(condition.expression, context) !== true) return null;
    } catch (error) {
      if (!(error instanceof Error)) throw error;
      return null;  // failurePolicy Ignore
    }
  }
  const variables = {};
  context.variables = variables;
  for (const variable of spec.variables ?? []) {
    try {
      variables[variable.name] = celInput(cel.evaluate(variable.expression, context));
    } catch (error) {
      if (!(error instanceof Error)) throw error;
    }
  }
  return context;
}

// {rule: action} of the failing validations, and the evaluation errors met.
function validate(cel, policies, bindings, object, namespaceLabels, sentAs = "v1") {
  const verdict = {};
  const errors = [];
  for (const policy of policies) {
    const context = prepare(cel, policy, object, namespaceLabels, sentAs);
    if (!context) continue;
    const action = bindings.get(policy.metadata.name);
    for (const validation of policy.spec.validations) {
      const rule = validation.message.split(":")[0];
      try {
        if (cel.evaluate(validation.expression, context) === false) {
          const order = ["deny", "warn", "audit"];
          if (!verdict[rule] || order.indexOf(action) < order.indexOf(verdict[rule])) {
            verdict[rule] = action;
          }
          cel.evaluate(validation.messageExpression, context);
        }
      } catch (error) {
        if (!(error instanceof Error)) throw error;
        errors.push(`${policy.metadata.name} ${rule}: ${error.message}`);
      }
    }
  }
  return { verdict, errors };
}

function mutate(cel, mutating, object, namespaceLabels, sentAs = "v1") {
  const context = prepare(cel, mutating, object, namespaceLabels, sentAs);
  if (!context) return [];
  const expression = withoutPatchType(mutating.spec.mutations[0].jsonPatch.expression);
  return cel.evaluate(expression, context);
}

// ---- the engine -------------------------------------------------------------------------------

function run(command, commandArgs, input) {
  const result = spawnSync(command, commandArgs, { input, encoding: "utf8", maxBuffer: 1 << 30 });
  return result;
}

// {"ns/name": {rule: action}} for the compiled rules (and `deny` when any rule denies).
function engineVerdicts(file, policyArgs, clusterState) {
  const input = clusterState ? ["--cluster-state", file] : [file];
  const result = run(topoguard, ["audit", "--format", "json", ...policyArgs, ...input]);
  let report;
  try {
    report = JSON.parse(result.stdout);
  } catch {
    throw new Error(`topoguard audit ${file}: exit ${result.status}: ${result.stderr}`);
  }
  const verdicts = {};
  for (const finding of report.findings) {
    if (finding.exempted) continue;
    const key = `${finding.resource.kind}/${finding.resource.namespace}/${finding.resource.name}`;
    verdicts[key] ??= {};
    const current = verdicts[key][finding.rule];
    const order = ["deny", "warn", "audit"];
    if (!current || order.indexOf(finding.action) < order.indexOf(current)) {
      verdicts[key][finding.rule] = finding.action;
    }
  }
  // Objects the engine could not judge for want of a Namespace's labels.
  const unknown = new Set((report.unknown ?? []).map(
    (u) => `${u.resource.kind}/${u.resource.namespace}/${u.resource.name}`));
  return { verdicts, errors: report.errors, unknown };
}

function compile(policyArgs) {
  const result = run(topoguard, ["policy", "compile", "--format", "json", ...policyArgs]);
  if (result.status !== 0) throw new Error(`policy compile: exit ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout).items;
}

const compiledRules = [
  "missing-pcie-alignment",
  "numa-only-alignment",
  "multi-device-alignment",
  "overridden-alignment-attribute",
];

// ---- v1 objects -------------------------------------------------------------------------------

// What the API server hands a resource.k8s.io/v1 policy (matchPolicy Equivalent): v1beta1 flat
// requests become `exactly`.
function asV1(object) {
  const copy = structuredClone(object);
  copy.apiVersion = "resource.k8s.io/v1";
  const devices = copy.kind === "ResourceClaimTemplate" ? copy.spec?.spec?.devices : copy.spec?.devices;
  for (const request of devices?.requests ?? []) {
    if (request.exactly || request.firstAvailable) continue;
    const exactly = {};
    for (const key of Object.keys(request)) {
      if (key !== "name") {
        exactly[key] = request[key];
        delete request[key];
      }
    }
    request.exactly = exactly;
  }
  return copy;
}

// ---- comparison -------------------------------------------------------------------------------

const counts = { cases: 0, skipped: 0, exact: 0, unsafe: {}, unequal: {}, errors: {}, patched: {},
                 patchFailures: {}, notNoop: {}, rejudgedFailures: 0, denies: {}, betaUnequal: {} };
const examples = [];
const note = (kind, message) => {
  if (examples.filter((e) => e.startsWith(kind)).length < 5) examples.push(`${kind}: ${message}`);
};
const bump = (table, key) => { table[key] = (table[key] ?? 0) + 1; };

function writeDocuments(label, documents) {
  const file = path.join(work, `${label}.yaml`);
  writeFileSync(file, documents.map((d) => yaml.dump(d, { noRefs: true })).join("---\n"));
  return file;
}

function restrict(verdict) {
  const out = {};
  for (const rule of compiledRules) if (verdict?.[rule]) out[rule] = verdict[rule];
  return out;
}

// One batch: objects judged by the engine with `policyArgs` (with `context`: Namespaces, and the
// cluster state when `clusterState`), by the compiled policies in both CEL implementations, and
// patched by the MutatingAdmissionPolicy.
function judgeBatch(label, cases, policyArgs, { context = [], clusterState = false, namespaceLabels }) {
  const weakened = policyArgs.some((p, i) => policyArgs[i - 1] === "--policies" &&
    /whenAlignmentImpossible/.test(readFileSync(p, "utf8")));
  const objects = compile(clusterState ? [...policyArgs, "--cluster-state", writeDocuments(`${label}-state`, context)] : policyArgs);
  const validating = objects.filter((o) => o.kind === "ValidatingAdmissionPolicy");
  const bindings = new Map(
    objects.filter((o) => o.kind === "ValidatingAdmissionPolicyBinding")
      .map((b) => [b.spec.policyName, b.spec.validationActions[0].toLowerCase()]));
  const mutating = objects.filter((o) => o.kind === "MutatingAdmissionPolicy");
  const file = writeDocuments(label, [...context, ...cases.map((c) => c.object)]);
  const judged = engineVerdicts(file, policyArgs, clusterState);
  if (judged.errors.length > 0) {
    // Objects the API server refuses (CEL that does not compile) never reach admission.
    counts.skipped += cases.length;
    return objects;
  }
  const patchedCases = [];
  for (const { object, traits, exact: exactHint } of cases) {
    counts.cases++;
    const key = `${object.kind}/${object.metadata.namespace}/${object.metadata.name}`;
    const engineVerdict = judged.verdicts[key] ?? {};
    const engineDenies = Object.values(engineVerdict).includes("deny");
    const v1 = asV1(object);
    const labels = namespaceLabels(object.metadata.namespace);
    if (judged.unknown.has(key)) {
      counts.skipped++;
      continue;
    }
    const exact = exactHint ??
      !(traits.driverSelectors || traits.derivedUnread || traits.derivedLarge ||
        traits.manySelectors || traits.longSelectors);
    if (exact) counts.exact++;
    for (const cel of engines) {
      const { verdict, errors } = validate(cel, validating, bindings, v1, labels);
      for (const error of errors) {
        bump(counts.errors, cel.name);
        note("error", `${cel.name} ${key}: ${error}`);
      }
      const denies = Object.values(verdict).includes("deny");
      if (denies) bump(counts.denies, cel.name);
      if (denies && !engineDenies) {
        bump(counts.unsafe, cel.name);
        note("unsafe", `${cel.name} ${label} ${key}: compiled ${JSON.stringify(verdict)}, engine ${JSON.stringify(engineVerdict)}`);
      }
      const expected = restrict(engineVerdict);
      const compared = { ...verdict };
      if (weakened) {
        // whenAlignmentImpossible: compiled with the weaker action, never a stronger one.
        const order = ["deny", "warn", "audit", undefined];
        if (order.indexOf(compared["numa-only-alignment"]) < order.indexOf(expected["numa-only-alignment"])) {
          bump(counts.unsafe, cel.name);
          note("unsafe", `${cel.name} ${label} ${key}: numa-only-alignment stronger than the engine's`);
        }
        delete compared["numa-only-alignment"];
        delete expected["numa-only-alignment"];
      }
      const sorted = (verdictMap) => JSON.stringify(Object.entries(verdictMap).sort());
      if (exact && sorted(compared) !== sorted(expected)) {
        bump(counts.unequal, cel.name);
        note("unequal", `${cel.name} ${label} ${key}: compiled ${JSON.stringify(verdict)}, engine ${JSON.stringify(expected)}`);
      }
      let fixed = false;
      for (const policy of mutating) {
        let patch;
        try {
          patch = mutate(cel, policy, v1, labels);
        } catch (error) {
          if (!(error instanceof Error)) throw error;
          bump(counts.patchFailures, cel.name);
          note("patch", `${cel.name} ${key}: ${error.message}`);
          continue;
        }
        if (patch.length === 0) continue;
        fixed = true;
        bump(counts.patched, cel.name);
        let patched;
        try {
          patched = jsonpatch.applyPatch(structuredClone(v1), patch, true, false).newDocument;
        } catch (error) {
          bump(counts.patchFailures, cel.name);
          note("patch", `${cel.name} ${key}: ${error.message} ${JSON.stringify(patch)}`);
          continue;
        }
        const again = mutate(cel, policy, patched, labels);
        if (again.length !== 0) {
          bump(counts.notNoop, cel.name);
          note("second pass", `${cel.name} ${key}: ${JSON.stringify(again)}`);
        }
        if (cel === engines[0]) patchedCases.push(patched);
      }
      // Sent as v1beta2: no fix (1.37.2 cannot convert it back), and the validating policies
      // allow what the fix would change (the webhook judges it), else judge as for v1.
      const beta = validate(cel, validating, bindings, v1, labels, "v1beta2");
      const betaPatches = mutating.map((policy) => mutate(cel, policy, v1, labels, "v1beta2"));
      const betaExpected = fixed ? {} : verdict;
      if (JSON.stringify(beta.verdict) !== JSON.stringify(betaExpected) || beta.errors.length > 0 ||
          betaPatches.some((patch) => patch.length > 0)) {
        bump(counts.betaUnequal, cel.name);
        note("beta", `${cel.name} ${label} ${key}: sent as v1beta2 ${JSON.stringify(beta)}, expected ${JSON.stringify(betaExpected)}`);
      }
    }
  }
  if (patchedCases.length > 0) {
    const patchedFile = writeDocuments(`${label}-patched`, [...context, ...patchedCases]);
    const rejudged = engineVerdicts(patchedFile, policyArgs, clusterState);
    for (const object of patchedCases) {
      const verdict =
        rejudged.verdicts[`${object.kind}/${object.metadata.namespace}/${object.metadata.name}`] ?? {};
      if (verdict["missing-pcie-alignment"] || verdict["numa-only-alignment"]) {
        counts.rejudgedFailures++;
        note("rejudged", `${label} ${object.metadata.name}: ${JSON.stringify(verdict)}`);
      }
    }
  }
  return objects;
}

// ---- the runs ---------------------------------------------------------------------------------

// kubernetes-models: every emitted object validates against its schema.
let invalidObjects = 0;
async function validateObjects(objects) {
  for (const object of objects) {
    const [group, version] = object.apiVersion.split("/");
    const Model = (await load(`kubernetes-models/${group}/${version}`))[object.kind];
    try {
      if (!Model) throw new Error("no schema");
      new Model(object).validate();
    } catch (error) {
      invalidObjects++;
      note("schema", `${object.kind}/${object.metadata.name}: ${error.message}`);
    }
  }
}

const claimKinds = new Set(["ResourceClaim", "ResourceClaimTemplate"]);
const contextKinds = new Set(["Namespace", "DeviceClass", "ResourceSlice"]);
const noLabels = () => ({});

// Golden cases: their claims and templates, with their policies and cluster state.
const goldenDir = path.join(repo, "tests/golden/cases");
for (const name of readdirSync(goldenDir).sort()) {
  const dir = path.join(goldenDir, name);
  const caseFile = yaml.load(readFileSync(path.join(dir, "case.yaml"), "utf8")) ?? {};
  const input = path.join(dir, "input.yaml");
  if (!existsSync(input)) continue;
  let documents;
  try {
    documents = yaml.loadAll(readFileSync(input, "utf8"));
  } catch {
    continue;  // a case about unreadable YAML
  }
  const items = documents.flatMap((d) => (d?.kind === "List" ? d.items ?? [] : [d]));
  const namespaces = new Map(items.filter((o) => o?.kind === "Namespace")
    .map((o) => [o.metadata.name, o.metadata.labels ?? {}]));
  const cases = items.filter((o) => o && claimKinds.has(o.kind) && o.metadata?.name)
    .map((object) => ({ object: { ...object, metadata: { namespace: "default", ...object.metadata } },
                        traits: {}, exact: undefined }));
  if (cases.length === 0) continue;
  const policyArgs = (caseFile.policies ?? []).flatMap((p) => ["--policies", path.join(dir, p)]);
  for (const c of cases) {
    const text = JSON.stringify(c.object);
    c.traits = { driverSelectors: /driver/.test(text), derived: /derivedAttributes/.test(text) };
  }
  const context = items.filter((o) => o && contextKinds.has(o.kind));
  const objects = judgeBatch(`golden-${name}`, cases, policyArgs, {
    context,
    clusterState: caseFile.clusterState === true,
    // A Namespace the input does not hold has its name label (an engine that cannot read the
    // labels reports the object unknown, and it is not compared).
    namespaceLabels: (ns) => namespaces.get(ns) ?? { "kubernetes.io/metadata.name": ns },
  });
  await validateObjects(objects);
}

// Generated cases, under the built-in policy and the shipped example policies.
const examplesCount = Number(args["examples-count"] ?? 1000);

const { generateObject, generatedNamespaces, generatedLabels } =
  claimGenerator(Number(args.seed ?? 24));
const generated = [];
for (let i = 0; i < count; i++) generated.push(generateObject(i));
const builtinObjects = judgeBatch("generated", generated, [], {
  context: generatedNamespaces,
  namespaceLabels: (ns) => generatedLabels(ns),
});
await validateObjects(builtinObjects);

// The same kind of cases under every policy the golden cases ship (action overrides, exceptions,
// namespace selectors, mutate off, several policies at once).
const examplePolicySets = new Map();
for (const name of readdirSync(goldenDir).sort()) {
  const caseFile = yaml.load(readFileSync(path.join(goldenDir, name, "case.yaml"), "utf8")) ?? {};
  if (!caseFile.policies) continue;
  const files = caseFile.policies.map((p) => path.join(goldenDir, name, p));
  examplePolicySets.set(files.map((f) => readFileSync(f, "utf8")).join("\n---\n"), { name, files });
}
for (const { name, files } of examplePolicySets.values()) {
  const cases = [];
  for (let i = 0; i < examplesCount; i++) cases.push(generateObject(i));
  const objects = judgeBatch(`policies-${name}`, cases, files.flatMap((f) => ["--policies", f]), {
    context: generatedNamespaces,
    namespaceLabels: (ns) => generatedLabels(ns),
  });
  await validateObjects(objects);
}

const report = {
  cases: counts.cases, skipped: counts.skipped, exactCases: counts.exact, unsafe: counts.unsafe, unequal: counts.unequal,
  evaluationErrors: counts.errors, denies: counts.denies, patched: counts.patched,
  patchFailures: counts.patchFailures, secondPassChanges: counts.notNoop,
  rejudgedFailures: counts.rejudgedFailures, betaUnequal: counts.betaUnequal, invalidObjects,
};
console.log(JSON.stringify(report, null, 2));
for (const example of examples) console.log(example);
if (args.report) writeFileSync(args.report, JSON.stringify(report, null, 2));
const bad = Object.values(counts.unsafe).some(Boolean) || Object.values(counts.unequal).some(Boolean) ||
  Object.values(counts.patchFailures).some(Boolean) || Object.values(counts.notNoop).some(Boolean) ||
  Object.values(counts.errors).some(Boolean) || Object.values(counts.betaUnequal).some(Boolean) ||
  counts.rejudgedFailures > 0 || invalidObjects > 0;
process.exit(bad ? 1 : 0);
