#!/usr/bin/env bash
# The Go net/http baseline of bench/webhook-load.sh stays buildable offline with the standard
# library alone: gofmt-clean, `go vet` clean, builds. Skipped (77) where Go is not installed,
# since the load script then skips the baseline too.
set -euo pipefail
source_dir="${1:?usage: go_webhook_test.sh SOURCE_DIR}/bench/go-webhook"

command -v go >/dev/null || { echo "go not found: skipped"; exit 77; }

work="$(mktemp -d "${TMPDIR:-/tmp}/topoguard-go-webhook.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Own cache (works without HOME), no module proxy: a dependency beyond the standard library fails.
export GOCACHE="${work}/go-cache" GOPROXY=off GOFLAGS='' GO111MODULE=on
cd "$source_dir"

unformatted="$(gofmt -l .)"
[ -z "$unformatted" ] || { echo "not gofmt-formatted: ${unformatted}"; exit 1; }
go vet ./...
go build -o "${work}/go-webhook" .
usage="$("${work}/go-webhook" --help 2>&1)"
for flag in -tls-cert -tls-key -listen; do
  grep -q -- "$flag" <<<"$usage" || { echo "go-webhook --help lacks ${flag}: ${usage}"; exit 1; }
done
echo "bench/go-webhook: gofmt, vet and build ok"
