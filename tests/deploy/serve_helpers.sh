# Shell helpers for tests that run a real `topoguard serve` (sourced, not executed).

# Sets $work to a new temporary directory; on exit it is removed and the server whose pid the
# test stores in $server_pid (if any) is stopped.
make_work_dir() {
  work="$(mktemp -d)"
  server_pid=""
  trap stop_server_and_remove_work_dir EXIT
}
stop_server_and_remove_work_dir() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}

source "$(dirname "${BASH_SOURCE[0]}")/../../tools/free-ports.sh"

# Waits until https://127.0.0.1:PORT/readyz answers 200, or fails after ~20 s or when PID exits.
wait_ready() {
  local port="$1" ca="$2" pid="$3" attempt
  for attempt in $(seq 1 100); do
    if curl -sf --max-time 2 --cacert "$ca" "https://127.0.0.1:${port}/readyz" >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "topoguard serve exited before it was ready" >&2; return 1; }
    sleep 0.2
  done
  echo "topoguard serve on port ${port} not ready after 20 s" >&2
  return 1
}

# POSTs an AdmissionReview file to https://127.0.0.1:PORT/PATH and prints the response body.
post_review() {
  local port="$1" ca="$2" path="$3" review="$4"
  curl -sS --fail --max-time 10 --cacert "$ca" -H 'Content-Type: application/json' \
    --data-binary "@${review}" "https://127.0.0.1:${port}${path}"
}
