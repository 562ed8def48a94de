#!/usr/bin/env bash
# Soak test of `topoguard serve`: constant wrk load (mixed /mutate and /validate POSTs of the
# AdmissionReviews in examples/admission/) while the serving certificate is rotated (new leaf from
# the same CA, key then certificate renamed into place), the policy directory is swapped the way a
# ConfigMap volume does it (a new `..<n>` directory, then the `..data` symlink renamed over), and
# SIGHUP is sent. RSS is sampled throughout and its least-squares slope reported.
# Builds nothing: it expects build/topoguard. Too long for ctest; run it by hand or from CI.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'USAGE'
usage: bench/soak.sh [options]

  --minutes N        length of the load (default 30)
  --seconds N        the same in seconds, for short runs
  --topoguard PATH   topoguard binary (default: $TOPOGUARD_BIN or build/topoguard)
  --connections N    wrk connections (default 16, over 2 threads)
  --rotate-every S   seconds between certificate rotations (default 30)
  --swap-every S     seconds between policy swaps (default 45)
  --sighup-every S   seconds between SIGHUPs (default 60)
  --sample-every S   seconds between RSS samples (default 10)
  --keep             keep the temporary directory (certs, policies, logs, samples)

Prints requests, failures (socket errors + non-2xx), rotations and swaps done and the number the
server logged as reloaded, SIGHUPs, RSS at start and end and the fitted RSS slope in KiB/min.
Exit: 0 ok, 1 failed requests, a missed reload or the server died, 2 usage or setup failure.
USAGE
}

topoguard_bin="${TOPOGUARD_BIN:-${repo}/build/topoguard}"
duration=1800
connections=16
rotate_every=30
swap_every=45
sighup_every=60
sample_every=10
keep=0

die() { echo "soak: $*" >&2; exit 2; }
log() { echo "soak: $(date -u +%H:%M:%S) $*" >&2; }
positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive integer, got '$2'"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) positive "$1" "${2:-}"; duration=$(($2 * 60)); shift 2 ;;
    --seconds) positive "$1" "${2:-}"; duration="$2"; shift 2 ;;
    --topoguard) topoguard_bin="${2:?}"; shift 2 ;;
    --connections) positive "$1" "${2:-}"; connections="$2"; shift 2 ;;
    --rotate-every) positive "$1" "${2:-}"; rotate_every="$2"; shift 2 ;;
    --swap-every) positive "$1" "${2:-}"; swap_every="$2"; shift 2 ;;
    --sighup-every) positive "$1" "${2:-}"; sighup_every="$2"; shift 2 ;;
    --sample-every) positive "$1" "${2:-}"; sample_every="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "soak: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

[ -x "$topoguard_bin" ] || die "no topoguard binary at ${topoguard_bin} (build first, or --topoguard)"
for tool in wrk openssl curl ss; do
  command -v "$tool" >/dev/null || die "${tool} not found (tools/setup.sh installs it)"
