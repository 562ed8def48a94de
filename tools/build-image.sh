#!/usr/bin/env bash
# Builds the topoguard container image without a container engine: an OCI layout made with umoci,
# a docker-archive tar made from it with skopeo (for `docker load`, `kind load image-archive`,
# `ctr images import`), and an SPDX 2.3 JSON SBOM of the Debian packages the image carries.
# The image holds the binary, exactly the shared libraries ldd lists plus the loader, /etc/passwd
# and /etc/group with user nonroot (65532), and the copyright files of the Debian packages those
# files come from; nothing else (no shell). It is reproducible: every timestamp is
# SOURCE_DATE_EPOCH (default: the commit time), so the same commit gives the same digest.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/build-image.sh [--binary PATH] [--out DIR] [--rootfs-only DIR]

  --binary PATH      the topoguard binary to package (default: build/topoguard, built with
                     the release preset when missing)
  --out DIR          output directory (default: build/image)
  --rootfs-only DIR  only assemble the image's file tree into DIR (used by the Containerfile)

Outputs in DIR: oci/ (OCI layout, tag = version), topoguard-VERSION.tar (docker-archive,
topoguard/topoguard:VERSION), topoguard-VERSION.spdx.json (SBOM), digest (manifest digest).
USAGE
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary=""
out_dir="${repo}/build/image"
rootfs_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --out) out_dir="${2:?--out needs a directory}"; shift 2 ;;
    --rootfs-only) rootfs_only="${2:?--rootfs-only needs a directory}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-image: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

die() { echo "build-image: $*" >&2; exit 1; }
log() { echo "build-image: $*" >&2; }

if [ -z "$binary" ]; then
  binary="${repo}/build/topoguard"
  if [ ! -x "$binary" ]; then
    log "building ${binary}"
    (cd "$repo" && cmake --preset release >/dev/null && cmake --build build --target topoguard)
  fi
fi
[ -x "$binary" ] || die "no executable at ${binary}"
binary="$(realpath "$binary")"

# --- the file tree ------------------------------------------------------------------------------

# Shared objects the binary loads, as ldd prints them (path inside the image), loader included.
shared_objects() {
  ldd "$binary" | awk '
    /=> not found/ { print "MISSING " $1; next }
    $2 == "=>" && $3 ~ /^\// { print $3; next }
    $1 ~ /^\// { print $1 }'
}

# The Debian package owning a file, trying the path as given and as resolved (merged /usr).
owning_package() {
  local path="$1" candidate
  for candidate in "$path" "$(realpath "$path")" "/usr${path}" "${path#/usr}"; do
    if dpkg-query -S "$candidate" >/dev/null 2>&1; then
      dpkg-query -S "$candidate" 2>/dev/null | head -n1 | cut -d: -f1
      return 0
    fi
  done
  return 1
}

# Writes the image's files into $1; prints "package" lines for the Debian packages they come from.
assemble_rootfs() {
  local root="$1" object package
  rm -rf "$root"
  mkdir -p "${root}/usr/local/bin" "${root}/etc"
  install -m 0755 "$binary" "${root}/usr/local/bin/topoguard"
  # Debug sections are for debugging the build, not for running it.
  strip --strip-debug "${root}/usr/local/bin/topoguard"

  local packages=()
  while read -r object; do
    [[ "$object" != MISSING* ]] || die "ldd cannot find ${object#MISSING } for ${binary}"
    mkdir -p "${root}$(dirname "$object")"
    # The file itself, never a symlink: the image has exactly the names ldd resolves.
    install -m 0755 "$(realpath "$object")" "${root}${object}"
    package="$(owning_package "$object")" || die "no Debian package owns ${object}"
    packages+=("$package")
  done < <(shared_objects)

  cat >"${root}/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
  cat >"${root}/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
  chmod 0644 "${root}/etc/passwd" "${root}/etc/group"

  local unique
  unique="$(printf '%s\n' "${packages[@]}" | sort -u)"
  for package in $unique; do
    local copyright="/usr/share/doc/${package}/copyright"
    [ -r "$copyright" ] || die "${package} has no ${copyright}"
    install -D -m 0644 "$(realpath "$copyright")" "${root}${copyright}"
  done
  chmod -R u+rwX,go+rX,go-w "$root"
  printf '%s\n' $unique
}

# Every timestamp in the tree is the commit's, so the layer tar is the same on every build.
normalise_times() {
  find "$1" -exec touch --no-dereference --date="@${SOURCE_DATE_EPOCH}" {} +
}

if [ -n "$rootfs_only" ]; then
  : "${SOURCE_DATE_EPOCH:=0}"
  assemble_rootfs "$rootfs_only" >/dev/null
  normalise_times "$rootfs_only"
  exit 0
fi

# --- the image ----------------------------------------------------------------------------------

for tool in umoci skopeo python3 git; do
  command -v "$tool" >/dev/null || die "$tool not found (tools/setup.sh installs it)"
done

version="$("$binary" --version | awk '{print $NF}')"
tag_in_manifests="$(sed -n 's/^ *newTag: *"\{0,1\}\([0-9.]*\)"\{0,1\}$/\1/p' \
  "${repo}/deploy/webhook/base/kustomization.yaml")"
[ "$version" = "$tag_in_manifests" ] ||
  die "${binary} is version ${version} but deploy/webhook/base/kustomization.yaml says ${tag_in_manifests}; rebuild it"
revision="$(git -C "$repo" rev-parse HEAD)"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  log "warning: the worktree has uncommitted changes; the revision label names ${revision}"
fi
: "${SOURCE_DATE_EPOCH:=$(git -C "$repo" log -1 --format=%ct)}"
export SOURCE_DATE_EPOCH
created="$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)"

