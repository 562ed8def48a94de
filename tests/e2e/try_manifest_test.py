#!/usr/bin/env python3
"""try_manifest.py run as a user would run it, on its example manifest: the NUMA-only template
patched by topoguard's webhook and its Pod allocated a GPU and a VF on one PCIe root; the GB300
template warned about as unsatisfiable and its Pod Pending with the scheduler's reason.

Usage: try_manifest_test.py TOPOGUARD_BINARY SOURCE_DIR. Exit 77 when the control plane is not
built."""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def main():
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "try_manifest.py"), "--topoguard", sys.argv[1],
         "--capture", "dgx-h100", "--capture", "azure-gb300",
         os.path.join(HERE, "try_manifest_example.yaml")],
        capture_output=True, text=True, timeout=300)
    print(done.stdout, done.stderr, sep="")
    if done.returncode == SKIP:
        return SKIP
    roots = re.findall(r"trainer-devices-\w+/(gpu|vf): \S+ \S+ \(pcieRoot (\S+), NUMA 0\)",
                       done.stdout)
    expected = [
        ("exit 0", done.returncode == 0),
        ("the NUMA-only template patched with pcieRoot",
         re.search(r"PATCHED  ResourceClaimTemplate gpu-vf-numa\n.*pcieRoot", done.stdout)),
        ("its Pod bound to dgx-h100", "Pod ml/trainer bound to dgx-h100" in done.stdout),
        ("GPU and VF on one root", len(roots) == 2 and roots[0][1] == roots[1][1]),
        ("the GB300 template warned unsatisfiable-alignment",
         re.search(r"gb300-aligned\n\s+warning: unsatisfiable-alignment", done.stdout)),
        ("its Pod Pending: cannot allocate all claims",
         re.search(r"Pod ml/gb300 Pending \(Unschedulable\): .*cannot allocate all claims",
                   done.stdout)),
    ]
    failed = [name for name, holds in expected if not holds]
    for name, holds in expected:
        print("%s %s" % ("ok  " if holds else "FAIL", name))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
