#!/usr/bin/env bash
# Development certificates for topoguard: a local CA and a server certificate signed by it,
# with the names the API server (service DNS) and local tools (localhost, 127.0.0.1) use.
# Idempotent: an existing, unexpired, matching pair is re-used unless --force is given.
# Keys are written 0600 into the output directory, which is git-ignored; never commit them.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: certs/generate-dev-certs.sh [--out DIR] [--force] [--days N] [--rsa] [--quiet]

  --out DIR   output directory (default: certs/dev next to this script; env TOPOGUARD_CERT_DIR)
  --force     regenerate even if valid certificates exist
  --days N    validity of the server certificate in days (default 365; the CA gets 10x)
  --rsa       RSA 2048 keys instead of ECDSA P-256
  --quiet     print only the file paths (KEY=path lines), nothing else

Writes ca.pem, ca.key, server.pem (leaf only), server-chain.pem (leaf + CA), server.key.
Server names (SANs): topoguard.topoguard.svc, topoguard.topoguard.svc.cluster.local,
topoguard.topoguard, topoguard, localhost, 127.0.0.1, ::1.
USAGE
}

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out_dir="${TOPOGUARD_CERT_DIR:-${script_dir}/dev}"
force=0
days=365
key_type=ec
quiet=0

while [ $# -gt 0 ]; do
  case "$1" in
    --out) out_dir="${2:?--out needs a directory}"; shift 2 ;;
    --out=*) out_dir="${1#--out=}"; shift ;;
    --force) force=1; shift ;;
    --days) days="${2:?--days needs a number}"; shift 2 ;;
    --days=*) days="${1#--days=}"; shift ;;
    --rsa) key_type=rsa; shift ;;
    --quiet) quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "generate-dev-certs: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

if ! [[ "$days" =~ ^[1-9][0-9]*$ ]]; then
  echo "generate-dev-certs: --days must be a positive integer, got '$days'" >&2
  exit 2
fi
command -v openssl >/dev/null || { echo "generate-dev-certs: openssl not found" >&2; exit 1; }

log() { if [ "$quiet" -eq 0 ]; then echo "generate-dev-certs: $*" >&2; fi; }

dns_names=(
  topoguard.topoguard.svc
  topoguard.topoguard.svc.cluster.local
  topoguard.topoguard
  topoguard
  localhost
)
ip_addresses=(127.0.0.1 ::1)
common_name="topoguard.topoguard.svc"

ca_key="${out_dir}/ca.key"
ca_cert="${out_dir}/ca.pem"
server_key="${out_dir}/server.key"
server_cert="${out_dir}/server.pem"
server_chain="${out_dir}/server-chain.pem"

print_paths() {
  echo "CA_CERT=${ca_cert}"
  echo "CA_KEY=${ca_key}"
  echo "TLS_CERT=${server_cert}"
  echo "TLS_CHAIN=${server_chain}"
  echo "TLS_KEY=${server_key}"
}

# Re-use only what still works: every file present, the CA signs the leaf, the key matches the
# leaf, neither expires within a day, and the leaf carries every SAN listed above.
existing_pair_is_usable() {
  local f
  for f in "$ca_key" "$ca_cert" "$server_key" "$server_cert" "$server_chain"; do
    [ -s "$f" ] || return 1
  done
  openssl x509 -checkend 86400 -noout -in "$ca_cert" >/dev/null 2>&1 || return 1
  openssl x509 -checkend 86400 -noout -in "$server_cert" >/dev/null 2>&1 || return 1
  openssl verify -CAfile "$ca_cert" "$server_cert" >/dev/null 2>&1 || return 1
  local cert_pub key_pub
  cert_pub="$(openssl x509 -in "$server_cert" -noout -pubkey 2>/dev/null)" || return 1
  key_pub="$(openssl pkey -in "$server_key" -pubout 2>/dev/null)" || return 1
  [ "$cert_pub" = "$key_pub" ] || return 1
  local sans name
  sans="$(openssl x509 -in "$server_cert" -noout -ext subjectAltName 2>/dev/null)" || return 1
  for name in "${dns_names[@]}"; do
    grep -q "DNS:${name}\(,\|\$\)" <<<"$sans" || return 1
  done
  grep -q "IP Address:127.0.0.1" <<<"$sans" || return 1
  return 0
}

new_key() {
  local path="$1"
  if [ "$key_type" = rsa ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$path" 2>/dev/null
  else
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$path" 2>/dev/null
  fi
  chmod 0600 "$path"
}

mkdir -p "$out_dir"
chmod 0700 "$out_dir" 2>/dev/null || true

if [ "$force" -eq 0 ] && existing_pair_is_usable; then
  log "re-using valid certificates in ${out_dir} (use --force to regenerate)"
  print_paths
  exit 0
fi

log "generating a ${key_type} CA and server certificate in ${out_dir}"
work_dir="$(mktemp -d "${out_dir}/.tmp.XXXXXX")"
trap 'rm -rf "$work_dir"' EXIT

san_list=""
for name in "${dns_names[@]}"; do san_list+="DNS:${name},"; done
for ip in "${ip_addresses[@]}"; do san_list+="IP:${ip},"; done
san_list="${san_list%,}"

new_key "${work_dir}/ca.key"
openssl req -x509 -new -key "${work_dir}/ca.key" -sha256 -days "$((days * 10))" \
  -subj "/O=topoguard development/CN=topoguard development CA" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -addext "subjectKeyIdentifier=hash" \
  -out "${work_dir}/ca.pem" 2>/dev/null

new_key "${work_dir}/server.key"
openssl req -new -key "${work_dir}/server.key" -subj "/O=topoguard development/CN=${common_name}" \
  -out "${work_dir}/server.csr" 2>/dev/null

cat >"${work_dir}/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid,issuer
subjectAltName=${san_list}
EXT

# A random serial per certificate so browsers and curl never see two certs with the same serial.
openssl x509 -req -in "${work_dir}/server.csr" -CA "${work_dir}/ca.pem" \
  -CAkey "${work_dir}/ca.key" -set_serial "0x$(openssl rand -hex 16)" -sha256 -days "$days" \
  -extfile "${work_dir}/server.ext" -out "${work_dir}/server.pem" 2>/dev/null

cat "${work_dir}/server.pem" "${work_dir}/ca.pem" >"${work_dir}/server-chain.pem"
openssl verify -CAfile "${work_dir}/ca.pem" "${work_dir}/server.pem" >/dev/null

# Rename each file into place: a server watching the directory never reads a half-written file.
# The key goes last-but-one and the cert last, so a reloader that keys on the cert sees a pair.
for f in ca.key ca.pem server.key server-chain.pem server.pem; do
  mv -f "${work_dir}/${f}" "${out_dir}/${f}"
done
chmod 0600 "$ca_key" "$server_key"
chmod 0644 "$ca_cert" "$server_cert" "$server_chain"

log "server certificate valid for ${days} days, SANs: ${san_list}"
print_paths
