#!/usr/bin/env bash
# tools/free-ports.sh: distinct ports outside the kernel's ephemeral range (where a client's
# TIME_WAIT socket would make the server's bind fail), none with a socket on it, and a clear
# failure, not a port, when ss is missing or reports every candidate in use.
# usage: free_ports_test.sh SOURCE_DIR
set -euo pipefail

source "${1:?source directory}/tools/free-ports.sh"
fail() { echo "FAIL $*" >&2; exit 1; }

read -r low high </proc/sys/net/ipv4/ip_local_port_range
ports="$(free_ports 40)"
read -r -a list <<<"$ports"
[ "${#list[@]}" -eq 40 ] || fail "asked for 40 ports, got '${ports}'"
[ "$(printf '%s\n' "${list[@]}" | sort -u | wc -l)" -eq 40 ] || fail "repeated ports in '${ports}'"
for port in "${list[@]}"; do
  [[ "$port" =~ ^[0-9]+$ ]] || fail "not a port: '${port}'"
  [ "$port" -ge 1024 ] && [ "$port" -le 65535 ] || fail "port ${port} outside 1024-65535"
  if [ "$port" -ge "$low" ] && [ "$port" -le "$high" ]; then
    fail "port ${port} inside the ephemeral range ${low}-${high}"
  fi
  [ -z "$(ss -Hant "sport = :${port}")" ] || fail "port ${port} has a socket on it"
done

# Every candidate reported in use: an error naming the range, after a bounded number of tries.
busy="$(ss() { echo "ESTAB 0 0 127.0.0.1:1 127.0.0.1:2"; }; free_ports 1 2>&1)" &&
  fail "free_ports succeeded with every port in use: '${busy}'"
[[ "$busy" == *"found only 0 of 1 free ports"* ]] || fail "unclear error: '${busy}'"

# Without ss there is no way to tell a free port: an error, not an unchecked port.
missing="$(PATH=/nonexistent free_ports 1 2>&1)" && fail "free_ports succeeded without ss"
[[ "$missing" == *"ss not found"* ]] || fail "unclear error: '${missing}'"

echo "free_ports_test: ok"
