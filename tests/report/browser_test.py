#!/usr/bin/env python3
"""`fabricbench report html` in a real browser: headless Chromium (Debian's
`chromium`) opens the page from file:// with no network (a network namespace
of its own where one can be made, host names resolving to nothing and a proxy
on a closed port in any case) and the page names nothing outside itself; its
screenshot is not blank; and the DOM it built holds the figures the inputs
hold, read back from the page's data attributes: every measurement row of
each record, every verdict of check.json, every quote as `model quotes`
prices it, every link of the pair matrix.

    browser_test.py FABRICBENCH SOURCE_DIR

Exits 77 (ctest: skipped) saying why when Chromium is not installed.
"""
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

FB, SRC = sys.argv[1], sys.argv[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("SKIP: chromium is not installed (scripts/setup.sh installs it with the test packages)")
    sys.exit(77)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=240, **kw)


def no_network_prefix():
    """A fresh network namespace (no interface but a downed loopback) where we may make one (root, util-linux
    unshare); elsewhere Chromium's own switches below are the only fence."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--net", "true"], capture_output=True).returncode == 0:
        return [unshare, "--net"], "in a network namespace of its own"
    return [], "with host names resolving to nothing and a proxy that does not exist (no namespace: not root)"


NO_NETWORK, FENCE = no_network_prefix()


def chromium(page, tmp, *mode):
    """One headless Chromium on a fresh profile with nothing reachable: no network at all where a namespace can be
    made, and in any case every host name resolves to nothing and every request goes to a proxy on a closed port."""
    profile = tempfile.mkdtemp(dir=tmp, prefix="profile-")
    args = [*NO_NETWORK, CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={profile}", "--hide-scrollbars", *mode, "file://" + page]
    r = run(args)
    if r.returncode != 0:
        print(r.stderr[-2000:])
    return r


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"PNG depth {depth} colour type {colour}"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


class Elements(html.parser.HTMLParser):
    """Every element's tag and attributes, and the text of each <section>'s heading."""

    def __init__(self):
        super().__init__()
        self.elements = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))


def elements(dom):
    p = Elements()
    p.feed(dom)
    return p.elements


def records(path):
    """A record's lines as the binary reads them (`report lines`), the rows the page was made from."""
    r = subprocess.run([FB, "report", "lines", path], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)


def screenshot_is_not_blank(page, tmp, name):
    shot = os.path.join(tmp, name + ".png")
    r = chromium(page, tmp, f"--screenshot={shot}", "--window-size=1280,2400")
    check(r.returncode == 0 and os.path.exists(shot), f"{name}: Chromium made a screenshot")
    if not os.path.exists(shot):
        return
    w, h, rows = png_pixels(shot)
    ink = sum(1 for row in rows for p in row if min(p) < 235)
    colours = {p for row in rows[::4] for p in row[::4]}
    blue = sum(1 for row in rows for p in row if abs(p[0] - 0x00) < 40 and abs(p[1] - 0x72) < 40 and abs(p[2] - 0xB2) < 40)
    print(f"{name}: {w}x{h}, {ink / (w * h):.1%} of pixels inked, {len(colours)} colours, {blue} in the palette's blue")
    check(ink > 0.03 * w * h, f"{name}: the screenshot is not blank ({ink} inked pixels of {w * h})")
    check(len(colours) > 40, f"{name}: the screenshot has charts' colours ({len(colours)} distinct)")
    check(blue > 200, f"{name}: the first series' colour #0072B2 is drawn ({blue} pixels)")


def dump_dom(page, tmp):
    r = chromium(page, tmp, "--dump-dom")
    check(r.returncode == 0 and "</html>" in r.stdout, "Chromium dumped the DOM")
    return elements(r.stdout)


