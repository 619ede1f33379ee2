#!/usr/bin/env python3
"""Every shell command with a fabricbench call in the guides' code blocks runs as written.

The guides are README.md, docs/*.md and the man page (doc_flags_test.py reads
them the same way and checks every call's flags against --help). Each command
line runs with bash in a scratch folder that holds what the commands name:
`profiles/`, `build/` (the binary's folder) and `fabricbench` on PATH, and the
inputs the guides assume, each made by the binary first (a two-rank sweep as
results/run.jsonl, vendor-a/b.jsonl; a sweep over two "nodes" for the model's
--network; topo.jsonl; a local-smoke check in check-x/; W.yaml is a shipped
workload). A command that needs what this machine lacks runs only as far as
doc_flags_test.py takes it (the command and its flags against --help) and is
listed in NEEDS below with the missing piece; the test prints how many ran
and how many only that far, and why. A command that exits non-zero fails.

  doc_commands_test.py BINARY REPO_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import doc_flags_test as docs  # noqa: E402  (the same extraction)

# What a command needs that CI lacks, by a pattern of its text; the first match decides.
NEEDS = [
    (r"--hostfile|\bsrun\b|\bsbatch\b", "the nodes of a cluster (a hostfile or Slurm)"),
    (r"--backend (nccl|cuda|mpi-cuda)|fabricbench gemm", "a GPU (GPU code runs in CI through the device double, "
                                                         "tests/double)"),
    (r"\$\(pgrep", "a training process to watch"),
    (r"--gpus-from", "a topo record of GPU nodes"),
    (r"/run/fabricbench-emu/", "the emulated nodes of scripts/emulate-cluster.sh"),
    (r"nccl\.\*\.log|_perf\.(log|json)", "nccl-tests' or NCCL's own output"),
    (r"/usr/share/fabricbench", "an installed package (tests/install runs the installed binary)"),
    (r"--duration 30m", "half an hour"),
    (r"--path /shared|--storage storage\.jsonl", "a shared filesystem to measure"),
    (r"mpirun -np (1[0-9]|[5-9]|[2-9][0-9])\b", "more ranks than this 2-core machine holds"),
]
SECONDS = 180


def commands(root):
    """(guide:line, command) for each code-block line that calls fabricbench."""
    guides = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "docs" / "fabricbench.1"]
    for guide in guides:
        for no, line in docs.joined(code_block_lines(guide)):
            if any(True for _ in docs.calls(line)):
                yield f"{guide.relative_to(root)}:{no}", line


def code_block_lines(path):
    """Like docs.code_lines, without the inline `fabricbench ...` of the prose, which are names, not commands."""
    text = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".1":
        inside = False
        for no, line in enumerate(text, 1):
            if line.startswith(".nf") or line.startswith(".EX"):
                inside = True
            elif line.startswith(".fi") or line.startswith(".EE"):
                inside = False
            elif inside and not line.startswith("."):
                yield no, line.replace("\\-", "-").replace("\\\\", "\\").strip()
        return
    fenced = False
    for no, line in enumerate(text, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    ") or line.startswith("\t"):
            yield no, line.strip()


def prepare(scratch, binary, root, env):
    """The inputs the guides assume, made by the binary."""
    (scratch / "profiles").symlink_to(root / "profiles")
    (scratch / "build").symlink_to(Path(binary).parent)
    (scratch / "results").mkdir()
    shutil.copy(root / "profiles/workloads/llama-7b-zero1-2x8-h100.yaml", scratch / "W.yaml")
    mpirun = "mpirun -np 2 --oversubscribe --bind-to none"
    steps = [
        # Two "nodes" of one rank each, so the record has inter rows for --network.
        f"{mpirun} -x FABRICBENCH_RANKS_PER_NODE=1 fabricbench run -b 8 -e 1M -f 8 -n 5 -w 1 --scope all "
        "--progress off -q --out results/run.jsonl",
        f"{mpirun} fabricbench run -b 8 -e 1M -f 8 -n 5 -w 1 --progress off -q --out vendor-a.jsonl",
        f"{mpirun} fabricbench run -b 8 -e 1M -f 8 -n 5 -w 1 --progress off -q --out vendor-b.jsonl",
        "fabricbench topo --out topo.jsonl -q",
        f"{mpirun} fabricbench check --profile local-smoke -q --progress off --out-dir check-x",
    ]
    for step in steps:
        r = subprocess.run(["bash", "-c", step], cwd=scratch, env=env, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            sys.exit(f"FAIL: making the guides' inputs: `{step}` exited {r.returncode}\n{r.stdout}{r.stderr}")


def shipped_files(root, scratch_env, failures):
    """Every example file in profiles/: each acceptance profile loads, each workload and quotes file prices."""
    fb = ["fabricbench"]
    listed = subprocess.run(fb + ["check", "--list-profiles"], env=scratch_env, capture_output=True, text=True).stdout
    n = 0
    for profile in sorted((root / "profiles").glob("*.yaml")):
        n += 1
        if not re.search(rf"^\s+{re.escape(profile.stem)}\s.*\d+ rules\]$", listed, re.M):
            failures.append(f"profiles/{profile.name} does not load: `fabricbench check --list-profiles` says\n{listed}")
    workload = root / "profiles/workloads/llama-7b-zero1-2x8-h100.yaml"
    runs = [fb + ["model", "step", "-w", str(w), "--network", "8x400g-ndr-ib"]
            for w in sorted((root / "profiles/workloads").glob("*.yaml"))]
    runs += [fb + ["model", "quotes", "-w", str(workload), "-q", str(q)]
             for q in sorted((root / "profiles/quotes").glob("*.yaml"))]
    for cmd in runs:
        n += 1
        r = subprocess.run(cmd, env=scratch_env, capture_output=True, text=True, timeout=SECONDS)
        print(f"{'ok  ' if r.returncode == 0 else 'FAIL'} {' '.join(cmd[1:])}")
        if r.returncode != 0:
            failures.append(f"exit {r.returncode}: {' '.join(cmd)}\n{r.stderr[-1500:]}")
    return n


def main():
    binary, root = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    env = dict(os.environ, PATH=f"{Path(binary).parent}:{os.environ['PATH']}",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ran, parsed, failures = 0, {}, []
    with tempfile.TemporaryDirectory(prefix="fb_doc_commands_") as tmp:
        scratch = Path(tmp)
        prepare(scratch, binary, root, env)
        for where, line in commands(root):
            need = next((why for pattern, why in NEEDS if re.search(pattern, line)), None)
            if need:
                parsed.setdefault(need, []).append(where)
                continue
            try:
                r = subprocess.run(["bash", "-c", line], cwd=scratch, env=env, capture_output=True, text=True,
                                   timeout=SECONDS)
                code, text = r.returncode, r.stdout[-1500:] + r.stderr[-1500:]
            except subprocess.TimeoutExpired:
                code, text = "timeout", f"still running after {SECONDS} s"
            ran += 1
            print(f"{'ok  ' if code == 0 else 'FAIL'} {where}: {line}")
            if code != 0:
                failures.append(f"{where}: exit {code}: {line}\n{text}")
    shipped = shipped_files(root, scratch_env=env, failures=failures)
    for f in failures:
        print("FAIL:", f)
    only = sum(len(v) for v in parsed.values())
    print(f"{ran} documented commands ran as written and {shipped} shipped example files loaded or priced, "
          f"{len(failures)} failed; {only} commands ran only as far as doc_flags_test.py's parse, lacking:")
    for need, where in sorted(parsed.items()):
        print(f"  {len(where):3d}  {need}: {', '.join(where)}")
    if ran < 15 or shipped < 10:
        print(f"FAIL: only {ran} commands and {shipped} files: the extraction no longer matches the guides")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
