#!/usr/bin/env bash
# Builds tools/pcieroot (Kubernetes' deviceattribute helper on a sysfs tree, for the inventory
# tests) from the wrapper module pinned here into a cache outside the clone keyed by the module's
# hash, the same way as tools/control-plane/build.sh. A no-op once built. The last line of stdout
# is the binary's path.
#
#   tools/pcieroot/build.sh            # builds it if it is missing (about 2 minutes cold)
#   tools/pcieroot/build.sh --cached   # builds nothing: prints the path when it is there, else
#                                      # exits 3 (what the test runs, to skip)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-tool-cache.sh
source "$here/../go-tool-cache.sh"
parse_build_args "$0" 9 "$@"

cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/topoguard/pcieroot
bin_dir=$cache_root/$(module_key "$here/go.mod" "$here/go.sum" "$here/main.go")
if ((cached_only)); then
  require_built tools/pcieroot/build.sh "$bin_dir" pcieroot >/dev/null
else
  go_on_path || { echo "build.sh: no Go toolchain on PATH (need Go >= 1.26)" >&2; exit 1; }
  build_cached "$bin_dir" pcieroot "$here" . ""
fi
echo "$bin_dir/pcieroot"
