#!/usr/bin/env bash
# A real Slurm on this machine, for one test: munged, slurmctld and slurmd
# from Debian's packages, every state, spool, pid, log and socket file under
# a fresh temporary folder, free ports picked at start (other people may run
# this test at the same time). Submits scripts/slurm/acceptance.sbatch with
# sbatch (one job that must pass, one that must fail on an impossible
# threshold, one whose profile does not parse), checks each job's exit code
# and its JUnit and JSON files; then drains: a job with FB_DRAIN=1 whose
# check blames the node drains it with the rule as the reason, a passing one
# leaves it alone, and scripts/slurm/health-check.sh does the same as
# slurmd's HealthCheckProgram. Stops exactly the daemons it started, by PID,
# whatever happens.
#
#   tests/slurm/slurm_acceptance_test.sh FABRICBENCH_BINARY SOURCE_DIR
set -uo pipefail

binary=${1:?usage: slurm_acceptance_test.sh FABRICBENCH_BINARY SOURCE_DIR}
src=${2:?usage: slurm_acceptance_test.sh FABRICBENCH_BINARY SOURCE_DIR}
python=${PYTHON:-python3}

for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$tool" >/dev/null || { echo "SKIP-FAIL: $tool not installed (scripts/setup.sh installs slurm-wlm and munge)"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "FAIL: the Slurm test runs its own slurmd, which needs root"; exit 1; }

tmp=$(mktemp -d /tmp/fb-slurm.XXXXXX)
pids=()
waiter=
failures=0

stop_daemons() {
  local pid
  # A signal while sbatch --wait ran: stop it (timeout passes the signal on),
  # or it would poll the stopped slurmctld until its own timeout.
  if [ -n "$waiter" ]; then
    kill -TERM "$waiter" 2>/dev/null
    wait "$waiter" 2>/dev/null
  fi
  # Jobs first, so no step outlives its slurmd; then the daemons, newest first.
  [ -f "$tmp/slurm.conf" ] && SLURM_CONF=$tmp/slurm.conf timeout 10 scancel --quiet --user=root >/dev/null 2>&1
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
}

