#!/usr/bin/env bash
# Builds the image twice with tools/build-image.sh from the already built binary (same commit ->
# same manifest digest), checks its config (user, entrypoint, labels) and SBOM, unpacks it and
# runs it with chroot as user 65532: `topoguard --version`, then `topoguard serve` answering a
# review over TLS on 127.0.0.1 from inside the rootfs (the image is self-contained).
# usage: image_test.sh TOPOGUARD_BINARY SOURCE_DIR SANITIZED(0|1)
# Exits 77 (skipped) on sanitizer builds (the image carries the release binary) or without root
# (chroot and ownership need it).
set -euo pipefail

topoguard="${1:?topoguard binary}"
source_dir="${2:?source directory}"
sanitized="${3:-0}"
if [ "$sanitized" = 1 ]; then echo "image_test: skipped on sanitizer builds"; exit 77; fi
if [ "$(id -u)" -ne 0 ]; then echo "image_test: skipped, needs root for chroot"; exit 77; fi
for tool in umoci skopeo curl python3; do
  command -v "$tool" >/dev/null || { echo "image_test: $tool not found (run tools/setup.sh)" >&2; exit 1; }
done
source "${source_dir}/tests/deploy/serve_helpers.sh"

make_work_dir
fail() { echo "FAIL $*" >&2; exit 1; }

"${source_dir}/tools/build-image.sh" --binary "$topoguard" --out "${work}/first" | tee "${work}/first.txt"
"${source_dir}/tools/build-image.sh" --binary "$topoguard" --out "${work}/second" >"${work}/second.txt"
first_digest="$(cat "${work}/first/digest")"
[ "$first_digest" = "$(cat "${work}/second/digest")" ] ||
  fail "two builds from the same commit differ: ${first_digest} vs $(cat "${work}/second/digest")"
echo "reproducible: both builds are ${first_digest}"

version="$("$topoguard" --version | awk '{print $NF}')"
layout="${work}/first/oci"
revision="$(git -C "$source_dir" rev-parse HEAD)"

# Config, docker-archive and SBOM.
python3 - "$layout" "$first_digest" "$version" "$revision" "${work}/first" <<'PY'
import hashlib, json, sys, tarfile
layout, digest, version, revision, out = sys.argv[1:]
blob = lambda d: f"{layout}/blobs/{d.replace(':', '/')}"
manifest = json.load(open(blob(digest)))
config = json.load(open(blob(manifest["config"]["digest"])))["config"]
def expect(what, actual, wanted):
    if actual != wanted:
        sys.exit(f"FAIL {what}: {actual!r}, expected {wanted!r}")
expect("user", config.get("User"), "65532:65532")
expect("entrypoint", config.get("Entrypoint"), ["/usr/local/bin/topoguard"])
expect("cmd", config.get("Cmd"), ["serve"])
labels = config.get("Labels", {})
expect("version label", labels.get("org.opencontainers.image.version"), version)
expect("revision label", labels.get("org.opencontainers.image.revision"), revision)
if not labels.get("org.opencontainers.image.created", "").endswith("Z"):
    sys.exit(f"FAIL created label: {labels}")

# What `docker load` (and kind, ctr) check: manifest.json names a config and layer files that
# exist, and each layer's sha256 is the config's diff_id for it.
with tarfile.open(f"{out}/topoguard-{version}.tar") as archive:
    loaded = json.load(archive.extractfile("manifest.json"))
    expect("docker-archive images", len(loaded), 1)
    archived_config = json.load(archive.extractfile(loaded[0]["Config"]))
    layer_digests = ["sha256:" + hashlib.sha256(archive.extractfile(layer).read()).hexdigest()
                     for layer in loaded[0]["Layers"]]
# skopeo writes the fully qualified name, which is what the kubelet resolves the short one to.
expect("docker-archive tag", loaded[0]["RepoTags"], [f"docker.io/topoguard/topoguard:{version}"])
expect("docker-archive layers", layer_digests, archived_config["rootfs"]["diff_ids"])
expect("docker-archive user", archived_config["config"]["User"], "65532:65532")

