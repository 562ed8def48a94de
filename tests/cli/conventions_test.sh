#!/usr/bin/env bash
# Issue 40, item 5: kubectl's habits through the real binary. -o/--output names the format of
# every command that has one (--format still read, with a one-line deprecation note), fix's
# directory moved to --output-dir (-o DIR still read, with a note; a format name is a format),
# hints for mistyped or old spellings, --cluster's options refused without it, completion
# scripts for bash, zsh and fish, `version` with build information, --quiet, --no-color and
# NO_COLOR, and colour only on a terminal with input still escaped.
# Usage: conventions_test.sh BINARY SOURCE_DIR
set -uo pipefail
binary=$(realpath "$1")
source_dir=$(realpath "$2")
examples="$source_dir/examples/manifests"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$source_dir/tests/cli/cli_support.sh"

run() {  # run ARGS... -> $work/out, $work/err, $code
  "$binary" "$@" >"$work/out" 2>"$work/err" </dev/null
  code=$?
}

lines() {  # lines FILE: its number of lines
  wc -l <"$1"
}

# Runs the binary on a pseudo-terminal (stdout and stderr both; script turns \n into \r\n).
on_terminal() {  # on_terminal ARGS... -> $work/tty
  local command
  printf -v command '%q ' "$binary" "$@"
  TERM=xterm script -qec "$command" /dev/null </dev/null >"$work/tty"
}

# --- -o/--output, and --format as a deprecated alias -------------------------------------------
run audit -o json "$examples"
check "audit -o json exit 1 (findings)" test "$code" -eq 1
check "audit -o json is JSON" jq_true '.summary.resources == 12' "$work/out"
check "audit -o json says nothing on stderr" test ! -s "$work/err"
cp "$work/out" "$work/by-o.json"
run audit -o=json "$examples"
check "audit -o=json, as kubectl reads it" cmp -s "$work/out" "$work/by-o.json"
run audit --output sarif "$examples"
check "audit --output sarif is SARIF" jq_true '.version == "2.1.0"' "$work/out"
run audit --format json "$examples"
check "--format is still read" cmp -s "$work/out" "$work/by-o.json"
check "--format: one line on stderr" test "$(lines "$work/err")" -eq 1
check "--format: the deprecation note names the new spelling" \
  grep -qx 'topoguard audit: --format json is deprecated and goes in a future release; write -o json' "$work/err"
run topology -o json --cluster-state "$source_dir/tests/data/device-classes.yaml"
check "topology -o json" jq_true 'type == "object" or type == "array"' "$work/out"
run policy compile -o json
check "policy compile -o json is a List" jq_true '.kind == "List"' "$work/out"
run policy compile --format json
check "policy compile --format json noted" grep -q 'topoguard policy compile: --format json is deprecated' "$work/err"
run policy test -o junit "$source_dir/policies/tests/rules.yaml"
check "policy test -o junit is JUnit" grep -q '<testsuites' "$work/out"
run policy test --format junit "$source_dir/policies/tests/rules.yaml"
check "policy test --format noted" grep -q 'topoguard policy test: --format junit is deprecated' "$work/err"

# --help shows the new forms only.
for command in audit topology "policy test" "policy compile" version; do
  # shellcheck disable=SC2086 # the policy subcommands are two words
  run $command --help
  check "help of $command shows -o,--output" grep -q -- '-o,--output {' "$work/out"
  check "help of $command hides --format" test "$(grep -c -- '--format' "$work/out")" -eq 0
done

