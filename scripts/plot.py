#!/usr/bin/env python3
"""Plots of fabricbench's JSON outputs (Python 3 and matplotlib; a record is
read through the fabricbench binary, `fabricbench report lines`: FABRICBENCH,
else this checkout's build/fabricbench or the installed one, else fabricbench
on the PATH).

    scripts/plot.py <kind> INPUT.json -o OUT.png [--title TEXT]
    scripts/plot.py busbw RECORD.jsonl [RECORD2.jsonl ...] -o OUT.png
    scripts/plot.py heatmap RECORD.jsonl -o OUT.png [--rail N] [--metric unidir|bidir|latency] [--expect-gbps X]

Kinds (each one function, registered with @kind; add a kind by writing one):
  busbw    busbw and time vs size per op and scope on log-log axes, the spread
           over iterations shaded, the scope's spec peak as a line; input: one
           or more results records (run, check, or `report import`), drawn as
           A, B, ...; or the fit's JSON (fabricbench model fit RESULTS --format
           json): measured points with the alpha-beta fit over them
  quotes   stacked bars of compute vs exposed communication per quote (job
           hours); input: fabricbench model quotes ... --format json
  scaling  effective efficiency vs nodes, one line per network;
           input: fabricbench model scale ... --format json
  heatmap  the node-to-node link matrix, a bad node drawn as a cross, the
           colours against the rate a link should reach (--expect-gbps, the
           run's --expect-gbps, the typical node's NIC spec peak, the run's
           reference), latency on a log scale; input: a pairs record
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the plots/ package

try:
    import matplotlib
except ImportError:
    # A python3 first on PATH (pyenv, a venv) may lack what Debian's has.
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("plot.py: matplotlib is missing; scripts/setup.sh installs python3-matplotlib")

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

KINDS = {}


def load_json(name, text):
    return json.loads(text)


def fabricbench():
    """The binary that reads records, found where every script finds it (scripts/lib/fabricbench-binary.sh):
    $FABRICBENCH, else this checkout's or installation's own, else the PATH's."""
    finder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "fabricbench-binary.sh")
    found = subprocess.run([finder, "plot.py"], capture_output=True, text=True)
    if found.returncode != 0:
        raise ValueError(found.stderr.strip() or f"{finder} exited {found.returncode}")
    return found.stdout.strip()


def record_lines(name, text):
    """A results record's lines as the binary reads them (`report lines`: checked, at its schema), never the
    file's text: a damaged or newer record is refused with the reader's own message. A record on standard
    input ("-") goes to the binary as a file of its own: it reads regular files only."""
    if name != "-":
        return lines_of(name, name)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "stdin.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return lines_of(path, "standard input")


def lines_of(path, name):
    r = subprocess.run([fabricbench(), "report", "lines", path], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise ValueError(r.stderr.strip().replace(path, name) or f"fabricbench report lines exited {r.returncode}")
    return [json.loads(t) for t in r.stdout.splitlines() if t.strip()]


def load_record(name, text):
    """A results record as {"type": the command that wrote it, "lines": [...]}."""
    lines = record_lines(name, text)
    return {"type": lines[0].get("command", "run"), "lines": lines}


def load_curves(name, text):
    """The fit's JSON document (fabricbench model fit --format json), or else a results record."""
    try:
        doc = json.loads(text)
        if isinstance(doc, dict) and doc.get("type") == "fit":
            return doc
    except ValueError:
        pass
    return {"type": "records", "lines": record_lines(name, text)}


def kind(name, expects, source, help_text, load=load_json):
    """Registers a plot kind: fn(data, fig, args) draws `data` (what `load`
    reads, whose "type" is `expects`, made by the command `source`) on `fig`."""
    def register(fn):
        KINDS[name] = {"fn": fn, "expects": expects, "source": source, "help": help_text, "load": load}
        return fn
    return register


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:g} {unit}"
        n /= 1024


@kind("busbw", ("records", "fit"), "fabricbench run --out RECORD.jsonl (or model fit RESULTS --format json)",
      "busbw and time vs size per op and scope, log-log, spread shaded, spec peak as a line", load=load_curves)
def plot_busbw(data, fig, args):
    if data["type"] == "records":
        from plots.curves import draw_curves, read_record

        records = [read_record(d["lines"], name) for d, name in zip(data["all"], args.input)]
        drawn = draw_curves(records, fig)
        if args.title:
            fig.suptitle(args.title, fontsize=9)
        return drawn
    return plot_fit(data, fig, args)


