// Differential test of topoguard's CEL evaluator, as the engine evaluates a device selector,
// against k8s.io/dynamic-resource-allocation/cel v0.37.2, the library kube-scheduler's allocator
// calls (tools/dra-oracle/cel-oracle: its compile environment, cost estimate and runtime cost
// limit). Expressions: every one in the shared corpus, the tests' YAML and JSON (the golden
// cases among them) and the CEL fuzz corpus, each on every device, plus --count generated ones
// on two devices each. Devices: every distinct device of the corpus's ResourceSlices, the
// differential's hand-written devices and --generated-devices random ones, with no domain
// completed (the library answers a domain a device lacks with an empty map).
//
// Outcomes compared: true / false / runtime error / syntax error. Not compared, counted:
// topoguard's unknown (never a guess), and an expression the library's type checker refuses
// (the API server refuses to store such a selector, so no allocator evaluates it; topoguard
// evaluates dynamically and has no type checker: docs/dra.md).
//
//   node library_differential.mjs --driver CEL_EVAL_DRIVER --repo DIR --corpus DIR
//        [--count 10000] [--generated-devices 40] [--seed 42]
// The oracle is built (or found built) by tools/dra-oracle/build.sh; exit 77 (skipped) when
// there is no Go toolchain to build it.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import {
  atomOrCompound, bool, boolAttributes, collect, commandLine, devices as handWritten, drivers,
  files, int, intAttributes, pick, random, seedRandom, str, stringAttributes, strings,
} from "./expressions.mjs";

const args = commandLine(process.argv.slice(2));
const repo = args.repo;
const yaml = createRequire(path.join(repo, "tests/node/package.json"))("js-yaml");
const count = Number(args.count ?? 10000);  // generated expressions compared
const build = spawnSync("bash", [path.join(repo, "tools/dra-oracle/build.sh")], { encoding: "utf8" });
if (build.status === 77) {
  console.log(`SKIP: ${build.stderr.trim()}`);
  process.exit(77);
}
if (build.status !== 0) {
  console.error(`tools/dra-oracle/build.sh failed (${build.status}): ${build.stderr}`);
  process.exit(1);
}
const oracle = path.join(build.stdout.trim().split("\n").at(-1), "cel-oracle");
seedRandom(Number(args.seed ?? 42));

// ---- devices ----------------------------------------------------------------------------------

// A published device as both drivers read it: attributes by domain (a bare name in the driver's
// domain, as the allocator binds it), capacity as quantity strings. List values are left out
// (DRAListTypeAttributes is off by default in 1.37).
function requestDevice(driver, device) {
  const attributes = {};
  for (const [name, value] of Object.entries(device.attributes ?? {})) {
    const slash = name.indexOf("/");
    const [domain, id] = slash < 0 ? [driver, name] : [name.slice(0, slash), name.slice(slash + 1)];
    let typed;
    if (value.int !== undefined) typed = int(value.int);
    else if (value.bool !== undefined) typed = bool(value.bool);
    else if (value.string !== undefined) typed = str(String(value.string));
    else if (value.version !== undefined) typed = { version: String(value.version) };
    else continue;
    (attributes[domain] ??= {})[id] = typed;
  }
  const capacity = {};
  for (const [name, value] of Object.entries(device.capacity ?? {})) {
    const slash = name.indexOf("/");
    const [domain, id] = slash < 0 ? [driver, name] : [name.slice(0, slash), name.slice(slash + 1)];
    (capacity[domain] ??= {})[id] = String(value.value);
  }
  return { driver, attributes, capacity };
}

function corpusDevices() {
  const found = new Map();
  for (const file of files(args.corpus)) {
    if (!/\.ya?ml$/.test(file)) continue;
    let documents;
    try {
      documents = yaml.loadAll(readFileSync(file, "utf8"));
    } catch {
      continue; // templated or broken YAML in the corpus: not a source of devices
    }
    for (const document of documents.flatMap((d) => (d?.kind === "List" ? d.items ?? [] : [d]))) {
      if (document?.kind !== "ResourceSlice" || !document.spec?.driver) continue;
      for (const device of document.spec.devices ?? []) {
        const converted = requestDevice(document.spec.driver, device.basic ?? device);
        found.set(JSON.stringify(converted), converted);
      }
    }
  }
  return [...found.values()];
}

// Random devices over the generator's names and values: the attributes the generated
// expressions read, present or missing, with values that make their comparisons go both ways.
function generatedDevice() {
  const driver = pick(drivers);
  const attributes = {};
  const maybe = (pairs, value) => {
    for (const [domain, name] of pairs) {
      if (random() < 0.5) (attributes[domain] ??= {})[name] = value();
    }
  };
  maybe(stringAttributes, () => str(pick([...strings, "pci0000:00", "NVIDIA H100 80GB HBM3"])));
  maybe(intAttributes, () => int(Math.floor(random() * 12) - 2));
  maybe(boolAttributes, () => bool(random() < 0.5));
  const capacity = random() < 0.5 ? { [driver]: { memory: pick(["40Gi", "80Gi", "1", "500m"]) } } : {};
  return { driver, attributes, capacity };
}

