#!/usr/bin/env bash
# Load benchmark of `topoguard serve` against nginx answering a fixed AdmissionReview and a minimal
# Go net/http webhook (bench/go-webhook), in the same run, over TLS with the same certificate,
# driven by wrk (HTTP/1.1 keep-alive POSTs of a real ResourceClaimTemplate AdmissionReview).
# Expects build/topoguard; builds only the Go server (standard library only, offline, ~1 s).
# wrk and the servers share the machine's cores, so latency under saturation is mostly queueing.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'USAGE'
usage: bench/webhook-load.sh [options]

  --topoguard PATH   topoguard binary (default: $TOPOGUARD_BIN or build/topoguard)
  --duration SEC     seconds per measured run (default: $BENCH_DURATION or 5)
  --rounds N         measured runs per server and scenario, alternating servers; figures are
                     medians (default: $BENCH_ROUNDS or 3)
  --warmup SEC       unmeasured seconds before each run (default: $BENCH_WARMUP or 1)
  --endpoint PATH    /mutate or /validate (default: /mutate)
  --body FILE        AdmissionReview to POST (default: examples/admission/bench-rct-create.json)
  --nginx-workers N  nginx worker processes (default: $BENCH_NGINX_WORKERS or 2)
  --serve-arg ARG    extra argument for `topoguard serve` (repeatable), e.g. --serve-arg=--threads=1
  --no-go            leave out the Go net/http baseline (also left out, with a note, without `go`)
  --strict           also exit 1 when a target is missed (default: only on errors)
  --keep             keep the temporary directory (certs, configs, logs)

Runs: 1 thread/1 connection (latency), 2 threads/16 connections, 2 threads/64 connections,
each N rounds against topoguard, nginx and Go in alternating order. Prints per scenario the
median req/s, p50/p99 latency and server CPU time per request, the errors (socket errors +
non-2xx) of all rounds, peak RSS (VmHWM) and the topoguard/nginx and topoguard/Go ratios.
Exit: 0 ok, 1 errors seen (or a missed target with --strict), 2 usage or setup failure.
USAGE
}

topoguard_bin="${TOPOGUARD_BIN:-${repo}/build/topoguard}"
duration="${BENCH_DURATION:-5}"
rounds="${BENCH_ROUNDS:-3}"
warmup="${BENCH_WARMUP:-1}"
endpoint="/mutate"
body_file="${repo}/examples/admission/bench-rct-create.json"
nginx_workers="${BENCH_NGINX_WORKERS:-2}"
strict=0
keep=0
with_go=1
serve_args=()

while [ $# -gt 0 ]; do
  case "$1" in
    --topoguard) topoguard_bin="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --rounds) rounds="${2:?}"; shift 2 ;;
    --warmup) warmup="${2:?}"; shift 2 ;;
    --endpoint) endpoint="${2:?}"; shift 2 ;;
    --body) body_file="${2:?}"; shift 2 ;;
    --nginx-workers) nginx_workers="${2:?}"; shift 2 ;;
    --serve-arg) serve_args+=("${2:?}"); shift 2 ;;
    --serve-arg=*) serve_args+=("${1#--serve-arg=}"); shift ;;
    --strict) strict=1; shift ;;
    --keep) keep=1; shift ;;
    --no-go) with_go=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "webhook-load: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

die() { echo "webhook-load: $*" >&2; exit 2; }
log() { echo "webhook-load: $*" >&2; }

for n in "$duration" "$nginx_workers" "$rounds"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "durations and worker counts must be positive integers"
done
[[ "$warmup" =~ ^[0-9]+$ ]] || die "--warmup must be a non-negative integer"
case "$endpoint" in /mutate|/validate) ;; *) die "--endpoint must be /mutate or /validate" ;; esac
[ -x "$topoguard_bin" ] || die "no topoguard binary at ${topoguard_bin} (build first, or --topoguard)"
[ -r "$body_file" ] || die "cannot read ${body_file}"
for tool in wrk nginx openssl curl ss; do
  command -v "$tool" >/dev/null || die "${tool} not found (tools/setup.sh installs it)"
done
if [ "$with_go" -eq 1 ] && ! command -v go >/dev/null; then
  log "go not found: skipping the Go net/http baseline (tools/setup.sh installs golang-go)"
  with_go=0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/topoguard-bench.XXXXXX")"
pids=()

