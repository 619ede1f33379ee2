#!/usr/bin/env python3
"""The model guide's quick-start table and the README's quotes table are what the binary prints today.

docs/model-guide.md shows the command in backquotes right above the table; this test
runs that command as written (from the checkout) and fails when any line of
the indented table differs from the binary's output (issue 39: the table had
kept columns the binary no longer printed, line_gbps in place of Gbit/s).
README.md shows `model quotes` in a code block and its output in the next
one, with columns and the end of the verdict left out as "..."; the cells
shown on each side of a "..." are the binary's first and last cells.

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


def readme_quotes(readme):
    """(the command, the output's lines) of the README's pricing example."""
    at = readme.index("### Pricing quotes")
    blocks, current = [], []
    for line in readme[at:].splitlines()[1:]:
        if line.startswith("    "):
            current.append(line[4:])
        elif current and line.strip() == "":
            continue
        elif current:
            blocks.append(current)
            current = []
        if len(blocks) == 2:
            break
    if len(blocks) < 2:
        sys.exit("FAIL: the README's pricing example has no command block followed by an output block")
    return " ".join(" ".join(blocks[0]).replace("\\", " ").split()), blocks[1]


def cells(line):
    return [c for c in re.split(r"\s{2,}", line.strip()) if c]


def same_with_elision(shown, printed):
    """A shown line equals the printed one, or its cells (or text) around "..." begin and end it."""
    if "..." not in shown:
        return shown.rstrip() == printed.rstrip()
    if shown.startswith("#"):
        return printed.startswith(shown.split("...", 1)[0].rstrip(" ,"))
    head, tail = (cells(part) for part in shown.split("...", 1))
    got = cells(printed)
    return got[:len(head)] == head and (not tail or got[-len(tail):] == tail)


def check_readme_quotes(binary, source):
    with open(f"{source}/README.md", encoding="utf-8") as f:
        command, shown = readme_quotes(f.read())
    run = subprocess.run([binary] + shlex.split(command)[1:], cwd=source, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        sys.exit(f"FAIL: `{command}` exited {run.returncode}: {run.stderr}")
    printed = run.stdout.splitlines()
    if len(shown) < 4:
        sys.exit(f"FAIL: the README's quotes output has {len(shown)} lines; expected a head, two quotes, the verdict")
    for i, line in enumerate(shown):
        if i >= len(printed) or not same_with_elision(line, printed[i]):
            got = printed[i] if i < len(printed) else "(nothing)"
            sys.exit(f"FAIL: line {i + 1} of the README's quotes output differs from `{command}`:\n"
                     f"  README: {line}\n  binary: {got}")
    print(f"ok: the README's {len(shown)} quotes lines are what `{command}` prints")


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
    check_readme_quotes(binary, source)


if __name__ == "__main__":
    main()
