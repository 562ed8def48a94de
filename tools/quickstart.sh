#!/usr/bin/env bash
# The README's first command: sets up Debian packages, builds build/topoguard, makes development
# certificates (certs/dev/) and runs `topoguard serve` on 127.0.0.1 with the built-in policy.
# Once /readyz answers it prints a curl line that sends an example AdmissionReview, and the
# offline audit command. Ctrl-C stops the server (or --background leaves it running).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: bash tools/quickstart.sh [--background] [--port N] [--metrics-port N] [--no-setup]

  --background       leave the server running and return (prints its pid and log file)
  --port N           webhook port on 127.0.0.1 (default 8443; env TOPOGUARD_PORT)
  --metrics-port N   metrics/health port on 127.0.0.1 (default 9090; env TOPOGUARD_METRICS_PORT)
  --no-setup         skip tools/setup.sh (packages already installed)
USAGE
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${TOPOGUARD_PORT:-8443}"
metrics_port="${TOPOGUARD_METRICS_PORT:-9090}"
background=0
setup=1

while [ $# -gt 0 ]; do
  case "$1" in
    --background) background=1; shift ;;
    --port) port="${2:?}"; shift 2 ;;
    --metrics-port) metrics_port="${2:?}"; shift 2 ;;
    --no-setup) setup=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "quickstart: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

say() { echo "quickstart: $*" >&2; }
die() { echo "quickstart: $*" >&2; exit 1; }

cd "$repo"
if [ "$setup" -eq 1 ]; then
  say "installing the Debian packages building and serving need (tools/setup.sh --build-only)"
  bash tools/setup.sh --build-only
fi

# The build directory of tools/test.sh (build/, optimised) with preset "binary": no tests or
# benchmarks, whose packages serving does not need (preset "release" turns them on again).
say "building build/topoguard"
cmake --preset binary >/dev/null
cmake --build build --target topoguard -j"$(nproc)"
binary="${repo}/build/topoguard"
[ -x "$binary" ] || die "the build did not produce ${binary}"

eval "$(bash certs/generate-dev-certs.sh --quiet)"

port_in_use() { [ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]; }
for p in "$port" "$metrics_port"; do
  if port_in_use "$p"; then
    die "port ${p} is in use on this machine (another topoguard?); pick others with" \
      "--port N --metrics-port N"
  fi
done

log_file="${repo}/build/quickstart-serve.log"
serve=("$binary" serve --tls-cert "$TLS_CERT" --tls-key "$TLS_KEY"
       --listen "127.0.0.1:${port}" --metrics-listen "127.0.0.1:${metrics_port}")
if [ "$background" -eq 1 ]; then
  # setsid: the server outlives this shell and its terminal.
  setsid "${serve[@]}" >"$log_file" 2>&1 </dev/null &
else
  "${serve[@]}" &
fi
server_pid=$!

stop_server() {
  trap - EXIT INT TERM
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ready=0
for _ in $(seq 100); do
  if curl -sf --max-time 2 --cacert "$CA_CERT" "https://localhost:${port}/readyz" >/dev/null 2>&1
  then
    ready=1
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ "$ready" -ne 1 ]; then
  if [ "$background" -eq 1 ]; then tail -20 "$log_file" >&2; fi
  die "topoguard serve did not become ready on https://localhost:${port}/readyz"
fi

review="${repo}/examples/admission/resourceclaimtemplate-create-unaligned.json"
[ -f "$review" ] || review="${repo}/examples/admission/bench-rct-create.json"

cat <<EOF

topoguard serve is ready (pid ${server_pid}): webhook https://localhost:${port} (POST /mutate,
/validate), health and metrics http://127.0.0.1:${metrics_port} (/healthz, /readyz, /metrics),
built-in policy, certificates in ${repo}/certs/dev/.

Send an example AdmissionReview (an unaligned ResourceClaimTemplate) to the mutating endpoint:

  curl -sS --cacert ${CA_CERT} -H 'Content-Type: application/json' --data-binary @${review} https://localhost:${port}/mutate

The same call the way the API server makes it (service DNS name as SNI), to /validate:

  curl -sS --cacert ${CA_CERT} --resolve topoguard.topoguard.svc:${port}:127.0.0.1 -H 'Content-Type: application/json' --data-binary @${review} https://topoguard.topoguard.svc:${port}/validate

The response's "patch" is base64 JSONPatch; the same answer offline, without the server:

  ${binary} review --mode mutate ${review}

And the offline audit of the shipped examples:

  ${binary} audit ${repo}/examples/manifests

EOF

if [ "$background" -eq 1 ]; then
  trap - EXIT INT TERM
  echo "Running in the background; log: ${log_file}. Stop it with: kill ${server_pid}"
  exit 0
fi
echo "Serving in the foreground (logs below, one JSON line per request); Ctrl-C stops it."
wait "$server_pid"
