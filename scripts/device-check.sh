#!/usr/bin/env bash
# The GPU check, in one go on a GPU machine (made for the one-H200 reference
# machine, about 3 minutes on 16 cores): build with what is installed there (no
# setup.sh, no network), run the gpu tests (the CPU tests are CI's), time NCCL, the copy
# paths and cuBLAS with fabricbench, and print LAST a table of our figures
# beside the reference figures (shared/notes/reference-figures.md) with
# ratios and pass/fail per target. Every step has a timeout; a failed step
# is reported and the later steps still run. Without a usable GPU it runs to
# the end and says which steps it skipped and why.
#   scripts/device-check.sh
# On the lent machine (the device tool brings back at most 8 files), as one call:
#   export FINAL=$OUT; mkdir -p /tmp/dc; OUT=/tmp/dc scripts/device-check.sh 2>&1 | tee /tmp/dc/console.txt;
#   cp /tmp/dc/summary.txt $FINAL/; tar czf $FINAL/dc.tgz -C /tmp dc
# (2026-12-04: 158-173 s of wall time there, the build 60-65 s of it.)
# Environment: OUT (logs and results; default results/device-check-<UTC>),
# FB_BUILD_DIR (default build-device), FB_JOBS (default: all cores),
# FB_DEADLINE_S (default 330: no step runs past it; the table still prints).
set -u
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/usage.sh" || exit 2
help_if_asked "$0" "$@"
here=$(cd "$(dirname "$0")/.." && pwd)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${OUT:-$here/results/device-check-$stamp}
build=${FB_BUILD_DIR:-$here/build-device}
jobs=${FB_JOBS:-$(nproc)}
deadline=$((SECONDS + ${FB_DEADLINE_S:-330}))
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep NCCL's init log out of the way; fabricbench reads it for the path column.
unset NCCL_DEBUG_FILE

echo "# command: $0 $*  (cwd $(pwd))"
echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)   host: $(hostname)   commit: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)"
echo "# output:  $out"

failed=()
# step NAME TIMEOUT_S CMD...: runs CMD under a timeout (cut to what is left
# before the deadline), its output in $out/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - SECONDS))
  if [ $left -lt 10 ]; then
    failed+=("$name")
    printf '# step %-14s skipped: the %ss deadline is reached\n' "$name" "${FB_DEADLINE_S:-330}"
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local verdict=ok
  [ $rc -eq 124 ] && verdict="TIMED OUT after ${limit}s"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && verdict="FAILED (exit $rc)"
  [ $rc -ne 0 ] && failed+=("$name")
  printf '# step %-14s %4ds  %s  (log: %s)\n' "$name" $((SECONDS - t0)) "$verdict" "$out/$name.log"
  return $rc
}

# --- the machine, read-only -----------------------------------------------
{
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,compute_cap,memory.total,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv 2>&1
  nvidia-smi topo -m 2>&1
  nvcc --version 2>&1 | tail -2
  grep -h "define NCCL_M\|define NCCL_PATCH" /usr/include/nccl.h 2>/dev/null
  mpirun --version 2>&1 | head -1
  cmake --version | head -1
} >"$out/machine.txt" 2>&1
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
arch_flag=()
[ -n "$arch" ] && arch_flag=(-DCMAKE_CUDA_ARCHITECTURES="$arch")  # this GPU only: a shorter build
gpu_name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "# GPU:     ${gpu_name:-none that nvidia-smi can see}"

# --- build -----------------------------------------------------------------
step configure 120 cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABRICBENCH_BENCH=OFF \
  "${arch_flag[@]}"
grep -h "fabricbench: CUDA" "$out/configure.log"
# -k 0: every compile error in one go (a device call is too dear for one error a try).
step build 300 cmake --build "$build" -j "$jobs" --target fabricbench fb_gpu_tests fb_gpu_cli_tests fb_topo_gpu_tests -- -k 0
bin=$build/fabricbench
one_rank=(mpirun -np 1 --bind-to none "$bin")

# --- tests -----------------------------------------------------------------
step ctest-gpu 150 ctest --test-dir "$build" -L gpu --output-on-failure
grep -E "tests passed|Skipped|Failed" "$out/ctest-gpu.log" | sed 's/^/#   /'
grep -m1 -h "no CUDA device:" "$out/ctest-gpu.log" | sed 's/^/#   skip reason: /'

