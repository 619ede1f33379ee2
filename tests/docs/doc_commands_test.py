#!/usr/bin/env python3
"""Every shell command in the guides' code blocks runs as written.

The guides are README.md, docs/*.md and the man page (doc_flags_test.py reads
them the same way and checks every fabricbench call's flags against --help).
A command is a code-block line that calls fabricbench or starts with one of
the tools in TOOL (a script of this repository, cmake, kubectl, sbatch...).
Each runs with bash in a scratch folder that holds what the commands name:
`profiles/`, `scripts/`, `build/` (the binary's folder) and `fabricbench` on
PATH, and the inputs the guides assume, each made by the binary first (a
two-rank sweep as results/run.jsonl, vendor-a/b.jsonl; a sweep over two
"nodes" for the model's --network; a pairs record of two "nodes";
topo.jsonl; a local-smoke check in check-x/; W.yaml is a shipped workload).
A command that needs what this machine lacks runs only as far as its parse:
doc_flags_test.py's for a fabricbench call, and for a script of the
repository, its --help naming every --flag the command gives it. It is
listed in NEEDS below with the missing piece, and with the test that runs it
where one does; the test prints how many ran and how many only that far,
and why. A command fails unless it exits as the guide's comment on its line
says (`# exits 1`; 0 where it says nothing) and prints each `prints "TEXT"`
the comment names.

With --emulated (root: the cluster label) it runs instead the guides'
commands on emulated nodes (scripts/emulate-cluster.sh), in the guides'
order, and takes down every cluster they brought up, pass or fail.

  doc_commands_test.py BINARY REPO_ROOT [--emulated]
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import doc_flags_test as docs  # noqa: E402  (the same extraction)

# A code-block line that starts with one of these (after sudo) is a command even without fabricbench in it.
TOOL = re.compile(r"^(sudo\s+)?(scripts/[\w./-]+|\.ci/run|cmake|cpack|ctest|apt-get|dpkg-deb|kubectl|sbatch|srun|"
                  r"salloc|mkdir|cd|for|python3)(\s|$)")
EMULATED = r"/run/fabricbench-emu/|scripts/emulate-cluster\.sh"
# What a command needs that CI lacks, by a pattern of its text; the first match decides.
NEEDS = [
    (r"--hostfile|\bsrun\b|\bsbatch\b", "the nodes of a cluster (a hostfile or Slurm)"),
    (r"--backend (nccl|cuda|mpi-cuda)|fabricbench gemm", "a GPU (GPU code runs in CI through the device double, "
                                                         "tests/double)"),
    (r"\$\(pgrep", "a training process to watch"),
    (r"--gpus-from", "a topo record of GPU nodes"),
    (EMULATED, "root and network namespaces (cluster.docs.emulated_nodes runs these, in order)"),
    (r"nccl\.\*\.log|_perf\.(log|json)", "nccl-tests' or NCCL's own output"),
    (r"/usr/share/fabricbench", "an installed package (tests/install runs the installed binary)"),
    (r"--duration 30m", "half an hour"),
    (r"--path /shared|--storage storage\.jsonl", "a shared filesystem to measure"),
    (r"mpirun -np (1[0-9]|[5-9]|[2-9][0-9])\b", "more ranks than this 2-core machine holds"),
    (r"^scripts/quickstart\.sh", "a setup and a build of its own (tests/docs/main_job_test.sh runs it on the test "
                                 "build with a short sweep: CI's main-job phase)"),
    (r"^(scripts/(test|sanitize)\.sh|\.ci/run)", "the test command itself (CI runs it)"),
    (r"\bkubectl\b", "a Kubernetes cluster (tests/kubernetes validates the manifests offline)"),
    (r"NVHPC_ROOT", "the NVIDIA HPC SDK"),
    (r"apt-get download|fb-deps|dpkg-deb", "the Debian archive, to download packages"),
    (r"cmake --install|cpack|apt-get install \./", "an install of its own (tests/install installs to a prefix and "
                                                   "builds and installs the .deb)"),
    (r"^(cmake|ctest)\b", "a build tree of its own (CI's setup and build phases run the same "
                                            "steps through scripts/test.sh)"),
]
SECONDS = 180
MPIRUN = "mpirun -np 2 --oversubscribe --bind-to none"


def commands(root):
    """(guide:line, command) for each code-block line that calls fabricbench or a tool."""
    guides = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "docs" / "fabricbench.1"]
    for guide in guides:
        for no, line in docs.joined(code_block_lines(guide)):
            if TOOL.search(line) or any(True for _ in docs.calls(line)):
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


def script_parse(root, line):
    """The parse of a line that calls scripts of the repository: each exists and its --help names every
    --flag the line gives it. Returns what fails, or None."""
    try:
        words = shlex.split(line.split(" #", 1)[0])
    except ValueError as e:
        return f"not a shell line ({e})"
    for i, word in enumerate(words):
        if not word.startswith("scripts/") or i and words[i - 1] not in ("", "sudo", "&&", ";", "--"):
            continue
        script = root / word
        if not script.is_file() or not os.access(script, os.X_OK):
            return f"{word} is not an executable script of the repository"
        r = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return f"`{word} --help` exited {r.returncode}: {r.stderr[-500:]}"
        for flag in (w for w in words[i + 1:] if w.startswith("--") and len(w) > 2):
            if flag.split("=", 1)[0] not in r.stdout:
                return f"`{word} --help` does not name {flag}"
    return None


def scratch_links(scratch, binary, root):
    """What the commands name by a relative path."""
    for name in ("profiles", "scripts"):
        (scratch / name).symlink_to(root / name)
    (scratch / "build").symlink_to(Path(binary).parent)
    (scratch / "results").mkdir()


def prepare(scratch, root, env):
    """The inputs the guides assume, made by the binary."""
    shutil.copy(root / "profiles/workloads/llama-7b-zero1-2x8-h100.yaml", scratch / "W.yaml")
    steps = [
        # Two "nodes" of one rank each, so the record has inter rows for --network.
        f"{MPIRUN} -x FABRICBENCH_RANKS_PER_NODE=1 fabricbench run -b 8 -e 1M -f 8 -n 5 -w 1 --scope all "
        "--progress off -q --out results/run.jsonl",
        f"{MPIRUN} -x FABRICBENCH_RANKS_PER_NODE=1 fabricbench pairs --size 64K --progress off -q "
        "--out results/pairs.jsonl",
        f"{MPIRUN} fabricbench run -b 8 -e 1M -f 8 -n 5 -w 1 --progress off -q --out vendor-a.jsonl",
        f"{MPIRUN} fabricbench run -b 8 -e 1M -f 8 -n 5 -w 1 --progress off -q --out vendor-b.jsonl",
        "fabricbench topo --out topo.jsonl -q",
        f"{MPIRUN} fabricbench check --profile local-smoke -q --progress off --out-dir check-x",
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


def claims(line):
    """What the guide's comment on a line says of its outcome: `# exits N` (else 0) and each `prints "TEXT"`."""
    comment = line.split(" #", 1)[1] if " #" in line else ""
    code = re.search(r"\bexits (\d+)", comment)
    return int(code.group(1)) if code else 0, re.findall(r'prints "([^"]+)"', comment)


