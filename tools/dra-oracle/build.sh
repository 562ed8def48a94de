#!/usr/bin/env bash
# Builds the DRA oracles the differential tests run topoguard against, from the pinned Go module
# here (k8s.io/dynamic-resource-allocation v0.37.2, what kube-scheduler 1.37.2 links):
#   cel-oracle        selectors compiled and evaluated by its cel package, as the allocator does
#   allocator-oracle  claims allocated by structured.NewAllocator(...).Allocate
# into a cache outside the clone keyed by the module's hash (go.mod, go.sum, sources); only what
# is missing is built. The last line of stdout is the binary directory.
#
#   tools/dra-oracle/build.sh            # build if needed (about a minute cold, seconds warm)
#   tools/dra-oracle/build.sh --cached   # build nothing: the directory, or exit 3
# Exit 77 (ctest's skip) when there is no Go toolchain.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-tool-cache.sh
source "$here/../go-tool-cache.sh"
parse_build_args "$0" 11 "$@"

commands=(cel-oracle allocator-oracle)
version=$(required_version "$here/go.mod" k8s.io/dynamic-resource-allocation)
cache_root=${TOPOGUARD_DRA_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topoguard/dra-oracle}
bin_dir=$cache_root/dra-v$version-$(cd "$here" &&
  module_key go.mod go.sum $(find "${commands[@]}" -name '*.go' | sort))
if ((cached_only)); then
  require_built tools/dra-oracle/build.sh "$bin_dir" "${commands[@]}"
  exit 0
fi
go_on_path || { echo "build.sh: no Go toolchain on PATH (need Go >= 1.26)" >&2; exit 77; }
for name in "${commands[@]}"; do
  build_cached "$bin_dir" "$name" "$here" "./$name" ""
done
# Builds of other sources are stale (55 MB each): keep only this one.
find "$cache_root" -mindepth 1 -maxdepth 1 -name 'dra-v*' ! -name "${bin_dir##*/}" \
  -exec rm -rf {} +
echo "$bin_dir"