# --- is there a GPU fabricbench can use? -----------------------------------
gpu_reason=""
if [ ! -x "$bin" ]; then
  gpu_reason="the build produced no fabricbench binary (see $out/build.log)"
else
  # The inventory first: what the record says this machine is.
  step topo 30 "$bin" topo --out "$out/topo.jsonl"
  timeout -k 10 60 "${one_rank[@]}" run --backend cuda --ops kernel_launch -b 8 -e 8 -n 3 -q \
    >"$out/probe.log" 2>&1
  gpu_reason=$(grep -m1 -o "is not usable: .*" "$out/probe.log" | sed 's/^is not usable: //')
fi

# --- benchmark ---------------------------------------------------------------
if [ -n "$gpu_reason" ]; then
  echo "# GPU steps skipped (nccl, nccl-graph, nccl-single, cuda, kernel-launch, gemm, gpu-step, check-spec, diagnose): $gpu_reason"
else
  # nccl-tests' reference run: one process, one GPU, -w 5 -n 20 (mean); ours: the median of 40 after 10.
  step nccl 90 "${one_rank[@]}" run --backend nccl --ops all_reduce,all_gather,sendrecv -b 8 -e 8G -f 4 -n 40 -w 10 \
    --progress off --out "$out/nccl.jsonl" --csv "$out/nccl.csv"
  step nccl-graph 45 "${one_rank[@]}" run --backend nccl --graph --ops all_reduce --placement out -b 8 -e 128M -f 8 -n 40 -w 10 \
    --progress off --out "$out/nccl-graph.jsonl" --csv "$out/nccl-graph.csv"
  # Without the watchdog MPI runs at MPI_THREAD_SINGLE (its header's
  # mpi_thread_level): NCCL's own threads must not mind.
  step nccl-single 30 "${one_rank[@]}" run --backend nccl --timeout 0 --ops all_reduce -b 8 -e 128M -f 8 -n 40 -w 10 \
    --progress off --out "$out/nccl-single.jsonl"
  step cuda 120 "${one_rank[@]}" run --backend cuda --ops copy_d2d_ce,copy_d2d_sm,copy_h2d_pinned,copy_d2h_pinned,copy_bidir_pinned,copy_h2d_pageable,copy_d2h_pageable \
    -b 64M -e 1G -f 4 -n 20 -w 5 -c --progress off --out "$out/cuda.jsonl" --csv "$out/cuda.csv"
  step kernel-launch 30 "${one_rank[@]}" run --backend cuda --ops kernel_launch -b 8 -e 8 -n 200 -w 20 --progress off \
    --csv "$out/kernel-launch.csv"
  step kernel-graph 30 "${one_rank[@]}" run --backend cuda --graph --ops kernel_launch -b 8 -e 8 -n 200 -w 20 --progress off \
    --csv "$out/kernel-graph.csv"
  step gemm 60 "${one_rank[@]}" gemm --size 8192 -n 20 -w 5 --out "$out/gemm.jsonl" --csv "$out/gemm.csv"
  # The training step with cuBLAS compute (issue 9), and an acceptance
  # profile on the GPU (1 rank: the intra/inter rules skip, saying why).
  step gpu-step 60 "${one_rank[@]}" step -w "$here/profiles/workloads/gpu-dp-1node.yaml" --backend nccl --steps 10 \
    --out "$out/step.jsonl"
  # The same step priced from the GPU's preset GEMM curve (issue 38): the
  # model gives each of the layer's products its own rate beside the one the
  # step measured for it, and plans the non-GEMM work, which runs as SM copies.
  sed 's|^  mfu: 40%|  gemm_curve: preset\n  of_gemm: 0.6|' "$here/profiles/workloads/gpu-dp-1node.yaml" \
    >"$out/gpu-dp-1node-curve.yaml"
  step gpu-step-curve 60 "${one_rank[@]}" step -w "$out/gpu-dp-1node-curve.yaml" --backend nccl --steps 10 \
    --out "$out/step-curve.jsonl"
  step check-spec 60 "${one_rank[@]}" check --profile generic-spec -q --progress off --out-dir "$out/check-generic-spec"
  # diagnose (issue 25): the NVML sampler on a real GPU, idle and then beside
  # a GEMM load (bf16 8192^3 products for ~8 s: SMs busy, a verdict of
  # compute-bound, or throttled when the power cap holds the clock down).
  # The --samples-out files are recorded series for tests/diagnose/fixtures.
  step diagnose-idle 20 "$bin" diagnose --seconds 2 --interval 0.25 --out "$out/diagnose-idle.jsonl" \
    --samples-out "$out/diagnose-idle-samples.json"
  # (timeout runs a program, not a shell function: the pair runs in its own bash.)
  step diagnose-gemm 60 env bin="$bin" out="$out" bash -c '
    "$bin" gemm --size 8192 -n 6000 -w 20 -q >"$out/diagnose-gemm-load.log" 2>&1 &
    load=$!
    sleep 2
    "$bin" diagnose --seconds 5 --interval 0.25 --out "$out/diagnose-gemm.jsonl" \
      --samples-out "$out/diagnose-gemm-samples.json"
    rc=$?
    wait $load
    [ $rc -le 1 ]  # 1 is a problem verdict (throttled, say): a finding, not a failure here'
  grep -h "fabricbench diagnose: .*: " "$out/diagnose-idle.log" "$out/diagnose-gemm.log" 2>/dev/null | sed 's/^/#   /'
  # Issue 18 on one GPU (the gpu tests above cover abort, graph abort, split
  # groups, poison alignment and NUMA placement): NCCL's own log of a run,
  # kept (a real fixture for the parser's tests) and read back by
  # `report nccl-log`; the path column of the same rows for comparison.
  step nccl-log 60 env NCCL_DEBUG_FILE="$out/nccl-debug.%h.%p.log" NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING \
    "${one_rank[@]}" run --backend nccl --ops all_reduce,all_gather,reduce_scatter -b 8 -e 256M -f 64 -n 5 -w 2 \
    --progress off --out "$out/nccl-log-run.jsonl" &&
    step nccl-log-report 30 sh -c "\"$bin\" report nccl-log \"$out\"/nccl-debug.*.log && \"$bin\" report nccl-log --format json \"$out\"/nccl-debug.*.log > \"$out/nccl-log-report.json\""
  # The SM copy kernel's launch bounds: 32 registers under (512, 4) vs 56 under
  # (512, 2) (ptxas); this run's copy_d2d_sm against copy_d2d_ce is the figure
  # to compare after rebuilding with kCopyBlocksPerSm = 2 (copy_kernels.cu).
  step sm-copy 60 "${one_rank[@]}" run --backend cuda --ops copy_d2d_ce,copy_d2d_sm -b 256M -e 1G -f 2 -n 20 -w 5 \
    --progress off --csv "$out/sm-copy.csv"
  # Issue 38: the products of one layer of two workloads (tp 1 and tp 8), and
  # square sizes for the curve; then the model prices the 7B layer from the
  # shapes record, as a user's workload would name it.
  step gemm-shapes-7b 60 "${one_rank[@]}" gemm --shapes-of "$here/profiles/workloads/llama-7b-zero1-2x8-h100.yaml" \
    -d bf16,fp16,fp8_e4m3 -n 20 -w 5 --out "$out/gemm-shapes-7b.jsonl"
  step gemm-shapes-70b 60 "${one_rank[@]}" gemm --shapes-of "$here/profiles/workloads/llama-70b-3d-16x8-h100.yaml" \
    -d bf16,fp16 -n 20 -w 5 --out "$out/gemm-shapes-70b.jsonl"
  step gemm-squares 60 "${one_rank[@]}" gemm -d bf16,fp16,fp8_e4m3 -n 20 -w 5 --out "$out/gemm-squares.jsonl" \
    --shape 512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,16384x16384x16384
  sed 's|^  mfu: 40%|  gemm_curve: gemm-shapes-7b.jsonl\n  of_gemm: 0.6|' \
    "$here/profiles/workloads/llama-7b-zero1-2x8-h100.yaml" >"$out/llama-7b-measured-gemm.yaml"
  step model-shapes 30 "$bin" model step -w "$out/llama-7b-measured-gemm.yaml" --network 8x400g-ndr-ib
  # (Two ranks on the one GPU are refused by the cuda backend as by NCCL,
  # exit 2 before any CUDA call: 2026-12-04. No multi-rank step fits one GPU.)
fi

# --- the table, last ---------------------------------------------------------
{
  echo
  echo "# fabricbench device check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname), ${gpu_name:-no GPU}"
  [ -n "$gpu_reason" ] && echo "# no GPU measurements: $gpu_reason"
  [ ${#failed[@]} -gt 0 ] && echo "# steps that failed: ${failed[*]} (logs in $out)"
  FABRICBENCH="$build/fabricbench" "$here/scripts/device-table.sh" "$out"
} | tee "$out/summary.txt"