def run_line(scratch, env, where, line, failures):
    """Runs a guide's line; it fails unless it exits as its comment says (0 unless said) and prints what it says."""
    expected, texts = claims(line)
    try:
        r = subprocess.run(["bash", "-c", line], cwd=scratch, env=env, capture_output=True, text=True,
                           timeout=SECONDS)
        code, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        code, out = "timeout", f"still running after {SECONDS} s"
    missing = [t for t in texts if t not in out]
    ok = code == expected and not missing
    print(f"{'ok  ' if ok else 'FAIL'} {where}: {line}")
    if code != expected:
        failures.append(f"{where}: exit {code}, the guide says {expected}: {line}\n{out[-3000:]}")
    elif missing:
        failures.append(f"{where}: the guide says it prints {missing}, it did not: {line}\n{out[-3000:]}")


def report(failures, ran, shipped, parsed):
    for f in failures:
        print("FAIL:", f)
    only = sum(len(v) for v in parsed.values())
    print(f"{ran} documented commands ran as written and {shipped} shipped example files loaded or priced, "
          f"{len(failures)} failed; {only} commands ran only as far as their parse, lacking:")
    for need, where in sorted(parsed.items()):
        print(f"  {len(where):3d}  {need}: {', '.join(where)}")


def main_local(binary, root, env):
    ran, parsed, failures = 0, {}, []
    with tempfile.TemporaryDirectory(prefix="fb_doc_commands_") as tmp:
        scratch = Path(tmp)
        scratch_links(scratch, binary, root)
        prepare(scratch, root, env)
        for where, line in commands(root):
            if problem := script_parse(root, line):
                failures.append(f"{where}: {problem}: {line}")
                continue
            need = next((why for pattern, why in NEEDS if re.search(pattern, line)), None)
            if need:
                parsed.setdefault(need, []).append(where)
                continue
            run_line(scratch, env, where, line, failures)
            ran += 1
    shipped = shipped_files(root, scratch_env=env, failures=failures)
    report(failures, ran, shipped, parsed)
    if ran < 16 or shipped < 10:
        print(f"FAIL: only {ran} commands and {shipped} files: the extraction no longer matches the guides")
        return 1
    return 1 if failures else 0


def main_emulated(binary, root, env):
    """The guides' commands on emulated nodes, in order; every cluster they name is taken down after."""
    lines = [(where, line) for where, line in commands(root) if re.search(EMULATED, line)]
    names = {m for _, line in lines for m in re.findall(r"(?:--name |/run/fabricbench-emu/)([\w-]+)", line)}
    if os.geteuid() != 0:
        print("SKIP: emulated nodes need root (network namespaces and tc)")
        return 77
    if taken := [n for n in sorted(names) if Path(f"/run/fabricbench-emu/{n}").exists()]:
        print(f"SKIP: a cluster named {', '.join(taken)} is already up on this machine, not this test's to take down")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="fb_doc_emulated_") as tmp:
        scratch = Path(tmp)
        scratch_links(scratch, binary, root)
        try:
            for where, line in lines:
                run_line(scratch, env, where, line, failures)
        finally:
            for name in sorted(names):
                if Path(f"/run/fabricbench-emu/{name}").exists():
                    subprocess.run([str(root / "scripts/emulate-cluster.sh"), "down", "--name", name], timeout=120)
    report(failures, len(lines), 0, {})
    if len(lines) < 4:
        print(f"FAIL: only {len(lines)} commands on emulated nodes: the extraction no longer matches the guides")
        return 1
    return 1 if failures else 0


def main():
    binary, root = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    # The python that found matplotlib at configure time runs scripts/plot.py too (its `env python3`).
    path = f"{Path(binary).parent}:{Path(sys.executable).parent}:{os.environ['PATH']}"
    env = dict(os.environ, PATH=path, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if sys.argv[3:] == ["--emulated"]:
        return main_emulated(binary, root, env)
    return main_local(binary, root, env)


if __name__ == "__main__":
    sys.exit(main())
