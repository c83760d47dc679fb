# shellcheck shell=bash
# lib.sh -- the check harness shared by the lotus-sim CLI tests (test_replay_cli.sh,
# test_score_cli.sh). Source it after setting $sim, the lotus-sim binary:
#
#     sim=$1
#     . "$(dirname "$0")/lib.sh"
#
# It sets $passed, $failed and $tmp (a scratch directory removed on exit) and defines pass,
# fail, check, run, contains and finish; a script ends with `finish`.
#
# SPDX-License-Identifier: MIT

passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() {
    passed=$((passed + 1))
}

fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# check NAME COMMAND...: one check, passed when COMMAND succeeds.
check() {
    local name=$1
    shift
    if "$@"; then
        pass
    else
        fail "$name"
    fi
}

# run ARGS...: runs lotus-sim; sets $out, $err (file contents) and $rc. A sanitizer report
# on stderr is a failed check of its own.
# shellcheck disable=SC2034,SC2154 # $sim comes from the script; $out, $err, $rc are for it
run() {
    rc=0
    "$sim" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    if grep -qE 'Sanitizer|runtime error:' "$tmp/err"; then
        fail "sanitizer report from: lotus-sim $*"
        cat "$tmp/err" >&2
    fi
}

# contains TEXT PART: TEXT holds PART.
contains() {
    case "$1" in
    *"$2"*) return 0 ;;
    *) return 1 ;;
    esac
}

# finish: the "N passed, M failed" line; the status is 1 if any check failed.
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
