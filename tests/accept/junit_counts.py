#!/usr/bin/env python3
"""Parse a JUnit XML file with a real XML parser and print its counts as JSON.

Used by the accept tests to prove the file is well-formed and that the
counts on <testsuites>/<testsuite> agree with the <testcase> children.
Exit code 1 (and the parser's message) when the file is not well-formed.
"""
import json
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    print(f"not well-formed: {e}", file=sys.stderr)
    sys.exit(1)

suite = root.find("testsuite")
cases = suite.findall("testcase")
out = {
    "root": root.tag,
    "testsuites": {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")},
    "testsuite": {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")},
    "cases": len(cases),
    "failure_cases": sum(1 for c in cases if c.find("failure") is not None),
    "error_cases": sum(1 for c in cases if c.find("error") is not None),
    "skipped_cases": sum(1 for c in cases if c.find("skipped") is not None),
    "names": [c.get("name") for c in cases],
    "failure_text": [c.find("failure").text for c in cases if c.find("failure") is not None],
    # One testcase per node of the job (classname fabricbench.check.<profile>.node).
    "node_names": [c.get("name") for c in cases if (c.get("classname") or "").endswith(".node")],
    "node_failure_cases": sum(1 for c in cases
                              if (c.get("classname") or "").endswith(".node") and c.find("failure") is not None),
}
print(json.dumps(out))
