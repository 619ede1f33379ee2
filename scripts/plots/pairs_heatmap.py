"""The link matrix of `fabricbench pairs` as a heatmap.

Rows send, columns receive (unidir); bidir and latency are symmetric. A node
the run found bad is drawn as a cross: its row and column outlined in red, an
X on its diagonal cell (dashed when a retest cleared it). A bad single link
gets a red box on both of its cells.

The colour scale is anchored at the rate a link should reach, never at the
data's own minimum and maximum, so a fabric that is uniformly slow is
uniformly dark: bandwidth from 0 to the expected rate (--expect-gbps, else
the run's own --expect-gbps, else the typical node's NIC spec peak from the
inventory, else the run's reference); latency on a log scale from the
median link up to 16 times it.
"""
import math
import statistics

from matplotlib.colors import LogNorm, Normalize
from matplotlib.patches import Rectangle

_METRICS = {
    "unidir": ("unidir (GB/s), row sends to column", "viridis"),
    "bidir": ("bidir (GB/s), both directions", "viridis"),
    "latency": ("latency (us), half round trip", "viridis_r"),
}


def _typical_peak(lines, scope):
    """The upper-median node's spec peak of `scope` (the slowest of its paths), and its basis."""
    per_node = {}
    for inv in (l for l in lines if l.get("type") == "inventory"):
        for p in inv.get("paths", []):
            if p.get("scope") == scope and p.get("peak_gbps"):
                host = inv.get("host", inv.get("rank"))
                if host not in per_node or p["peak_gbps"] < per_node[host][0]:
                    per_node[host] = (p["peak_gbps"], f'{p.get("class")}: {p.get("basis")}')
    if not per_node:
        return None
    return sorted(per_node.values())[len(per_node) // 2]


def anchor_of(lines, values, rail=0, metric="unidir", expect_gbps=None):
    """(anchor, what it is) for the colour scale."""
    if metric == "latency":
        med = statistics.median(values) if values else 1.0
        return med, f"the median link, {med:.3g} us"
    both = 2 if metric == "bidir" else 1  # a bidir figure counts both directions
    options = lines[0].get("options") or {}
    if expect_gbps:
        return both * expect_gbps, f"{both * expect_gbps:.3g} GB/s expected (--expect-gbps)"
    if isinstance(options, dict) and (options.get("expect_gbps") or 0) > 0:
        e = both * options["expect_gbps"]
        return e, f"{e:.3g} GB/s, the run's --expect-gbps"
    peak = _typical_peak(lines, "rail" if rail else "inter")
    if peak:
        return both * peak[0], f"{both * peak[0]:.3g} GB/s, the typical node's NIC spec peak ({peak[1]})"
    summary = next((l for l in lines if l.get("type") == "summary"), {})
    ref = summary.get("reference_bidir_gbps" if metric == "bidir" else "reference_unidir_gbps")
    if ref:
        return ref, f"{ref:.3g} GB/s, the run's reference (no spec peak known)"
    med = statistics.median(values) if values else 1.0
    return med, f"{med:.3g} GB/s, the median link (no spec peak or reference known)"


def draw_pairs_heatmap(lines, fig, rail=0, metric="unidir", expect_gbps=None):
    """Draw rail `rail` of a pairs record (`lines`: its JSON objects, header
    first) on the matplotlib figure `fig`.

    Returns what was drawn, for callers and tests: hosts (in node order), the
    matrix (None on the diagonal and for pairs not measured), the crossed
    hosts (bad nodes) and the boxed links (pairs of hosts).
    Raises ValueError saying what is missing when there is nothing to draw.
    """
    if metric not in _METRICS:
        raise ValueError(f"metric '{metric}': use one of {', '.join(_METRICS)}")
    if not lines or lines[0].get("type") != "run":
        raise ValueError("not a fabricbench record (no run header)")
    major = str(lines[0].get("schema_version", "")).split(".")[0]
    if major != "1":
        raise ValueError(f"schema version {lines[0].get('schema_version')} is not 1.x")
    pairs = [l for l in lines if l["type"] == "pair" and not l["retest"] and l["rail"] == rail]
    if not pairs:
        raise ValueError(f"no pair lines for rail {rail} (is it a `fabricbench pairs` record?)")

    names = {}
    for p in pairs:
        names[p["node_a"]], names[p["node_b"]] = p["host_a"], p["host_b"]
    order = sorted(names)
    at = {node: i for i, node in enumerate(order)}
    n = len(order)
    matrix = [[None] * n for _ in range(n)]
    for p in pairs:
        a, b = at[p["node_a"]], at[p["node_b"]]
        if metric == "unidir":
            matrix[a][b], matrix[b][a] = p["unidir_ab_gbps"], p["unidir_ba_gbps"]
        else:
            matrix[a][b] = matrix[b][a] = p["bidir_gbps" if metric == "bidir" else "latency_us"]

    findings = [l for l in lines if l["type"] == "finding" and l["rail"] == rail]
    values = [v for row in matrix for v in row if v is not None]
    anchor, anchor_text = anchor_of(lines, values, rail, metric, expect_gbps)
    anchor = anchor if anchor and anchor > 0 else 1.0
    norm = LogNorm(vmin=anchor, vmax=16 * anchor, clip=True) if metric == "latency" else Normalize(0, anchor, clip=True)
    fig.set_size_inches(3.4 + 0.55 * n, 2.2 + 0.5 * n)
    ax = fig.subplots()
    image = ax.imshow([[math.nan if v is None else v for v in row] for row in matrix], cmap=_METRICS[metric][1],
                      norm=norm)
    image.cmap.set_bad("#dddddd")
    bar = fig.colorbar(image, ax=ax)
    bar.set_label(_METRICS[metric][0] + f"\ncolour against {anchor_text}", fontsize=7)
    hosts = [names[node] for node in order]
    ax.set_xticks(range(n), hosts, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(n), hosts, fontsize=8)
    if n <= 16:
        for i in range(n):
            for j in range(n):
                if matrix[i][j] is not None:
                    light = image.norm(matrix[i][j]) > 0.6  # dark text on the bright end of viridis
                    if metric == "latency":
                        light = not light
                    ax.text(j, i, f"{matrix[i][j]:.3g}", ha="center", va="center", fontsize=6,
                            color="k" if light else "w")

    crossed, boxed = [], []
    for f in findings:
        style = "--" if f.get("intermittent") else "-"
        if f["kind"] == "node" and f["node"] in at:
            k = at[f["node"]]
            crossed.append(names[f["node"]])
            for x, y, w, h in ((-0.5, k - 0.5, n, 1), (k - 0.5, -0.5, 1, n)):
                ax.add_patch(Rectangle((x, y), w, h, fill=False, ec="red", lw=2, ls=style))
            ax.plot([k - 0.4, k + 0.4], [k - 0.4, k + 0.4], color="red", lw=3, ls=style)
            ax.plot([k - 0.4, k + 0.4], [k + 0.4, k - 0.4], color="red", lw=3, ls=style)
        elif f["kind"] == "link" and f["node_a"] in at and f["node_b"] in at:
            a, b = at[f["node_a"]], at[f["node_b"]]
            boxed.append((names[f["node_a"]], names[f["node_b"]]))
            for i, j in ((a, b), (b, a)):
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=2.5, ls=style))

    title = f"fabricbench pairs, {metric}" + (f", rail {rail}" if rail else "")
    ax.set_title(title + (f"\nbad: {', '.join(crossed)}" if crossed else ""), fontsize=10)
    return {"hosts": hosts, "matrix": matrix, "crossed": crossed, "boxed_links": boxed, "anchor": anchor,
            "anchor_text": anchor_text, "norm": (norm.vmin, norm.vmax)}
