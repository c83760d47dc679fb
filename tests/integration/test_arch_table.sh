#!/usr/bin/env bash
# test_arch_table.sh -- docs/architecture.md's "Where things live" table matches the tree:
# every source file (.c, .h) under scoring/, eviction/, lotes/, extender/ and simulator/ is
# named in it, and every file it names exists.
#
# Usage: test_arch_table.sh REPO_ROOT. The last line is "N passed, M failed".
# SPDX-License-Identifier: MIT
set -eu
root=$1
doc=$root/docs/architecture.md
passed=0
failed=0
# The table's first column: `dir/file` names, and bare `file` names after a dir/file in the
# same cell ("`scoring/lt_err.h`, `err.c`" names scoring/err.c).
named=$(awk -F'|' '/^\| `/ { print $2 }' "$doc" | while IFS= read -r cell; do
    dir=""
    for w in $(printf '%s' "$cell" | grep -oE '`[^`]+`' | tr -d '`'); do
        case "$w" in
        */) ;;
        */*) dir=${w%/*}; echo "$w" ;;
        *) [ -n "$dir" ] && echo "$dir/$w" ;;
        esac
    done
done | sed 's/\.\[ch\]$/.c/' | sort -u)
for f in $(cd "$root" && git ls-files 'scoring/*.[ch]' 'eviction/*.[ch]' 'lotes/*.[ch]' \
    'extender/*.[ch]' 'simulator/*.[ch]'); do
    if printf '%s\n' "$named" | grep -qxF "$f"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $f is not in docs/architecture.md's table" >&2
    fi
done
for f in $named; do
    if [ -e "$root/$f" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: docs/architecture.md names $f, which does not exist" >&2
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
