#!/usr/bin/env bash
# Builds the real Kubernetes control plane the e2e suites run against (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, etcd) from the pinned Go modules
# in kube/ and etcd/, into a cache outside the clone keyed by version and by the
# wrapper modules' hash (as setup-envtest keeps its binaries). Only missing binaries
# are built. Prints each binary's size and build time; the last line of stdout is the
# binary directory.
#
#   tools/control-plane/build.sh              # the pinned release (kube/go.mod)
#   tools/control-plane/build.sh --kube 1.36.4 --etcd 3.6.8
#                                             # another release, on demand: the
#                                             # wrapper module is generated (not pinned)
#   tools/control-plane/build.sh --cached     # builds nothing: prints the directory when every
#                                             # binary of the pinned release is there, else
#                                             # exits 3 (what the e2e tests run, to skip)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-tool-cache.sh
source "$here/../go-tool-cache.sh"
kube_version=""
etcd_version=""
cached_only=0
while (($#)); do
  case $1 in
    --cached) cached_only=1; shift ;;
    --kube) kube_version=${2#v}; shift 2 ;;
    --etcd) etcd_version=${2#v}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

pinned_kube=$(required_version "$here/kube/go.mod" k8s.io/kubernetes)
pinned_etcd=$(required_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3)
kube_version=${kube_version:-$pinned_kube}
etcd_version=${etcd_version:-$pinned_etcd}
binaries=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd)

if ((cached_only)); then
  [[ $kube_version == "$pinned_kube" && $etcd_version == "$pinned_etcd" ]] ||
    { echo "build.sh: --cached is for the pinned release only" >&2; exit 2; }
fi

if ! go_on_path && ! ((cached_only)); then
  echo "build.sh: no Go toolchain on PATH (need Go >= 1.26)" >&2
  exit 1
fi

cache_root=${TOPOGUARD_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topoguard/control-plane}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The wrapper module for one release: the pinned one as committed, any other generated
# from k8s.io/kubernetes' own replace block (each staging module at v0.<minor>.<patch>).
module_dir() {
  local kind=$1 version=$2 pinned=$3
  if [[ $version == "$pinned" ]]; then
    echo "$here/$kind"
    return
  fi
  local dir=$work/$kind
  mkdir -p "$dir"
  if [[ $kind == kube ]]; then
    local staging_version="v0.${version#*.}"
    local upstream
    upstream=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    {
      printf 'module topoguard.local/control-plane/kube\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\n' "$version"
      printf 'tool (\n'
      for command in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
        printf '\tk8s.io/kubernetes/cmd/%s\n' "$command"
      done
      printf ')\n\nreplace (\n'
      sed -n '/^replace (/,/^)/p' "$upstream" | awk -v v="$staging_version" '$2 == "=>" { printf "\t%s => %s %s\n", $1, $1, v }'
      printf ')\n'
    } > "$dir/go.mod"
  else
    printf 'module topoguard.local/control-plane/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v%s\n\ntool go.etcd.io/etcd/server/v3\n' "$version" > "$dir/go.mod"
  fi
  (cd "$dir" && go mod tidy >&2)
  echo "$dir"
}

kube_module=$(module_dir kube "$kube_version" "$pinned_kube")
etcd_module=$(module_dir etcd "$etcd_version" "$pinned_etcd")
key=$(module_key "$kube_module/go.mod" "$kube_module/go.sum" "$etcd_module/go.mod" "$etcd_module/go.sum")
bin_dir=$cache_root/k8s-v$kube_version-etcd-v$etcd_version-$key
if ((cached_only)); then
  require_built tools/control-plane/build.sh "$bin_dir" "${binaries[@]}"
  exit 0
fi

# Upstream's release flags (hack/lib/golang.sh): static, trimmed, stripped, versioned.

minor=${kube_version#*.}; minor=${minor%%.*}
kube_ldflags="-X k8s.io/component-base/version.gitVersion=v$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
for command in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
  build_cached "$bin_dir" "$command" "$kube_module" "k8s.io/kubernetes/cmd/$command" "$kube_ldflags" selinux,notest
done
build_cached "$bin_dir" etcd "$etcd_module" go.etcd.io/etcd/server/v3 "" selinux,notest
echo "$bin_dir"
