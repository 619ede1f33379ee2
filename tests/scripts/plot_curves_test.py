#!/usr/bin/python3
"""scripts/plot.py busbw on results records: it reads a record through the
binary (`fabricbench report lines`, FABRICBENCH), a record the binary wrote in
this test, draws log-log with the spread shaded and the scope's spec peak as a
line, and its legends say what a line is, never a file path; a damaged record
is refused with the reader's message."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..")
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path.insert(0, SCRIPTS)

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("skipped: python3-matplotlib is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

from matplotlib.figure import Figure  # noqa: E402

from plots.curves import draw_curves  # noqa: E402
from plot import record_lines  # noqa: E402

RUN = os.path.join(SOURCE, "results", "host-mpi-2ranks-2026-11-29.jsonl")
PAIRS = os.path.join(SOURCE, "tests", "accept", "fixtures", "four-nodes-degraded-port.jsonl")


def read(path):
    """A record's lines as plot.py has them: through the binary."""
    return record_lines(path, None)


def plot(*args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot.py"), "busbw"] + list(args),
                          capture_output=True, text=True, check=False)


class Curves(unittest.TestCase):
    def test_the_cli_reads_a_record_the_binary_wrote(self):
        self.assertTrue(os.environ.get("FABRICBENCH"), "the test names the binary in FABRICBENCH")
        with tempfile.TemporaryDirectory() as d:
            rec, out = os.path.join(d, "r.jsonl"), os.path.join(d, "busbw.png")
            made = subprocess.run([os.environ["FABRICBENCH"], "run", "--progress", "off", "-b", "8", "-e", "4K",
                                   "--ops", "all_reduce", "--out", rec], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, check=False)
            self.assertEqual(made.returncode, 0, made.stderr)
            r = plot(rec, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            # The same record on stdin.
            with open(rec, encoding="utf-8") as f:
                piped = subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot.py"), "busbw", "-", "-o", out],
                                       stdin=f, capture_output=True, text=True, check=False)
            self.assertEqual(piped.returncode, 0, piped.stderr)
            # A line damaged in the middle: the reader's refusal, naming the line, exit 2.
            with open(rec, encoding="utf-8") as f:
                text = f.read().splitlines()
            bad = os.path.join(d, "bad.jsonl")
            with open(bad, "w", encoding="utf-8") as f:
                f.write("\n".join(text[:1] + ['{"type":"measurement",'] + text[1:]) + "\n")
            r = plot(bad, "-o", out)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(bad + ":2", r.stderr)

    def test_log_log_with_spread_and_the_spec_peak(self):
        drawn = draw_curves([read(PAIRS)], Figure())
        panel = next(p for p in drawn["panels"] if p["op"] == "all_reduce" and p["scope"] == "inter")
        self.assertEqual((panel["xscale"], panel["yscale"]), ("log", "log"))
        self.assertEqual(panel["metric"], "busbw_gbps")
        # One node's port trained at HDR: the spec rules' peak across nodes is 25 GB/s.
        self.assertEqual([p[0] for p in panel["peaks"]], [25.0])
        self.assertTrue(all(line["spread"] for line in panel["lines"]))

    def test_legends_say_what_a_line_is(self):
        drawn = draw_curves([read(RUN), read(RUN)], Figure())
        labels = [line["label"] for p in drawn["panels"] for line in p["lines"]]
        self.assertTrue(labels)
        for label in labels:
            self.assertNotIn(".jsonl", label)
            self.assertRegex(label, r"^[AB]: (out-of-place|in-place), float, 2 ranks")


if __name__ == "__main__":
    unittest.main()
