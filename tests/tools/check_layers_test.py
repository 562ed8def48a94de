#!/usr/bin/env python3
"""tools/check_layers.py passes on the sources as they are, and fails, naming the file, line and
rule, on a copy with one forbidden thing injected at a time.

usage: check_layers_test.py SOURCE_DIR
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def run_checker(root):
    result = subprocess.run([sys.executable, str(root / "tools" / "check_layers.py"), str(root)],
                            capture_output=True, text=True, timeout=120, check=False)
    return result.returncode, result.stdout


def copy_tree(source, target):
    for part in ("src", "include", "cmake"):
        shutil.copytree(source / part, target / part)
    (target / "tools").mkdir()
    shutil.copy(source / "tools" / "check_layers.py", target / "tools")


def add_line(path, line, after_includes=True):
    lines = path.read_text().splitlines()
    at = max((i for i, text in enumerate(lines) if text.startswith("#include")), default=0) + 1
    lines.insert(at if after_includes else len(lines), line)
    path.write_text("\n".join(lines) + "\n")


# (what is injected, how, the text the checker's output must hold)
CASES = [
    ("cel includes a serving header",
     lambda root: add_line(root / "src/cel/value.cpp", '#include "topoguard/server/metrics.h"'),
     "src/cel/value.cpp:"),
    ("audit includes the API client",
     lambda root: add_line(root / "include/topoguard/audit/audit_report.h",
                           '#include "topoguard/kube/api_client.h"'),
     "audit includes topoguard/kube/api_client.h"),
    ("http includes admission",
     lambda root: add_line(root / "src/http/host_port.cpp",
                           '#include "topoguard/admission/admission_handler.h"'),
     "does not let http depend on admission"),
    ("k8s keeps a thread-local",
     lambda root: add_line(root / "src/k8s/object.cpp", "thread_local int calls = 0;"),
     "k8s is pure, but this is a thread-local"),
    ("engine includes <mutex>",
     lambda root: add_line(root / "src/engine/evaluate.cpp", "#include <mutex>"),
     "engine is pure, but includes <mutex>"),
    ("cluster keeps a mutable static",
     lambda root: add_line(root / "src/cluster/topology.cpp",
                           "void count() { static int calls = 0; ++calls; }", False),
     "cluster is pure, but this is a mutable static variable"),
    ("cel reads the clock",
     lambda root: add_line(root / "src/cel/numbers.cpp",
                           "auto started() { return std::chrono::steady_clock::now(); }", False),
     "cel is pure, but this is a clock read"),
    ("a public header names Boost",
     lambda root: add_line(root / "include/topoguard/http/tls_context.h",
                           "#include <boost/asio/ssl.hpp>"),
     "include/topoguard/http/tls_context.h"),
    ("a public header no other module includes",
     lambda root: (root / "include/topoguard/cel/lonely.h").write_text("#pragma once\n"),
     "include/topoguard/cel/lonely.h: only its own module includes it"),
    ("a module without a line in the table",
     lambda root: ((root / "src/extra").mkdir(), (root / "src/extra/CMakeLists.txt").write_text("")),
     "src/extra: a module without a line"),
    ("a table whose layers loop",
     lambda root: (root / "cmake/layers.txt").write_text(
         (root / "cmake/layers.txt").read_text().replace("cel: common", "cel: common engine")),
     "cel depends on engine, which is not on a line above"),
]


def main():
    source = Path(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory(prefix="topoguard-layers-") as temp:
        clean = Path(temp) / "clean"
        copy_tree(source, clean)
        code, output = run_checker(clean)
        if code != 0:
            failures.append(f"the sources as they are: exit {code}\n{output}")
        for index, (name, inject, expected) in enumerate(CASES):
            root = Path(temp) / f"case{index}"
            copy_tree(source, root)
            inject(root)
            code, output = run_checker(root)
            if code == 0 or expected not in output:
                failures.append(f"{name}: exit {code}, expected {expected!r} in:\n{output}")
            else:
                print(f"ok: {name}: {output.splitlines()[0]}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