# --- hints for old and mistyped spellings -------------------------------------------------------
run audit --outptu json "$examples"
check "mistyped --outptu exit 2" test "$code" -eq 2
check "mistyped --outptu gets a hint" grep -qx 'topoguard audit: unknown option "--outptu"; did you mean --output?' "$work/err"
run --verison
check "a mistyped option before the subcommand gets a hint" grep -qx 'topoguard: unknown option "--verison"; did you mean --version?' "$work/err"
run policy test --formt junit "$source_dir/policies/tests/rules.yaml"
check "a mistyped deprecated spelling is answered with the new one" grep -qx 'topoguard policy test: unknown option "--formt"; did you mean -o/--output?' "$work/err"
run audit --output-dir reports "$examples"
check "fix's --output-dir given to audit points to --output" grep -q 'did you mean --output?' "$work/err"
run audit -o report.sarif "$examples"
check "audit -o FILE exit 2" test "$code" -eq 2
check "audit -o FILE: redirect with the format its name suggests" grep -q -- '-o names the format, as in kubectl; to write the report to a file: -o sarif > report.sarif' "$work/err"
run audit -o reports/ "$examples"
check "audit -o DIR: redirect" grep -q 'redirect standard output: -o FORMAT > FILE' "$work/err"
run audit -o xml "$examples"
check "audit -o unknown format exit 2" test "$code" -eq 2
check "audit -o unknown format lists the formats" grep -q '(text, json, sarif, openreports, policyreport, junit)' "$work/err"

# --- fix: --output-dir, and -o as a format or (deprecated) a directory --------------------------
(cd "$examples/.." && "$binary" fix --output-dir "$work/new" manifests/unaligned-template-v1.yaml >/dev/null 2>"$work/err")
check "fix --output-dir writes the relative path" test -s "$work/new/manifests/unaligned-template-v1.yaml"
check "fix --output-dir: no deprecation note" test "$(grep -c deprecated "$work/err")" -eq 0
(cd "$examples/.." && "$binary" fix -o "$work/old" manifests/unaligned-template-v1.yaml >/dev/null 2>"$work/err")
check "fix -o DIR still writes there" cmp -s "$work/old/manifests/unaligned-template-v1.yaml" "$work/new/manifests/unaligned-template-v1.yaml"
check "fix -o DIR: deprecation note" grep -qx "topoguard fix: -o DIR is deprecated and goes in a future release; write --output-dir $work/old" "$work/err"
run fix -o json "$examples/unaligned-template-v1.yaml"
check "fix -o json (a format fix has not) exit 2" test "$code" -eq 2
check "fix -o json: how to name such a directory" grep -q 'for a directory of that name: --output-dir json' "$work/err"
check "fix -o json: no directory made" test ! -e json
run fix -o diff "$examples/unaligned-template-v1.yaml"
check "fix -o diff prints the diff" grep -q '^+++ b/.*unaligned-template-v1.yaml$' "$work/out"
"$binary" fix --diff "$examples/unaligned-template-v1.yaml" >"$work/diff" 2>/dev/null
check "fix -o diff is --diff" cmp -s "$work/out" "$work/diff"
run fix -o yaml "$examples/unaligned-template-v1.yaml"
check "fix -o yaml prints the fixed manifests" grep -q 'matchAttribute: resource.kubernetes.io/pcieRoot' "$work/out"
run fix --output-dir "$work/x" --in-place "$examples"
check "--output-dir with --in-place is a usage error" grep -q 'use either --output-dir DIR or --in-place' "$work/err"

# --- options of --cluster refused without it ----------------------------------------------------
for option in "-n ml" "--namespace ml" "--context prod" "--kubeconfig $work/kubeconfig" "--exec-timeout 5s"; do
  # shellcheck disable=SC2086 # option and value are two words
  run audit $option "$examples"
  check "audit $option without --cluster exit 2" test "$code" -eq 2
  check "audit $option without --cluster says so" grep -qE '^topoguard audit: --[a-z-]+ needs --cluster: it chooses what is read from a live cluster' "$work/err"
  check "audit $option without --cluster audits nothing" test ! -s "$work/out"
done
run audit --context prod -n ml "$examples"
check "two of them named together" grep -q '^topoguard audit: --context, --namespace need --cluster: they choose' "$work/err"

# --- completion ---------------------------------------------------------------------------------
run completion bash
cp "$work/out" "$work/completion.bash"
complete_bash() {  # complete_bash "WORDS..." -> the words offered for the last (maybe empty) word
  bash -c 'source "$1"; read -ra COMP_WORDS <<<"$2"; [[ $2 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _topoguard; echo "${COMPREPLY[*]}"' _ "$work/completion.bash" "$1"
}
check "bash: sourcing registers topoguard" \
  test "$(bash -c 'source "$1" && complete -p topoguard' _ "$work/completion.bash")" == "complete -F _topoguard topoguard"
