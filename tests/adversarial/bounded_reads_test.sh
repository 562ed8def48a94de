#!/usr/bin/env bash
# Issue 38, attack 4: files that never end or never answer. /dev/zero as a kubeconfig's tokenFile,
# certificate-authority and client-key, as the kubeconfig itself, as a manifest and as the serving
# certificate; a FIFO as a manifest, a policy, a test file, a review and the server's client CA;
# an exec credential plugin that writes without end, one that never exits and one that closes
# its output and never exits. Each ends with a clear error naming the file (or plugin) and why,
# exit 2, within 60 s and under 256 MiB resident.
# Usage: bounded_reads_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$source_dir/tests/cli/cli_support.sh"

readonly max_seconds=60
# 256 MiB above what the binary holds doing nothing. A release build starts at a few MiB; a
# sanitizer build maps hundreds of MiB of instrumented code and data before it reads anything,
# which says nothing about how it reads.
startup_kib=$(/usr/bin/time -f %M "$binary" --version 2>&1 >/dev/null | tail -n 1)
[ "$startup_kib" -ge $((64 * 1024)) ] 2>/dev/null || startup_kib=0
readonly max_rss_kib=$((startup_kib + 256 * 1024))
readonly rss_bound="256 MiB$([ "$startup_kib" -eq 0 ] || echo " above the ${startup_kib} KiB at start")"

# bounded COMMAND...: runs COMMAND (output in $work/out) under a watchdog that kills it past
# max_seconds or past max_rss_kib resident (so a build that reads without a bound fails here
# without taking the machine's memory); its exit status, and its peak RSS in $work/rss.
bounded() {
  /usr/bin/time -f %M -o "$work/rss" "$@" >"$work/out" 2>&1 &
  local timer=$! child="" hwm polls=0
  while kill -0 "$timer" 2>/dev/null; do
    [ -n "$child" ] || read -r child _ <"/proc/$timer/task/$timer/children" 2>/dev/null
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/${child:-none}/status" 2>/dev/null)
    if [ "${hwm:-0}" -ge "$max_rss_kib" ] || [ "$polls" -ge $((max_seconds * 10)) ]; then
      echo "watchdog: killed at ${hwm:-?} KiB after $((polls / 10)) s" >>"$work/out"
      kill -KILL $child 2>/dev/null
    fi
    polls=$((polls + 1))
    sleep 0.1
  done
  wait "$timer"
}

# hostile NAME PATTERN COMMAND...: COMMAND exits 2 with PATTERN in its output, within the time
# and memory bounds.
hostile() {
  local name=$1 pattern=$2
  shift 2
  bounded "$@"
  local status=$?
  check "$name: ends with exit 2 (got $status)" test "$status" -eq 2
  check "$name: says why" grep -qE -- "$pattern" "$work/out"
  local rss
  rss=$(tail -n 1 "$work/rss")
  check "$name: peak RSS ${rss} KiB under ${rss_bound}" test "${rss:-0}" -lt "$max_rss_kib"
  if ! grep -qE -- "$pattern" "$work/out"; then
    head -c 600 "$work/out" >&2
    echo >&2
  fi
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=t \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1

kubeconfig() {  # kubeconfig FILE USER_FIELDS [CLUSTER_FIELDS]
  cat >"$1" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:9
${3:-    insecure-skip-tls-verify: true}
users:
- name: u
  user:
$2
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
YAML
}

kubeconfig "$work/token.yaml" "    tokenFile: /dev/zero"
hostile "tokenFile /dev/zero" '/dev/zero.*character device' \
  "$binary" audit --cluster --kubeconfig "$work/token.yaml"

kubeconfig "$work/ca.yaml" "    token: t" "    certificate-authority: /dev/zero"
hostile "certificate-authority /dev/zero" '/dev/zero.*character device' \
  "$binary" audit --cluster --kubeconfig "$work/ca.yaml"

kubeconfig "$work/client-key.yaml" "    client-certificate: $work/cert.pem
    client-key: /dev/zero"
hostile "client-key /dev/zero" '/dev/zero.*character device' \
  "$binary" audit --cluster --kubeconfig "$work/client-key.yaml"

hostile "kubeconfig /dev/zero" '/dev/zero.*character device' \
  "$binary" audit --cluster --kubeconfig /dev/zero

head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$work/big-token"
kubeconfig "$work/big-token.yaml" "    tokenFile: $work/big-token"
hostile "a 2 MiB tokenFile" 'big-token.*larger than the cap of 64 KiB' \
  "$binary" audit --cluster --kubeconfig "$work/big-token.yaml"

hostile "manifest /dev/zero" '/dev/zero.*character device' "$binary" audit /dev/zero

mkfifo "$work/manifest.yaml" "$work/policy.yaml" "$work/suite.yaml"
hostile "FIFO manifest" 'manifest.yaml.*FIFO' "$binary" audit "$work/manifest.yaml"
mkdir "$work/manifests" && mkfifo "$work/manifests/in.yaml"
hostile "FIFO in a manifest folder" 'in.yaml.*FIFO' "$binary" audit "$work/manifests"
hostile "FIFO policy" 'policy.yaml.*FIFO' \
  "$binary" audit --policies "$work/policy.yaml" "$source_dir/examples/manifests"
hostile "FIFO test file" 'suite.yaml.*FIFO' "$binary" policy test "$work/suite.yaml"
hostile "FIFO review input" 'manifest.yaml.*FIFO' \
  "$binary" review --mode validate "$work/manifest.yaml"

# The server's own files: refused at start (and on a reload, the old ones keep serving).
hostile "serve --tls-cert /dev/zero" '/dev/zero.*character device' \
  "$binary" serve --tls-cert /dev/zero --tls-key "$work/key.pem" --listen 127.0.0.1:0
mkfifo "$work/ca.fifo"
hostile "serve --client-ca FIFO" 'ca.fifo.*FIFO' "$binary" serve --tls-cert "$work/cert.pem" \
  --tls-key "$work/key.pem" --client-ca "$work/ca.fifo" --listen 127.0.0.1:0

# Exec plugins: the credential is fetched before the first request, so no server is needed.
printf '#!/bin/sh\nexec yes "{}"\n' >"$work/flood.sh"
printf '#!/bin/sh\nexec sleep 1000\n' >"$work/sleep.sh"
printf '#!/bin/sh\nexec >&- 2>&-\nexec sleep 1000\n' >"$work/detach.sh"
chmod +x "$work/flood.sh" "$work/sleep.sh" "$work/detach.sh"
for plugin in flood sleep detach; do
  kubeconfig "$work/$plugin.yaml" "    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $work/$plugin.sh
      interactiveMode: Never"
done
hostile "exec plugin writing without end" 'flood.sh.*more than its output cap of 1 MiB' \
  "$binary" audit --cluster --kubeconfig "$work/flood.yaml"
hostile "exec plugin that never exits" 'sleep.sh.*did not finish within 2000 ms' \
  "$binary" audit --cluster --kubeconfig "$work/sleep.yaml" --exec-timeout 2s
hostile "exec plugin that closes its output and never exits" \
  'detach.sh.*did not finish within 2000 ms' \
  "$binary" audit --cluster --kubeconfig "$work/detach.yaml" --exec-timeout 2s

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
