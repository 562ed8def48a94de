#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ AddressSanitizer and UBSan) in their own build
# directory and runs one for N seconds on a copy of its seed corpus, so new inputs never land in
# the repository. Crashes are written to <build-dir>/artifacts/<target>/ and fail the script.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/fuzz.sh [SECONDS] [--target NAME] [--build-dir DIR] [--no-build] [-- LIBFUZZER_ARGS...]

  SECONDS          how long to fuzz (default 120)
  --target NAME    fuzz target (default admission_review_fuzz)
  --build-dir DIR  build directory (default build-fuzz)
  --no-build       run what is already built
  after --          extra libFuzzer flags, e.g. -- -jobs=2 -workers=2
Reproduce a crash: <build-dir>/tests/fuzz/<target> <artifact-file>
USAGE
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=120
target=admission_review_fuzz
build_dir="${repo}/build-fuzz"
build=1
extra=()

while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?}"; shift 2 ;;
    --build-dir) build_dir="${2:?}"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *)
      if [[ "$1" =~ ^[1-9][0-9]*$ ]]; then seconds="$1"; shift
      else echo "fuzz: unknown argument: $1" >&2; usage >&2; exit 2; fi ;;
  esac
done

# Target name -> seed corpus folder under tests/fuzz/corpus (the name without "_fuzz").
corpus_name="${target%_fuzz}"
seeds="${repo}/tests/fuzz/corpus/${corpus_name}"
dict="${repo}/tests/fuzz/${corpus_name}.dict"
[ -d "$seeds" ] || { echo "fuzz: no seed corpus at ${seeds}" >&2; exit 2; }

if [ "$build" -eq 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (tools/setup.sh)" >&2; exit 2; }
  cmake -S "$repo" -B "$build_dir" -G Ninja \
    -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTOPOGUARD_BUILD_FUZZERS=ON \
    -DTOPOGUARD_BUILD_TESTS=ON \
    -DTOPOGUARD_BUILD_BENCHMARKS=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
  cmake --build "$build_dir" --target "$target" -j2
fi

binary="${build_dir}/tests/fuzz/${target}"
[ -x "$binary" ] || { echo "fuzz: ${binary} is not built" >&2; exit 2; }

work_corpus="${build_dir}/corpus/${corpus_name}"
artifacts="${build_dir}/artifacts/${target}"
mkdir -p "$work_corpus" "$artifacts"
cp -n "$seeds"/* "$work_corpus"/ 2>/dev/null || true

args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384
      -print_final_stats=1 -artifact_prefix="${artifacts}/")
[ -f "$dict" ] && args+=(-dict="$dict")

echo "fuzz: ${target} for ${seconds}s; corpus ${work_corpus}; crashes -> ${artifacts}/" >&2
status=0
"$binary" "${args[@]}" "${extra[@]}" "$work_corpus" "$seeds" || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz: ${target} failed (exit ${status}); inputs in ${artifacts}/:" >&2
  ls -1 "$artifacts" >&2 || true
fi
exit "$status"
