#!/usr/bin/env bash
# A guide that names files must name files that exist: every path of the
# repository written in backticks in the given docs (`src/...`, `include/...`,
# `tests/...`, `scripts/...`, `profiles/...`, `docs/...`, `bench/...`) is a file
# or folder of the checkout. A rename that leaves the guide behind fails here.
#   docs_paths_test.sh path/to/repo docs/a.md [docs/b.md...]
set -u
root=$1
shift
fail=0 seen=0
for doc in "$@"; do
  [ -f "$root/$doc" ] || { echo "FAIL: no $root/$doc"; exit 1; }
  while IFS= read -r path; do
    seen=$((seen + 1))
    [ -e "$root/$path" ] || { echo "FAIL: $doc names \`$path\`, which is not in the checkout"; fail=1; }
  done < <(grep -o '`\(src\|include\|tests\|scripts\|profiles\|docs\|bench\)/[A-Za-z0-9_./-]*`' "$root/$doc" |
           tr -d '`' | sed 's|/$||' | sort -u)
done
[ "$seen" -gt 0 ] || { echo "FAIL: no repository path found in $*: the pattern no longer matches the docs"; exit 1; }
[ "$fail" -eq 0 ] && echo "ok: $seen paths named in $*, all present"
exit "$fail"
