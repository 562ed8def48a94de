#!/usr/bin/env python3
"""Checks the sources against the layering table, cmake/layers.txt (read it for the rules).

usage: check_layers.py [SOURCE_DIR]   (default: the repository this script is in)

Prints one line per violation (file:line: what) and exits 1 when there is any, 0 otherwise.
"""

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
MODULE_INCLUDE = re.compile(r"^topoguard/(\w+)/")

# What a pure module may not do: (pattern, what it is). Matched on lines without their comments
# and string literals.
IMPURE_INCLUDES = {
    "fstream", "iostream", "filesystem", "thread", "mutex",
    "shared_mutex", "condition_variable", "future", "atomic", "stop_token", "semaphore",
    "latch", "barrier", "topoguard/common/text_file.h", "topoguard/common/progress_line.h",
    "topoguard/common/free_memory.h",
}
IMPURE_PREFIXES = ("spdlog/", "httplib", "boost/asio", "boost/beast", "sys/", "unistd.h")
IMPURE_TOKENS = [
    (re.compile(r"\bthread_local\b"), "a thread-local"),
    (re.compile(r"\bstd::(mutex|shared_mutex|recursive_mutex|once_flag|call_once|atomic\w*)\b"),
     "a mutex, once-flag or atomic"),
    (re.compile(r"::now\s*\("), "a clock read"),
    (re.compile(r"\b(getenv|secure_getenv|fopen|printf|puts|time|clock_gettime|gettimeofday)\s*\("),
     "I/O, the environment or the clock"),
    (re.compile(r"\bstd::(cout|cerr|clog|cin)\b"), "standard streams"),
    # A static variable that is not const: shared state between calls (functions, whose name
    # comes before a parenthesis, are not matched).
    (re.compile(r"(?:^|[;{}])\s*static\s+(?!const\b|constexpr\b|inline\b|void\b|_)"
                r"[^()=;{]*?\b\w+\s*(=|;|\{)"),
     "a mutable static variable"),
]
# A variable at namespace scope that is not const (the project does not indent namespaces).
NAMESPACE_VARIABLE = re.compile(
    r"^(?!using\b|namespace\b|__extension__\b|struct\b|class\b|enum\b|union\b|template\b|typedef\b|friend\b|"
    r"extern\b|const\b|constexpr\b|inline\s+constexpr\b|static\s+const|static\s+constexpr|"
    r"return\b|case\b|default\b|public\b|private\b|protected\b|\}|#)"
    r"[A-Za-z_][\w:<>,\s*&]*?\s[*&]*\w+\s*(=[^=]|;|\{\s*\}?;?\s*$)")
THIRD_PARTY = re.compile(
    r"^\s*#\s*include\s*<(openssl|boost|nlohmann|simdjson)|\b(nlohmann|simdjson|boost)::|"
    r"\b(SSL_CTX|X509|EVP_PKEY)\b")


def strip_comment_and_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def read_table(path):
    """{module: (deps, rules)} in table order, the third-party-header and own-module-header
    exceptions, and the table's own errors."""
    modules, exceptions, own_module, errors = {}, set(), set(), []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "third-party-header":
            exceptions.add(value.strip())
            continue
        if key == "own-module-header":
            own_module.add(value.strip())
            continue
        deps_text, _, rules_text = value.partition("|")
        deps = deps_text.split()
        for dep in deps:
            if dep not in modules:
                errors.append(f"{path}:{number}: {key} depends on {dep}, which is not on a line "
                              "above (the table lists lower layers first)")
        if key in modules:
            errors.append(f"{path}:{number}: {key} has a second line")
        modules[key] = (deps, rules_text.split())
    return modules, exceptions, own_module, errors


def closure(modules):
    allowed = {}
    for module, (deps, _) in modules.items():  # lower layers come first
        below = set(deps)
        for dep in deps:
            below |= allowed.get(dep, set())
        allowed[module] = below
    return allowed


def source_files(directory):
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.rglob("*") if p.suffix in (".h", ".cpp", ".in", ".hpp"))


def check(root):
    table_path = root / "cmake" / "layers.txt"
    modules, third_party_ok, own_module_ok, errors = read_table(table_path)
    allowed = closure(modules)
    on_disk = {p.parent.name for p in (root / "src").glob("*/CMakeLists.txt")}
    for missing in sorted(on_disk - modules.keys()):
        errors.append(f"src/{missing}: a module without a line in cmake/layers.txt")
    for extra in sorted(modules.keys() - on_disk):
        errors.append(f"cmake/layers.txt: {extra} is not a module under src/")

    included_from_outside = set()  # public headers another module (or a public header) includes
    for module in sorted(on_disk & modules.keys()):
        rules = modules[module][1]
        pure = "pure" in rules
        exempt = {name for r in rules if r.startswith("pure-except=")
                  for name in r.split("=", 1)[1].split(",")}
        pure = pure or bool(exempt)
        private_dir = root / "src" / module
        public_dir = root / "include" / "topoguard" / module
        for path in source_files(private_dir) + source_files(public_dir):
            relative = path.relative_to(root)
            public = public_dir in path.parents
            in_comment = False
            for number, raw in enumerate(path.read_text(errors="replace").splitlines(), 1):
                where = f"{relative}:{number}"
                stripped = raw.strip()
                if in_comment or stripped.startswith("/*"):
                    in_comment = "*/" not in stripped
                    continue
                include = INCLUDE.match(raw)
                if include:
                    header = include.group(2)
                    target = MODULE_INCLUDE.match(header)
                    if target and target.group(1) != module:
                        included_from_outside.add(header)
                        if target.group(1) not in allowed.get(module, set()):
                            errors.append(f"{where}: {module} includes {header}, but "
                                          f"cmake/layers.txt does not let {module} depend on "
                                          f"{target.group(1)}")
                    elif target and public:
                        included_from_outside.add(header)
                    if header.startswith("../") or "/src/" in header:
                        errors.append(f"{where}: {header} reaches into another folder's sources")
                    if pure and path.name not in exempt and (
                            header in IMPURE_INCLUDES or header.startswith(IMPURE_PREFIXES)):
                        errors.append(f"{where}: {module} is pure, but includes <{header}>")
                code = strip_comment_and_strings(raw)
                if public and THIRD_PARTY.search(code) and \
                        f"{module}/{path.relative_to(public_dir)}" not in third_party_ok:
                    errors.append(f"{where}: a public header names an OpenSSL, Boost, simdjson "
                                  "or nlohmann type (use common/json.h, a forward declaration "
                                  "or pimpl)")
                if not pure or path.name in exempt or include:
                    continue
                for pattern, what in IMPURE_TOKENS:
                    if pattern.search(code):
                        errors.append(f"{where}: {module} is pure, but this is {what}")
                if NAMESPACE_VARIABLE.match(code) and "(" not in code.split("=", 1)[0]:
                    errors.append(f"{where}: {module} is pure, but this is a mutable variable "
                                  "at namespace scope")

    for path in source_files(root / "include" / "topoguard"):
        header = str(path.relative_to(root / "include"))
        if header not in included_from_outside and header[len("topoguard/"):] not in own_module_ok:
            errors.append(f"include/{header}: only its own module includes it (move it to "
                          f"src/{header.split('/')[1]}/)")
    return errors


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    errors = check(root)
    for error in errors:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
