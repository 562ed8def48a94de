// What the CEL differentials share: the expressions of the corpus and of the tests' YAML and
// JSON, devices as the corpus's drivers publish them, and a deterministic generator of selector
// expressions over them. differential.mjs sets topoguard's evaluator against @bufbuild/cel,
// library_differential.mjs against k8s.io/dynamic-resource-allocation/cel.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

// The command line's --name value pairs.
export function commandLine(argv) {
  return Object.fromEntries(
    argv.reduce((pairs, arg, i, all) => {
      if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
      return pairs;
    }, []),
  );
}

// ---- expressions from files -------------------------------------------------------------------

export function* files(dir) {
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const full = path.join(dir, name);
    const stat = statSync(full);
    if (stat.isDirectory()) yield* files(full);
    else if (stat.size < 4 << 20) yield full;
  }
}

// `expression:` values in YAML (plain, quoted and block scalars) and "expression": in JSON.
export function expressionsIn(text) {
  const found = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const json = lines[i].match(/"expression"\s*:\s*("(?:[^"\\]|\\.)*")/);
    if (json) {
      found.push(JSON.parse(json[1]));
      continue;
    }
    const yaml = lines[i].match(/^(\s*)(?:- )?expression:\s*(.*?)\s*$/);
    if (!yaml) continue;
    const indent = yaml[1].length;
    const value = yaml[2];
    if (/^[|>][-+]?$/.test(value)) {
      const block = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const line = lines[j];
        if (line.trim() !== "" && line.search(/\S/) <= indent) break;
        block.push(line);
      }
      const inner = Math.min(...block.filter((l) => l.trim()).map((l) => l.search(/\S/)));
      const body = block.map((l) => l.slice(inner)).join("\n").replace(/\n+$/, "");
      found.push(value.startsWith(">") ? body.replace(/([^\n])\n(?=[^\n])/g, "$1 ") : body);
      i = j - 1;
    } else if (value.startsWith("'") && value.endsWith("'") && value.length > 1) {
      found.push(value.slice(1, -1).replaceAll("''", "'"));
    } else if (value.startsWith('"') && value.endsWith('"') && value.length > 1) {
      found.push(JSON.parse(value));
    } else if (value !== "" && !value.startsWith("#")) {
      found.push(value.replace(/\s+#.*$/, ""));
    }
  }
  return found;
}

export function collect(dir, filter) {
  const out = [];
  for (const file of files(dir)) {
    if (!filter(file)) continue;
    for (const expr of expressionsIn(readFileSync(file, "utf8"))) out.push({ expr, file });
  }
  return out;
}

// ---- device bindings --------------------------------------------------------------------------

export const int = (n) => ({ int: String(n) });
export const str = (s) => ({ string: s });
export const bool = (b) => ({ bool: b });

// Devices as the drivers in the corpus publish them (NVIDIA GPU and MIG, AMD GPU, DRANET RDMA NIC
// and AWS EFA, SR-IOV VF, a driver with no attributes).
export const devices = [
  { driver: "gpu.nvidia.com", attributes: {
      "gpu.nvidia.com": { type: str("gpu"), productName: str("NVIDIA A100-SXM4-40GB"), brand: str("Nvidia"),
        architecture: str("Ampere"), index: int(0), minor: int(0), uuid: str("GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c") },
      "resource.kubernetes.io": { pcieRoot: str("pci0000:00"), pciBusID: str("0000:10:1c.0") } } },
  { driver: "gpu.nvidia.com", attributes: {
      "gpu.nvidia.com": { type: str("mig"), profile: str("1g.5gb"), index: int(3), parentIndex: int(1),
        productName: str("NVIDIA H100 80GB HBM3") } } },
  { driver: "gpu.amd.com", attributes: {
      "gpu.amd.com": { productName: str("AMD Instinct MI300X"), index: int(2), family: str("AI") },
      "resource.kubernetes.io": { pcieRoot: str("pci0000:40") } } },
  { driver: "dra.net", attributes: {
      "dra.net": { rdma: bool(true), numaNode: int(0), rdmaDevice: str("mlx5_0"), ifName: str("eth1"),
        pciVendor: str("Mellanox Technologies"), sriov: bool(false), virtual: bool(false), mtu: int(9000) },
      "resource.kubernetes.io": { pcieRoot: str("pci0000:00"), pciBusID: str("0000:10:00.0") } } },
  { driver: "dra.net", attributes: {
      "dra.net": { rdma: bool(true), numaNode: int(1), ifName: str("efa0"), pciVendor: str("Amazon.com, Inc."),
        ebpf: bool(false), mtu: int(8900) },
      "resource.kubernetes.io": { pcieRoot: str("pci0000:90"), pciBusID: str("0000:a0:1a.0") } } },
  { driver: "sriovnetwork.k8snetworkplumbingwg.io", attributes: {
      "sriovnetwork.k8snetworkplumbingwg.io": { vendor: str("15b3"), deviceID: str("101e"), pfName: str("ens1f0"),
        numaNode: int(1), vfID: int(4) },
      "resource.kubernetes.io": { pcieRoot: str("pci0000:80"), pciBusID: str("0000:81:00.5") } } },
  { driver: "accel.example.com", attributes: {} },
];

