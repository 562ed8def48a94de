# Sourced by the scripts that build test tools from pinned Go wrapper modules into a cache
# outside the clone, keyed by version and by the wrapper modules' hash (as setup-envtest keeps
# its binaries): tools/control-plane/build.sh, tools/helm/build.sh, tools/dra-oracle/build.sh
# and tools/pcieroot/build.sh. Only missing binaries are built; each build prints the binary's
# size and build time on stderr.

# required_version GO_MOD MODULE: the version GO_MOD requires of MODULE, without the v.
required_version() {
  awk -v module="$2" '$1 == "require" { $1 = "" ; $0 = $0 } $1 == module && $2 ~ /^v[0-9]/ { sub(/^v/, "", $2); print $2; exit }' "$1"
}

# go_on_path: puts the machine's Go first on PATH (Debian's golang-go is too old for the pinned
# modules); fails when no go is found at all.
go_on_path() {
  local go_root
  for go_root in /usr/local/go /usr/lib/go-1.26; do
    [[ -x $go_root/bin/go ]] && { PATH=$go_root/bin:$PATH; break; }
  done
  command -v go >/dev/null
}

# module_key FILE...: the cache key of the wrapper modules (their go.mod and go.sum).
module_key() {
  cat "$@" | sha256sum | cut -c1-12
}

# require_built SCRIPT DIR NAME...: prints DIR when every NAME is an executable in it, else
# exits 3 (what SCRIPT --cached answers, so that tests can skip).
require_built() {
  local script=$1 dir=$2 name
  shift 2
  for name in "$@"; do
    [[ -x $dir/$name ]] || { echo "$script: $dir/$name is not built (run $script)" >&2; exit 3; }
  done
  echo "$dir"
}

# build_cached DIR NAME MODULE PACKAGE LDFLAGS [TAGS]: builds PACKAGE from the wrapper module
# MODULE into DIR/NAME unless it is there: static, trimmed, stripped (upstream's release flags).
build_cached() {
  local dir=$1 name=$2 module=$3 package=$4 ldflags=$5 tags=${6:-} start=$SECONDS
  if [[ -x $dir/$name ]]; then
    printf '%-24s cached  %4d MB\n' "$name" "$(( $(stat -c %s "$dir/$name") / 1048576 ))" >&2
    return
  fi
  mkdir -p "$dir"
  (cd "$module" && CGO_ENABLED=0 go build -trimpath ${tags:+-tags "$tags"} -ldflags "-s -w $ldflags" \
      -o "$dir/$name.partial" "$package")
  mv "$dir/$name.partial" "$dir/$name"
  printf '%-24s built   %4d MB  %4d s\n' "$name" "$(( $(stat -c %s "$dir/$name") / 1048576 ))" "$((SECONDS - start))" >&2
}

# parse_build_args SCRIPT LAST_HELP_LINE [ARG]: the one optional argument of these scripts:
# --cached sets cached_only=1 (build nothing), --help prints the script's header comment.
parse_build_args() {
  local script=$1 last=$2
  cached_only=0
  case ${3:-} in
    "") ;;
    --cached) cached_only=1 ;;
    -h|--help) sed -n "2,${last}p" "$script" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$3' (try --help)" >&2; exit 2 ;;
  esac
}
