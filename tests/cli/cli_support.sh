# Helpers sourced by the CLI test scripts: counted checks and a jq predicate.
# Expects $binary and $work; the caller prints "$passed passed, $failed failed" at the end.
passed=0
failed=0

check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name" >&2
  fi
}

jq_true() {  # jq_true FILTER FILE: the filter yields true
  jq -e "$1" "$2" >/dev/null
}