def nothing_to_fetch(page, name):
    """The page names nothing outside itself: no URL with a scheme or a network path, no CSS import, and every
    url() a fragment of the page (a chart's clip path). Chromium could not fetch it anyway; a reader's could."""
    text = open(page, encoding="utf-8").read()
    outside = re.findall(r"(?:https?|ftp|wss?):|(?:src|href)\s*=\s*[\"']?//|@import", text, flags=re.I)
    foreign_urls = [u for u in re.findall(r"url\(\s*['\"]?([^)'\"]*)", text) if not u.startswith("#")]
    check(not outside and not foreign_urls, f"{name}: the page names nothing outside itself ({outside[:3]} {foreign_urls[:3]})")


def verdict_rows_hold_the_check(els, check_json):
    """Each verdict of check.json is a row of the page with its status and measured figure, in order."""
    verdicts = json.load(open(check_json))["verdicts"]
    rows = [a for t, a in els if t == "tr" and "data-rule" in a]
    check([a["data-rule"] for a in rows] == [v["rule"] for v in verdicts], "every verdict of check.json is a row, in order")
    for a, v in zip(rows, verdicts):
        check(a["data-status"] == v["status"], f"rule {v['rule']}: status {a['data-status']} = {v['status']}")
        if v.get("measured") is None:
            check(a["data-measured"] == "", f"rule {v['rule']}: no measured figure")
        else:
            check(close(float(a["data-measured"]), v["measured"]), f"rule {v['rule']}: measured {a['data-measured']}")
    print(f"check.json: {len(rows)} of {len(verdicts)} verdicts read back from the page")


def quote_rows_hold_the_model(els, model_quotes):
    """Each quote the model prices (`fabricbench model quotes --format json`) is a row with its rank, cost and hours;
    exactly the model's cheapest is marked."""
    want = {q["name"]: q for q in model_quotes["quotes"]}
    rows = [a for t, a in els if t == "tr" and "data-quote" in a]
    check(sorted(a["data-quote"] for a in rows) == sorted(want), f"the model's quotes are the page's ({len(rows)} rows)")
    for a in rows:
        q = want.get(a["data-quote"])
        if q is None:
            continue
        check(int(a["data-rank"]) == q["rank"], f"quote {q['name']}: rank")
        check(close(float(a["data-cost"]), q["cost"]), f"quote {q['name']}: cost {a['data-cost']} = {q['cost']}")
        check(close(float(a["data-hours"]), q["hours"]), f"quote {q['name']}: hours {a['data-hours']} = {q['hours']}")
        check((a["data-cheapest"] == "1") == (q["rank"] == 1), f"quote {q['name']}: marked cheapest only if rank 1")
    print(f"quotes: {len(rows)} of {len(want)} priced quotes read back from the page")


def points_hold_the_rows(els, rec, label):
    """Each measurement row of a one-pass record is a point of the bandwidth charts with its figures."""
    points = {}
    for tag, a in els:
        if tag == "circle" and a.get("data-record") == label and "data-busbw-gbps" in a:
            points[(a["data-op"], a["data-scope"], a["data-in-place"] == "1", int(a["data-bytes"]))] = a
    rows = [l for l in rec if l["type"] == "measurement" and l["bytes"] > 0]
    missing = 0
    for m in rows:
        p = points.get((m["op"], m["scope"], m["in_place"], m["bytes"]))
        if p is None:
            missing += 1
            continue
        check(close(float(p["data-busbw-gbps"]), m["busbw_gbps"]), f"{label} {m['op']} {m['bytes']}: busbw")
        check(close(float(p["data-time-us"]), m["time_median_us"]), f"{label} {m['op']} {m['bytes']}: time")
    check(missing == 0 and rows, f"record {label}: every one of its {len(rows)} rows is a point ({missing} missing)")
    print(f"record {label}: {len(rows) - missing} of {len(rows)} rows read back from the page")


