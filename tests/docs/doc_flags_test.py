#!/usr/bin/env python3
"""Every fabricbench command the guides show names a command and flags that exist.

Reads the shell commands in README.md, docs/*.md and the man page (indented
and fenced code blocks, and `fabricbench ...` in backticks), finds each call
of fabricbench in them (also after mpirun/srun and its options), and asks the
binary: the subcommand chain must be one `fabricbench ... --help` accepts, and
every --long flag of the call must appear in that --help. A flag renamed in
the code and left in a guide fails here, naming the guide and its line.

This is the parse step: it runs nothing but --help. doc_commands_test.py
then runs each command of the code blocks as written (2 local ranks).

  doc_flags_test.py BINARY REPO_ROOT
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path

COMMANDS = {"run", "pairs", "topo", "model", "report", "gemm", "step", "check", "storage", "diagnose"}
# A call starts at a word naming the binary: fabricbench, a path ending in it, or $FB-style variables for it.
BINARY_WORD = re.compile(r"(^|/)fabricbench$|^\$\{?(FB|FABRICBENCH|BIN|bin)\}?$")


def code_lines(path):
    """(line number, text) of each line of code in a Markdown file or the man page."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if path.suffix == ".1":
        for no, line in enumerate(lines, 1):
            plain = line.replace("\\-", "-").replace("\\\\", "\\").replace("\\(aq", "'")
            if "fabricbench " in plain and not plain.startswith("."):
                yield no, plain
        return
    fenced = False
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") or line.startswith("\t"):
            yield no, line.strip()
        for inline in re.findall(r"`([^`]*fabricbench [^`]*)`", line):
            yield no, inline


def joined(numbered):
    """Lines ending in a backslash joined with the next, keeping the first line's number."""
    start, parts = None, []
    for no, line in numbered:
        if start is None:
            start = no
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        parts.append(line)
        yield start, " ".join(parts)
        start, parts = None, []
    if parts:
        yield start, " ".join(parts)


def calls(command_line):
    """Each fabricbench call in a shell line: (subcommand words, long flags)."""
    line = command_line.split(" #", 1)[0]
    try:
        words = shlex.split(line, comments=False)
    except ValueError:
        return
    for i, word in enumerate(words):
        if not BINARY_WORD.search(word) or i + 1 >= len(words) or words[i + 1] not in COMMANDS:
            continue
        chain = [words[i + 1]]
        rest = []
        for w in words[i + 2:]:
            if w in ("|", "&&", "||", ";", ">", "2>", ">>", "2>&1") or w.startswith(">") or w.startswith("2>"):
                break
            rest.append(w)
        # A second word that is not a flag nor a file may be a subcommand (model step, report import nccl-tests).
        while rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
            chain.append(rest.pop(0))
        flags = sorted({w.split("=", 1)[0] for w in rest if w.startswith("--") and len(w) > 2})
        yield chain, flags


def help_text(binary, chain, cache):
    """The --help of the longest prefix of `chain` that is a command; (words used, text)."""
    for n in range(len(chain), 0, -1):
        key = tuple(chain[:n])
        if key not in cache:
            r = subprocess.run([binary, *key, "--help"], capture_output=True, text=True, timeout=60)
            cache[key] = r.stdout if r.returncode == 0 and "Usage" in r.stdout + r.stderr else None
        if cache[key] is not None:
            return list(key), cache[key]
    return [], None


def main():
    binary, root = sys.argv[1], Path(sys.argv[2])
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "docs" / "fabricbench.1"]
    cache, failures, checked = {}, [], 0
    for doc in docs:
        for no, line in joined(code_lines(doc)):
            for chain, flags in calls(line):
                used, text = help_text(binary, chain, cache)
                where = f"{doc.relative_to(root)}:{no}"
                if text is None:
                    failures.append(f"{where}: `fabricbench {' '.join(chain)}` is not a command: {line}")
                    continue
                checked += 1
                if len(used) < len(chain) and "Subcommands:" in text:
                    failures.append(f"{where}: `fabricbench {' '.join(used)}` has no subcommand {chain[len(used)]}: "
                                    f"{line}")
                    continue
                for flag in flags:
                    if not re.search(r"(^|[\s,])" + re.escape(flag) + r"([\s,=]|$)", text, re.M):
                        failures.append(f"{where}: `fabricbench {' '.join(used)}` has no {flag}: {line}")
    for f in failures:
        print("FAIL:", f)
    if checked < 50:
        print(f"FAIL: only {checked} documented fabricbench calls found: the extraction no longer matches the docs")
        return 1
    print(f"{'ok' if not failures else 'FAILED'}: {checked} documented fabricbench calls, "
          f"{len(failures)} with a command or flag the binary does not have")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