mkdir -p "$out_dir"
out_dir="$(realpath "$out_dir")"
layout="${out_dir}/oci"
bundle="${out_dir}/bundle"
archive="${out_dir}/topoguard-${version}.tar"
sbom="${out_dir}/topoguard-${version}.spdx.json"
rm -rf "$layout" "$bundle" "$archive" "$sbom"

log "image topoguard/topoguard:${version}, revision ${revision}, created ${created}"
umoci init --layout "$layout"
umoci new --image "${layout}:${version}"
umoci unpack --rootless --image "${layout}:${version}" "$bundle" >/dev/null
packages="$(assemble_rootfs "${bundle}/rootfs.new")"
rm -rf "${bundle}/rootfs"
mv "${bundle}/rootfs.new" "${bundle}/rootfs"
normalise_times "${bundle}/rootfs"
umoci repack --image "${layout}:${version}" --history.created="$created" \
  --history.created_by="tools/build-image.sh" --history.comment="topoguard ${version}" "$bundle"
rm -rf "$bundle"

label_prefix=org.opencontainers.image
umoci config --image "${layout}:${version}" --no-history \
  --created="$created" --author="topoguard" \
  --config.user=65532:65532 \
  --config.entrypoint=/usr/local/bin/topoguard --config.cmd=serve \
  --config.workingdir=/ \
  --config.label="${label_prefix}.title=topoguard" \
  --config.label="${label_prefix}.description=Kubernetes admission webhook keeping GPUs and RDMA NICs on the same PCIe root" \
  --config.label="${label_prefix}.version=${version}" \
  --config.label="${label_prefix}.revision=${revision}" \
  --config.label="${label_prefix}.created=${created}" \
  --manifest.annotation="${label_prefix}.version=${version}" \
  --manifest.annotation="${label_prefix}.revision=${revision}" \
  --manifest.annotation="${label_prefix}.created=${created}"
umoci gc --layout "$layout"

skopeo copy --quiet "oci:${layout}:${version}" \
  "docker-archive:${archive}:topoguard/topoguard:${version}"

# --- SBOM ---------------------------------------------------------------------------------------

python3 - "$sbom" "$version" "$revision" "$created" $packages <<'PY'
import json, subprocess, sys

sbom_path, version, revision, created, *packages = sys.argv[1:]
def query(package, field):
    return subprocess.run(["dpkg-query", "-W", "-f", "${" + field + "}", package],
                          check=True, capture_output=True, text=True).stdout.strip()
arch = query(packages[0], "Architecture") if packages else "amd64"
image_id = "SPDXRef-Package-topoguard-image"
entries = [{
    "SPDXID": image_id, "name": "topoguard", "versionInfo": version,
    "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
    "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
    "copyrightText": "NOASSERTION", "primaryPackagePurpose": "CONTAINER",
    "comment": f"container image topoguard/topoguard:{version} built from revision {revision}",
}]
relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                  "relatedSpdxElement": image_id}]
for package in packages:
    package_version = query(package, "Version")
    spdx_id = "SPDXRef-Package-deb-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in package)
    entries.append({
        "SPDXID": spdx_id, "name": package, "versionInfo": package_version,
        "supplier": "Organization: Debian", "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False, "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION",
        "comment": f"licence text in the image: /usr/share/doc/{package}/copyright",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": f"pkg:deb/debian/{package}@{package_version}?arch={arch}&distro=debian-12"}],
    })
    relationships.append({"spdxElementId": image_id, "relationshipType": "CONTAINS",
                          "relatedSpdxElement": spdx_id})
document = {
    "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
    "name": f"topoguard-{version}",
    "documentNamespace": f"https://topoguard.dev/spdx/topoguard-{version}-{revision}",
    "creationInfo": {"created": created, "creators": ["Tool: topoguard-build-image.sh"]},
    "packages": entries, "relationships": relationships,
}
with open(sbom_path, "w") as out:
    json.dump(document, out, indent=2, sort_keys=True)
    out.write("\n")
PY

# --- summary ------------------------------------------------------------------------------------

manifest_digest="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "${layout}/index.json")"
echo "$manifest_digest" >"${out_dir}/digest"
compressed="$(python3 - "$layout" "$manifest_digest" <<'PY'
import json, sys
layout, digest = sys.argv[1:]
blob = lambda d: f"{layout}/blobs/{d.replace(':', '/')}"
manifest = json.load(open(blob(digest)))
print(sum(layer["size"] for layer in manifest["layers"]) + manifest["config"]["size"])
PY
)"
unpacked="$(python3 - "$layout" "$manifest_digest" <<'PY'
import gzip, json, sys, tarfile
layout, digest = sys.argv[1:]
blob = lambda d: f"{layout}/blobs/{d.replace(':', '/')}"
manifest = json.load(open(blob(digest)))
total = 0
for layer in manifest["layers"]:
    with tarfile.open(blob(layer["digest"]), "r:gz") as tar:
        total += sum(member.size for member in tar if member.isfile())
print(total)
PY
)"
shown() { realpath --relative-base="$PWD" "$1"; }  # paths below the current directory, relative
echo "image:      topoguard/topoguard:${version}"
echo "digest:     ${manifest_digest}"
echo "compressed: ${compressed} bytes (layers + config)"
echo "unpacked:   ${unpacked} bytes"
echo "packages:   $(printf '%s\n' $packages | wc -l) Debian packages in $(shown "$sbom")"
echo "oci layout: $(shown "$layout") (tag ${version})"
echo "archive:    $(shown "$archive") ($(stat -c %s "$archive") bytes, docker-archive)"
