// Generated resource.k8s.io/v1 claims and templates for the native-policy differentials: requests
// with GPU, NIC and other classes, selectors, firstAvailable, constraints up to the API's maximum
// sizes, derived attributes. Each case carries `traits`: what in it the compiled CEL leaves to the
// webhook (see policy compile's header), so a difference there is explained, not a failure.
//
// Used by native_differential.mjs (JavaScript CEL) and tests/e2e/native_suite.py (the real API
// server), which runs it as a command:
//   node claim_generator.mjs --count N [--seed S]   one {"object", "traits"} JSON per line
//   node claim_generator.mjs --namespaces           the Namespaces they name, one per line
import path from "node:path";
import { fileURLToPath } from "node:url";

// Namespaces the policies under test select or exclude, by name and by label.
export const generatedNamespaceNames = ["default", "inference", "ml", "team-a", "team-b", "prod",
                                        "prod-east", "sandbox", "serving", "kube-system"];
export const generatedLabels = (name) => ({
  "kubernetes.io/metadata.name": name,
  ...(name.startsWith("prod") || name === "serving" ? { tier: "prod" } : { tier: "dev" }),
  ...(name === "team-b" ? { legacy: "true" } : {}),
});
export const generatedNamespaces = generatedNamespaceNames.map((name) => ({
  apiVersion: "v1", kind: "Namespace", metadata: { name, labels: generatedLabels(name) } }));