check "bash: subcommands" test "$(complete_bash "topoguard ")" == "audit fix explain policy serve review topology inventory ab evidence version completion -h --help --version"
check "bash: nested subcommand" test "$(complete_bash "topoguard policy co")" == "compile"
check "bash: options of a subcommand" test "$(complete_bash "topoguard audit --fail")" == "--fail-on --fail-on-unknown"
check "bash: -o offers the command's formats" test "$(complete_bash "topoguard audit -o ")" == "text json sarif openreports policyreport junit"
check "bash: fix -o offers its formats" test "$(complete_bash "topoguard fix --output ")" == "yaml diff"
check "bash: choices after other options" test "$(complete_bash "topoguard audit --cluster --fail-on w")" == "warn"
check "bash: the deprecated spelling is not offered" test -z "$(complete_bash "topoguard audit --form")"
check "bash: files as operands" test "$(cd "$examples" && complete_bash "topoguard audit unaligned-template-v")" == "unaligned-template-v1.yaml"
check "bash: the shells" test "$(complete_bash "topoguard completion ")" == "bash zsh fish"

run completion zsh
cp "$work/out" "$work/_topoguard"
if command -v zsh >/dev/null; then
  check "zsh: the script parses" zsh -n "$work/_topoguard"
  check "zsh: sourcing after compinit registers _topoguard" \
    test "$(zsh -fc 'autoload -U compinit && compinit -u -D && source "$1" && print -r -- $_comps[topoguard]' _ "$work/_topoguard")" == "_topoguard"
else
  check "zsh is installed (tools/setup.sh installs it)" false
fi

run completion fish
cp "$work/out" "$work/topoguard.fish"
if command -v fish >/dev/null; then
  complete_fish() {  # complete_fish "WORDS...": the candidates fish offers, one per line, no descriptions
    fish -c 'source $argv[1]; complete -C $argv[2]' "$work/topoguard.fish" "$1" | cut -f1 | sort | tr '\n' ' '
  }
  check "fish: the script parses" fish -n "$work/topoguard.fish"
  check "fish: subcommands" test "$(complete_fish "topoguard pol")" == "policy "
  check "fish: -o offers the formats" test "$(complete_fish "topoguard audit -o ")" == "json junit openreports policyreport sarif text "
  check "fish: nested options" test "$(complete_fish "topoguard policy test --u")" == "--update "
  check "fish: the shells" test "$(complete_fish "topoguard completion ")" == "bash fish zsh "
else
  check "fish is installed (tools/setup.sh installs it)" false
fi
run completion powershell
check "completion: an unknown shell exit 2" test "$code" -eq 2

# --- version ------------------------------------------------------------------------------------
run --version
check "--version prints topoguard VERSION" grep -qxE 'topoguard [0-9]+\.[0-9]+\.[0-9]+' "$work/out"
version_line=$(cat "$work/out")
run version
check "version starts with the --version line" test "$(head -1 "$work/out")" == "$version_line"
check "version names the compiler" grep -qE '^compiler: GNU [0-9]' "$work/out"
check "version names the libraries" grep -qE '^libraries: openssl [0-9]' "$work/out"
run version -o json
check "version -o json" jq -e --arg v "${version_line#topoguard }" \
  '.version == $v and (.gitCommit | test("^([0-9a-f]{40}|unknown)$")) and (.compiler | length > 0) and (.buildType | length > 0) and (.libraries.openssl | length > 0) and (.libraries["cpp-httplib"] | length > 0)' \
  "$work/out" >/dev/null
if git -C "$source_dir" rev-parse HEAD >/dev/null 2>&1; then
  check "version knows the commit it was built from" jq_true '.gitCommit != "unknown"' "$work/out"
fi

