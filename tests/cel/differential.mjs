// Differential test of topoguard's CEL evaluator against @bufbuild/cel (a complete CEL
// implementation): every CEL expression found in the shared corpus and in the tests' YAML, plus
// generated expressions over realistic DRA device bindings, must give the same
// true / false / error / syntax error on both sides. topoguard's "unknown" (a feature it does not
// implement) is counted, not compared: unknown is never a guess.
//
//   node differential.mjs --driver BIN --repo DIR --corpus DIR [--count 10000] [--seed 8]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import {
  collect, commandLine, completeDomains, devices, domainsInExpressions, atomOrCompound, pick,
  seedRandom,
} from "./expressions.mjs";

const args = commandLine(process.argv.slice(2));
const repo = args.repo;
const require = createRequire(path.join(repo, "tests/node/package.json"));
const { run, parse, isCelError } = require("@bufbuild/cel");
const count = Number(args.count ?? 10000);
seedRandom(Number(args.seed ?? 8));

// ---- the reference's device ------------------------------------------------------------------

function referenceDevice(device) {
  const typed = (v) => ("int" in v ? BigInt(v.int) : "string" in v ? v.string : v.bool);
  const attributes = new Map(
    Object.entries(device.attributes).map(([domain, names]) => [
      domain,
      new Map(Object.entries(names).map(([name, value]) => [name, typed(value)])),
    ]),
  );
  return new Map([["driver", device.driver], ["attributes", attributes]]);
}

// ---- comparison -------------------------------------------------------------------------------

function referenceOutcome(expr, device) {
  try {
    parse(expr);
  } catch {
    return "syntax_error";
  }
  let value;
  try {
    value = run(expr, { device: referenceDevice(device) });
  } catch {
    return "error";
  }
  if (isCelError(value)) return "error";
  if (value === true) return "true";
  if (value === false) return "false";
  return "value";
}

const fileExpressions = [
  ...collect(args.corpus, () => true),
  ...collect(path.join(repo, "tests"), (f) => /\.(ya?ml|json)$/.test(f) && !f.includes("node_modules")),
];
const generated = [];
const seen = new Set(fileExpressions.map((e) => e.expr));
while (generated.length < count) {
  const expr = atomOrCompound(3);
  if (!seen.has(expr)) {
    seen.add(expr);
    generated.push({ expr, file: "generated" });
  }
}
completeDomains(devices, domainsInExpressions([...fileExpressions, ...generated].map((e) => e.expr)));

const pairs = [];
for (const item of [...fileExpressions, ...generated]) {
  // File expressions run against every device; generated ones against one device each.
  const targets = item.file === "generated" ? [pick(devices)] : devices;
  for (const device of targets) pairs.push({ ...item, device });
}

const input = pairs.map((p) => JSON.stringify({ expr: p.expr, device: p.device })).join("\n") + "\n";
const result = spawnSync(args.driver, [], { input, maxBuffer: 1 << 30, encoding: "utf8" });
if (result.status !== 0) {
  console.error(`driver failed (${result.status}): ${result.stderr}`);
  process.exit(1);
}
const answers = result.stdout.trim().split("\n").map((l) => JSON.parse(l));

const counts = { files: fileExpressions.length, generated: generated.length, pairs: pairs.length, same: 0, unknown: 0, mismatch: 0 };
const byOutcome = {};
const mismatches = [];
pairs.forEach((pair, i) => {
  const ours = answers[i].syntax_error !== undefined ? "syntax_error" : answers[i].outcome;
  const theirs = referenceOutcome(pair.expr, pair.device);
  if (ours === "unknown") {
    counts.unknown++;
    return;
  }
  if (ours === theirs) {
    counts.same++;
    byOutcome[ours] = (byOutcome[ours] ?? 0) + 1;
    return;
  }
  counts.mismatch++;
  if (mismatches.length < 25) {
    mismatches.push(`${pair.file}: ${pair.expr}\n    device ${pair.device.driver}: topoguard ${ours}` +
      ` (${JSON.stringify(answers[i].value ?? answers[i].syntax_error)}), @bufbuild/cel ${theirs}`);
  }
});

console.log(`cel differential: ${counts.files} expressions from files (${fileExpressions.filter((e) => !e.file.startsWith(repo)).length} from the corpus), ${counts.generated} generated, ${counts.pairs} evaluations`);
console.log(`  same result: ${counts.same} (${Object.entries(byOutcome).map(([k, v]) => `${k} ${v}`).join(", ")})`);
console.log(`  unknown (not implemented by topoguard, not compared): ${counts.unknown}`);
console.log(`  mismatches: ${counts.mismatch}`);
for (const m of mismatches) console.log(`  MISMATCH ${m}`);
process.exit(counts.mismatch === 0 && counts.same > 0 ? 0 : 1);
