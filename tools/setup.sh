#!/usr/bin/env bash
# Installs everything topoguard needs to build, test and benchmark on Debian 12. Idempotent.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git ca-certificates
  libcpp-httplib-dev libssl-dev openssl nlohmann-json3-dev libre2-dev libspdlog-dev
  libyaml-cpp-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev curl jq wrk nginx-light procps
  libboost1.81-dev libsimdjson-dev umoci skopeo libxml2-utils python3-yaml binutils
  libjemalloc-dev golang-go iproute2
)

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
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# kubectl renders deploy/webhook in tests/deploy with its built-in kustomize (v5: components,
# replacements). Debian 12's kubernetes-client is 1.20 with a kustomize too old for them, so
# kubectl comes from the Kubernetes apt repository (pkgs.k8s.io) or the Google Cloud SDK.
if ! kubectl kustomize --help >/dev/null 2>&1; then
  echo "setup: kubectl (1.27 or later) not found; the deploy_* tests need it" >&2
fi

# Test-only tools from npm (reference CEL implementation, schema and SARIF validators, Kubernetes
# models), pinned by tests/node/package-lock.json. Reinstalled only when the lockfile changes.
node_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/node"
command -v node >/dev/null && command -v npm >/dev/null || {
  echo "setup: node and npm (Node.js 20) are needed for the test tools" >&2; exit 1; }
stamp="${node_dir}/node_modules/.topoguard-lock"
if ! cmp -s "${node_dir}/package-lock.json" "$stamp" 2>/dev/null; then
  echo "setup: installing test tools from npm (tests/node)" >&2
  npm ci --prefix "$node_dir" --no-audit --no-fund --loglevel=error >/dev/null
  # npm does not run this package's postinstall (chmod) by default.
  chmod u+x "${node_dir}"/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
  cp "${node_dir}/package-lock.json" "$stamp"
fi