sbom = json.load(open(f"{out}/topoguard-{version}.spdx.json"))
expect("SPDX version", sbom["spdxVersion"], "SPDX-2.3")
debian = [p for p in sbom["packages"] if p["SPDXID"].startswith("SPDXRef-Package-deb-")]
if not debian or any(not p["versionInfo"] for p in debian):
    sys.exit("FAIL SBOM has no Debian packages with versions")
names = {p["name"] for p in debian}
for needed in ("libc6", "libssl3", "libstdc++6"):
    if needed not in names:
        sys.exit(f"FAIL SBOM lacks {needed}: {sorted(names)}")
print(f"config, archive and SBOM ok: {len(debian)} Debian packages")
PY

# The rootfs holds the binary, the ldd libraries with the loader, passwd/group and licences only.
umoci unpack --rootless --image "${layout}:${version}" "${work}/bundle" >/dev/null
rootfs="${work}/bundle/rootfs"
(cd "$rootfs" && find . -type f | sort) >"${work}/files.txt"
unexpected="$(grep -vE '^\./(usr/local/bin/topoguard|etc/(passwd|group)|usr/share/doc/[^/]+/copyright|(usr/)?lib(64|/x86_64-linux-gnu)?/[^/]+\.so[.0-9]*)$' "${work}/files.txt" || true)"
[ -z "$unexpected" ] || fail "files the image should not hold: ${unexpected}"
[ ! -e "${rootfs}/bin/sh" ] || fail "the image has a shell"
grep -q '^nonroot:x:65532:65532:' "${rootfs}/etc/passwd" || fail "no nonroot user 65532"
echo "rootfs: $(wc -l <"${work}/files.txt") files"

# Run as the image's user, inside nothing but the image's files.
run_in_image() { chroot --userspec=65532:65532 "$rootfs" /usr/local/bin/topoguard "$@"; }
[ "$(run_in_image --version | awk '{print $NF}')" = "$version" ] || fail "topoguard --version in the image"

mkdir -p "${rootfs}/etc/topoguard/tls" "${rootfs}/etc/topoguard/policies"
eval "$("${source_dir}/certs/generate-dev-certs.sh" --out "${work}/certs" --quiet)"
install -m 0444 "$TLS_CERT" "${rootfs}/etc/topoguard/tls/tls.crt"
install -m 0400 -o 65532 -g 65532 "$TLS_KEY" "${rootfs}/etc/topoguard/tls/tls.key"
install -m 0444 "${source_dir}/policies/default.yaml" "${rootfs}/etc/topoguard/policies/default.yaml"
ports="$(free_ports 2)"
read -r port metrics_port <<<"$ports"
# Not through run_in_image: a backgrounded function is a subshell, and stopping $! would leave
# the server running. chroot execs topoguard, so $! is the server itself.
chroot --userspec=65532:65532 "$rootfs" /usr/local/bin/topoguard serve --listen "127.0.0.1:${port}" --metrics-listen "127.0.0.1:${metrics_port}" \
  --tls-cert /etc/topoguard/tls/tls.crt --tls-key /etc/topoguard/tls/tls.key \
  --policies /etc/topoguard/policies --threads 1 >"${work}/serve.log" 2>&1 &
server_pid=$!
wait_ready "$port" "$CA_CERT" "$server_pid" || { cat "${work}/serve.log" >&2; exit 1; }

review="${source_dir}/examples/admission/resourceclaimtemplate-create-unaligned.json"
post_review "$port" "$CA_CERT" /mutate "$review" >"${work}/response.json"
python3 - "$review" "${work}/response.json" <<'PY'
import json, sys
request = json.load(open(sys.argv[1]))["request"]
response = json.load(open(sys.argv[2]))
if response.get("kind") != "AdmissionReview" or response["response"]["uid"] != request["uid"]:
    sys.exit(f"FAIL not an answer to the review: {response}")
if response["response"].get("patchType") != "JSONPatch":
    sys.exit(f"FAIL the unaligned template was not patched: {response['response']}")
print(f"served from the image: allowed={response['response']['allowed']}, patched")
PY
echo "image_test: ok"
