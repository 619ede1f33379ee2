#!/usr/bin/env bash
# scripts/lib/fabricbench-binary.sh, where every script finds the binary:
# FABRICBENCH first (refused when it names no executable), then the copy's
# own (a checkout's build/, an installation's bin/ beside share/fabricbench),
# then the PATH; none: exit 2 naming where it looked and the fix.
#   fabricbench_binary_test.sh SOURCE_DIR FABRICBENCH
set -u
src=${1:?usage: fabricbench_binary_test.sh SOURCE_DIR FABRICBENCH}
fb=${2:?usage: fabricbench_binary_test.sh SOURCE_DIR FABRICBENCH}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
# find COPY [ENV...]: what the copy of the finder under COPY prints, PATH without fabricbench unless given.
find_in() {
  local copy=$1
  shift
  env -u FABRICBENCH PATH=/usr/bin:/bin "$@" "$copy/fabricbench-binary.sh" test-script 2>"$dir/err"
}
# Three copies of the finder: a checkout's, an installation's, and one in neither.
for copy in checkout/scripts/lib prefix/share/fabricbench/scripts/lib loose/scripts/lib; do
  mkdir -p "$dir/$copy"
  cp "$src/scripts/lib/fabricbench-binary.sh" "$dir/$copy/"
done
mkdir -p "$dir/checkout/build" "$dir/prefix/bin" "$dir/onpath"
for own in checkout/build prefix/bin onpath; do ln -s "$fb" "$dir/$own/fabricbench"; done

got=$(FABRICBENCH=$fb find_in "$dir/loose/scripts/lib" FABRICBENCH="$fb") || fail "FABRICBENCH set: exit $?"
[ "$got" = "$fb" ] || fail "FABRICBENCH set: printed '$got'"
got=$(find_in "$dir/checkout/scripts/lib" FABRICBENCH="$dir/no-such-binary")
[ $? -eq 2 ] || fail "FABRICBENCH naming nothing: not refused (printed '$got')"
grep -q "test-script: FABRICBENCH=$dir/no-such-binary is not an executable file" "$dir/err" ||
  fail "FABRICBENCH naming nothing: $(cat "$dir/err")"

got=$(find_in "$dir/checkout/scripts/lib") || fail "a checkout: exit $?: $(cat "$dir/err")"
[ "$got" = "$dir/checkout/build/fabricbench" ] || fail "a checkout: printed '$got'"
# The copy's own before the PATH's.
got=$(find_in "$dir/prefix/share/fabricbench/scripts/lib" PATH="$dir/onpath:/usr/bin:/bin") ||
  fail "an installation: exit $?: $(cat "$dir/err")"
[ "$got" = "$dir/prefix/bin/fabricbench" ] || fail "an installation: printed '$got'"
got=$(find_in "$dir/loose/scripts/lib" PATH="$dir/onpath:/usr/bin:/bin") || fail "the PATH: exit $?: $(cat "$dir/err")"
[ "$got" = "$dir/onpath/fabricbench" ] || fail "the PATH: printed '$got'"

got=$(find_in "$dir/loose/scripts/lib")
[ $? -eq 2 ] || fail "none anywhere: not refused (printed '$got')"
grep -q "test-script: no fabricbench binary (looked for $dir/loose/build/fabricbench and on the PATH)" "$dir/err" ||
  fail "none anywhere: $(cat "$dir/err")"
grep -q "set FABRICBENCH=path/to/fabricbench" "$dir/err" || fail "none anywhere: no fix named: $(cat "$dir/err")"

# A script that uses it, from a checkout with no build and nothing on the PATH: the finder's message, exit 2.
mkdir -p "$dir/checkout2/scripts/lib"
cp "$src/scripts/measured-network.sh" "$dir/checkout2/scripts/"
cp "$src/scripts/lib/"*.sh "$dir/checkout2/scripts/lib/"
env -u FABRICBENCH PATH=/usr/bin:/bin bash "$dir/checkout2/scripts/measured-network.sh" x.jsonl >/dev/null 2>"$dir/err"
[ $? -eq 2 ] || fail "measured-network.sh without a binary: exit not 2"
grep -q "measured-network.sh: no fabricbench binary" "$dir/err" || fail "measured-network.sh: $(cat "$dir/err")"

[ $failures -eq 0 ] && echo "ok: the finder's order, its refusals, and a script that uses it" || exit 1