stop_pid() {
  local pid="$1" i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do stop_pid "$pid"; done
  if [ "$keep" -eq 1 ]; then
    log "kept ${work}"
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

source "${repo}/tools/free-ports.sh"
ports="$(free_ports 4)" || die "no free ports"
read -r tg_port tg_metrics_port nginx_port go_port <<<"$ports"

# --- certificates and the fixed response ----------------------------------------------------
eval "$("${repo}/certs/generate-dev-certs.sh" --out "${work}/certs" --quiet)"

# nginx answers with exactly what topoguard answers for this review, so both send the same bytes.
"$topoguard_bin" review --mode "${endpoint#/}" "$body_file" >"${work}/response.json" \
  2>"${work}/review.log" || die "topoguard review failed: $(cat "${work}/review.log")"
response="$(tr -d '\n' <"${work}/response.json")"
uid="$(grep -o '"uid": *"[^"]*"' "$body_file" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')"
[ -n "$uid" ] || die "no request uid in ${body_file}"
grep -q "\"${uid}\"" <<<"$response" || die "topoguard review did not echo uid ${uid}"
case "$response" in *'$'*) die "the response holds '\$', which nginx would expand" ;; esac
nginx_body="${response//\\/\\\\}"
nginx_body="${nginx_body//\'/\\\'}"

# --- topoguard --------------------------------------------------------------------------------
"$topoguard_bin" serve --tls-cert "$TLS_CERT" --tls-key "$TLS_KEY" \
  --listen "127.0.0.1:${tg_port}" --metrics-listen "127.0.0.1:${tg_metrics_port}" \
  "${serve_args[@]}" >"${work}/topoguard.log" 2>&1 &
tg_pid=$!
pids+=("$tg_pid")

# --- nginx ------------------------------------------------------------------------------------
mkdir -p "${work}/nginx/logs"
cat >"${work}/nginx/nginx.conf" <<NGINX
daemon off;
master_process on;
worker_processes ${nginx_workers};
pid ${work}/nginx/nginx.pid;
error_log ${work}/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${work}/nginx/body;
  proxy_temp_path ${work}/nginx/proxy;
  fastcgi_temp_path ${work}/nginx/fastcgi;
  uwsgi_temp_path ${work}/nginx/uwsgi;
  scgi_temp_path ${work}/nginx/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_max_body_size 4m;
  client_body_buffer_size 64k;
  server {
    listen 127.0.0.1:${nginx_port} ssl reuseport;
    ssl_certificate ${TLS_CERT};
    ssl_certificate_key ${TLS_KEY};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:tls:1m;
    location / {
      # A static file would get 405 for POST; return answers every method with the fixed body.
      default_type application/json;
      return 200 '${nginx_body}';
    }
  }
}
NGINX
nginx -p "${work}/nginx" -c "${work}/nginx/nginx.conf" -e "${work}/nginx/logs/error.log" \
  >"${work}/nginx/logs/stdout.log" 2>&1 &
nginx_pid=$!
pids+=("$nginx_pid")

# --- Go net/http webhook ----------------------------------------------------------------------
if [ "$with_go" -eq 1 ]; then
  # A cache in the work directory: works without HOME (CI, root on a fresh machine), and the
  # standard library ships compiled, so the build takes about a second. No module is fetched.
  (cd "${repo}/bench/go-webhook" && GOCACHE="${work}/go-cache" GOPROXY=off GOFLAGS='' \
    go build -o "${work}/go-webhook" .) >"${work}/go-build.log" 2>&1 ||
    die "building bench/go-webhook failed: $(cat "${work}/go-build.log")"
  "${work}/go-webhook" --tls-cert "$TLS_CERT" --tls-key "$TLS_KEY" --listen "127.0.0.1:${go_port}" \
    >"${work}/go-webhook.log" 2>&1 &
  go_pid=$!
  pids+=("$go_pid")
fi

wait_until() {
  local what="$1" pid="$2"; shift 2
  local i
  for i in $(seq 100); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  die "${what} did not become ready; log: $(tail -5 "${work}/topoguard.log" \
    "${work}/nginx/logs/error.log" "${work}/go-webhook.log" 2>/dev/null)"
}
curl_tls=(curl -sS --fail --max-time 5 --cacert "$CA_CERT")
wait_until topoguard "$tg_pid" "${curl_tls[@]}" "https://127.0.0.1:${tg_port}/readyz"
wait_until nginx "$nginx_pid" "${curl_tls[@]}" -X POST --data-binary @"$body_file" \
  "https://127.0.0.1:${nginx_port}${endpoint}"
checked_urls=("https://127.0.0.1:${tg_port}${endpoint}"
  "https://127.0.0.1:${nginx_port}${endpoint}")
if [ "$with_go" -eq 1 ]; then
  wait_until go-webhook "$go_pid" "${curl_tls[@]}" "https://127.0.0.1:${go_port}/readyz"
  checked_urls+=("https://127.0.0.1:${go_port}${endpoint}")
fi

# Every server answers this review with HTTP 200 and the request's uid before anything is measured.
for url in "${checked_urls[@]}"; do
  answer="$("${curl_tls[@]}" -H 'Content-Type: application/json' --data-binary @"$body_file" "$url")" ||
    die "POST ${url} failed"
  grep -q "\"${uid}\"" <<<"$answer" || die "POST ${url} did not echo uid ${uid}: ${answer:0:300}"