# --- --quiet ------------------------------------------------------------------------------------
run fix "$examples/unaligned-template-v1.yaml"
check "fix tells its changes" grep -q '^topoguard fix: applied 1 fix' "$work/err"
cp "$work/out" "$work/fixed"
run fix --quiet "$examples/unaligned-template-v1.yaml"
check "fix --quiet: same output" cmp -s "$work/out" "$work/fixed"
check "fix --quiet: nothing on stderr" test ! -s "$work/err"
run audit -q "$work/missing.yaml"
check "audit -q still prints errors" grep -q 'missing.yaml' "$work/err"

# --- colour: only on a terminal, never with --no-color or NO_COLOR, input still escaped --------
esc=$'\033'
if command -v script >/dev/null; then
  on_terminal audit "$examples/unaligned-template-v1.yaml"
  check "terminal: deny in bold red" grep -qF "${esc}[1;31mdeny${esc}[0m missing-pcie-alignment" "$work/tty"
  on_terminal audit --fail-on never "$examples/device-plugin-leaderworkerset.yaml"
  check "terminal: warn in yellow" grep -qF "${esc}[33mwarn${esc}[0m" "$work/tty"
  on_terminal audit --no-color "$examples/unaligned-template-v1.yaml"
  check "terminal with --no-color: no colour" test "$(grep -c "$esc" "$work/tty")" -eq 0
  NO_COLOR=1 on_terminal audit "$examples/unaligned-template-v1.yaml"
  check "terminal with NO_COLOR: no colour" test "$(grep -c "$esc" "$work/tty")" -eq 0
  NO_COLOR= on_terminal audit "$examples/unaligned-template-v1.yaml"
  check "terminal with an empty NO_COLOR: colour" grep -qF "${esc}[1;31mdeny" "$work/tty"
  on_terminal audit -o json "$examples/unaligned-template-v1.yaml"
  check "terminal, JSON: never coloured" test "$(grep -c "$esc" "$work/tty")" -eq 0
  # An exception reason holding escape sequences, C1 controls and a bidi override, listed in
  # colour: our SGR sequences taken out, no control byte is left but the line ends.
  printf 'apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: waive}\nspec:\n  exceptions:\n  - {name: legacy, reason: "ok\\e]0;pwned\\a\\e[2K\\rsummary: 0 resources, 0 deny\\x9b31m\\u202e", match: {namespaces: {include: [inference]}}}\n' >"$work/hostile.yaml"
  on_terminal audit --show-exempted --policies "$work/hostile.yaml" "$examples/unaligned-template-v1.yaml"
  check "terminal: the exempted finding is listed, dim" grep -qF "${esc}[2mexempted deny${esc}[0m" "$work/tty"
  sed -e "s/${esc}\[\(1;31\|33\|36\|2\|0\)m//g" -e 's/\r$//' "$work/tty" >"$work/tty-plain"
  check "terminal: no raw control byte from input" \
    test "$(LC_ALL=C grep -caP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]' "$work/tty-plain")" -eq 0
  check "terminal: the reason is escaped" grep -qF 'ok\x1b]0;pwned\x07\x1b[2K\rsummary' "$work/tty-plain"
  on_terminal policy test --root "$source_dir" "$source_dir/policies/tests/rules.yaml"
  check "terminal: policy test PASS in green" grep -qF "${esc}[32mPASS${esc}[0m " "$work/tty"
  on_terminal policy test --no-color --root "$source_dir" "$source_dir/policies/tests/rules.yaml"
  check "terminal: policy test with --no-color: no colour" test "$(grep -c "$esc" "$work/tty")" -eq 0
  # A short audit draws no progress line.
  on_terminal audit "$examples"
  check "terminal: a short audit draws no progress line" test "$(grep -c 'evaluated' "$work/tty")" -eq 0
else
  check "script (util-linux) is installed" false
fi
run audit "$examples/unaligned-template-v1.yaml"
check "not a terminal: no colour" test "$(grep -c "$esc" "$work/out")" -eq 0
check "not a terminal: no progress line" test "$(grep -c 'evaluated' "$work/err")" -eq 0

echo "$passed passed, $failed failed"
test "$failed" -eq 0