def plot_fit(data, fig, args):
    """The fit's JSON: measured busbw (points) and the alpha-beta fit (lines), log-log."""
    scopes = sorted({c["scope"] for c in data["curves"]})
    axes = fig.subplots(1, len(scopes), squeeze=False)[0]
    for ax, scope in zip(axes, scopes):
        for i, c in enumerate(x for x in data["curves"] if x["scope"] == scope):
            colour = f"C{i % 10}"
            pts = [p for p in c["points"] if p["bytes"] > 0 and p["busbw_gbps"] > 0]
            sizes = [p["bytes"] for p in pts]
            label = f'{c["op"]} ({c["nranks"]} ranks)'
            ax.plot(sizes, [p["busbw_gbps"] for p in pts], "o", ms=3, color=colour, label=label + " measured")
            if c["beta_gbps"] is not None:
                ax.plot(sizes, [p["fit_busbw_gbps"] for p in pts], "-", color=colour, alpha=0.7,
                        label=f'fit: {c["alpha_us"]:.3g} us + S/{c["beta_gbps"]:.3g} GB/s '
                              f'({100 * c["fit_rms_rel_error"]:.0f}% rms)')
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size (bytes, nccl-tests convention)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"scope {scope}")
        ticks = [s for s in sorted({p["bytes"] for c in data["curves"] for p in c["points"]}) if s > 0][::4]
        ax.set_xticks(ticks)
        ax.set_xticklabels([human_bytes(t) for t in ticks], rotation=45, ha="right", fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(args.title or "busbw per op: measured and the alpha-beta fit", fontsize=9)
    return {}


@kind("quotes", "quotes", "fabricbench model quotes -w W -q Q --format json", "stacked compute vs exposed communication per quote")
def plot_quotes(data, fig, args):
    ax = fig.subplots()
    quotes = data["quotes"]
    # A measured network is a file path: say it is measured, and which file, by name only.
    names = [f'{q["rank"]}. {q["name"]}\n' + (f'measured: {os.path.basename(q["network"])}' if os.sep in q["network"]
                                               else q["network"]) for q in quotes]
    parts = [("compute", "compute", "C0"), ("non_gemm", "non-GEMM work", "C2"), ("bubble", "pipeline bubble", "C1"),
             ("exposed_comm", "exposed communication", "C3"), ("preemption", "spot preemption", "C7")]
    bottom = [0.0] * len(quotes)
    for key, label, colour in parts:
        values = [q["hours_split"].get(key, 0.0) for q in quotes]  # records before non_gemm lack it
        if any(v > 0 for v in values):
            ax.bar(names, values, bottom=bottom, label=label, color=colour)
            bottom = [b + v for b, v in zip(bottom, values)]
    for x, (q, top) in enumerate(zip(quotes, bottom)):
        ax.annotate(f'{data["currency"]} {q["cost"]:,.0f}', (x, top), ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, max(bottom) * 1.12)  # room for the cost labels
    ax.set_ylabel("job wall time (hours)")
    ax.tick_params(axis="x", labelsize=6)
    ax.legend(fontsize=7)
    ax.set_title(args.title or f'{data["workload"]}: time and cost per quote', fontsize=9)


@kind("scaling", "scaling", "fabricbench model scale -w W --format json", "effective efficiency vs nodes, one line per network")
def plot_scaling(data, fig, args):
    ax = fig.subplots()
    for net in data["networks"]:
        pts = [p for p in net["points"] if "why" not in p]
        ax.plot([p["nodes"] for p in pts], [100 * p["efficiency"] for p in pts], "o-", label=net["network"])
    ax.set_xscale("log", base=2)
    nodes = sorted({p["nodes"] for net in data["networks"] for p in net["points"] if "why" not in p})
    ax.set_xticks(nodes)
    ax.set_xticklabels([str(n) for n in nodes])
    ax.set_xlabel("nodes")
    ax.set_ylabel("effective efficiency (% of ideal compute)")
    ax.set_ylim(0, 105)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(args.title or f'{data["workload"]}: efficiency vs nodes', fontsize=9)


@kind("heatmap", "pairs", "fabricbench pairs --out RECORD.jsonl", "the link matrix of a pairs record, bad nodes crossed",
      load=load_record)
def plot_heatmap(data, fig, args):
    from plots.pairs_heatmap import draw_pairs_heatmap

    drawn = draw_pairs_heatmap(data["lines"], fig, rail=args.rail, metric=args.metric, expect_gbps=args.expect_gbps)
    if args.title:
        fig.axes[0].set_title(args.title, fontsize=10)
    if drawn["crossed"]:
        print(f"plot.py: bad nodes: {', '.join(drawn['crossed'])}", file=sys.stderr)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=sorted(KINDS), help="what to plot")
    parser.add_argument("input", nargs="+", help="JSON from fabricbench (- for stdin); busbw takes several records")
    parser.add_argument("-o", "--out", required=True, help="image file (.png, .svg, .pdf)")
    parser.add_argument("--title", help="title instead of the default")
    parser.add_argument("--rail", type=int, default=0, help="heatmap: the rail to draw (records made with --rails)")
    parser.add_argument("--metric", default="unidir", choices=["unidir", "bidir", "latency"], help="heatmap: figure")
    parser.add_argument("--expect-gbps", type=float, help="heatmap: the rate a link should reach (colour anchor), GB/s")
    args = parser.parse_args(argv)
    spec = KINDS[args.kind]
    if len(args.input) > 1 and args.kind != "busbw":
        print(f"plot.py: the {args.kind} plot takes one input", file=sys.stderr)
        return 2
    loaded = []
    for name in args.input:
        try:
            with (sys.stdin if name == "-" else open(name)) as f:
                text = f.read()
            loaded.append(spec["load"](name, text))
        except (OSError, ValueError) as e:
            print(f"plot.py: cannot read {name}: {e}", file=sys.stderr)
            return 2
        expects = spec["expects"] if isinstance(spec["expects"], tuple) else (spec["expects"],)
        if loaded[-1].get("type") not in expects:
            print(f'plot.py: {name} is "{loaded[-1].get("type")}" output; the {args.kind} plot needs '
                  f'"{expects[0]}" output: {spec["source"]}', file=sys.stderr)
            return 2
    data = loaded[0]
    data["all"] = loaded
    fig = plt.figure(figsize=(10 if args.kind in ("busbw", "quotes") else 8, 5), layout="constrained")
    try:
        spec["fn"](data, fig, args)
    except ValueError as e:  # input of the right kind that holds nothing to draw
        print(f"plot.py: {args.input}: {e}", file=sys.stderr)
        return 2
    fig.savefig(args.out, dpi=120)
    print(f"plot.py: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