done

# --- load -------------------------------------------------------------------------------------
wrk_pid=""
run_wrk() {  # threads connections seconds url -> WRKSTATS line on stdout
  local out="${work}/wrk.out"
  TG_BENCH_BODY="$body_file" wrk -t "$1" -c "$2" -d "${3}s" --timeout 5s --latency \
    -s "${repo}/bench/webhook-load.lua" "$4" >"$out" 2>&1 &
  wrk_pid=$!
  pids+=("$wrk_pid")
  wait "$wrk_pid" || die "wrk failed: $(cat "$out")"
  grep '^WRKSTATS ' "$out" || die "wrk printed no results: $(cat "$out")"
}

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" $2"; }

# CPU time (user + system, clock ticks) of a server: the process and, for nginx, its workers.
cpu_ticks() {
  local pid total=0
  for pid in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/${pid}/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
declare -A server_pid=([topoguard]="$tg_pid" [nginx]="$nginx_pid")
ticks_per_second="$(getconf CLK_TCK)"

declare -A result
scenarios=("1 1" "2 16" "2 64")
servers=(topoguard nginx)
declare -A url=(
  [topoguard]="https://127.0.0.1:${tg_port}${endpoint}"
  [nginx]="https://127.0.0.1:${nginx_port}${endpoint}"
)
if [ "$with_go" -eq 1 ]; then
  servers+=(go)
  server_pid[go]="$go_pid"
  url[go]="https://127.0.0.1:${go_port}${endpoint}"
fi

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

log "topoguard pid ${tg_pid} on :${tg_port} ${serve_args[*]}, nginx pid ${nginx_pid} on :${nginx_port}" \
  "(${nginx_workers} workers)$([ "$with_go" -eq 0 ] || echo ", go pid ${go_pid} on :${go_port}");" \
  "${rounds} rounds of ${duration}s per server, ${warmup}s warm-up; POST ${endpoint}"
for scenario in "${scenarios[@]}"; do
  read -r threads connections <<<"$scenario"
  declare -A samples=()
  for round in $(seq "$rounds"); do
    # Reverse the order every other round so a drift of the machine's speed hits all servers alike.
    order=("${servers[@]}")
    if [ $((round % 2)) -eq 0 ]; then
      order=()
      for server in "${servers[@]}"; do order=("$server" "${order[@]}"); done
    fi
    for server in "${order[@]}"; do
      if [ "$warmup" -gt 0 ]; then run_wrk "$threads" "$connections" "$warmup" "${url[$server]}" >/dev/null; fi
      cpu_before="$(cpu_ticks "${server_pid[$server]}")"
      line="$(run_wrk "$threads" "$connections" "$duration" "${url[$server]}")"
      cpu_after="$(cpu_ticks "${server_pid[$server]}")"
      requests="$(field requests "$line")"
      duration_us="$(field duration_us "$line")"
      errors=0
      for kind in connect read write status timeout; do
        errors=$((errors + $(field "$kind" "$line")))
      done
      samples[${server}_rps]+=" $(awk -v r="$requests" -v d="$duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')"
      samples[${server}_p50]+=" $(field p50_us "$line")"
      samples[${server}_p99]+=" $(field p99_us "$line")"
      # Server CPU per request: what the server costs independent of how wrk shares the cores.
      samples[${server}_cpu]+=" $(awk -v t="$((cpu_after - cpu_before))" -v hz="$ticks_per_second" \
        -v r="$requests" 'BEGIN { if (r == 0) print 0; else printf "%.0f", t / hz * 1e6 / r }')"
      key="${server}_${connections}"
      result[${key}_errors]=$(( ${result[${key}_errors]:-0} + errors ))
      result[${key}_detail]+="
    round ${round}: $(sed 's/^WRKSTATS //' <<<"$line")"
      result[body_bytes]="$(field body_bytes "$line")"
    done
  done
  # Each figure is the median over the rounds.
  for server in "${servers[@]}"; do
    for metric in rps p50 p99 cpu; do
      result[${server}_${connections}_${metric}]="$(median <<<"${samples[${server}_${metric}]}")"
    done
  done
  unset samples
done

# --- peak memory ------------------------------------------------------------------------------
vm_hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
tg_rss_kb="$(vm_hwm_kb "$tg_pid")"
nginx_rss_kb=0
nginx_procs=0
for pid in "$nginx_pid" $(pgrep -P "$nginx_pid" || true); do
  nginx_rss_kb=$((nginx_rss_kb + $(vm_hwm_kb "$pid")))
  nginx_procs=$((nginx_procs + 1))
done
go_rss_kb=0
if [ "$with_go" -eq 1 ]; then go_rss_kb="$(vm_hwm_kb "$go_pid")"; fi

# --- report -----------------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.2f", a / b }'; }
us() { awk -v v="$1" 'BEGIN { if (v >= 10000) printf "%.1f ms", v / 1000; else printf "%d us", v }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

echo
echo "topoguard webhook load: POST ${endpoint}, $(basename "$body_file") (${result[body_bytes]} bytes" \
  "compact), response $(wc -c <"${work}/response.json") bytes, medians of ${rounds} rounds of" \
  "${duration}s per server," \
  "$(nproc) cores shared by wrk and servers"
printf '%-22s %-10s %10s %10s %10s %8s %12s\n' "run" "server" "req/s" "p50" "p99" "errors" \
  "cpu/request"
total_errors=0
for scenario in "${scenarios[@]}"; do
  read -r threads connections <<<"$scenario"
  label="${threads} thr, ${connections} conn"
  for server in "${servers[@]}"; do
    key="${server}_${connections}"
    printf '%-22s %-10s %10s %10s %10s %8s %12s\n' "$label" "$server" "${result[${key}_rps]}" \
      "$(us "${result[${key}_p50]}")" "$(us "${result[${key}_p99]}")" "${result[${key}_errors]}" \
      "$(us "${result[${key}_cpu]}")"
    total_errors=$((total_errors + ${result[${key}_errors]}))
    label=""
  done
  printf '%-22s %-10s %10s %10s %10s %8s %12s\n' "" "tg/nginx" \
    "$(ratio "${result[topoguard_${connections}_rps]}" "${result[nginx_${connections}_rps]}")" \
    "$(ratio "${result[topoguard_${connections}_p50]}" "${result[nginx_${connections}_p50]}")" \
    "$(ratio "${result[topoguard_${connections}_p99]}" "${result[nginx_${connections}_p99]}")" "" \
    "$(ratio "${result[topoguard_${connections}_cpu]}" "${result[nginx_${connections}_cpu]}")"
  if [ "$with_go" -eq 1 ]; then
    printf '%-22s %-10s %10s %10s %10s %8s %12s\n' "" "tg/go" \
      "$(ratio "${result[topoguard_${connections}_rps]}" "${result[go_${connections}_rps]}")" \
      "$(ratio "${result[topoguard_${connections}_p50]}" "${result[go_${connections}_p50]}")" \
      "$(ratio "${result[topoguard_${connections}_p99]}" "${result[go_${connections}_p99]}")" "" \
      "$(ratio "${result[topoguard_${connections}_cpu]}" "${result[go_${connections}_cpu]}")"
  fi
done
rss_line="peak RSS (VmHWM): topoguard $(mib "$tg_rss_kb"), nginx $(mib "$nginx_rss_kb")"
rss_line+=" (${nginx_procs} processes summed), ratio $(ratio "$tg_rss_kb" "$nginx_rss_kb")"
if [ "$with_go" -eq 1 ]; then
  rss_line+="; go $(mib "$go_rss_kb"), ratio $(ratio "$tg_rss_kb" "$go_rss_kb")"
fi
echo "$rss_line"
echo "raw wrk results:"
for scenario in "${scenarios[@]}"; do
  read -r threads connections <<<"$scenario"
  for server in "${servers[@]}"; do
    echo "  ${server} t${threads} c${connections}:${result[${server}_${connections}_detail]}"
  done
done

missed=0
check() {  # description ok(0/1)
  if [ "$2" -eq 1 ]; then echo "  ok    $1"; else echo "  MISS  $1"; missed=$((missed + 1)); fi
}
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a >= b) ? 1 : 0 }'; }
echo "targets:"
for connections in 16 64; do
  r="$(ratio "${result[topoguard_${connections}_rps]}" "${result[nginx_${connections}_rps]}")"
  check "throughput ratio at ${connections} connections ${r} >= 0.5" "$(at_least "$r" 0.5)"
done
r="$(ratio "${result[topoguard_1_p99]}" "${result[nginx_1_p99]}")"
check "p99 at one connection ${r}x nginx <= 3x" "$(at_least 3 "$r")"
check "errors ${total_errors} == 0" "$([ "$total_errors" -eq 0 ] && echo 1 || echo 0)"
check "topoguard peak RSS $(mib "$tg_rss_kb") <= 50 MB" "$(at_least 51200 "$tg_rss_kb")"

if [ "$total_errors" -ne 0 ]; then
  log "${total_errors} errors; see wrk's raw results above and ${work}/topoguard.log" \
    "(re-run with --keep to look at it)"
  exit 1
fi
if [ "$strict" -eq 1 ] && [ "$missed" -ne 0 ]; then
  log "${missed} target(s) missed"
  exit 1
fi
exit 0
