#!/usr/bin/env bash
# The README's promises on a pristine Debian 12, proven in fresh roots that debootstrap makes from
# the Debian archive this machine's apt is configured with (minbase variant, the same apt sources;
# chroot on the host's network). Needs root and the archive.
#   quickstart  the README's first command (tools/quickstart.sh --background) installs, builds and
#               serves; the webhook answers AdmissionReviews over TLS on /mutate and /validate;
#   package     the Debian package (`cmake --workflow --preset package`, in that root) installs
#               with apt in a second fresh root, and its `topoguard audit` runs;
#   image       the Containerfile's build stage, step by step in a third fresh root (ARG, WORKDIR,
#               COPY from the build context as .dockerignore filters it, RUN with /bin/sh -c),
#               makes a binary that runs, and the image tree it assembles runs the binary alone.
#               Its /src/build starts as the quickstart's (the same preset, target and sources, at
#               the same paths), so the fresh root installs the packages and configures (every
#               find_package runs there) but does not compile the same objects a second time;
#   test-setup  the test command's setup (tools/setup.sh) installs the test tools and the Node.js
#               they run on, in the quickstart root.
# Prints each step's wall time. usage: pristine_root_test.sh [--work DIR] [--keep] [--from STEP]
#   --keep       leave the roots in DIR (default /var/tmp/topoguard-pristine)
#   --from STEP  package, image or test-setup: start there, on the roots a --keep run left
set -euo pipefail

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="/var/tmp/topoguard-pristine"
keep=0
from=debootstrap
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work="${2:?--work needs a directory}"; shift 2 ;;
    --keep) keep=1; shift ;;
    --from) from="${2:?--from needs a step}"; shift 2 ;;
    *) echo "pristine_root_test: unknown argument: $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
work="$(realpath "$work")"

