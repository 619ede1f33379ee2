#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then, from a folder outside the
# checkout with FABRICBENCH_PROFILES and FABRICBENCH_PLUGIN_DIR unset, what a
# user on a rented node does first: list the profiles, topo, a 2-rank run,
# the installed acceptance script with the installed binary.
#   install_prefix_test.sh BUILD_DIR SOURCE_DIR MPIEXEC
. "$(dirname "$0")/common.sh"
build=$1 src=$2 mpiexec=$3
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
fb=$prefix/bin/fabricbench
[ -x "$fb" ] || fail "no $fb after cmake --install"
data=$prefix/share/fabricbench
for f in share/man/man1/fabricbench.1.gz share/doc/fabricbench/README.md share/doc/fabricbench/docs/results-schema.md \
  share/fabricbench/scripts/slurm/acceptance.sbatch share/fabricbench/scripts/slurm/drain-blamed.sh \
  share/fabricbench/scripts/slurm/health-check.sh share/fabricbench/scripts/acceptance-mpirun.sh \
  share/fabricbench/scripts/emulate-cluster.sh share/fabricbench/scripts/plot.py share/fabricbench/scripts/plots/curves.py \
  share/fabricbench/scripts/lib/fabricbench-binary.sh; do
  [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
# The page gzip'd (Debian policy) and still the checkout's page.
gzip -dc "$prefix/share/man/man1/fabricbench.1.gz" | cmp -s - "$src/docs/fabricbench.1" ||
  fail "share/man/man1/fabricbench.1.gz is not docs/fabricbench.1 compressed"
# Every profile, preset, workload and quote of the checkout, and nothing else.
(cd "$src/profiles" && find . -name '*.yaml' | sort) >"$tmp/want"
(cd "$data/profiles" && find . -name '*.yaml' | sort) >"$tmp/got"
diff "$tmp/want" "$tmp/got" >/dev/null || fail "installed profiles differ from the checkout's: $(diff "$tmp/want" "$tmp/got")"
echo "ok: installed $(wc -l <"$tmp/got") YAML files, the man page, docs and scripts"

lists_shipped_profiles "$fb" "$src" "$data/profiles"
# A profile folder that is not there is bad input (exit 2) naming it, never an empty list.
err=$(cd "$tmp/work" && FABRICBENCH_PROFILES=$tmp/no-such-folder "$fb" check --list-profiles 2>&1 >/dev/null)
rc=$?
[ "$rc" -eq 2 ] || fail "--list-profiles with a missing FABRICBENCH_PROFILES folder exited $rc, not 2: $err"
grep -qF "'$tmp/no-such-folder' (FABRICBENCH_PROFILES)" <<<"$err" || fail "the missing folder is not named: $err"
echo "ok: a missing profile folder exits 2: ${err%%$'\n'*}"
outside "$fb" topo >"$tmp/topo.log" 2>&1 || { cat "$tmp/topo.log"; fail "$fb topo exited $?"; }
[ -s "$tmp/topo.log" ] || fail "$fb topo printed nothing"
echo "ok: topo"
two_rank_run "$fb" "$mpiexec"
version=$(outside "$fb" --version) || fail "$fb --version exited $?"
grep -q "plugins  *$prefix/lib/fabricbench\$\|plugins  *none: " <<<"$version" ||
  fail "--version does not look for the plugins beside the installed binary:"$'\n'"$version"
# The installed record and --version name nothing of the build tree.
! grep -qF "$build" "$tmp/work/run.jsonl" || fail "the installed binary points back into $build"
! grep -qF "$build" <<<"$version" || fail "--version of the installed binary names $build:"$'\n'"$version"

# The installed mpirun acceptance job finds the installed binary by itself.
cat >"$tmp/work/tiny.yaml" <<'YAML'
name: install-tiny
description: one all_reduce size checked, one rule
source: tests/install/install_prefix_test.sh
backend: mpi
sweeps:
  - name: one
    ops: [all_reduce]
    scopes: [global]
    minbytes: 64
    maxbytes: 64
    iters: 2
    warmup: 0
    check: true
rules:
  - name: every element right
    kind: correctness
YAML
echo "localhost slots=2" >"$tmp/work/hosts"
outside env -u FABRICBENCH PATH=/usr/bin:/bin FB_MPIRUN_ARGS=--oversubscribe "$data/scripts/acceptance-mpirun.sh" \
  --hostfile hosts --np 2 --time 2 tiny.yaml acc -- -q >"$tmp/acc.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/acc.log"; fail "installed acceptance-mpirun.sh exited $rc"; }
grep -q '"exit_code": 0' "$tmp/work/acc/check.json" || fail "acceptance-mpirun.sh: check.json does not pass"
echo "ok: installed acceptance-mpirun.sh ran the installed binary: $(grep '^verdict:' "$tmp/acc.log")"
# The installed Slurm job finds the installed binary on PATH (sbatch passes
# the submitting shell's on); srun here is a stand-in that starts the same
# command line under mpirun, as srun would on the allocation.
mkdir -p "$tmp/stub"
cat >"$tmp/stub/srun" <<STUB
#!/usr/bin/env bash
while [[ \$1 == --* ]]; do shift; done  # srun's own flags
exec "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -np 2 "\$@"
STUB
chmod +x "$tmp/stub/srun"
outside env -u FABRICBENCH PATH="$tmp/stub:$prefix/bin:/usr/bin:/bin" SLURM_SUBMIT_DIR="$tmp/work" \
  bash "$data/scripts/slurm/acceptance.sbatch" tiny.yaml sbatch-out -- -q >"$tmp/sbatch.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/sbatch.log"; fail "installed acceptance.sbatch exited $rc"; }
grep -q '"exit_code": 0' "$tmp/work/sbatch-out/check.json" || fail "acceptance.sbatch: check.json does not pass"
echo "ok: installed acceptance.sbatch ran fabricbench from PATH: $(grep '^verdict:' "$tmp/sbatch.log")"
echo "installed size: $(du -sh "$prefix" | cut -f1) in all; binary $(du -h "$fb" | cut -f1) (unstripped)" \
  "$( [ -d "$prefix/lib/fabricbench" ] && echo "; plugins $(du -sh "$prefix/lib/fabricbench" | cut -f1)")"
