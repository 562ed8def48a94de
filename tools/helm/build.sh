#!/usr/bin/env bash
# Builds helm v4 (helm.sh/helm/v4/cmd/helm), which installs deploy/helm/topoguard in the tests,
# from the wrapper module pinned in this folder into a cache outside the clone keyed by helm's
# version and the module's hash, the same way as tools/control-plane/build.sh. A no-op once
# built. Prints the binary's size and build time; the last line of stdout is the directory.
#
#   tools/helm/build.sh            # builds helm if it is missing
#   tools/helm/build.sh --cached   # builds nothing: prints the directory when helm is there,
#                                  # else exits 3 (what the tests run, to skip)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-tool-cache.sh
source "$here/../go-tool-cache.sh"
parse_build_args "$0" 9 "$@"

version=$(required_version "$here/go.mod" helm.sh/helm/v4)
cache_root=${TOPOGUARD_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topoguard/helm}
bin_dir=$cache_root/helm-v$version-$(module_key "$here/go.mod" "$here/go.sum")
if ((cached_only)); then
  require_built tools/helm/build.sh "$bin_dir" helm
  exit 0
fi
go_on_path || { echo "build.sh: no Go toolchain on PATH (need Go >= 1.26)" >&2; exit 1; }
# helm's Makefile sets the version; without it `helm version` says v4.3 and nothing more.
build_cached "$bin_dir" helm "$here" helm.sh/helm/v4/cmd/helm \
  "-X helm.sh/helm/v4/internal/version.version=v$version -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
echo "$bin_dir"
