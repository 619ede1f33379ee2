#!/usr/bin/env python3
"""Every include between fabricbench's modules is one docs/architecture.md allows.

The table between <!-- modules ... --> and <!-- /modules --> is the rule:
the backticked modules of the first column may include the backticked
modules of the last ("every module" allows all). An include is an arrow
from the file's module to another when it names `fabricbench/<module>/...`,
or a quoted header that is found only in another module's src/ folder
(through an include path a CMake target added). Fails naming each file and
include the table does not allow, a module missing from the table, and an
allowed arrow no file uses (so the table cannot keep arrows the code left).

    module_rules_test.py REPO
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
doc = (root / "docs/architecture.md").read_text()
block = re.search(r"<!-- modules:.*?-->(.*?)<!-- /modules -->", doc, re.S)
if not block:
    sys.exit("FAIL: docs/architecture.md has no <!-- modules --> table")

modules = sorted(p.name for p in (root / "src").iterdir() if p.is_dir())
allowed = {}
for row in block.group(1).splitlines():
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) < 3 or cells[0] in ("module", "") or set(cells[0]) <= set("-"):
        continue
    names = re.findall(r"`([a-z_]+)`", cells[0])
    may = set(modules) if "every module" in cells[-1] else set(re.findall(r"`([a-z_]+)`", cells[-1])) & set(modules)
    for name in names:
        allowed[name] = may - {name}

failures = [f"FAIL: module '{m}' (src/{m}) has no row in the table" for m in modules if m not in allowed]
failures += [f"FAIL: the table names '{m}', which is no module under src/" for m in allowed if m not in modules]


def module_of(path):
    parts = path.relative_to(root).parts
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ("include", "fabricbench") and len(parts) > 3:
        return parts[2]
    return None


def headers_by_name():
    """Relative path under src/<module>/ -> the modules that have it."""
    found = {}
    for m in modules:
        for h in (root / "src" / m).rglob("*"):
            if h.suffix in (".hpp", ".h", ".cuh"):
                found.setdefault(h.relative_to(root / "src" / m).as_posix(), set()).add(m)
    return found


local_headers = headers_by_name()
used = set()
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
sources = [p for d in ("src", "include/fabricbench") for p in (root / d).rglob("*")
           if p.suffix in (".cpp", ".hpp", ".h", ".cu", ".cuh") and p.is_file()]
if not sources:
    sys.exit("FAIL: no sources found under " + str(root))
for path in sorted(sources):
    mine = module_of(path)
    if mine is None:
        continue
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = include.match(line)
        if not m:
            continue
        name = m.group(1)
        target = None
        if name.startswith("fabricbench/"):
            target = name.split("/")[1] if name.count("/") >= 2 else None
        elif not (path.parent / name).exists() and not (root / "src" / mine / name).exists():
            owners = local_headers.get(name, set()) - {mine}
            target = min(owners) if len(owners) == 1 else None
        if target is None or target == mine or target not in modules:
            continue
        used.add((mine, target))
        if target not in allowed.get(mine, set()):
            failures.append(f"FAIL: {path.relative_to(root)}:{number}: {mine} includes {target} ({name}), which "
                            f"docs/architecture.md does not allow: move the code, or add the arrow with its reason")

for mine, may in sorted(allowed.items()):
    if "every module" in block.group(1) and mine == "cli":
        continue
    for target in sorted(may - {t for (m, t) in used if m == mine}):
        failures.append(f"FAIL: the table lets {mine} include {target}, but nothing does: take the arrow off")

print("\n".join(failures) if failures else f"ok: {len(used)} arrows between {len(modules)} modules, each allowed")
sys.exit(1 if failures else 0)