done
bodies=("${repo}"/examples/admission/*.json)
[ -r "${bodies[0]}" ] || die "no AdmissionReviews in examples/admission/"

work="$(mktemp -d "${TMPDIR:-/tmp}/topoguard-soak.XXXXXX")"
pids=()
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$keep" -eq 1 ]; then log "kept ${work}"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

source "${repo}/tools/free-ports.sh"

# --- certificates -----------------------------------------------------------------------------
eval "$("${repo}/certs/generate-dev-certs.sh" --out "${work}/certs" --quiet)"
# The leaf's names as openssl prints them, in the config syntax (IP Address -> IP).
san="$(openssl x509 -in "$TLS_CERT" -noout -ext subjectAltName | tail -n +2 | tr -d ' ' |
  sed 's/IPAddress:/IP:/g')"
rotations=0
rotation_failures=0
rotate_certificate() {  # a new key and leaf from the same CA, renamed in: key first, then cert
  local next="${work}/certs/next"
  mkdir -p "$next"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "${next}/server.key" 2>/dev/null
  openssl req -new -key "${next}/server.key" -subj "/O=topoguard soak/CN=topoguard" \
    -out "${next}/server.csr" 2>/dev/null
  printf 'subjectAltName=%s\n' "$san" >"${next}/ext.cnf"
  openssl x509 -req -in "${next}/server.csr" -CA "$CA_CERT" -CAkey "$CA_KEY" -CAcreateserial \
    -days 2 -sha256 -extfile "${next}/ext.cnf" -out "${next}/server.pem" 2>/dev/null ||
    { log "certificate generation failed"; rotation_failures=$((rotation_failures + 1)); return 1; }
  mv -f "${next}/server.key" "$TLS_KEY"
  mv -f "${next}/server.pem" "$TLS_CERT"
  rotations=$((rotations + 1))
}

# --- policies: a ConfigMap-like volume, two variants that differ in one action -----------------
policy_dir="${work}/policies"
mkdir -p "$policy_dir"
variant_a="$(cat "${repo}/policies/default.yaml")"
variant_b="$(sed 's/missing-pcie-alignment: {action: deny/missing-pcie-alignment: {action: warn/' \
  "${repo}/policies/default.yaml")"
[ "$variant_a" != "$variant_b" ] || die "policies/default.yaml changed: no variant to swap to"
swaps=0
generation=0
write_policy_generation() {  # the kubelet's atomic writer: new dir, then rename ..data over
  generation=$((generation + 1))
  local dir="..gen${generation}"
  mkdir "${policy_dir}/${dir}"
  if [ $((generation % 2)) -eq 1 ]; then
    printf '%s\n' "$variant_a" >"${policy_dir}/${dir}/policy.yaml"
  else
    printf '%s\n' "$variant_b" >"${policy_dir}/${dir}/policy.yaml"
  fi
  ln -sfn "$dir" "${policy_dir}/..data_tmp"
  mv -T "${policy_dir}/..data_tmp" "${policy_dir}/..data"
  [ -L "${policy_dir}/policy.yaml" ] || ln -s "..data/policy.yaml" "${policy_dir}/policy.yaml"
  [ "$generation" -le 2 ] || rm -rf "${policy_dir}/..gen$((generation - 2))"
}
write_policy_generation

# --- server -----------------------------------------------------------------------------------
ports="$(free_ports 2)" || die "no free ports"
read -r port metrics_port <<<"$ports"
server_log="${work}/topoguard.log"
"$topoguard_bin" serve --tls-cert "$TLS_CERT" --tls-key "$TLS_KEY" --policies "$policy_dir" \
  --listen "127.0.0.1:${port}" --metrics-listen "127.0.0.1:${metrics_port}" \
  --reload-interval 1 >"$server_log" 2>&1 &
server_pid=$!
pids+=("$server_pid")
for i in $(seq 100); do
  curl -sS --fail --max-time 5 --cacert "$CA_CERT" "https://127.0.0.1:${port}/readyz" \
    >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || die "topoguard exited: $(tail -5 "$server_log")"
  [ "$i" -lt 100 ] || die "topoguard did not become ready: $(tail -5 "$server_log")"
  sleep 0.1
done

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/${server_pid}/status" 2>/dev/null || echo 0; }
alive() { kill -0 "$server_pid" 2>/dev/null; }

# --- load and the events around it -----------------------------------------------------------
log "topoguard pid ${server_pid} on :${port}; ${duration}s of wrk (2 threads, ${connections}" \
  "connections, ${#bodies[@]} bodies, /mutate + /validate); rotate every ${rotate_every}s," \
  "swap policies every ${swap_every}s, SIGHUP every ${sighup_every}s, RSS every ${sample_every}s"
bodies_list="$(IFS=:; echo "${bodies[*]}")"
TG_SOAK_BODIES="$bodies_list" wrk -t 2 -c "$connections" -d "${duration}s" --timeout 5s \
  -s "${repo}/bench/soak.lua" "https://127.0.0.1:${port}" >"${work}/wrk.out" 2>&1 &
wrk_pid=$!
pids+=("$wrk_pid")

samples="${work}/rss.tsv"
start="$(date +%s)"
echo "0 $(rss_kib)" >"$samples"
sighups=0
probe_failures=0
next_rotate=$rotate_every next_swap=$swap_every next_sighup=$sighup_every next_sample=$sample_every
while kill -0 "$wrk_pid" 2>/dev/null; do
  sleep 1
  alive || break
  elapsed=$(($(date +%s) - start))
  if [ "$elapsed" -ge "$next_rotate" ]; then
    rotate_certificate || true
    next_rotate=$((next_rotate + rotate_every))
  fi
  if [ "$elapsed" -ge "$next_swap" ]; then
    write_policy_generation
    swaps=$((swaps + 1))
    next_swap=$((next_swap + swap_every))
  fi
  if [ "$elapsed" -ge "$next_sighup" ]; then
    kill -HUP "$server_pid" 2>/dev/null && sighups=$((sighups + 1))
    next_sighup=$((next_sighup + sighup_every))
  fi
  if [ "$elapsed" -ge "$next_sample" ]; then
    echo "${elapsed} $(rss_kib)" >>"$samples"
    # A fresh connection each sample: the handshake must verify against the CA at any moment.
    curl -sS --fail --max-time 5 --cacert "$CA_CERT" "https://127.0.0.1:${port}/readyz" \
      >/dev/null 2>&1 || probe_failures=$((probe_failures + 1))
    next_sample=$((next_sample + sample_every))
  fi
done

server_died=0
if ! alive; then
  server_died=1
  log "topoguard died during the soak: $(tail -5 "$server_log")"
  kill -TERM "$wrk_pid" 2>/dev/null || true
fi
wait "$wrk_pid" 2>/dev/null || true
echo "$(($(date +%s) - start)) $(rss_kib)" >>"$samples"
sleep 3  # let the watcher pick up a rotation or swap made in the last second

# --- report -----------------------------------------------------------------------------------
stats="$(grep '^WRKSTATS ' "${work}/wrk.out" || true)"
[ -n "$stats" ] || { log "wrk printed no results: $(cat "${work}/wrk.out")"; exit 1; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $stats"; }
requests="$(field requests)"
failures=0
for kind in connect read write status timeout; do failures=$((failures + $(field "$kind"))); done
cert_reloads="$(grep -c 'serving certificate reloaded' "$server_log" || true)"
policy_reloads="$(grep -c 'policies reloaded' "$server_log" || true)"
# A poll between the key's and the certificate's rename sees a mismatched pair and refuses it (by
# design); the next poll takes the pair. A failed policy reload is always a problem.
cert_reload_errors="$(grep -c 'serving certificate reload failed' "$server_log" || true)"
policy_reload_errors="$(grep -c 'policy reload failed' "$server_log" || true)"
sighups_logged="$(grep -c 'SIGHUP received' "$server_log" || true)"
# The slope leaves out the first minute of runs of 3 minutes or more (allocator and TLS session
# caches warming up), so it measures growth under steady load.
warmup=0
[ "$duration" -lt 180 ] || warmup=60
slope="$(awk -v from="$warmup" '$1 >= from { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
  END { d = n * sxx - sx * sx; if (n < 2 || d == 0) print "n/a";
        else printf "%.1f", (n * sxy - sx * sy) / d * 60 }' "$samples")"
rss_start="$(awk 'NR == 1 { print $2 }' "$samples")"
rss_end="$(awk 'END { print $2 }' "$samples")"
rss_max="$(awk '$2 > m { m = $2 } END { print m }' "$samples")"
elapsed=$(($(date +%s) - start))

echo
echo "topoguard soak: ${elapsed}s, $(nproc) cores (shared with wrk and anything else running;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "  requests        ${requests} ($(awk -v r="$requests" -v s="$elapsed" 'BEGIN { printf "%.0f", r / (s ? s : 1) }') req/s," \
  "p50 $(field p50_us) us, p99 $(field p99_us) us, max $(field max_us) us)"
echo "  failed          ${failures} (connect $(field connect), read $(field read), write $(field write)," \
  "non-2xx $(field status), timeout $(field timeout)); fresh-connection probes failed: ${probe_failures}"
echo "  rotations       ${rotations}, ${rotation_failures} failed to generate (server logged ${cert_reloads} certificate reloads, ${cert_reload_errors} refused pairs)"
echo "  policy swaps    ${swaps} (server logged ${policy_reloads} policy reloads, ${policy_reload_errors} failed)"
echo "  SIGHUPs         ${sighups} (server logged ${sighups_logged})"
echo "  RSS             start ${rss_start} KiB, end ${rss_end} KiB, max ${rss_max} KiB," \
  "slope ${slope} KiB/min (samples from ${warmup}s on; $(wc -l <"$samples") samples)"
echo "  server          $([ "$server_died" -eq 0 ] && echo alive || echo DIED)"

status=0
[ "$server_died" -eq 0 ] || status=1
[ "$failures" -eq 0 ] && [ "$probe_failures" -eq 0 ] || status=1
# Every rotation and swap must have been picked up (a SIGHUP reload may log one more).
[ "$rotation_failures" -eq 0 ] || status=1
[ "$cert_reloads" -ge "$rotations" ] || { log "fewer certificate reloads than rotations"; status=1; }
[ "$policy_reloads" -ge "$swaps" ] || { log "fewer policy reloads than swaps"; status=1; }
[ "$policy_reload_errors" -eq 0 ] || { log "a policy reload failed; see ${server_log} (--keep)"; status=1; }
[ "$sighups_logged" -ge "$sighups" ] || { log "a SIGHUP was not logged"; status=1; }
exit "$status"
