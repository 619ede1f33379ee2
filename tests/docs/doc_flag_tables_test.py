#!/usr/bin/env python3
"""Each guide's flag table holds the flags its command's --help lists: no more, no fewer.

The guides' tables (rows whose first cell is a `-x/--flag`) are written by
hand beside CLI11's --help; this test holds the two equal, so a flag added
to the code and not to its guide, or renamed in one, fails naming both.
Short flags count as the long flag --help pairs them with (`-q` is --quiet).

  doc_flag_tables_test.py BINARY REPO_ROOT
"""
import re
import subprocess
import sys
from pathlib import Path

# The guide whose flag table documents each command.
TABLES = {"docs/run.md": "run", "docs/pairs.md": "pairs", "docs/topo.md": "topo",
          "docs/diagnose.md": "diagnose", "docs/acceptance.md": "check"}
ALWAYS = {"--help", "--version"}  # every command has them; README and the man page say so once


def help_flags(binary, command):
    """The long flags of `command --help`, and each short flag's long one."""
    text = subprocess.run([binary, command, "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    longs, short_to_long = set(), {}
    for m in re.finditer(r"^\s+(?:(-[A-Za-z0-9]),)?(--[A-Za-z0-9][A-Za-z0-9_-]*)", text, re.M):
        longs.add(m.group(2))
        if m.group(1):
            short_to_long[m.group(1)] = m.group(2)
    return longs - ALWAYS, short_to_long


def table_flags(path, short_to_long):
    """(flag, line) for each flag in the first cell of the guide's flag-table rows."""
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("| `-"):
            continue
        for code in re.findall(r"`([^`]*)`", line.split("|")[1]):
            for word in re.split(r"[/\s,]+", code):
                if re.fullmatch(r"--[A-Za-z0-9][A-Za-z0-9_-]*", word):
                    yield word, no
                elif re.fullmatch(r"-[A-Za-z0-9]", word):
                    yield short_to_long.get(word, word), no


def main():
    binary, root = sys.argv[1], Path(sys.argv[2])
    failures, checked = [], 0
    for doc, command in TABLES.items():
        helped, short_to_long = help_flags(binary, command)
        tabled = {}
        for flag, no in table_flags(root / doc, short_to_long):
            tabled.setdefault(flag, no)
        if len(tabled) < 3:
            failures.append(f"{doc}: only {len(tabled)} flags found in its table: the extraction no longer matches it")
            continue
        checked += len(tabled)
        for flag in sorted(helped - tabled.keys()):
            failures.append(f"{doc}: `fabricbench {command} --help` lists {flag}, which the guide's flag table lacks")
        for flag in sorted(tabled.keys() - helped):
            failures.append(f"{doc}:{tabled[flag]}: {flag} is in the flag table but not in `fabricbench {command} --help`")
    for f in failures:
        print("FAIL:", f)
    print(f"{'ok' if not failures else 'FAILED'}: {checked} flags in {len(TABLES)} guides' tables against --help, "
          f"{len(failures)} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
