#!/usr/bin/env bash
# --help on the scripts a user runs first prints their usage and does
# nothing else: before, `scripts/test.sh --help` deleted and rebuilt its test
# tree and `scripts/quickstart.sh --help` installed, built and swept before
# the flag reached `fabricbench run`, and `scripts/emulate-cluster.sh --help`
# printed part of its code and exited 2. Every script a user runs, the
# installed ones included. cmake and mpirun are stand-ins here
# that leave a mark when called, so a script that goes on fails fast.
#   script_help_test.sh SOURCE_DIR
set -u
src=${1:?usage: script_help_test.sh SOURCE_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin"
for tool in cmake mpirun apt-get sudo; do
  printf '#!/bin/sh\ntouch "%s/ran-%s"\nexit 1\n' "$dir" "$tool" >"$dir/bin/$tool"
  chmod +x "$dir/bin/$tool"
done
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
for name in quickstart test sanitize setup device-check model-plots measured-network device-table emulate-cluster \
  acceptance-mpirun slurm/drain-blamed slurm/health-check; do
  before=$failures
  # --help as written; -h through a link from another folder (the script finds its lib/ all the same).
  base=${name##*/}
  ln -sf "$src/scripts/$name.sh" "$dir/bin/link-$base.sh"
  for flag in --help -h; do
    mkdir -p "$dir/test-tree" && touch "$dir/test-tree/kept"
    script=$src/scripts/$name.sh
    [ "$flag" = -h ] && script=$dir/bin/link-$base.sh
    out=$(cd / && PATH="$dir/bin:$PATH" FABRICBENCH_BUILD="$dir/build" FABRICBENCH_TEST_BUILD="$dir/test-tree" \
      OUT="$dir/out" timeout 60 bash "$script" "$flag" 2>"$dir/err")
    status=$?
    [ "$status" -eq 0 ] || fail "$name.sh $flag: exit $status: $(cat "$dir/err")"
    # The usage line names the script; the first line is what it does.
    grep -q "$base.sh" <<<"$out" || fail "$name.sh $flag printed no usage line: $out"
    [ -n "$(head -1 <<<"$out")" ] || fail "$name.sh $flag: an empty first line"
    ls "$dir"/ran-* >/dev/null 2>&1 && fail "$name.sh $flag went on to run $(ls "$dir" | grep ran-)"
    rm -f "$dir"/ran-*
    [ -e "$dir/test-tree/kept" ] || fail "$name.sh $flag deleted FABRICBENCH_TEST_BUILD"
    [ -e "$dir/build" ] && fail "$name.sh $flag made FABRICBENCH_BUILD"
    [ -s "$dir/err" ] && fail "$name.sh $flag wrote to stderr: $(cat "$dir/err")"
  done
  [ "$failures" -eq "$before" ] && echo "ok   $name.sh --help, -h"
done
# --help after other arguments (quickstart's pass on to `fabricbench run`)
# stops the scripts that read their help through scripts/lib/usage.sh just the same.
for name in quickstart test sanitize device-check model-plots measured-network device-table; do
  mkdir -p "$dir/test-tree" && touch "$dir/test-tree/kept"
  out=$(cd / && PATH="$dir/bin:$PATH" FABRICBENCH_BUILD="$dir/build" FABRICBENCH_TEST_BUILD="$dir/test-tree" \
    OUT="$dir/out" timeout 60 bash "$src/scripts/$name.sh" -b 8 --help 2>"$dir/err")
  status=$?
  [ "$status" -eq 0 ] && grep -q "scripts/$name.sh" <<<"$out" || fail "$name.sh -b 8 --help: exit $status: $out $(cat "$dir/err")"
  ls "$dir"/ran-* >/dev/null 2>&1 && fail "$name.sh -b 8 --help went on to run $(ls "$dir" | grep ran-)"
  rm -f "$dir"/ran-*
  [ -e "$dir/test-tree/kept" ] || fail "$name.sh -b 8 --help deleted FABRICBENCH_TEST_BUILD"
done
[ "$failures" -eq 0 ] && echo "ok   --help after other arguments"
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
