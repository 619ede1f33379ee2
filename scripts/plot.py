#!/usr/bin/python3
"""Plots from fabricbench results records (Python 3 + matplotlib, Debian's
python3-matplotlib: scripts/setup.sh installs it).

  scripts/plot.py heatmap RECORD.jsonl [-o OUT.png] [--rail N] [--metric unidir|bidir|latency]

Exit codes: 0 written, 2 bad input (the message names the file or flag).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _heatmap(args):
    from plots.pairs_heatmap import plot_pairs_heatmap

    out = args.out or os.path.splitext(args.record)[0] + f"-heatmap-{args.metric}.png"
    drawn = plot_pairs_heatmap(args.record, out, rail=args.rail, metric=args.metric)
    bad = f"; bad nodes: {', '.join(drawn['crossed'])}" if drawn["crossed"] else ""
    print(f"plot.py: {out}: {len(drawn['hosts'])} nodes{bad}", file=sys.stderr)


KINDS = {"heatmap": _heatmap}


def main(argv):
    parser = argparse.ArgumentParser(prog="plot.py", description="Plots from fabricbench results records.")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    heatmap = kinds.add_parser("heatmap", help="the link matrix of a `fabricbench pairs` record")
    heatmap.add_argument("record", help="results record (JSON Lines) written by fabricbench pairs --out")
    heatmap.add_argument("-o", "--out", help="image to write (.png, .svg, .pdf); default: next to the record")
    heatmap.add_argument("--rail", type=int, default=0, help="rail to draw (records made with --rails)")
    heatmap.add_argument("--metric", default="unidir", choices=["unidir", "bidir", "latency"])
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot.py: matplotlib is missing: install python3-matplotlib (scripts/setup.sh)", file=sys.stderr)
        return 2
    try:
        KINDS[args.kind](args)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
