#!/usr/bin/env bash
# Builds tools/pcieroot (Kubernetes' deviceattribute helper on a sysfs tree, for the tests) into
# a cache outside the clone keyed by the module's hash; prints the binary's path. Offline when
# the module cache holds the pinned modules (GOFLAGS=-mod=mod is not needed: go.sum is committed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for go_root in /usr/local/go /usr/lib/go-1.26; do
  [[ -x $go_root/bin/go ]] && { PATH=$go_root/bin:$PATH; break; }
done
key=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/topoguard/pcieroot
binary=$cache_root/$key/pcieroot
if [[ ! -x $binary ]]; then
  mkdir -p "$cache_root/$key"
  (cd "$here" && go build -o "$binary.tmp" .) >&2
  mv "$binary.tmp" "$binary"
fi
echo "$binary"
