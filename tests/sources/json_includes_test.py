#!/usr/bin/env python3
"""At most LIMIT compiled files under src/ pull in <nlohmann/json.hpp>.

The JSON library is the heaviest header the project uses; issue 33 holds
src/ to at most 40 of its compiled files (78 of 208 before). Headers that
only pass JSON values on carry <nlohmann/json_fwd.hpp> or a JsonValue
(core/json_value.hpp); a file that builds or reads JSON includes the library
itself. The count follows each .cpp's quoted includes through the
repository's headers (the file's folder, include/, then any src/ module
folder, as the CMake targets' include paths do), which is what the
compiler's dependency output (g++ -M) gives for these files. Fails with the
count and the files, so the one that went over can be seen.

    json_includes_test.py REPO LIMIT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
limit = int(sys.argv[2])
include_re = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
search = [root / "include"] + sorted(p for p in (root / "src").rglob("*") if p.is_dir())


def resolve(name, here):
    for folder in [here] + search:
        candidate = folder / name
        if candidate.is_file():
            return candidate.resolve()
    return None  # a system header or one the build generates


memo = {}


def pulls_json(path, stack=()):
    if path in memo:
        return memo[path]
    if path in stack:  # a cycle is broken by #pragma once: nothing new down this way
        return False
    found = False
    for kind, name in include_re.findall(path.read_text(errors="replace")):
        if name == "nlohmann/json.hpp":
            found = True
            break
        if kind == '"':
            target = resolve(name, path.parent)
            if target and pulls_json(target, stack + (path,)):
                found = True
                break
    memo[path] = found
    return found


compiled = sorted(p.resolve() for p in (root / "src").rglob("*.cpp"))
if not compiled:
    sys.exit(f"FAIL: no .cpp files under {root / 'src'}")
hits = [p for p in compiled if pulls_json(p)]
print(f"{len(hits)} of {len(compiled)} compiled files under src/ include <nlohmann/json.hpp> (limit {limit})")
if len(hits) > limit:
    for p in hits:
        print("  " + p.relative_to(root.resolve()).as_posix())
    sys.exit(f"FAIL: {len(hits)} files include <nlohmann/json.hpp>, more than {limit}: "
             "pass JSON on as JsonValue or through <nlohmann/json_fwd.hpp> where a file does not read it")
