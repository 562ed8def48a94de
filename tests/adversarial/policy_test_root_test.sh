#!/usr/bin/env bash
# Issue 38, attack 3: a suite from a pull request names files outside the reviewer's tree. Each
# field (policies, resources, clusterState, patched) with a `..` path, an absolute path, a
# symlink and a folder holding a symlink that leads out is an input error at its file, line and
# field; `--update` writes nothing outside the root and only `patched` files the run read. With
# strace on the machine, no file outside the root is even opened.
# Usage: policy_test_root_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$source_dir/tests/cli/cli_support.sh"

root="$work/root"
outside="$work/outside"
mkdir -p "$root/folder" "$outside"
cp "$source_dir/examples/manifests/unaligned-template-v1.yaml" "$root/in.yaml"
# What an attacker wants to read (a manifest, so a plain run would print it in a diff) or write.
cp "$root/in.yaml" "$outside/secret.yaml"
printf 'kind: Keep\nmetadata: {name: untouched}\n' >"$outside/target.yaml"
cp "$outside/target.yaml" "$work/target.orig"
ln -s "$outside/secret.yaml" "$root/link.yaml"
ln -s "$outside/secret.yaml" "$root/folder/link.yaml"
ln -s "$outside" "$root/outlink"

# strace, when it can trace here, logs every open of the run and the file each one reached.
# LeakSanitizer cannot run under ptrace (it fails the exit status), so an ASan build checks leaks
# in the untraced runs only.
traced() {  # traced LOG COMMAND...: runs COMMAND (under strace when it works)
  local log=$1
  shift
  if [ -n "$strace_ok" ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+${ASAN_OPTIONS}:}detect_leaks=0" \
      strace -f -qq -y -e trace=open,openat -o "$log" "$@"
  else
    : >"$log"
    "$@"
  fi
}
strace_ok=""
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null; then
  strace_ok=1
fi
opened_outside() {  # opened_outside LOG: a successful open that landed under $outside (-y
  grep -F "<$outside/" "$1"  # prints the file a descriptor is, symlinks and .. resolved)
}

suite() {  # suite FIELD PATH: a test whose FIELD names PATH
  printf 'apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\nmetadata: {name: t}\n'
  [ "$1" = resources ] || printf 'resources: [in.yaml]\n'
  case "$1" in
    patched) printf 'results:\n- resource: {kind: ResourceClaimTemplate, namespace: inference, name: gpu-nic-unaligned}\n  patched: %s\n' "$2" ;;
    *) printf '%s: [%s]\nresults:\n- resource: {kind: ResourceClaimTemplate, namespace: inference, name: gpu-nic-unaligned}\n  rule: missing-pcie-alignment\n  action: deny\n' "$1" "$2" ;;
  esac
}

n=0
for field in policies resources clusterState patched; do
  for path in ../outside/secret.yaml "$outside/secret.yaml" link.yaml outlink/secret.yaml folder/../../outside/secret.yaml folder; do
    [ "$field" = patched ] && [ "$path" = folder ] && continue
    n=$((n + 1))
    file="suite-$n.yaml"
    suite "$field" "$path" >"$root/$file"
    pointer="/$field/0"
    [ "$field" = patched ] && pointer="/results/0/patched"
    (cd "$root" && traced "$work/trace-$n" "$binary" policy test "$file" >"$work/out-$n" 2>&1)
    status=$?
    what="$field: $path"
    check "$what: an input error (exit 2)" test "$status" -eq 2
    check "$what: names file, line and field" grep -qE "^ERROR .*$file:[0-9]+: $pointer: .*resolves outside the root" "$work/out-$n"
    check "$what: nothing outside the root opened" test -z "$(opened_outside "$work/trace-$n")"
    (cd "$root" && traced "$work/trace-u$n" "$binary" policy test --update "$file" >/dev/null 2>&1)
    check "$what: --update opens nothing outside" test -z "$(opened_outside "$work/trace-u$n")"
  done
done

# --update with a patched file outside the root (it differs from the patched object, so the
# original code rewrote it): refused, the file is as it was.
suite patched ../outside/target.yaml >"$root/update-outside.yaml"
(cd "$root" && "$binary" policy test --update update-outside.yaml >"$work/update-outside" 2>&1)
check "--update outside: an input error" test $? -eq 2
check "--update outside: the target is untouched" cmp "$work/target.orig" "$outside/target.yaml"
check "--update outside: nothing new outside" test "$(ls "$outside" | wc -l)" -eq 2

# --root names the tree: the same suite inside a wider root reads the file and runs.
(cd "$root" && "$binary" policy test --root "$work" suite-7.yaml >"$work/wide" 2>&1)
check "--root wider: the path is inside, the test runs" test $? -le 1
check "--root wider: no root error" test -z "$(grep 'outside the root' "$work/wide")"
"$binary" policy test --root "$work/no-such-dir" "$root/suite-7.yaml" >"$work/bad-root" 2>&1
check "--root missing: a usage error" test $? -eq 2

# A patched file the run did not read (absent): --update creates nothing.
suite patched expected/absent.yaml >"$root/update-absent.yaml"
(cd "$root" && "$binary" policy test --update update-absent.yaml >/dev/null 2>&1)
check "--update: a patched file the run did not read is not created" test ! -e "$root/expected/absent.yaml"

# A patched file inside the root that the run read is rewritten, as before.
mkdir -p "$root/expected"
cp "$work/target.orig" "$root/expected/read.yaml"
suite patched expected/read.yaml >"$root/update-inside.yaml"
(cd "$root" && "$binary" policy test --update update-inside.yaml >"$work/update-inside" 2>&1)
check "--update inside: the run passes after the rewrite" test $? -eq 0
check "--update inside: the read patched file is rewritten" grep -q 'gpu-nic-unaligned' "$root/expected/read.yaml"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
