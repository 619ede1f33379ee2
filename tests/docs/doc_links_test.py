#!/usr/bin/env python3
"""Every relative link in README.md and docs/*.md reaches a file of the
checkout, and an anchor (#section) a heading of that file.

The README was split into docs/ by topic (issue 39): a link written for the
top folder, or to a section that moved to another file, fails here.

usage: doc_links_test.py SOURCE_DIR
"""
import pathlib
import re
import sys


def anchors(text):
    """GitHub's anchors of a Markdown file's headings."""
    out = set()
    for line in text.splitlines():
        heading = re.match(r"#+ (.*)", line)
        if heading:
            out.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return out


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    failures, seen = [], 0
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            seen += 1
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                failures.append(f"{doc.relative_to(root)}: link to {target}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
                failures.append(f"{doc.relative_to(root)}: link to {target}: no such section in {file.name}")
    if seen == 0:
        sys.exit("FAIL: no relative link found: the pattern no longer matches the docs")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print(f"ok: {seen} relative links in {len(docs)} files, every file and section present")


if __name__ == "__main__":
    main()
