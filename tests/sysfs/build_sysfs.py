#!/usr/bin/env python3
"""Writes a sysfs tree shaped like a real machine's from a compact description (machines/*.json).

    build_sysfs.py MACHINE.json OUT_DIR     # OUT_DIR/bus, OUT_DIR/devices, OUT_DIR/class

What it writes is what the kernel shows and what topoguard and Kubernetes read:
  devices/pciDDDD:BB/<bridge BDF>/.../<BDF>/{class,vendor,device,numa_node}
  bus/pci/devices/<BDF> -> ../../../devices/pciDDDD:BB/.../<BDF>   (relative, as the kernel's)
  class/net/<if> -> ../../devices/.../<BDF>/net/<if>, with <if>/device -> ../../../<BDF>
  class/infiniband/<ibdev> -> ../../devices/.../<BDF>/infiniband/<ibdev>, same device link
  SR-IOV: PF virtfnN -> ../<VF BDF>, VF physfn -> ../<PF BDF> (VFs are siblings of their PF)
  devices/system/node/nodeN/distance for each NUMA node

Description: {"roots": {"DDDD:BB": numa, ...}, "root_port_vendor": "8086", "devices": [...]}.
A device's "path" is its chain from the root: "0000:00/01.1/01:00.0/02:00.0/03:00.0"; the parts
between the root and the last are bridges (made on first use, class 0x060400; the first one is a
root port with the root port vendor, the others PCIe switch ports). "kind" names a row of KINDS;
"net"/"ib" name its interfaces; "vfs" lists VFs ({"bdf": "03:00.2", "ib": ..., "net": ...});
"numa" overrides the root's NUMA node (-1: no affinity). "numa_node_text" writes that text as is
(for malformed input).
"""
import json
import os
import sys

# kind: (class, vendor, device)
KINDS = {
    "nvidia-a100": ("0x030200", "0x10de", "0x20b0"),
    "nvidia-h100": ("0x030200", "0x10de", "0x2330"),
    "nvidia-gb200": ("0x030200", "0x10de", "0x2941"),
    "amd-mi250": ("0x038000", "0x1002", "0x740c"),
    "intel-max1550": ("0x038000", "0x8086", "0x0bd5"),
    "aspeed-vga": ("0x030000", "0x1a03", "0x2000"),
    "cx6": ("0x020700", "0x15b3", "0x101b"),
    "cx6dx": ("0x020000", "0x15b3", "0x101d"),
    "cx6dx-vf": ("0x020000", "0x15b3", "0x101e"),
    "cx7": ("0x020700", "0x15b3", "0x1021"),
    "efa": ("0x020000", "0x1d0f", "0xefa0"),
    "ena": ("0x020000", "0x1d0f", "0xec20"),
    "nvme": ("0x010802", "0x144d", "0xa80a"),
    "switch-port": ("0x060400", "0x10b5", "0xc010"),
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def link(target, at):
    os.makedirs(os.path.dirname(at), exist_ok=True)
    os.symlink(target, at)


class Tree:
    def __init__(self, machine, out):
        self.machine = machine
        self.out = out
        self.made = {}  # BDF -> path under out ("devices/pci0000:00/.../BDF")

    def bdf(self, domain, part):
        return part if part.count(":") == 2 else f"{domain}:{part}"

    def function(self, rel, bdf, kind, numa, numa_text=None, vendor=None):
        pci_class, kind_vendor, device = KINDS[kind]
        base = os.path.join(self.out, rel)
        write(os.path.join(base, "class"), pci_class + "\n")
        write(os.path.join(base, "vendor"), (vendor or kind_vendor) + "\n")
        write(os.path.join(base, "device"), device + "\n")
        write(os.path.join(base, "numa_node"), (numa_text if numa_text is not None else f"{numa}") + "\n")
        link(os.path.join("..", "..", "..", rel), os.path.join(self.out, "bus", "pci", "devices", bdf))
        self.made[bdf] = rel

    def interfaces(self, rel, bdf, spec):
        for name in [spec["net"]] if "net" in spec else []:
            link("../../../" + bdf, os.path.join(self.out, rel, "net", name, "device"))
            link(os.path.join("..", "..", rel, "net", name), os.path.join(self.out, "class", "net", name))
        for name in [spec["ib"]] if "ib" in spec else []:
            link("../../../" + bdf, os.path.join(self.out, rel, "infiniband", name, "device"))
            link(os.path.join("..", "..", rel, "infiniband", name),
                 os.path.join(self.out, "class", "infiniband", name))

    def device(self, spec):
        parts = spec["path"].split("/")
        domain = parts[0].split(":")[0]
        numa = spec.get("numa", self.machine["roots"][parts[0]])
        rel = os.path.join("devices", "pci" + parts[0])
        os.makedirs(os.path.join(self.out, rel), exist_ok=True)
        for depth, part in enumerate(parts[1:-1]):
            bdf = self.bdf(domain, part)
            rel = os.path.join(rel, bdf)
            if bdf not in self.made:
                vendor = self.machine.get("root_port_vendor", "0x8086") if depth == 0 else None
                self.function(rel, bdf, "switch-port", self.machine["roots"][parts[0]], vendor=vendor)
        bdf = self.bdf(domain, parts[-1])
        parent = rel
        rel = os.path.join(rel, bdf)
        self.function(rel, bdf, spec["kind"], numa, spec.get("numa_node_text"))
        self.interfaces(rel, bdf, spec)
        for index, vf in enumerate(spec.get("vfs", [])):
            vf_bdf = self.bdf(domain, vf["bdf"])
            vf_rel = os.path.join(parent, vf_bdf)
            self.function(vf_rel, vf_bdf, spec["kind"] + "-vf", numa)
            self.interfaces(vf_rel, vf_bdf, vf)
            link("../" + vf_bdf, os.path.join(self.out, rel, f"virtfn{index}"))
            link("../" + bdf, os.path.join(self.out, vf_rel, "physfn"))
        if spec.get("vfs"):
            write(os.path.join(self.out, rel, "sriov_numvfs"), f"{len(spec['vfs'])}\n")

    def numa_nodes(self):
        nodes = sorted({numa for numa in self.machine["roots"].values() if numa >= 0})
        for node in nodes:
            distances = " ".join("10" if other == node else "20" for other in nodes)
            write(os.path.join(self.out, "devices", "system", "node", f"node{node}", "distance"),
                  distances + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: build_sysfs.py MACHINE.json OUT_DIR")
    with open(sys.argv[1], encoding="utf-8") as source:
        machine = json.load(source)
    out = sys.argv[2]
    os.makedirs(os.path.join(out, "bus", "pci", "devices"), exist_ok=True)
    os.makedirs(os.path.join(out, "class", "net"), exist_ok=True)
    os.makedirs(os.path.join(out, "class", "infiniband"), exist_ok=True)
    tree = Tree(machine, out)
    for spec in machine["devices"]:
        tree.device(spec)
    for at, target in machine.get("raw_links", {}).items():
        link(target, os.path.join(out, at))
    for at, text in machine.get("raw_files", {}).items():
        write(os.path.join(out, at), text)
    tree.numa_nodes()


if __name__ == "__main__":
    main()
