# Shared by the install tests: a temporary folder that is removed on exit,
# failures that name what went wrong, and a clean environment with nothing
# pointing back into the checkout.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fb_install.XXXXXX") || exit 1
tmp=$(cd "$tmp" && pwd -P)  # the binary sees its own folder with links resolved
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
# Run from a folder outside the checkout, without the overrides.
outside() { (cd "$tmp/work" && env -u FABRICBENCH_PROFILES -u FABRICBENCH_PLUGIN_DIR "$@"); }
mkdir -p "$tmp/work"

# A 2-rank run of the binary $1 from outside the checkout: exit 0 and a
# record with measurement rows and a complete summary, read through the
# installed binary (report rows, report status), not by matching its text.
two_rank_run() {
  local fb=$1 mpiexec=$2 out=$tmp/work/run.jsonl
  rm -f "$out"
  outside timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -np 2 \
    "$fb" run -b 8 -e 64 -n 2 --progress off -q --out "$out" >"$tmp/run.log" 2>&1 ||
    { cat "$tmp/run.log"; fail "2-rank run of $fb exited $?"; }
  local rows status
  rows=$(outside "$fb" report rows "$out" | tail -n +2 | wc -l)
  [ "$rows" -gt 0 ] || fail "$out has no measurement rows"
  status=$(outside "$fb" report status "$out") || fail "$fb report status $out exited $?"
  [ "$status" = complete ] || fail "$out does not end complete: $status"
  echo "ok: 2-rank run of $fb: $rows rows, complete"
}

# `check --list-profiles` of the binary $1 lists every shipped profile of the
# source tree $2, from the folder $3.
lists_shipped_profiles() {
  local fb=$1 src=$2 dir=$3 list p n=0
  list=$(outside "$fb" check --list-profiles 2>&1) || fail "$fb check --list-profiles exited $?: $list"
  grep -qxF "profiles in $dir:" <<<"$list" || fail "profiles not listed from $dir:"$'\n'"$list"
  for p in "$src"/profiles/*.yaml; do
    p=$(basename "$p" .yaml)
    grep -q "^  $p " <<<"$list" || fail "profile $p not listed:"$'\n'"$list"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "no profiles in $src/profiles"
  ! grep -q 'does not parse' <<<"$list" || fail "a shipped profile does not parse:"$'\n'"$list"
  echo "ok: $n profiles listed from $dir"
}