export const domainsInExpressions = (exprs) =>
  new Set(exprs.flatMap((e) => [...e.matchAll(/attributes\s*\[\s*["']([^"'\\]+)["']/g)].map((m) => m[1])));

// Every device gets every domain (empty when it publishes nothing there), as the allocator binds
// device.attributes: a domain lookup never fails, a missing attribute does.
export function completeDomains(devices, domains) {
  for (const device of devices) {
    for (const domain of domains) device.attributes[domain] ??= {};
  }
}

// ---- generated expressions --------------------------------------------------------------------

let seed = 8;
export function seedRandom(value) {
  seed = value;
}

export function random() {
  // mulberry32: small, deterministic
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
export const pick = (list) => list[Math.floor(random() * list.length)];
export const quote = (s) => pick([`"${s}"`, `'${s}'`, `r"${s}"`]);

export const drivers = ["gpu.nvidia.com", "gpu.amd.com", "dra.net", "sriovnetwork.k8snetworkplumbingwg.io", "accel.example.com", "gpu.intel.com"];
export const stringAttributes = [["gpu.nvidia.com", "productName"], ["gpu.nvidia.com", "type"], ["gpu.nvidia.com", "profile"],
  ["dra.net", "ifName"], ["dra.net", "rdmaDevice"], ["resource.kubernetes.io", "pcieRoot"],
  ["resource.kubernetes.io", "pciBusID"], ["sriovnetwork.k8snetworkplumbingwg.io", "pfName"], ["gpu.amd.com", "productName"]];
export const intAttributes = [["gpu.nvidia.com", "index"], ["dra.net", "numaNode"], ["dra.net", "mtu"],
  ["sriovnetwork.k8snetworkplumbingwg.io", "numaNode"], ["gpu.amd.com", "index"], ["sriovnetwork.k8snetworkplumbingwg.io", "vfID"]];
export const boolAttributes = [["dra.net", "rdma"], ["dra.net", "sriov"], ["dra.net", "virtual"], ["dra.net", "ebpf"]];
export const strings = ["NVIDIA", "A100", "mig", "gpu", "eth1", "efa0", "mlx5_0", "pci0000:00", "pci0000:90", "0000:10", "1g.5gb", "ens1f0", "", "AMD"];

function attribute([domain, name]) {
  return pick([`device.attributes[${quote(domain)}].${name}`, `device.attributes[${quote(domain)}][${quote(name)}]`]);
}

function stringTerm() {
  return pick([() => "device.driver", () => attribute(pick(stringAttributes)), () => quote(pick(strings))])();
}

function intTerm(depth) {
  const base = pick([() => attribute(pick(intAttributes)), () => String(Math.floor(random() * 10) - 2),
    () => `size(${stringTerm()})`, () => `${stringTerm()}.size()`]);
  if (depth > 0 && random() < 0.2) {
    return `(${base()} ${pick(["+", "-", "*", "/", "%"])} ${intTerm(depth - 1)})`;
  }
  return base();
}

function atom(depth) {
  const forms = [
    () => `device.driver ${pick(["==", "!="])} ${quote(pick(drivers))}`,
    () => `${quote(pick(drivers))} == device.driver`,
    () => `device.driver in [${Array.from({ length: 1 + Math.floor(random() * 3) }, () => quote(pick(drivers))).join(", ")}]`,
    () => `${stringTerm()}.${pick(["startsWith", "endsWith", "contains"])}(${quote(pick([...strings, "gpu.", ".com", "nvidia", "dra"]))})`,
    () => `${stringTerm()}.matches(${quote(pick(["^gpu\\\\.", "^pci[0-9a-f]{4}:[0-9a-f]{2}$", "mlx5_[0-9]+", "(", "A100|H100", "^$"]))})`,
    // (Not the global matches(s, re): @bufbuild/cel 0.6.1 only has the receiver form.)
    () => `${stringTerm()} ${pick(["==", "!=", "<", ">=", "<=", ">"])} ${stringTerm()}`,
    () => `${intTerm(depth)} ${pick(["==", "!=", "<", "<=", ">", ">="])} ${intTerm(depth)}`,
    () => `${attribute(pick(intAttributes))} ${pick(["==", "<", ">="])} ${pick(["1u", "0u", "1.0", "0.5", "-1.5"])}`,
    () => `${attribute(pick(boolAttributes))}`,
    () => `${attribute(pick(boolAttributes))} == ${pick(["true", "false"])}`,
    () => `has(device.attributes[${quote(pick(["dra.net", "gpu.nvidia.com", "resource.kubernetes.io", "gpu.amd.com"]))}].${pick(["rdma", "numaNode", "index", "pcieRoot", "profile", "type"])})`,
    () => `${quote(pick(["rdma", "numaNode", "index", "pcieRoot"]))} in device.attributes[${quote(pick(["dra.net", "gpu.nvidia.com", "resource.kubernetes.io"]))}]`,
    () => `${attribute(pick(stringAttributes))} in [${Array.from({ length: 2 }, () => quote(pick(strings))).join(", ")}]`,
    () => `${attribute(pick(intAttributes))} in [0, 1, 2u, 3.0]`,
    () => `size(device.attributes[${quote(pick(["dra.net", "gpu.nvidia.com", "resource.kubernetes.io", "x.io"]))}]) ${pick([">", "=="])} ${Math.floor(random() * 4)}`,
    () => `device.attributes[${quote(pick(["dra.net", "gpu.nvidia.com", "resource.kubernetes.io"]))}].${pick(["exists", "all", "exists_one"])}(k, k.${pick(["startsWith", "endsWith", "contains"])}(${quote(pick(["n", "r", "p", "x"]))}))`,
    () => `[${intTerm(0)}, ${intTerm(0)}].${pick(["exists", "all", "exists_one"])}(x, x ${pick([">", "==", "<"])} ${intTerm(0)})`,
    () => `[1, 2, 3].map(x, x * ${intTerm(0)}).filter(y, y > 2).size() ${pick([">", "=="])} 1`,
    () => `${atomOrCompound(depth)} ? ${atomOrCompound(depth)} : ${atomOrCompound(depth)}`,
    () => `{${quote("a")}: ${intTerm(0)}}[${quote(pick(["a", "b"]))}] == 1`,
    () => `[${stringTerm()}, ${intTerm(0)}] == [${stringTerm()}, ${intTerm(0)}]`,
    () => `${pick(["1", "1u", "1.0", "'1'", "null", "true", "[1]", "{1: 2}", "b'1'"])} ${pick(["==", "!="])} ${pick(["1", "1u", "1.0", "'1'", "null", "true", "[1]", "{1: 2}", "b'1'"])}`,
    () => `${pick(["device.attributes", "device", "device.driver", "1", "'x'"])}.${pick(["nope", "driver", "size"])} ${pick(["==", "!="])} 1`,
  ];
  return pick(forms)();
}

export function atomOrCompound(depth) {
  if (depth <= 0 || random() < 0.4) return atom(Math.max(depth - 1, 0));
  const roll = random();
  if (roll < 0.35) return `${atomOrCompound(depth - 1)} && ${atomOrCompound(depth - 1)}`;
  if (roll < 0.7) return `${atomOrCompound(depth - 1)} || ${atomOrCompound(depth - 1)}`;
  if (roll < 0.85) return `!(${atomOrCompound(depth - 1)})`;
  return `(${atomOrCompound(depth - 1)})`;
}
