#!/bin/sh
# A client-go exec credential plugin for the tests: prints an ExecCredential. Driven by the
# environment the kubeconfig's `env` (or the test) gives it:
#   EXEC_API_VERSION  apiVersion to answer with (default client.authentication.k8s.io/v1)
#   EXEC_TOKEN_FILE   the token is this file's content
#   EXEC_CERT_FILE, EXEC_KEY_FILE  answer with a client certificate and key instead
#   EXEC_EXPIRY       expirationTimestamp (RFC 3339)
#   EXEC_RUNS         a file that gets one line per run: the arguments
#   EXEC_INFO_OUT     a file that gets KUBERNETES_EXEC_INFO
#   EXEC_FAIL         fail with this exit status, after a message on stderr
#   EXEC_SLEEP        sleep this many seconds first
#   EXEC_FLOOD        write to stdout without end
#   EXEC_HANG         close stdout and stderr, then sleep this many seconds
set -eu
[ -n "${EXEC_FLOOD:-}" ] && exec yes '{"kind": "ExecCredential"}'
if [ -n "${EXEC_HANG:-}" ]; then
  exec >&- 2>&-
  exec sleep "$EXEC_HANG"
fi
[ -n "${EXEC_RUNS:-}" ] && echo "$*" >> "$EXEC_RUNS"
[ -n "${EXEC_INFO_OUT:-}" ] && printf '%s' "${KUBERNETES_EXEC_INFO:-}" > "$EXEC_INFO_OUT"
[ -n "${EXEC_SLEEP:-}" ] && sleep "$EXEC_SLEEP"
if [ -n "${EXEC_FAIL:-}" ]; then
  echo "exec_plugin.sh: no credentials for you" >&2
  exit "$EXEC_FAIL"
fi
json_lines() { awk '{ printf "%s\\n", $0 }' "$1"; }
status=""
if [ -n "${EXEC_CERT_FILE:-}" ]; then
  status="\"clientCertificateData\": \"$(json_lines "$EXEC_CERT_FILE")\", \"clientKeyData\": \"$(json_lines "$EXEC_KEY_FILE")\""
else
  status="\"token\": \"$(cat "${EXEC_TOKEN_FILE:?}")\""
fi
if [ -n "${EXEC_EXPIRY:-}" ]; then
  status="$status, \"expirationTimestamp\": \"$EXEC_EXPIRY\""
fi
printf '{"kind": "ExecCredential", "apiVersion": "%s", "status": {%s}}\n' \
  "${EXEC_API_VERSION:-client.authentication.k8s.io/v1}" "$status"
