#!/usr/bin/env python3
"""The model guide's quick-start table is what the binary prints today.

docs/model-guide.md shows the command in backquotes right above the table; this test
runs that command as written (from the checkout) and fails when any line of
the indented table differs from the binary's output (issue 39: the table had
kept columns the binary no longer printed, line_gbps in place of Gbit/s).

usage: readme_model_table_test.py FABRICBENCH SOURCE_DIR
"""
import os
import re
import shlex
import subprocess
import sys


def guide_table(readme):
    """(the command, the table's lines) of the quick start's table."""
    at = readme.index("The quick start's table")
    command = re.search(r"\(`(fabricbench model step[^`]*)`", readme[at:], re.S)
    if not command:
        sys.exit("FAIL: no `fabricbench model step ...` command above the guide's quick-start table")
    block = readme[at + command.end():]
    block = block[block.index("\n    ") + 1:]
    lines = []
    for line in block.splitlines():
        if not line.startswith("    "):
            break
        lines.append(line[4:])
    return " ".join(command.group(1).split()), lines


def main():
    binary, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    with open(f"{source}/docs/model-guide.md", encoding="utf-8") as f:
        command, shown = guide_table(f.read())
    if len(shown) < 4:
        sys.exit(f"FAIL: the guide's table has {len(shown)} lines; expected a head and three networks")
    args = shlex.split(command)[1:]
    run = subprocess.run([binary] + args, cwd=source, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        sys.exit(f"FAIL: `{command}` exited {run.returncode}: {run.stderr}")
    printed = run.stdout.splitlines()
    for i, line in enumerate(shown):
        if i >= len(printed) or printed[i].rstrip() != line.rstrip():
            got = printed[i] if i < len(printed) else "(nothing)"
            sys.exit(f"FAIL: line {i + 1} of the guide's table differs from `{command}`:\n"
                     f"  guide:  {line}\n  binary: {got}")
    print(f"ok: the guide's {len(shown)} table lines are what `{command}` prints")


if __name__ == "__main__":
    main()
