#!/usr/bin/env bash
# Keeps the Containerfile equal to tools/build-image.sh, without a container engine: its runtime
# stage must copy exactly the tree of the script's --rootfs-only mode (which its build stage runs)
# and set the same user, entrypoint, command and label keys as the script's umoci config; and that
# tree must be, file for file and byte for byte, the layer of the image the script builds.
# usage: containerfile_test.sh TOPOGUARD_BINARY SOURCE_DIR
set -euo pipefail

topoguard="${1:?topoguard binary}"
source_dir="${2:?source directory}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "${source_dir}/Containerfile" "${source_dir}/tools/build-image.sh" <<'PY'
import json, re, shlex, sys
containerfile, script = (open(p).read() for p in sys.argv[1:])
# Instructions, continuation lines joined, comments dropped.
lines = re.sub(r"\\\n\s*", " ", "\n".join(l for l in containerfile.splitlines() if not l.lstrip().startswith("#")))
stages, current = [], None
for line in filter(str.strip, lines.splitlines()):
    keyword, _, rest = line.strip().partition(" ")
    if keyword.upper() == "FROM":
        current = {"from": rest.split()[0], "name": rest.split()[-1] if " AS " in rest.upper() else None, "steps": []}
        stages.append(current)
    else:
        current["steps"].append((keyword.upper(), rest.strip()))
failures = []
def check(condition, message):
    if not condition: failures.append(message)
check(len(stages) == 2, f"{len(stages)} stages, expected build + runtime")
build, runtime = stages[0], stages[-1]
check(build["from"] == "debian:12", f"build stage from {build['from']}")
check(runtime["from"] == "scratch", f"runtime stage from {runtime['from']}")
runs = " ".join(rest for keyword, rest in build["steps"] if keyword == "RUN")
match = re.search(r"tools/build-image\.sh\b[^&;]*--rootfs-only\s+(\S+)", runs)
check(match is not None, "the build stage does not run tools/build-image.sh --rootfs-only")
rootfs = match.group(1) if match else "?"
adds = [(k, r) for k, r in runtime["steps"] if k in ("COPY", "ADD", "RUN")]
check(adds == [("COPY", f"--from={build['name']} {rootfs.rstrip('/')}/ /")],
      f"the runtime stage must only COPY --from={build['name']} {rootfs}/ /, has {adds}")
steps = dict((k, r) for k, r in runtime["steps"])
def script_flag(name):
    return re.findall(r"--config\." + name + r"=(\"[^\"]*\"|\S+)", script)
user = script_flag("user")
check(steps.get("USER") == (user[0] if user else None), f"USER {steps.get('USER')} vs script {user}")
check(json.loads(steps.get("ENTRYPOINT", "null")) == script_flag("entrypoint"),
      f"ENTRYPOINT {steps.get('ENTRYPOINT')} vs script {script_flag('entrypoint')}")
check(json.loads(steps.get("CMD", "null")) == script_flag("cmd"), f"CMD {steps.get('CMD')} vs script {script_flag('cmd')}")
label_keys = sorted(set(re.findall(r"--config\.label=\"\$\{label_prefix\}\.([a-z]+)=", script)))
containerfile_keys = sorted(k.split(".")[-1] for k, _ in
                            (item.split("=", 1) for item in shlex.split(steps.get("LABEL", ""))))
check(label_keys == containerfile_keys, f"LABEL keys {containerfile_keys} vs script {label_keys}")
for failure in failures:
    print("FAIL", failure, file=sys.stderr)
print(f"Containerfile: runtime stage copies {rootfs}, user {steps.get('USER')}, labels {containerfile_keys}")
sys.exit(1 if failures else 0)
PY

# The --rootfs-only tree against the layer of the image the script builds from the same binary.
SOURCE_DATE_EPOCH="$(git -C "$source_dir" log -1 --format=%ct)" \
  "${source_dir}/tools/build-image.sh" --binary "$topoguard" --rootfs-only "${work}/rootfs"
"${source_dir}/tools/build-image.sh" --binary "$topoguard" --out "${work}/image" >/dev/null
python3 - "${work}/rootfs" "${work}/image/oci" "$(cat "${work}/image/digest")" <<'PY'
import hashlib, json, os, sys, tarfile
rootfs, layout, digest = sys.argv[1:]
blob = lambda d: f"{layout}/blobs/{d.replace(':', '/')}"
tree = {}
for directory, _, files in os.walk(rootfs):
    for name in files:
        path = os.path.join(directory, name)
        tree["/" + os.path.relpath(path, rootfs)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
image = {}
for layer in json.load(open(blob(digest)))["layers"]:
    with tarfile.open(blob(layer["digest"]), "r:gz") as tar:
        for member in tar:
            if member.isfile():
                image["/" + os.path.normpath(member.name)] = hashlib.sha256(tar.extractfile(member).read()).hexdigest()
if tree != image:
    only_tree = sorted(set(tree) - set(image)); only_image = sorted(set(image) - set(tree))
    differ = sorted(p for p in set(tree) & set(image) if tree[p] != image[p])
    sys.exit(f"FAIL --rootfs-only vs image: only in tree {only_tree}, only in image {only_image}, differ {differ}")
print(f"--rootfs-only tree equals the image layer: {len(tree)} files")
PY
