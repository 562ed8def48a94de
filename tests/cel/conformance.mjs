// Runs the cel-spec conformance data (@bufbuild/cel-spec, cel-spec v0.25.1) through topoguard's
// CEL evaluator and prints pass / fail / unknown / skipped counts per section. A test passes when
// the value (or the error) is the expected one; "unknown" is topoguard declining to evaluate a
// feature it does not implement (never a guess). Failures fail this test only in the sections
// topoguard claims to support (kClaimed below); the others are reported for information.
//
//   node conformance.mjs --driver BIN --repo DIR
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => {
    if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const require = createRequire(path.join(args.repo, "tests/node/package.json"));
const { getConformanceSuite } = require("@bufbuild/cel-spec/testdata/tests.js");

// Sections whose every test must pass or be unknown.
const kClaimed = new Set(["basic", "comparisons", "integer_math", "fp_math", "lists", "logic",
  "macros", "macros2", "parse", "plumbing", "string"]);

class Unsupported extends Error {}

// cel.expr.Value -> the driver's typed JSON.
function typed(value) {
  const { case: kind, value: v } = value.kind;
  switch (kind) {
    case "nullValue": return { null: null };
    case "boolValue": return { bool: v };
    case "int64Value": return { int: String(v) };
    case "uint64Value": return { uint: String(v) };
    case "doubleValue":
      return { double: Number.isNaN(v) ? "NaN" : v === Infinity ? "Infinity" : v === -Infinity ? "-Infinity" : v };
    case "stringValue": return { string: v };
    case "bytesValue": return { bytes: [...v] };
    case "listValue": return { list: v.values.map(typed) };
    case "mapValue": return { map: v.entries.map((e) => [typed(e.key), typed(e.value)]) };
    default: throw new Unsupported(kind ?? "empty value");
  }
}

function same(a, b) {
  const [ka] = Object.keys(a);
  const [kb] = Object.keys(b);
  if (ka !== kb) return false;
  if (ka === "double") {
    const x = typeof a.double === "string" ? Number(a.double) : a.double;
    const y = typeof b.double === "string" ? Number(b.double) : b.double;
    return (Number.isNaN(x) && Number.isNaN(y)) || x === y;
  }
  if (ka === "list") return a.list.length === b.list.length && a.list.every((e, i) => same(e, b.list[i]));
  if (ka === "map") {
    return a.map.length === b.map.length &&
      a.map.every(([k, v]) => b.map.some(([k2, v2]) => same(k, k2) && same(v, v2)));
  }
  if (ka === "bytes") return a.bytes.length === b.bytes.length && a.bytes.every((x, i) => x === b.bytes[i]);
  return JSON.stringify(a[ka]) === JSON.stringify(b[kb]);
}

const cases = [];
const stats = new Map();
const stat = (section) => {
  if (!stats.has(section)) stats.set(section, { pass: 0, fail: 0, unknown: 0, skipped: 0, failures: [] });
  return stats.get(section);
};

function walk(suite, section) {
  for (const child of suite.suites ?? []) walk(child, section ?? child.name);
  for (const test of suite.tests ?? []) {
    const original = test.original;
    const name = `${section}/${suite.name}/${original.name}`;
    const matcher = original.resultMatcher;
    // Not evaluations, or features outside the grammar as parsed here: skipped, and counted.
    if (original.checkOnly || original.disableMacros || original.container ||
        (matcher && !["value", "evalError", "anyEvalErrors", undefined].includes(matcher.case))) {
      stat(section).skipped++;
      continue;
    }
    try {
      const vars = Object.fromEntries(Object.entries(original.bindings).map(([k, expr]) => {
        if (expr.kind.case !== "value") throw new Unsupported("binding");
        return [k, typed(expr.kind.value)];
      }));
      const expected = matcher?.case === "value" ? { value: typed(matcher.value) }
        : matcher === undefined || matcher.case === undefined ? { value: { bool: true } } : { error: true };
      cases.push({ section, name, expr: original.expr, vars, expected });
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      stat(section).skipped++;  // bindings or results of types the driver cannot express
    }
  }
}
walk(getConformanceSuite());

const input = cases.map((c) => JSON.stringify({ expr: c.expr, vars: c.vars })).join("\n") + "\n";
const result = spawnSync(args.driver, [], { input, maxBuffer: 1 << 30, encoding: "utf8" });
if (result.status !== 0) {
  console.error(`driver failed (${result.status}): ${result.stderr}`);
  process.exit(1);
}
const answers = result.stdout.trim().split("\n").map((l) => JSON.parse(l));

cases.forEach((c, i) => {
  const answer = answers[i];
  const s = stat(c.section);
  if (answer.outcome === "unknown") {
    s.unknown++;
    return;
  }
  const ok = c.expected.error
    ? answer.outcome === "error"
    : answer.value !== undefined && same(answer.value, c.expected.value);
  if (ok) {
    s.pass++;
  } else {
    s.fail++;
    s.failures.push(`${c.name}: ${c.expr}\n      expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(answer)}`);
  }
});

let failed = 0;
const total = { pass: 0, fail: 0, unknown: 0, skipped: 0 };
const claimed = { pass: 0, fail: 0, unknown: 0, skipped: 0 };
console.log("cel-spec conformance (section: pass / fail / unknown / skipped)");
for (const [section, s] of [...stats].sort()) {
  const isClaimed = kClaimed.has(section);
  console.log(`  ${isClaimed ? "*" : " "} ${section}: ${s.pass} / ${s.fail} / ${s.unknown} / ${s.skipped}`);
  for (const key of Object.keys(total)) {
    total[key] += s[key];
    if (isClaimed) claimed[key] += s[key];
  }
  if (isClaimed) {
    failed += s.fail;
    for (const f of s.failures.slice(0, 20)) console.log(`      FAIL ${f}`);
  }
}
console.log(`  claimed sections (*): ${claimed.pass} pass, ${claimed.fail} fail, ${claimed.unknown} unknown, ${claimed.skipped} skipped`);
console.log(`  all sections: ${total.pass} pass, ${total.fail} fail, ${total.unknown} unknown, ${total.skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
