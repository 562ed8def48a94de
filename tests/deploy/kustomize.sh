# Sourced by the deploy tests that render deploy/webhook. Rendering needs kubectl's built-in
# kustomize v5 (components, replacements); Debian 12's kubectl 1.20 has an older one. The
# control plane's kubectl (1.37, kustomize v5.8) serves when no kubectl is on PATH. Without
# either the test exits 77, which CTest reports as Skipped with this message, never as passed.
require_kustomize_v5() {
  local version="" control_plane
  # Without one on PATH, the kubectl of the control plane the e2e tests run
  # (tools/control-plane/build.sh, which tools/setup.sh runs), if it is built.
  if ! command -v kubectl >/dev/null &&
    control_plane="$(bash "$(dirname "${BASH_SOURCE[0]}")/../../tools/control-plane/build.sh" --cached 2>/dev/null)"; then
    PATH="${control_plane}:${PATH}"
  fi
  if command -v kubectl >/dev/null; then
    version="$(kubectl version --client -o json 2>/dev/null |
      python3 -c 'import json, sys; print(json.load(sys.stdin).get("kustomizeVersion", ""))' \
      2>/dev/null || true)"
  fi
  case "$version" in
    v[5-9].*|v[1-9][0-9]*) return 0 ;;
  esac
  echo "SKIPPED: $1 renders deploy/webhook with kubectl's kustomize v5 (kubectl 1.27+, from" \
    "pkgs.k8s.io); found ${version:-no kubectl with kustomize}" >&2
  exit 77
}