say() { echo "pristine: $*" >&2; }
die() { echo "pristine: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap not found (bash tools/setup.sh installs it)"

declare -A seconds=()
timed() {  # timed NAME COMMAND...: runs COMMAND, records its wall time under NAME
  local name="$1" start
  shift
  start=$(date +%s)
  say "${name}: started"
  "$@"
  seconds[$name]=$(( $(date +%s) - start ))
  say "${name}: done in ${seconds[$name]} s"
}

# --- roots --------------------------------------------------------------------------------------

mounted=()
roots=()
processes_in() {  # pids whose root directory is $1
  local proc
  for proc in /proc/[0-9]*; do
    [ "$(readlink "${proc}/root" 2>/dev/null)" = "$1" ] && echo "${proc#/proc/}"
  done
  return 0
}
cleanup() {
  local root pid index
  for root in "${roots[@]}"; do
    for pid in $(processes_in "$root"); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  for (( index=${#mounted[@]}-1; index>=0; index-- )); do
    umount -R "${mounted[$index]}" 2>/dev/null || umount -l "${mounted[$index]}" 2>/dev/null || true
  done
  if [ "$keep" -eq 0 ]; then
    for root in "${roots[@]}"; do rm -rf --one-file-system "$root"; done
  fi
}
trap cleanup EXIT

# The archive apt is configured with: the first deb URI serving bookworm (deb822 or one-line).
archive_uri() {
  python3 - <<'PY'
import glob, re
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in open(path).read().split("\n\n"):
        fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
        if "deb" in fields.get("Types", "").split() and "bookworm" in fields.get("Suites", "").split():
            print(fields["URIs"].split()[0]); raise SystemExit
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        for line in open(path):
            words = re.sub(r"\[[^]]*\]", "", line).split()
            if len(words) >= 3 and words[0] == "deb" and words[2] == "bookworm":
                print(words[1]); raise SystemExit
    except FileNotFoundError:
        pass
raise SystemExit("no deb source for bookworm in /etc/apt")
PY
}

base="${work}/base"
make_base() {
  rm -rf --one-file-system "$base"
  mkdir -p "${work}/cache/debootstrap"
  debootstrap --variant=minbase --cache-dir="${work}/cache/debootstrap" bookworm "$base" \
    "$(archive_uri)" >"${work}/debootstrap.log" 2>&1 || { tail -20 "${work}/debootstrap.log" >&2; exit 1; }
  # The same apt sources as this machine (bookworm, updates, security), as a configured Debian 12.
  rm -f "${base}/etc/apt/sources.list"
  cp -a /etc/apt/sources.list /etc/apt/sources.list.d "${base}/etc/apt/" 2>/dev/null || true
}

# The host's compiler cache, shared with the roots: the quickstart compiles there only what the
# host's builds did not. This proves as much as a cold build: ccache checks every header a cached
# object read, so a header or package the root lacks still fails the build there.
ccache_dir=""
ccache_max_size=""
if command -v ccache >/dev/null; then
  ccache_dir="$(ccache --get-config cache_dir)"
  ccache_max_size="$(ccache --get-config max_size)"
  mkdir -p "$ccache_dir"
fi

# A fresh copy of the base root, with /proc, /dev, name resolution and the shared package cache.
# Services never start inside (policy-rc.d), as in a container build.
new_root() {
  local root="${work}/$1"
  rm -rf --one-file-system "$root"
  cp -a "$base" "$root"
  cp /etc/resolv.conf "${root}/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"${root}/usr/sbin/policy-rc.d"
  chmod +x "${root}/usr/sbin/policy-rc.d"
  mount_root "$1"
}
mount_root() {
  local root="${work}/$1"
  [ -d "${root}/proc" ] || die "no root ${root} (run with --keep first)"
  roots+=("$root")
  mkdir -p "${work}/cache/archives/partial"
  mount -t proc proc "${root}/proc"; mounted+=("${root}/proc")
  mount --rbind /dev "${root}/dev"; mount --make-rslave "${root}/dev"; mounted+=("${root}/dev")
  mount --bind "${work}/cache/archives" "${root}/var/cache/apt/archives"
  mounted+=("${root}/var/cache/apt/archives")
  if [ -n "$ccache_dir" ]; then
    mkdir -p "${root}/var/cache/host-ccache"
    mount --bind "$ccache_dir" "${root}/var/cache/host-ccache"; mounted+=("${root}/var/cache/host-ccache")
  fi
  # The network's own trust anchors (a TLS-inspecting egress proxy, say): a machine on this
  # network has them, or npm cannot reach its registry. Debian's ca-certificates adds them to
  # the system store when it is installed (or now, when it already is).
  mkdir -p "${root}/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "${root}/usr/local/share/ca-certificates/" 2>/dev/null || true
  if [ -x "${root}/usr/sbin/update-ca-certificates" ]; then
    in_root "$root" "update-ca-certificates" >/dev/null 2>&1 || true
  fi
}
in_root() {  # in_root ROOT COMMAND: COMMAND with /bin/sh -c in ROOT, a clean login-like environment
  local root="$1"
  local -a cache=()
  shift
  [ -z "$ccache_dir" ] || cache=(CCACHE_DIR=/var/cache/host-ccache "CCACHE_MAXSIZE=${ccache_max_size}")
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb "${cache[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$*"
}

# The sources as a clone has them: tracked and untracked-but-not-ignored files of this checkout.
context="${work}/context"
make_context() {
  rm -rf "$context"
  mkdir -p "$context"
  (cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$context"
}

# --- quickstart ---------------------------------------------------------------------------------

quickstart_root="${work}/quickstart"
quickstart() {
  new_root quickstart
  mkdir -p "${quickstart_root}/src"
  cp -a "${context}/." "${quickstart_root}/src/"
  local ports port metrics_port
  ports="$(source "${source_dir}/tools/free-ports.sh" && free_ports 2)"
  read -r port metrics_port <<<"$ports"
  in_root "$quickstart_root" "cd /src && bash tools/quickstart.sh --background --port ${port} \
    --metrics-port ${metrics_port}" >"${work}/quickstart.log" 2>&1 ||
    { tail -30 "${work}/quickstart.log" >&2; die "the README's first command failed"; }
  local ca="${quickstart_root}/src/certs/dev/ca.pem"
  [ -f "$ca" ] || die "no development CA at certs/dev/ca.pem after the quickstart"
  local review="${source_dir}/examples/admission/resourceclaimtemplate-create-unaligned.json"
  local path
  for path in mutate validate; do
    curl -sS --fail --max-time 10 --cacert "$ca" -H 'Content-Type: application/json' \
      --data-binary "@${review}" "https://localhost:${port}/${path}" >"${work}/${path}.json" ||
      die "the quickstart's webhook did not answer /${path}"
  done
  python3 - "${work}/mutate.json" "${work}/validate.json" <<'PY' || die "unexpected webhook answers"
import base64, json, sys
mutate, validate = (json.load(open(p))["response"] for p in sys.argv[1:])
patch = json.loads(base64.b64decode(mutate["patch"]))
assert mutate["allowed"] and mutate["patchType"] == "JSONPatch", mutate
assert any(op["path"].startswith("/spec/spec/devices/constraints") for op in patch), patch
assert validate["allowed"] is False and "missing-pcie-alignment" in validate["status"]["message"], validate
PY
  grep -q "topoguard serve is ready" "${work}/quickstart.log" || die "the quickstart did not say it is ready"
  local pid
  for pid in $(processes_in "$quickstart_root"); do kill -TERM "$pid" 2>/dev/null || true; done
}

# --- package ------------------------------------------------------------------------------------

package() {
  # The README's recipe: the build packages, then the package workflow.
  in_root "$quickstart_root" "cd /src && bash tools/setup.sh --build-only && cmake --workflow --preset package" \
    >"${work}/package-build.log" 2>&1 || { tail -30 "${work}/package-build.log" >&2; die "cmake --workflow --preset package"; }
  local deb
  deb="$(ls "${quickstart_root}"/src/build/topoguard_*.deb 2>/dev/null | head -1)"
  [ -n "$deb" ] || die "the package workflow made no build/topoguard_*.deb"
  new_root package
  local root="${work}/package"
  cp "$deb" "${root}/tmp/topoguard.deb"
  in_root "$root" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends /tmp/topoguard.deb" >"${work}/package-install.log" 2>&1 ||
    { tail -30 "${work}/package-install.log" >&2; die "apt-get install of the package"; }
  in_root "$root" "topoguard --version" | grep -qx 'topoguard [0-9]*\.[0-9]*\.[0-9]*' || die "topoguard --version"
  local status=0
  in_root "$root" "topoguard audit /usr/share/doc/topoguard/examples/manifests" \
    >"${work}/package-audit.txt" 2>&1 || status=$?
  [ "$status" -eq 1 ] || { cat "${work}/package-audit.txt" >&2; die "audit of the examples exited ${status}, expected 1 (deny findings)"; }
  grep -q 'missing-pcie-alignment' "${work}/package-audit.txt" || die "audit printed no missing-pcie-alignment finding"
  in_root "$root" "topoguard policy lint /usr/share/topoguard/policies/default.yaml" >/dev/null 2>&1 ||
    die "the installed default policy does not lint"
}

# --- image build stage --------------------------------------------------------------------------

image() {
  new_root image
  local root="${work}/image"
  # The build stage's instructions, in order: KIND<TAB>ARGUMENTS, continuation lines joined.
  python3 - "${source_dir}/Containerfile" >"${work}/build-stage.tsv" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
lines = re.sub(r"\\\n\s*", " ", "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#")))
stages = []
for line in filter(str.strip, lines.splitlines()):
    keyword, _, rest = line.strip().partition(" ")
    if keyword.upper() == "FROM":
        stages.append([])
    stages[-1].append((keyword.upper(), rest.strip()))
for keyword, rest in stages[0][1:]:
    print(f"{keyword}\t{rest}")
PY
  # The build context as `docker build .` sends it: .dockerignore applied.
  local build_context="${work}/build-context"
  rm -rf "$build_context"
  cp -a "$context" "$build_context"
  python3 - "$build_context" <<'PY'
import fnmatch, os, shutil, sys
root = sys.argv[1]
patterns = [line.strip().strip("/") for line in open(os.path.join(root, ".dockerignore"))
            if line.strip() and not line.startswith("#")]
for directory, subdirectories, files in os.walk(root):
    for name in subdirectories + files:
        path = os.path.join(directory, name)
        if any(fnmatch.fnmatch(os.path.relpath(path, root), p) for p in patterns):
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
            if name in subdirectories: subdirectories.remove(name)
PY
  # The quickstart built the same target with the same preset from the same files (mtimes kept).
  [ -f "${quickstart_root}/src/build/CMakeCache.txt" ] || die "no quickstart build to start the image's from"
  mkdir -p "${root}/src"
  cp -a "${quickstart_root}/src/build" "${root}/src/build"
  rm -rf "${root}/src/build/_CPack_Packages" "${root}/src/build/"topoguard_*.deb "${root}/src/build/topoguard"
  local workdir="/" environment="" keyword arguments
  while IFS=$'\t' read -r keyword arguments; do
    say "image: ${keyword} ${arguments:0:100}"
    case "$keyword" in
      ARG|ENV)
        [[ "$arguments" == *=* ]] && environment+="export ${arguments%%=*}=${arguments#*=}; " ;;
      WORKDIR)
        workdir="$arguments"; mkdir -p "${root}${workdir}" ;;
      COPY)
        local -a words
        read -r -a words <<<"$arguments"
        local destination="${words[-1]}" source
        [[ "$destination" == /* ]] || destination="${workdir%/}/${destination}"
        for source in "${words[@]:0:${#words[@]}-1}"; do
          if [ -d "${build_context}/${source}" ]; then
            mkdir -p "${root}${destination}"; cp -a "${build_context}/${source}/." "${root}${destination}/"
          else
            [ -e "${build_context}/${source}" ] || die "COPY ${source}: not in the build context"
            mkdir -p "$(dirname "${root}${destination}")"; cp -a "${build_context}/${source}" "${root}${destination}"
          fi
        done ;;
      RUN)
        in_root "$root" "${environment}cd '${workdir}' && ${arguments}" >>"${work}/image-build.log" 2>&1 ||
          { tail -30 "${work}/image-build.log" >&2; die "Containerfile RUN failed: ${arguments}"; } ;;
      *) die "the build stage uses ${keyword}, which this test does not run" ;;
    esac
  done <"${work}/build-stage.tsv"
  [ -x "${root}/src/build/topoguard" ] || die "the build stage made no /src/build/topoguard"
  in_root "$root" "/src/build/topoguard --version" | grep -qx 'topoguard [0-9]*\.[0-9]*\.[0-9]*' || die "the built binary does not run"
  # The image's tree alone (no shell, no other files), as the runtime stage's user.
  local tree="${root}/rootfs"
  [ -x "${tree}/usr/local/bin/topoguard" ] || die "the build stage assembled no /rootfs/usr/local/bin/topoguard"
  mkdir -p "${tree}/tmp/examples"
  cp "${source_dir}"/examples/manifests/*.yaml "${tree}/tmp/examples/"
  local status=0
  chroot --userspec=65532:65532 "$tree" /usr/local/bin/topoguard audit /tmp/examples \
    >"${work}/image-audit.txt" 2>&1 || status=$?
  [ "$status" -eq 1 ] || { cat "${work}/image-audit.txt" >&2; die "the image's binary: audit exited ${status}, expected 1"; }
}

# --- the test command's setup -------------------------------------------------------------------

test_setup() {
  in_root "$quickstart_root" "cd /src && bash tools/setup.sh" >"${work}/test-setup.log" 2>&1 ||
    { tail -30 "${work}/test-setup.log" >&2; die "tools/setup.sh (the test command's setup)"; }
  grep -q "deploy_\* tests will be skipped" "${work}/test-setup.log" ||
    die "setup did not say that the deploy tests will be skipped without kubectl 1.27+"
  in_root "$quickstart_root" "cd /src/tests/node && node_modules/.bin/node --version" | grep -q '^v22\.' ||
    die "the test tools' Node is not the pinned 22"
  in_root "$quickstart_root" "cd /src/tests/node && node_modules/.bin/node --input-type=module -e \
    \"await import('ajv'); await import('@bufbuild/cel'); await import('kubernetes-models');\"" ||
    die "the test tools do not load on the pinned Node"
}

steps=(debootstrap quickstart package image test-setup)
case " ${steps[*]} " in *" ${from} "*) ;; *) die "--from: one of ${steps[*]}" ;; esac
run_from() {  # run_from STEP FUNCTION: FUNCTION, timed, unless --from names a later step
  local step
  for step in "${steps[@]}"; do
    [ "$step" = "$from" ] && break
    [ "$step" = "$1" ] && { seconds[$1]="skipped"; return 0; }
  done
  timed "$1" "$2"
}
run_from debootstrap make_base
make_context
if [ "$from" != debootstrap ] && [ "$from" != quickstart ]; then
  mount_root quickstart
  # Only the files that changed, stamped now, so the kept build directory rebuilds what they touch.
  rsync -r --checksum --perms "${context}/" "${quickstart_root}/src/"
fi
run_from quickstart quickstart
run_from package package
run_from image image
run_from test-setup test_setup
say "all passed; seconds: debootstrap ${seconds[debootstrap]}, quickstart ${seconds[quickstart]}," \
  "package ${seconds[package]}, image ${seconds[image]}, test-setup ${seconds[test-setup]}"