const fromCorpus = corpusDevices();
const devices = [...fromCorpus, ...structuredClone(handWritten).map((d) => ({ ...d, capacity: {} }))];
for (let i = 0; i < Number(args["generated-devices"] ?? 40); i++) devices.push(generatedDevice());

// ---- expressions ------------------------------------------------------------------------------

const fuzzDir = path.join(repo, "tests/fuzz/corpus");
const fuzzExpressions = ["cel_expression", "cel_cost"].flatMap((dir) =>
  readdirSync(path.join(fuzzDir, dir)).sort().map((name) => ({
    expr: readFileSync(path.join(fuzzDir, dir, name), "utf8"), file: path.join("fuzz", dir, name),
  })));
const fileExpressions = [
  ...collect(args.corpus, () => true),
  ...collect(path.join(repo, "tests"), (f) => /\.(ya?ml|json)$/.test(f) && !f.includes("node_modules")),
  ...fuzzExpressions,
];
const seen = new Set(fileExpressions.map((e) => e.expr));
function generate(how_many) {
  const batch = [];
  while (batch.length < how_many) {
    const expr = atomOrCompound(3);
    if (!seen.has(expr)) {
      seen.add(expr);
      batch.push({ expr, file: "generated" });
    }
  }
  return batch;
}

// ---- both sides -------------------------------------------------------------------------------

function answers(command, requests) {
  const input = requests.map((r) => JSON.stringify(r)).join("\n") + "\n";
  const result = spawnSync(command, [], { input, maxBuffer: 1 << 30, encoding: "utf8" });
  if (result.status !== 0) {
    console.error(`${command} failed (${result.status}): ${result.stderr}`);
    process.exit(1);
  }
  const lines = result.stdout.trim().split("\n").map((l) => JSON.parse(l));
  if (lines.length !== requests.length) {
    console.error(`${command}: ${lines.length} answers to ${requests.length} requests`);
    process.exit(1);
  }
  return lines;
}

// The library refuses at compile time what does not parse ("Syntax error"), what does not
// type-check and constant regular expressions RE2 refuses; only the first is a syntax error for
// topoguard.
const isSyntaxError = (answer) => / Syntax error: /.test(answer.message ?? "");

const counts = { evaluations: 0, same: 0, unknown: 0, refused: 0, mismatch: 0 };
const byOutcome = {};
const mismatches = [];
const comparedGenerated = new Set();

function compare(pairs) {
  const ours = answers(args.driver, pairs.map((p) => ({ expr: p.expr, device: p.device, selector: true })));
  const theirs = answers(oracle, pairs.map((p) => ({ expr: p.expr, device: p.device })));
  counts.evaluations += pairs.length;
  pairs.forEach((pair, i) => {
    const mine = ours[i].syntax_error !== undefined ? "syntax_error" : ours[i].outcome;
    const reference = theirs[i].outcome === "compile_error"
      ? (isSyntaxError(theirs[i]) ? "syntax_error" : "refused") : theirs[i].outcome;
    if (reference === "refused") {
      counts.refused++;
      return;
    }
    if (mine === "unknown") {
      counts.unknown++;
      return;
    }
    if (pair.file === "generated") comparedGenerated.add(pair.expr);
    if (mine === reference) {
      counts.same++;
      byOutcome[mine] = (byOutcome[mine] ?? 0) + 1;
      return;
    }
    counts.mismatch++;
    if (mismatches.length < 25) {
      mismatches.push(`${pair.file}: ${pair.expr}\n    device ${JSON.stringify(pair.device)}\n` +
        `    topoguard ${mine} (${ours[i].message ?? ours[i].syntax_error ?? ""}), library ${reference}` +
        ` (${theirs[i].message ?? ""})`);
    }
  });
}

// File expressions on every device; generated ones on two devices each, in rounds until --count
// generated expressions have been compared (the generator also writes ill-typed ones, which the
// library refuses).
const filePairs = [];
for (const item of fileExpressions) for (const device of devices) filePairs.push({ ...item, device });
compare(filePairs);
let generatedCount = 0;
for (let round = 0; comparedGenerated.size < count && round < 5; round++) {
  const batch = generate(Math.ceil((count - comparedGenerated.size) * 1.7));
  generatedCount += batch.length;
  const pairs = [];
  for (const item of batch) for (let i = 0; i < 2; i++) pairs.push({ ...item, device: pick(devices) });
  compare(pairs);
}

console.log(`cel library differential: ${fileExpressions.length} expressions from files ` +
  `(${fuzzExpressions.length} from the fuzz corpus), ${generatedCount} generated ` +
  `(${comparedGenerated.size} compared on some device); ${devices.length} devices ` +
  `(${fromCorpus.length} from the corpus's slices); ${counts.evaluations} evaluations`);
console.log(`  same result: ${counts.same} (${Object.entries(byOutcome).map(([k, v]) => `${k} ${v}`).join(", ")})`);
console.log(`  refused by the library's compiler other than as a syntax error (type check, constant ` +
  `regex; the API server never stores them; not compared): ${counts.refused}`);
console.log(`  unknown (not implemented by topoguard, not compared): ${counts.unknown}`);
console.log(`  mismatches: ${counts.mismatch}`);
for (const m of mismatches) console.log(`  MISMATCH ${m}`);
process.exit(counts.mismatch === 0 && comparedGenerated.size >= count ? 0 : 1);
