#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz with clang (+ AddressSanitizer and UBSan) in its own
# build directory and runs each for a while on a copy of its committed seed corpus (and its
# dictionary when there is one), so new inputs never land in the repository. Crashes, leaks,
# timeouts and out-of-memory inputs are kept under <build-dir>/findings/<target>/ and make the
# script exit 1.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tools/fuzz.sh [--minutes N | --seconds N] [--target NAME]... [--build-dir DIR] [--no-build]
                     [-- LIBFUZZER_ARGS...]

  --minutes N      how long to fuzz each target (default 10)
  --seconds N      the same in seconds, for short runs
  --target NAME    fuzz only this target (repeatable; default: every target in
                   tests/fuzz/CMakeLists.txt)
  --build-dir DIR  build directory (default build-fuzz)
  --no-build       run what is already built
  --list           print the targets and exit
  after --         extra libFuzzer flags, e.g. -- -jobs=2 -workers=2

Target NAME uses the seeds in tests/fuzz/corpus/<NAME without _fuzz>/ and the dictionary
tests/fuzz/<NAME without _fuzz>.dict when present. Exit: 0 no finding, 1 a finding (or a target
that failed to run), 2 usage or build failure.
Reproduce a finding: <build-dir>/tests/fuzz/<target> <build-dir>/findings/<target>/<file>
USAGE
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=600
targets=()
build_dir="${repo}/build-fuzz"
build=1
list=0
extra=()

die() { echo "fuzz: $*" >&2; exit 2; }
positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive integer, got '$2'"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) positive "$1" "${2:-}"; seconds=$(($2 * 60)); shift 2 ;;
    --seconds) positive "$1" "${2:-}"; seconds="$2"; shift 2 ;;
    --target) targets+=("${2:?--target needs a name}"); shift 2 ;;
    --build-dir) build_dir="${2:?--build-dir needs a directory}"; shift 2 ;;
    --no-build) build=0; shift ;;
    --list) list=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "fuzz: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

# Every target is declared as topoguard_fuzzer(<name> <corpus> ...) in tests/fuzz/CMakeLists.txt.
mapfile -t all_targets < <(sed -n 's/^topoguard_fuzzer(\([A-Za-z0-9_]*\) .*/\1/p' \
  "${repo}/tests/fuzz/CMakeLists.txt")
[ "${#all_targets[@]}" -gt 0 ] || die "no topoguard_fuzzer() targets in tests/fuzz/CMakeLists.txt"
if [ "$list" -eq 1 ]; then printf '%s\n' "${all_targets[@]}"; exit 0; fi
if [ "${#targets[@]}" -eq 0 ]; then
  targets=("${all_targets[@]}")
else
  for target in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" ${target} "* ]] ||
      die "unknown target ${target}; targets: ${all_targets[*]}"
  done
fi

if [ "$build" -eq 1 ]; then
  command -v clang++ >/dev/null || die "clang++ not found (tools/setup.sh)"
  cmake -S "$repo" -B "$build_dir" -G Ninja \
    -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTOPOGUARD_BUILD_FUZZERS=ON \
    -DTOPOGUARD_BUILD_TESTS=ON \
    -DTOPOGUARD_BUILD_BENCHMARKS=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null || die "cmake configure failed"
  cmake --build "$build_dir" --target "${targets[@]}" -j2 || die "build failed"
fi

declare -A outcome
failed=0
for target in "${targets[@]}"; do
  binary="${build_dir}/tests/fuzz/${target}"
  [ -x "$binary" ] || die "${binary} is not built"
  corpus_name="${target%_fuzz}"
  seeds="${repo}/tests/fuzz/corpus/${corpus_name}"
  dict="${repo}/tests/fuzz/${corpus_name}.dict"
  [ -d "$seeds" ] || die "no seed corpus at ${seeds}"

  work_corpus="${build_dir}/corpus/${corpus_name}"
  findings="${build_dir}/findings/${target}"
  mkdir -p "$work_corpus" "$findings"
  before="$(find "$findings" -type f | wc -l)"

  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384
        -print_final_stats=1 -artifact_prefix="${findings}/")
  [ -f "$dict" ] && args+=(-dict="$dict")

  log_file="${build_dir}/findings/${target}.log"
  echo "fuzz: ${target} for ${seconds}s; corpus ${work_corpus} + ${seeds}; findings -> ${findings}/" >&2
  status=0
  # New inputs go to the first corpus directory (the work copy); the seeds are only read.
  "$binary" "${args[@]}" "${extra[@]}" "$work_corpus" "$seeds" >"$log_file" 2>&1 || status=$?
  after="$(find "$findings" -type f | wc -l)"
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log_file" | tail -1)"
  if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
    failed=$((failed + 1))
    outcome[$target]="FINDING (exit ${status}, ${runs:-?} runs); log ${log_file}"
    echo "fuzz: ${target} failed (exit ${status}); findings in ${findings}/:" >&2
    ls -1 "$findings" >&2 || true
    grep -m1 -A12 '^==[0-9]*==ERROR\|runtime error\|^==[0-9]*== ERROR' "$log_file" >&2 || tail -20 "$log_file" >&2
  else
    outcome[$target]="ok (${runs:-?} runs, corpus $(find "$work_corpus" -type f | wc -l) files)"
  fi
done

echo "fuzz summary (${seconds}s per target):"
for target in "${targets[@]}"; do printf '  %-24s %s\n' "$target" "${outcome[$target]}"; done
[ "$failed" -eq 0 ] || exit 1
