#!/usr/bin/python3
"""scripts/plot.py heatmap and scripts/plots/pairs_heatmap.py on a synthetic
pairs record (written here: four nodes with a bad one and an intermittent
link, which one machine cannot produce), read through the binary as plot.py
reads it (`fabricbench report lines`, FABRICBENCH): the matrix lands in the
right cells, the bad node is crossed, an intermittent link is boxed, bad input
exits 2 with a message."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("skipped: python3-matplotlib is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

from matplotlib.figure import Figure  # noqa: E402

from plots.pairs_heatmap import draw_pairs_heatmap  # noqa: E402
from plot import record_lines  # noqa: E402


def read(path):
    """A record's lines as plot.py has them: through the binary."""
    return record_lines(path, None)


def plot(*args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot.py"), "heatmap"] + list(args),
                          capture_output=True, text=True, check=False)


def record(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def pairs_record(path):
    """Nodes 10, 11, 12, 13 (a subset, so indices are not positions); node 12 bad."""
    hosts = {10: "h10", 11: "h11", 12: "h12", 13: "h13"}
    lines = [{"type": "run", "schema_version": "1.1", "command": "pairs", "hosts": list(hosts.values())}]
    for a in hosts:
        for b in hosts:
            if a < b:
                bad = 12 in (a, b)
                lines.append({"type": "pair", "rail": 0, "retest": False, "round": 0, "node_a": a, "node_b": b,
                              "host_a": hosts[a], "host_b": hosts[b], "unidir_ab_gbps": 0.03 if bad else 0.12 + a / 1000,
                              "unidir_ba_gbps": 0.03 if bad else 0.12 + b / 1000, "bidir_gbps": 0.06 if bad else 0.24,
                              "latency_us": 20 + a + b})
    lines.append({"type": "pair", "rail": 0, "retest": True, "round": 0, "node_a": 12, "node_b": 10,
                  "host_a": "h12", "host_b": "h10", "unidir_ab_gbps": 99, "unidir_ba_gbps": 99, "bidir_gbps": 99,
                  "latency_us": 1})
    lines.append({"type": "finding", "rail": 0, "kind": "node", "node": 12, "intermittent": False})
    lines.append({"type": "finding", "rail": 0, "kind": "link", "node_a": 10, "node_b": 13, "intermittent": True})
    lines.append({"type": "summary", "status": "complete"})
    record(path, lines)


class PairsHeatmap(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.rec = os.path.join(self.dir.name, "p.jsonl")
        pairs_record(self.rec)

    def tearDown(self):
        self.dir.cleanup()

    def test_matrix_cross_and_box(self):
        fig = Figure()
        drawn = draw_pairs_heatmap(read(self.rec), fig)
        self.assertEqual(drawn["hosts"], ["h10", "h11", "h12", "h13"])
        m = drawn["matrix"]
        self.assertIsNone(m[0][0])
        self.assertAlmostEqual(m[0][1], 0.130)  # h10 sends to h11: unidir_ab of pair 10-11
        self.assertAlmostEqual(m[1][0], 0.131)  # h11 sends to h10: unidir_ba
        self.assertAlmostEqual(m[2][0], 0.03)
        self.assertNotIn(99, [v for row in m for v in row])  # retests are not the matrix
        self.assertEqual(drawn["crossed"], ["h12"])
        self.assertEqual(drawn["boxed_links"], [("h10", "h13")])
        # The cross: row and column outlines and the X's two strokes, on the one axes.
        self.assertEqual(len(fig.axes[0].patches), 2 + 2)  # + the link's two boxes
        self.assertEqual(len(fig.axes[0].lines), 2)

    def test_symmetric_metrics(self):
        drawn = draw_pairs_heatmap(read(self.rec), Figure(), metric="latency")
        self.assertEqual(drawn["matrix"][0][3], drawn["matrix"][3][0])
        self.assertEqual(drawn["matrix"][0][3], 20 + 10 + 13)

    def test_colours_are_anchored_at_the_expected_rate_not_the_data(self):
        # Every link equally slow: against its own median it would look fine.
        lines = read(self.rec)
        for line in lines:
            if line["type"] == "pair":
                line["unidir_ab_gbps"] = line["unidir_ba_gbps"] = 0.03
        inventory = [{"type": "inventory", "rank": r, "host": h, "paths": [
            {"scope": "inter", "class": "TCP", "peak_gbps": 1.25, "basis": "1 x 10 Gb/s (eth0)"}]}
            for r, h in enumerate(["h10", "h11", "h12", "h13"])]
        lines = lines[:1] + inventory + lines[1:]
        fig = Figure()
        drawn = draw_pairs_heatmap(lines, fig)
        self.assertEqual(drawn["anchor"], 1.25)
        self.assertIn("NIC spec peak", drawn["anchor_text"])
        self.assertEqual(drawn["norm"], (0, 1.25))
        image = fig.axes[0].images[0]
        self.assertAlmostEqual(float(image.norm(0.03)), 0.024)  # dark: 2.4% of the way up the scale
        # --expect-gbps wins over the inventory.
        self.assertEqual(draw_pairs_heatmap(lines, Figure(), expect_gbps=0.5)["norm"], (0, 0.5))
        # Latency: a log scale from the median link up.
        lat = draw_pairs_heatmap(lines, Figure(), metric="latency")
        values = sorted(v for row in lat["matrix"] for v in row if v is not None)
        self.assertEqual(lat["norm"][0], (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2)
        self.assertEqual(lat["norm"][1], 16 * lat["norm"][0])

    def test_cli_writes_the_image(self):
        out = os.path.join(self.dir.name, "h.png")
        r = plot(self.rec, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bad nodes: h12", r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_cli_bad_input_exits_two(self):
        run_record = os.path.join(self.dir.name, "run.jsonl")
        record(run_record, [{"type": "run", "schema_version": "1.2", "command": "run"}, {"type": "summary"}])
        empty = os.path.join(self.dir.name, "empty.jsonl")
        record(empty, [{"type": "run", "schema_version": "1.2", "command": "pairs"}, {"type": "summary"}])
        future = os.path.join(self.dir.name, "v2.jsonl")
        record(future, [{"type": "run", "schema_version": "2.0", "command": "pairs"}])
        out = os.path.join(self.dir.name, "x.png")
        for args, message in (([run_record], 'needs "pairs" output'), ([empty], "no pair lines"),
                              ([future], "schema version '2.0' is not supported"), ([os.path.join(self.dir.name, "none.jsonl")], "No such file"),
                              ([self.rec, "--rail", "3"], "rail 3")):
            r = plot(*args, "-o", out)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(message, r.stderr)


if __name__ == "__main__":
    unittest.main()
