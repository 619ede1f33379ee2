#!/usr/bin/env bash
# scripts/setup.sh --runtime installs what building and running needs and
# none of the test-only set (Slurm, munge, clang, the test libraries); the
# default set keeps them; every name is a package apt knows.
#   setup_sets_test.sh path/to/scripts/setup.sh
set -u
setup=$1
fail() { echo "FAIL: $*"; exit 1; }
runtime=$(bash "$setup" --runtime --list) || fail "--runtime --list exited $?"
full=$(bash "$setup" --list) || fail "--list exited $?"
[ -n "$runtime" ] || fail "--runtime --list printed nothing"
for p in slurm-wlm munge clang libgtest-dev libbenchmark-dev chromium iperf3; do
  ! grep -qx "$p" <<<"$runtime" || fail "--runtime installs $p, which only the tests need"
  grep -qx "$p" <<<"$full" || fail "the default set lost $p"
done
for p in openmpi-bin libopenmpi-dev libyaml-cpp-dev cmake; do
  grep -qx "$p" <<<"$runtime" || fail "--runtime lacks $p, which building or running needs"
done
extra=$(comm -23 <(sort <<<"$runtime") <(sort <<<"$full"))
[ -z "$extra" ] || fail "--runtime has packages the default set lacks: $extra"
bash "$setup" --bogus >/dev/null 2>"${TMPDIR:-/tmp}/setup_err.$$"
rc=$?
err=$(cat "${TMPDIR:-/tmp}/setup_err.$$"); rm -f "${TMPDIR:-/tmp}/setup_err.$$"
[ "$rc" -eq 2 ] || fail "an unknown option exited $rc, not 2"
grep -q -- "--bogus" <<<"$err" || fail "the unknown option is not named: $err"
if command -v apt-cache >/dev/null; then
  # One call: apt loads its cache once (seconds), not once per package.
  # shellcheck disable=SC2086  # one package a word
  known=$(apt-cache show --no-all-versions $full 2>/dev/null | sed -n 's/^Package: //p' | sort -u)
  unknown=$(comm -23 <(sort -u <<<"$full") <(cat <<<"$known"))
  [ -z "$unknown" ] || fail "apt knows no package: $unknown"
fi
echo "ok: --runtime $(wc -l <<<"$runtime") packages, default $(wc -l <<<"$full")"