cleanup() {
  local rc=$?
  stop_daemons
  if [ "$rc" -ne 0 ] || [ "$failures" -ne 0 ]; then
    for log in "$tmp"/*.log "$tmp"/job-*.out; do
      [ -f "$log" ] && { echo "---- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start_munge() {
  dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
  chmod 400 "$tmp/munge.key"
  munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" \
    >>"$tmp/munged.stdout.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do [ -S "$tmp/munge.sock" ] && return 0; sleep 0.1; done
  echo "FAIL: munged did not open its socket"
  exit 1
}

write_conf() {
  local host ctld_port slurmd_port
  host=$(hostname -s)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
  mkdir -p "$tmp/state" "$tmp/spool" "$tmp/pmix"
  # A job id range of its own, so two of these tests never share PMIx names.
  cat >"$tmp/slurm.conf" <<CONF
ClusterName=fbtest$$
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
TmpFS=$tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
FirstJobId=$(( (RANDOM * 32768 + RANDOM) % 60000000 + 1000 ))
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES OverSubscribe=YES MaxTime=INFINITE State=UP
CONF
  echo "PMIxCliTmpDirBase=$tmp/pmix" >"$tmp/mpi.conf"
}

start_slurm() {
  export SLURM_CONF=$tmp/slurm.conf
  slurmctld -D -f "$SLURM_CONF" >>"$tmp/slurmctld.stdout.log" 2>&1 &
  pids+=($!)
  slurmd -D -f "$SLURM_CONF" >>"$tmp/slurmd.stdout.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 150); do
    [ "$(timeout 5 sinfo -h -o %T 2>/dev/null)" = "idle" ] && return 0
    sleep 0.2
  done
  echo "FAIL: the Slurm node did not become idle within 30 s"
  timeout 5 sinfo 2>&1
  exit 1
}

# submit NAME PROFILE EXPECTED_EXIT [SRUN_ARGS [CHECK_FLAGS]]: runs the acceptance job and checks it.
submit() {
  local name=$1 profile=$2 expected=$3 srun_args=${4:-} check_flags=${5:-} out job rc state
  out=$tmp/out-$name
  cd "$src" || exit 1
  # In the background and waited for, so a signal to this script runs the
  # clean-up at once instead of after sbatch returns.
  # shellcheck disable=SC2086  # check_flags is a list of flags
  FB_SRUN_ARGS=$srun_args FABRICBENCH=$binary timeout 240 sbatch --parsable --wait --nodes=1 --ntasks=2 --time=4 \
    --output="$tmp/job-$name.out" scripts/slurm/acceptance.sbatch "$profile" "$out" -- -q $check_flags >"$tmp/job-$name.id" &
  waiter=$!
  wait $waiter
  rc=$?
  waiter=
  job=$(cat "$tmp/job-$name.id")
  echo "job $job ($name): sbatch --wait exit $rc"
  [ "$rc" -eq 124 ] && { fail "$name: the job did not end within 240 s"; return; }
  [ "$rc" -eq "$expected" ] || fail "$name: job exit code $rc, expected $expected"
  state=$(scontrol show job "$job" 2>/dev/null | grep -o 'ExitCode=[0-9]*:[0-9]*' | head -1)
  [ "$state" = "ExitCode=$expected:0" ] || fail "$name: slurmctld reports $state, expected ExitCode=$expected:0"
  echo "  $state, last line: $(tail -n 1 "$tmp/job-$name.out")"
  if [ "$name" = launch ]; then
    # srun refused its flags: no fabricbench ran, nothing was judged.
    grep -q "^nothing ran: srun exit " "$tmp/job-$name.out" || fail "$name: no 'nothing ran' line"
    grep -q "verdict: FAIL" "$tmp/job-$name.out" && fail "$name: a launch failure called a FAIL"
    [ ! -e "$out/check.json" ] || fail "$name: check.json exists though nothing ran"
    return
  fi
  grep -q "verdict: " "$tmp/job-$name.out" || fail "$name: the job's output has no verdict line"
  if [ "$expected" -eq 2 ]; then
    # A profile that does not parse: one message naming it, nothing judged or written.
    grep -q "fabricbench check: .*unknown key 'colour'" "$tmp/job-$name.out" || fail "$name: no message naming the bad key"
    [ ! -e "$out/junit.xml" ] || fail "$name: a bad profile left a junit.xml"
    return
  fi
  check_outputs "$name" "$out" "$expected"
}

# The job's folder: JUnit parsed by a real XML parser, counts agreeing with check.json.
check_outputs() {
  local name=$1 out=$2 expected=$3
  for f in results.jsonl check.json junit.xml; do
    [ -s "$out/$f" ] || { fail "$name: $out/$f missing"; return; }
  done
  "$python" - "$out" "$expected" "$src/tests/accept/junit_counts.py" "$binary" <<'PY' || fail "$name: outputs disagree (above)"
import json, subprocess, sys
out, expected, counter, binary = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
report = json.load(open(f"{out}/check.json"))
junit = json.loads(subprocess.run([sys.executable, counter, f"{out}/junit.xml"], check=True,
                                  capture_output=True, text=True).stdout)
suite, counts = junit["testsuite"], report["counts"]
problems = []
if report["exit_code"] != expected: problems.append(f"check.json exit_code {report['exit_code']}")
# One testcase per node of the job, failing when a failed rule blames it (check.json "bad").
# The record's header as the binary reads it (`report lines`), not the file's text.
header = json.loads(subprocess.run([binary, "report", "lines", f"{out}/results.jsonl"], check=True,
                                   capture_output=True, text=True).stdout.splitlines()[0])
nodes, bad_nodes = len(junit["node_names"]), len({b["host"] for b in report["bad"]})
if junit["node_names"] != header.get("hosts"): problems.append(f"junit nodes {junit['node_names']} vs {header.get('hosts')}")
# A run that did not finish: its own "run" testcase beside every rule's, and every node's, all errors.
extra = 1 if expected == 3 else 0
node_errors = nodes if expected == 3 else 0
node_failures = 0 if expected == 3 else bad_nodes
if junit["node_failure_cases"] != node_failures: problems.append(f"junit node failures {junit['node_failure_cases']} vs {report['bad']}")
if int(suite["tests"]) != sum(counts.values()) + extra + nodes: problems.append(f"junit tests {suite['tests']} vs {counts}")
if int(suite["failures"]) != counts["fail"] + node_failures: problems.append(f"junit failures {suite['failures']} vs {counts}")
if int(suite["errors"]) != counts["error"] + extra + node_errors: problems.append(f"junit errors {suite['errors']} vs {counts}")
if expected == 3 and (report["status"] != "incomplete" or counts["error"] != len(report["verdicts"]) or not report["verdicts"]):
    problems.append(f"an unfinished run: status {report['status']}, counts {counts}, {len(report['verdicts'])} rules")
if junit["failure_cases"] != counts["fail"] + node_failures: problems.append("failure elements do not match the count")
if expected == 1 and counts["fail"] < 1: problems.append("a failing job without a failed rule")
if report["ranks"] != 2: problems.append(f"ranks {report['ranks']}, expected 2")
if header.get("command") != "check" or header.get("ranks") != 2: problems.append(f"record header {header}")
for p in problems: print("  " + p)
sys.exit(1 if problems else 0)
PY
}

start_munge
write_conf
start_slurm
echo "slurm up: $(sinfo -h -o '%N %T %c CPUs') (conf $SLURM_CONF)"

cat >"$tmp/impossible.yaml" <<'YAML'
name: impossible
description: "fails on purpose: no machine reaches 1000 TB/s"
source: the Slurm acceptance test
backend: mpi
sweeps:
  - {ops: [all_reduce], minbytes: 64K, maxbytes: 64K, iters: 5, check: true}
rules:
  - {name: busbw beyond any machine, kind: absolute, op: all_reduce, size: 64K, metric: busbw, min: 1000 TB/s}
  - {name: element check, kind: correctness}
YAML

cat >"$tmp/bad.yaml" <<'YAML'
name: bad
backend: mpi
sweeps:
  - {ops: [all_reduce], minbytes: 64K, maxbytes: 64K, iters: 5, check: true}
rules:
  - {kind: correctness, colour: red}
YAML

submit pass local-smoke 0
submit fail "$tmp/impossible.yaml" 1
submit bad "$tmp/bad.yaml" 2
submit launch local-smoke 3 --no-such-srun-flag
submit hang local-smoke 3 "" "--timeout 3 --inject hang:rank=1,op=all_gather,after=3"

# Draining (issue 36): the node's state and drain reason as slurmctld has them.
node=$(hostname -s)
node_state() { timeout 10 sinfo -h -n "$node" -o '%T|%E' 2>/dev/null; }
expect_left_alone() {  # WHAT
  case $(node_state) in
    *drain*) fail "$1: the node was drained: $(node_state)" ;;
    *) echo "  $1: node left alone ($(node_state))" ;;
  esac
}
expect_drained() {  # WHAT RULE: drained, the reason naming the rule; then resumed
  local state
  state=$(node_state)
  case $state in
    *drain*"|fabricbench: "*"$2"*) echo "  $1: drained: $state" ;;
    *) fail "$1: expected the node drained for '$2', it is: $state" ;;
  esac
  scontrol update nodename="$node" state=resume 2>/dev/null
  for _ in $(seq 50); do [ "$(timeout 5 sinfo -h -n "$node" -o %T)" = idle ] && return; sleep 0.2; done
  fail "$1: the node did not come back to idle after resume: $(node_state)"
}

# The acceptance job drains what its failed check blames, and nothing when it passes.
export FB_DRAIN=1
submit drain-pass local-smoke 0
expect_left_alone "a passing job with FB_DRAIN=1"
submit drain-fail local-smoke 1 "" "--inject corrupt:rank=1,op=all_reduce"
expect_drained "a job whose rank 1 returned wrong elements" "every element right"
unset FB_DRAIN

# The node's own health check, as slurmd would run it (root, SLURMD_NODENAME).
health() {  # NAME PROFILE EXPECTED_EXIT
  local rc
  SLURMD_NODENAME=$node FABRICBENCH=$binary FB_HEALTH_OUT=$tmp/health-$1 FB_HEALTH_TIME=120 \
    "$src/scripts/slurm/health-check.sh" "$2" >"$tmp/health-$1.log" 2>&1
  rc=$?
  echo "health-check $1: exit $rc, $(tail -n 1 "$tmp/health-$1.log")"
  [ "$rc" -eq "$3" ] || { fail "health-check $1: exit $rc, expected $3"; cat "$tmp/health-$1.log"; }
}
health pass local-smoke 0
expect_left_alone "a healthy node's health check"
health bad "$tmp/bad.yaml" 2
expect_left_alone "a health check whose profile does not parse"
health fail "$tmp/impossible.yaml" 0
expect_drained "a health check failing on a measured figure" "busbw beyond any machine"

if [ "$failures" -ne 0 ]; then
  echo "slurm acceptance test: $failures failures"
  exit 1
fi
echo "slurm acceptance test: passed"
