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
cached_only=0
case ${1:-} in
  --cached) cached_only=1 ;;
  "") ;;
  -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "build.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

for go_root in /usr/local/go /usr/lib/go-1.26; do
  [[ -x $go_root/bin/go ]] && { PATH=$go_root/bin:$PATH; break; }
done
commands=(cel-oracle allocator-oracle)
key=$(cd "$here" && cat go.mod go.sum $(find "${commands[@]}" -name '*.go' | sort) | sha256sum | cut -c1-12)
cache_root=${TOPOGUARD_DRA_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topoguard/dra-oracle}
bin_dir=$cache_root/dra-v0.37.2-$key

missing=()
for name in "${commands[@]}"; do
  [[ -x $bin_dir/$name ]] || missing+=("$name")
done
if ((${#missing[@]})); then
  if ((cached_only)); then
    echo "build.sh: $bin_dir lacks ${missing[*]} (run tools/dra-oracle/build.sh)" >&2
    exit 3
  fi
  command -v go >/dev/null || { echo "build.sh: no Go toolchain on PATH (need Go >= 1.26)" >&2; exit 77; }
  mkdir -p "$bin_dir"
  for name in "${missing[@]}"; do
    (cd "$here" && CGO_ENABLED=0 go build -trimpath -o "$bin_dir/$name.partial" "./$name")
    mv "$bin_dir/$name.partial" "$bin_dir/$name"
  done
  # Builds of other sources are stale (55 MB each): keep only this one.
  find "$cache_root" -mindepth 1 -maxdepth 1 -name 'dra-v*' ! -name "${bin_dir##*/}" \
    -exec rm -rf {} +
fi
echo "$bin_dir"
