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
# The flags each command's entry names are flags of that command (or of one
# of its subcommands: model step, report compare): a renamed flag fails here.
# The full list is each command's --help, which the guides' tables equal
# (doc_flag_tables_test.py); the man page points there.
flags_named=0
for c in $commands; do
  entry=$(awk -v c="$c" '$0 == ".B " c { on = 1; next } on && /^\.(TP|SH)/ { exit } on' <<<"$section")
  help_c=$("$fb" "$c" --help 2>&1)
  for sub in $(sed -n '/^Subcommands:/,/^$/p' <<<"$help_c" | awk 'NF >= 2 && /^  [a-z]/ {print $1}'); do
    help_c+=$'\n'$("$fb" "$c" "$sub" --help 2>&1)
  done
  # The options --help lists, each name of each option line ("  -b,--min-bytes TEXT ..."), not
  # every word of the text: a flag named only in another option's description is no option.
  options=$(grep -E '^ +-' <<<"$help_c" | awk '{ print $1 }' | tr ',' '\n' | sort -u)
  for flag in $(sed 's/\\-/-/g' <<<"$entry" | grep -oE '(^|[ "(])--?[A-Za-z][A-Za-z0-9_-]*' | grep -oE -- '--?[A-Za-z][A-Za-z0-9_-]*' | sort -u); do
    flags_named=$((flags_named + 1))
    grep -qxF -- "$flag" <<<"$options" || fail "$man names $flag under '$c', which \`fabricbench $c --help\` does not list"
  done
done
[ "$flags_named" -ge 10 ] || fail "only $flags_named flags found in the COMMANDS entries: the extraction no longer matches $man"
grep -q 'COMMAND \\-\\-help' "$man" || fail "$man does not point to each command's --help for its flags"
for v in $(grep -o 'FABRICBENCH_[A-Z_]*' "$man" | sort -u); do
  grep -rqF "getenv(\"$v\")" "$src" || fail "$man names $v, which no source reads"
done
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about $man:"$'\n'"$warnings"
fi
echo "ok: $(wc -w <<<"$commands") commands and $flags_named flags in the man page"
