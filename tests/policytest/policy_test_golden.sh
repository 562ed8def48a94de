#!/usr/bin/env bash
# `topoguard policy test` through the real binary: the golden runs of tests/policytest/cases (each
# case's suite.yaml, its printed output and exit code), their JUnit output against the xUnit
# schema, --update on a copy (the file it writes is golden too, and runs clean after), the
# shipped suites (policies/tests), and usage errors.
# Usage: policy_test_golden.sh BINARY SOURCE_DIR   (TOPOGUARD_UPDATE_GOLDEN=1 rewrites the goldens)
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
cases="$source_dir/tests/policytest/cases"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$source_dir/tests/cli/cli_support.sh"
update_golden=${TOPOGUARD_UPDATE_GOLDEN:-0}

valid_junit() {  # valid_junit FILE: valid against the xUnit plugin's JUnit schema
  xmllint --noout --schema "$source_dir/tests/reports/junit-10.xsd" "$1" 2>"$work/xmllint.log" ||
    { cat "$work/xmllint.log" >&2; return 1; }
}

golden() {  # golden ACTUAL EXPECTED NAME: ACTUAL equals the file EXPECTED (or rewrites it)
  if [ "$update_golden" = 1 ]; then
    cp "$1" "$2"
  fi
  check "$3" diff -u "$2" "$1"
}

for case_dir in "$cases"/*/; do
  name=$(basename "$case_dir")
  [ "$name" = update ] && continue
  (cd "$case_dir" && "$binary" policy test --root "$source_dir" suite.yaml >"$work/$name.txt" 2>"$work/$name.err")
  echo "exit $?" >>"$work/$name.txt"
  golden "$work/$name.txt" "$case_dir/expected-output.txt" "$name: output and exit code"
  (cd "$case_dir" && "$binary" policy test --root "$source_dir" --format junit suite.yaml >"$work/$name.junit.xml" 2>/dev/null)
  check "$name: junit is schema-valid" valid_junit "$work/$name.junit.xml"
  # The JUnit report counts what the text run printed.
  check "$name: junit failures = FAIL lines" test \
    "$(grep -c '<failure ' "$work/$name.junit.xml")" -eq "$(grep -c '^FAIL ' "$work/$name.txt")"
  check "$name: junit errors = ERROR lines" test \
    "$(grep -c '<error ' "$work/$name.junit.xml")" -eq "$(grep -c '^ERROR ' "$work/$name.txt")"
done

# --update on a copy placed as deep as the case, so its relative paths reach the examples (a copy
# too: the suite may name nothing outside its root).
copy="$work/repo/tests/policytest/cases/update"
mkdir -p "$(dirname "$copy")"
cp -r "$cases/update" "$copy"
rm -f "$copy"/expected-*
cp -r "$source_dir/examples" "$work/repo/examples"
(cd "$copy" && "$binary" policy test --root "$work/repo" suite.yaml >"$work/update-before.txt" 2>&1)
check "update: fails before" test $? -eq 1
(cd "$copy" && "$binary" policy test --root "$work/repo" --update suite.yaml >"$work/update.txt" 2>"$work/update.err")
echo "exit $?" >>"$work/update.txt"
cat "$work/update.err" >>"$work/update.txt"
golden "$work/update.txt" "$cases/update/expected-output.txt" "update: output, notes and exit code"
golden "$copy/suite.yaml" "$cases/update/expected-suite.yaml" "update: the test file, comments and order kept"
golden "$copy/expected/gpu-nic.yaml" "$cases/update/expected-gpu-nic.yaml" "update: the patched file"
cp "$copy/suite.yaml" "$work/updated-once.yaml"
(cd "$copy" && "$binary" policy test --root "$work/repo" --update suite.yaml >/dev/null 2>&1)
check "update: a passing run leaves the file as it is" cmp "$work/updated-once.yaml" "$copy/suite.yaml"

# The shipped suites pass; their JUnit report is valid too.
(cd "$source_dir" && "$binary" policy test policies/tests >"$work/shipped.txt" 2>&1)
check "shipped suites pass" test $? -eq 0
check "shipped suites ran" grep -qE '^[0-9]+ tests, 0 failed$' "$work/shipped.txt"
(cd "$source_dir" && "$binary" policy test --format junit policies/tests >"$work/shipped.junit.xml")
check "shipped junit is schema-valid" valid_junit "$work/shipped.junit.xml"
(cd "$source_dir" && "$binary" policy test --run builtin-unresolved-claim policies/tests >"$work/run.txt")
check "--run picks one test" grep -qx '1 test, 0 failed' "$work/run.txt"
# Test files may sit beside policies: policy files skip AlignmentPolicyTest documents.
(cd "$source_dir" && "$binary" policy lint policies/default.yaml policies/tests/*.yaml >"$work/lint.txt" 2>&1)
check "policy lint skips the test documents" test $? -eq 0

# A folder of tests may hold manifests, broken ones too: only files that mention the kind are
# read. A path with no test at all is an error.
mkdir -p "$work/folder/inputs"
cp "$cases/missing_finding/suite.yaml" "$work/folder/suite.yaml"
cp -r "$source_dir/examples" "$work/folder/examples"
sed -i "s#../../../../examples#examples#; s#action: deny#action: pass#" "$work/folder/suite.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: a\n' >"$work/folder/inputs/broken.yaml"
"$binary" policy test --root "$work/folder" "$work/folder" >"$work/folder.txt" 2>&1
check "a folder's broken manifest is not a test" test $? -eq 0
"$binary" policy test "$work/folder/inputs" >"$work/no-tests.txt" 2>&1
check "no test found exits 2" test $? -eq 2
check "no test found is said" grep -q 'no AlignmentPolicyTest documents found' "$work/no-tests.txt"

"$binary" policy test --run no-such-test "$source_dir/policies/tests" >/dev/null 2>&1
check "--run of an unknown name exits 2" test $? -eq 2
"$binary" policy test --format yaml "$source_dir/policies/tests" >/dev/null 2>&1
check "bad --format exits 2" test $? -eq 2
"$binary" policy test "$work/no-such-file.yaml" >"$work/missing.txt" 2>&1
check "missing path exits 2" test $? -eq 2
check "missing path named" grep -q 'no-such-file.yaml' "$work/missing.txt"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
