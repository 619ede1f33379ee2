#!/usr/bin/env bash
# docs/fabricbench.1 stays in step with the binary: every command that
# `fabricbench --help` lists has its entry under COMMANDS, every environment
# variable the man page names is one the sources read, and groff formats it
# without a warning (that part is skipped where groff is absent).
#   man_page_test.sh path/to/fabricbench path/to/docs/fabricbench.1 path/to/src
set -u
fb=$1 man=$2 src=$3
fail() { echo "FAIL: $*"; exit 1; }
help=$("$fb" --help) || fail "$fb --help exited $?"
commands=$(sed -n '/^commands:/,/^$/p' <<<"$help" | awk 'NF >= 2 && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || fail "no commands in $fb --help:"$'\n'"$help"
section=$(sed -n '/^\.SH COMMANDS/,/^\.SH /p' "$man")
for c in $commands; do
  grep -qx "\.B $c" <<<"$section" || fail "$man has no COMMANDS entry '.B $c' (listed by fabricbench --help)"
done
for v in $(grep -o 'FABRICBENCH_[A-Z_]*' "$man" | sort -u); do
  grep -rqF "getenv(\"$v\")" "$src" || fail "$man names $v, which no source reads"
done
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about $man:"$'\n'"$warnings"
fi
echo "ok: $(wc -w <<<"$commands") commands in the man page"