def main():
    tmp = tempfile.mkdtemp(prefix="fb_browser_")
    try:
        imported = os.path.join(tmp, "nccl-tests.jsonl")
        fixtures = os.path.join(SRC, "tests/report/fixtures/nccl-tests")
        r = run([FB, "report", "import", "nccl-tests", f"{fixtures}/all_gather_perf.json", f"{fixtures}/sendrecv_perf.json",
                 "--out", imported])
        check(r.returncode == 0, "report import nccl-tests: " + r.stderr)
        judged = os.path.join(tmp, "check-imported")
        r = run([FB, "check", "--profile", os.path.join(SRC, "tests/report/fixtures/h200-nccl-tests.yaml"), "--results", imported,
                 "--out-dir", judged])
        check(r.returncode == 0, "check --results on the imported runs passes: " + r.stdout[-1500:] + r.stderr)
        check_json = os.path.join(judged, "check.json")
        workload = os.path.join(SRC, "profiles/workloads/llama-7b-zero1-2x8-h100.yaml")
        quotes = os.path.join(SRC, "profiles/quotes/h100-ib-vs-roce.yaml")
        r = run([FB, "model", "quotes", "-w", workload, "-q", quotes, "--format", "json"])
        check(r.returncode == 0, "model quotes: " + r.stderr)
        model_quotes = json.loads(r.stdout) if r.returncode == 0 else {"quotes": []}
        h200 = os.path.join(SRC, "results/h200-device-check-2026-11-30/nccl.jsonl")
        page1 = os.path.join(tmp, "runs.html")
        r = run([FB, "report", "html", h200, imported, "--check", check_json, "-w", workload, "-q", quotes, "-o", page1])
        check(r.returncode == 0, "report html (runs, check.json and quotes): " + r.stderr)
        pairs = os.path.join(SRC, "tests/accept/fixtures/four-nodes-degraded-port.jsonl")
        smoke = os.path.join(SRC, "tests/accept/fixtures/local-smoke-np4.jsonl")
        page2 = os.path.join(tmp, "check.html")
        r = run([FB, "report", "html", smoke, pairs, "-o", page2])
        check(r.returncode == 0, "report html (check and pairs): " + r.stderr)
        if failures:
            return 1

        print(f"Chromium {CHROMIUM} runs {FENCE}")
        nothing_to_fetch(page1, "runs")
        nothing_to_fetch(page2, "check")
        screenshot_is_not_blank(page1, tmp, "runs")
        screenshot_is_not_blank(page2, tmp, "check")

        els = dump_dom(page1, tmp)
        points_hold_the_rows(els, records(h200), "A")
        points_hold_the_rows(els, records(imported), "B")
        quote_rows_hold_the_model(els, model_quotes)
        check(len(model_quotes["quotes"]) == 4, f"the example prices four quotes ({len(model_quotes['quotes'])})")
        verdict = [a for t, a in els if t == "section" and a.get("id") == "verdict"]
        check(verdict and verdict[0].get("data-status") == json.load(open(check_json))["status"], "the verdict is check.json's")
        verdict_rows_hold_the_check(els, check_json)
        check(any(t == "section" and a.get("id") == "compare" for t, a in els), "the two records are compared")
        check(not any(t in ("script", "iframe", "img", "link") for t, a in els), "nothing but the page itself")

        els = dump_dom(page2, tmp)
        verdict = [a for t, a in els if t == "section" and a.get("id") == "verdict"]
        check(verdict and verdict[0].get("data-status") == "pass", "local-smoke's verdict is pass")
        checks = [l for l in records(smoke) if l["type"] == "check"]
        rules = [(a["data-rule"], a["data-status"]) for t, a in els if t == "tr" and "data-rule" in a]
        check(rules == [(c["rule"], c["status"]) for c in checks], "every check line is a row with its status")
        cells = [a for t, a in els if t == "rect" and a.get("data-gbps")]
        pair_lines = [l for l in records(pairs) if l["type"] == "pair"]
        want = sorted([l["unidir_ab_gbps"] for l in pair_lines] + [l["unidir_ba_gbps"] for l in pair_lines])
        check(sorted(float(a["data-gbps"]) for a in cells) == want, "every link of the pair matrix, both directions")
        anchors = [a["data-anchor"] for t, a in els if t == "svg" and "data-anchor" in a]
        check(anchors[:1] == ["50"], f"the matrix is anchored at the typical node's 50 GB/s ({anchors})")
        points_hold_the_rows(els, records(smoke), "A")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
