#!/usr/bin/env bash
# lint: checks the lab's own code, the scripts in scripts/ and .ci/ (issue 56):
#   - shellcheck (Debian 12's 0.9.0, every severity, style included) on each shell script: the files
#     of scripts/ and .ci/ whose first line is #!/usr/bin/env bash, #!/bin/bash or #!/bin/sh (or
#     another sh: scripts/rig-init.sh is busybox's), scripts/*.sh, and the files only sourced, which
#     say `# shellcheck shell=bash` near their top (scripts/swift-environment.sh). Run with -x from the
#     repository's root, sourced files resolved from the script's folder or the root, so what a
#     script sources is checked with it.
#   - python3 -m py_compile on each scripts/*.py and scripts/tools/*.py (the bytecode goes to a
#     temporary folder, not the tree), then each tool of scripts/tools with --help, which must exit
#     0 (it starts: its imports resolve)
#   - the tools' own tests: python3 -m unittest discover -s scripts/tools (test_*.py)
# Prints one line per check ("ok   …" or "FAIL …" with the findings under it) and a summary; exit
# status 1 on any finding.
# A finding that is not a fault is silenced on its line, with the reason after it:
#   # shellcheck disable=SC2086  # the flags are meant to split into words
#   scripts/lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null || { echo "lint: shellcheck is not installed (scripts/install.sh adds it)" >&2; exit 1; }
started=$(date +%s)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
passed=0 failed=0

# result NAME STATUS OUTPUT: one line for the check, its output under a failure.
result() {
    if (( $2 == 0 )); then
        echo "ok   $1"
        passed=$((passed + 1))
    else
        echo "FAIL $1"
        [[ -z $3 ]] || while IFS= read -r line; do echo "     $line"; done <<<"$3"
        failed=$((failed + 1))
    fi
}

# The shell scripts, by their first line, their name or a shell directive.
shell_scripts=()
for file in scripts/* .ci/*; do
    [[ -f $file ]] || continue
    first=$(head -n 1 "$file")
    if [[ $first =~ ^\#!(/usr/bin/env\ bash|/bin/bash|/bin/sh|/bin/busybox\ sh)([[:space:]]|$) || $file == scripts/*.sh ]] ||
        head -n 5 "$file" | grep -q '^# shellcheck shell='; then
        shell_scripts+=("$file")
    fi
done
for file in "${shell_scripts[@]}"; do
    status=0
    output=$(shellcheck --external-sources --source-path=SCRIPTDIR --format=gcc "$file" 2>&1) || status=$?
    result "shellcheck $file" "$status" "$output"
done

# The Python scripts of scripts/ compile (they need a rig guest, a browser or a D-Bus session to
# start, so they are not started here; the tests that use them start them).
export PYTHONPYCACHEPREFIX=$scratch/pycache   # no __pycache__ in the tree
python_scripts=(scripts/*.py)
for script in "${python_scripts[@]}"; do
    status=0
    output=$(python3 -m py_compile "$script" 2>&1) || status=$?
    result "py_compile $script" "$status" "$output"
done

# The Python tools: they compile, they start, their tests pass.
tools=(scripts/tools/*.py)
for tool in "${tools[@]}"; do
    status=0
    output=$(python3 -m py_compile "$tool" 2>&1) || status=$?
    result "py_compile $tool" "$status" "$output"
    [[ $(basename "$tool") == test_* ]] && continue
    status=0
    output=$(python3 "$tool" --help 2>&1 >/dev/null) || status=$?
    result "$tool --help" "$status" "$output"
done
status=0
output=$(python3 -m unittest discover -s scripts/tools -t scripts/tools 2>&1) || status=$?
result "unittest scripts/tools: $(grep -oE '^Ran [0-9]+ tests?' <<<"$output" || echo "no tests ran")" "$status" "$output"

echo "lint: ${#shell_scripts[@]} shell scripts, $(( ${#python_scripts[@]} + ${#tools[@]} )) Python files: $passed passed, $failed failed ($(( $(date +%s) - started )) s)"
(( failed == 0 ))