// A generator with its own deterministic stream: the same seed gives the same cases.
export function claimGenerator(seed) {
  // mulberry32 in 32-bit integer arithmetic (an LCG in doubles loses its low bits and falls into
  // a cycle of a few dozen cases).
  let state = seed | 0;
  function random() {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const pick = (items) => items[Math.floor(random() * items.length)];
  const chance = (p) => random() < p;

  const gpuClasses = ["gpu.nvidia.com", "mig.nvidia.com", "gpu.amd.com"];
  const nicClasses = ["dra.net", "sriovnetwork.k8snetworkplumbingwg.io", "efa.networking.k8s.aws"];
  const otherClasses = ["cpu.example.com", "storage.example.com", "fpga.example.com"];
  const alignmentAttributes = ["resource.kubernetes.io/pcieRoot"];
  const numaAttributes = ["resource.kubernetes.io/numaNode", "dra.net/numaNode", "example.com/numa"];
  const otherAttributes = ["example.com/rack", "gpu.nvidia.com/productName", "derived.example.com/root"];

  // What a generated case holds that the compiled CEL leaves to the webhook.
  function generateChoice(traits, big) {
    const choice = {};
    const role = random();
    choice.deviceClassName =
      role < 0.4 ? pick(gpuClasses) : role < 0.8 ? pick(nicClasses) : pick(otherClasses);
    if (chance(0.15)) choice.count = pick([2, 4]);
    else if (chance(0.05)) choice.allocationMode = "All";
    if (chance(0.35)) {
      const selectors = [];
      const n = big && chance(0.3) ? 5 + Math.floor(random() * 4) : 1 + Math.floor(random() * 2);
      for (let i = 0; i < n; i++) {
        const kind = random();
        let expression;
        if (kind < 0.35) {
          expression = `device.attributes["${pick(["resource.kubernetes.io", "dra.net"])}"].numaNode == ${pick([0, 1])}`;
          traits.pins = true;
        } else if (kind < 0.7) {
          expression = `device.attributes["gpu.nvidia.com"].productName == "${pick(["A100", "H100"])}"`;
        } else if (kind < 0.8) {
          expression = `device.driver == "${pick([...gpuClasses, ...nicClasses])}"`;
          traits.driverSelectors = true;
        } else if (kind < 0.9) {
          expression = `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`;
        } else {
          const length = Math.floor(random() * 300);
          expression = `device.attributes["dra.net"].rdma == true && ` +
            `device.attributes["dra.net"].ifName.startsWith("${"x".repeat(length)}")`;
          if (expression.length > 256) traits.longSelectors = true;
        }
        selectors.push({ cel: { expression } });
      }
      if (n > 4) traits.manySelectors = true;
      choice.selectors = selectors;
    }
    if (chance(0.08)) {
      const name = pick([...alignmentAttributes, ...numaAttributes, "derived.example.com/root"]);
      const expression = chance(0.5)
        ? `device.attributes["${name.split("/")[0]}"].${name.split("/")[1]}`
        : pick([`"forged"`, `device.attributes["resource.kubernetes.io"].pcieRoot`,
                `device.attributes["dra.net"].numaNode`]);
      choice.derivedAttributes = [{ name, expression }];
      traits.derived = true;
      // A name only a regex pattern accepts: whether its read is of itself is not decided natively.
      if (name === "example.com/numa" && expression.startsWith("device.")) traits.derivedUnread = true;
    }
    return choice;
  }

  function generateObject(index) {
    const traits = {};
    const big = chance(0.1);
    const requestCount = big ? 1 + Math.floor(random() * 32) : 1 + Math.floor(random() * 4);
    const requests = [];
    const entries = [];
    const choices = [];  // [request or subrequest name, its device choice]
    for (let r = 0; r < requestCount; r++) {
      const name = `r${r}`;
      if (chance(0.25)) {
        const subs = [];
        const subCount = 1 + Math.floor(random() * (big ? 8 : 3));
        for (let s = 0; s < subCount; s++) {
          subs.push({ name: `s${s}`, ...generateChoice(traits, big) });
          entries.push(`${name}/s${s}`);
          choices.push([`${name}/s${s}`, subs[subs.length - 1]]);
        }
        requests.push({ name, firstAvailable: subs });
      } else {
        requests.push({ name, exactly: generateChoice(traits, big) });
        choices.push([name, requests[requests.length - 1].exactly]);
      }
      entries.push(name);
    }
    const constraints = [];
    const constraintCount = chance(0.3) ? 0 : Math.floor(random() * (big ? 32 : 4));
    for (let c = 0; c < constraintCount; c++) {
      const constraint = {};
      if (!chance(0.1)) {
        const named = [];
        const n = 1 + Math.floor(random() * Math.min(entries.length, big ? 32 : 4));
        for (let i = 0; i < n; i++) named.push(pick(entries));
        constraint.requests = [...new Set(named)];  // the API refuses a name twice
      }
      if (chance(0.08)) constraint.distinctAttribute = pick(otherAttributes);
      else {
        const kind = random();
        constraint.matchAttribute =
          kind < 0.55 ? pick(alignmentAttributes) : kind < 0.85 ? pick(numaAttributes) : pick(otherAttributes);
      }
      constraints.push(constraint);
    }
    // The API refuses a derived attribute no matchAttribute or distinctAttribute constraint
    // targeting its request names: one is added (within the API's 32), else it is dropped.
    for (const [entry, choice] of choices) {
      for (const { name } of choice.derivedAttributes ?? []) {
        const used = constraints.some((c) =>
          (c.matchAttribute === name || c.distinctAttribute === name) &&
          (!c.requests || c.requests.includes(entry) || c.requests.includes(entry.split("/")[0])));
        if (used) continue;
        if (constraints.length < 32) constraints.push({ requests: [entry], matchAttribute: name });
        else delete choice.derivedAttributes;
      }
    }
    // Claims with derived attributes are read natively up to 8 requests and 8 constraints.
    if (traits.derived && (requestCount > 8 || constraints.length > 8)) traits.derivedLarge = true;
    const devices = { requests };
    if (constraints.length > 0 || chance(0.2)) devices.constraints = constraints;
    const template = chance(0.5);
    const namespace = pick(generatedNamespaceNames);
    const object = template
      ? { apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
          metadata: { name: `case-${index}`, namespace }, spec: { spec: { devices } } }
      : { apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
          metadata: { name: `case-${index}`, namespace }, spec: { devices } };
    return { object, traits };
  }

  return { generateObject, generatedNamespaces, generatedLabels };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, arg, i, all) => {
    if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []));
  if ("namespaces" in args) {
    for (const namespace of generatedNamespaces) process.stdout.write(JSON.stringify(namespace) + "\n");
  } else {
    const { generateObject } = claimGenerator(Number(args.seed ?? 24));
    const count = Number(args.count ?? 100);
    for (let i = 0; i < count; i++) process.stdout.write(JSON.stringify(generateObject(i)) + "\n");
  }
}
