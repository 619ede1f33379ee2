#!/usr/bin/env bash
# Acceptance run on a cluster without Slurm: `fabricbench check` under mpirun
# over a hostfile, with the same outputs as scripts/slurm/acceptance.sbatch
# (results.jsonl, check.json, junit.xml in OUTDIR) and the verdict as the
# exit code: 0 pass, 1 a rule failed, 2 bad input, 3 the run did not finish
# (including the time limit).
#
#   scripts/acceptance-mpirun.sh --hostfile FILE [--np N] [--ppn N] [--time MINUTES] \
#       PROFILE [OUTDIR] [-- fabricbench check flags]
#
# --np: ranks in all (default: every slot of the hostfile); --ppn: ranks per
# node (one per GPU); --time: limit for the whole run (default 60 minutes).
# FABRICBENCH: the binary (default: build/fabricbench of this checkout, else
# the installed bin/fabricbench beside this script's share/fabricbench/scripts,
# else fabricbench on PATH);
# FB_MPIRUN_ARGS: extra mpirun flags (e.g. "--mca btl_tcp_if_include eth1").
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# The comment block above, as the usage text.
about() { awk 'NR == 1 {next} /^#/ {sub(/^# ?/, ""); print; next} {exit}' "$0"; }
usage() {
  about >&2
  exit 2
}

hostfile='' np='' ppn='' minutes=60
while [ $# -gt 0 ]; do
  case $1 in
    --hostfile) hostfile=${2:-}; shift 2 || usage ;;
    --np) np=${2:-}; shift 2 || usage ;;
    --ppn) ppn=${2:-}; shift 2 || usage ;;
    --time) minutes=${2:-}; shift 2 || usage ;;
    -h|--help) about; exit 0 ;;
    --) shift; break ;;
    -*) echo "acceptance-mpirun.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
profile=$1
shift
outdir=
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  outdir=$1
  shift
fi
[ "${1:-}" = "--" ] && shift

[ -n "$hostfile" ] || { echo "acceptance-mpirun.sh: --hostfile FILE is required (one 'host slots=N' per line)" >&2; exit 2; }
[ -r "$hostfile" ] || { echo "acceptance-mpirun.sh: cannot read hostfile '$hostfile'" >&2; exit 2; }
for v in "$np" "$ppn" "$minutes"; do
  [[ -z $v || $v =~ ^[1-9][0-9]*$ ]] || { echo "acceptance-mpirun.sh: '$v' is not a positive whole number" >&2; exit 2; }
done
fabricbench=$("$(dirname "$(readlink -f "$0")")/lib/fabricbench-binary.sh" acceptance-mpirun.sh) || exit 2
outdir=${outdir:-$PWD/fabricbench-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$outdir" || exit 2

args=(--hostfile "$hostfile" --bind-to none)
[ -n "$np" ] && args+=(-np "$np")
[ -n "$ppn" ] && args+=(--map-by "ppr:$ppn:node")
[ "$(id -u)" -eq 0 ] && args+=(--allow-run-as-root)

echo "fabricbench acceptance: profile $profile, hostfile $hostfile${np:+, $np ranks}${ppn:+, $ppn per node}"
echo "outputs: $outdir/{results.jsonl,check.json,junit.xml}"
# Outputs older than this marker are an earlier run's (kept under --overwrite until replaced).
marker=$(mktemp "$outdir/.launch.XXXXXX") || exit 2
# shellcheck disable=SC2086  # FB_MPIRUN_ARGS is a list of flags
timeout --kill-after=30 "$((minutes * 60))" mpirun "${args[@]}" ${FB_MPIRUN_ARGS:-} \
  "$fabricbench" check --profile "$profile" --out-dir "$outdir" --progress off "$@"
launch_rc=$?

# The verdict comes from check.json, never from mpirun's code: a check.json
# written by this launch (newer than the marker) carries the exit code; none
# at all means fabricbench never got to judge anything.
json=$outdir/check.json
if [ -s "$json" ] && [ "$json" -nt "$marker" ]; then
  # Read through the binary ("STATUS EXIT_CODE"), never by matching the file's text.
  if verdict=$("$fabricbench" report verdict "$json"); then
    rc=${verdict##* }
  else
    echo "nothing ran: $json holds no verdict (mpirun exit $launch_rc)"
    rc=3
  fi
elif [ "$launch_rc" -eq 2 ]; then
  rc=2  # fabricbench refused its input before running (its message is above)
else
  case $launch_rc in
    124|137) why="mpirun did not start fabricbench within $minutes minutes" ;;
    *) why="mpirun exit $launch_rc before fabricbench wrote $json (MPI_Init abort, a bad mpirun flag, daemons that did not start: see the lines above)" ;;
  esac
  echo "nothing ran: $why"
  rm -f "$marker"
  exit 3
fi
rm -f "$marker"

case $rc in
  0) echo "verdict: PASS (every rule passed; optional ones may have been skipped, with their reason)" ;;
  1) echo "verdict: FAIL (a rule failed or could not be judged: see the table above and $outdir/junit.xml)" ;;
  2) echo "verdict: bad input (profile, flags, baseline, or outputs of an earlier check in $outdir: add -- --overwrite to replace them; nothing judged)" ;;
  *)
    case $launch_rc in
      124|137) echo "verdict: the run did not finish within $minutes minutes; $json says so" ;;
      *) echo "verdict: the run did not finish (mpirun exit $launch_rc); $json says why" ;;
    esac
    rc=3
    ;;
esac
exit $rc
