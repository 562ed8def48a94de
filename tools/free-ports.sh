# Sourced, not executed: free_ports COUNT prints COUNT distinct TCP ports, space-separated, for
# servers on 127.0.0.1. They lie outside the kernel's ephemeral range, because a client
# connection's local port there (even one in TIME_WAIT, without SO_REUSEADDR) makes a later
# bind() fail with EADDRINUSE, and no socket in any state holds them at the time of the call.
free_ports() {
  local count="${1:-1}" low high first last port attempt chosen=" " found=0
  if ! command -v ss >/dev/null; then
    echo "free_ports: ss not found (iproute2: run tools/setup.sh)" >&2
    return 1
  fi
  read -r low high </proc/sys/net/ipv4/ip_local_port_range
  first=10000
  last=$((low - 1))
  if [ "$((last - first))" -lt 1000 ]; then  # an ephemeral range that starts low: look above it
    first=$((high + 1))
    last=65535
  fi
  if [ "$((last - first))" -lt 1000 ]; then  # it covers nearly everything: any unprivileged port
    first=1024
    last=65535
  fi
  for ((attempt = 0; attempt < 1000 && found < count; attempt++)); do
    port=$((first + (RANDOM * 32768 + RANDOM) % (last - first + 1)))
    case "$chosen" in *" ${port} "*) continue ;; esac
    [ -z "$(ss -Hant "sport = :${port}")" ] || continue
    chosen+="${port} "
    found=$((found + 1))
  done
  if [ "$found" -lt "$count" ]; then
    echo "free_ports: found only ${found} of ${count} free ports in ${first}-${last}" >&2
    return 1
  fi
  chosen="${chosen# }"
  echo "${chosen% }"
}
