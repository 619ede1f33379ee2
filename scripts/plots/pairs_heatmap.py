"""The link matrix of `fabricbench pairs` as a heatmap.

Rows send, columns receive (unidir); bidir and latency are symmetric. A node
the run found bad is drawn as a cross: its row and column outlined in red, an
X on its diagonal cell (dashed when a retest cleared it). A bad single link
gets a red box on both of its cells.
"""
import math

from matplotlib.patches import Rectangle

_METRICS = {
    "unidir": ("unidir GB/s (row sends to column)", "viridis"),
    "bidir": ("bidir GB/s (both directions)", "viridis"),
    "latency": ("latency us (half round trip)", "viridis_r"),
}


def draw_pairs_heatmap(lines, fig, rail=0, metric="unidir"):
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
    fig.set_size_inches(2.6 + 0.55 * n, 1.8 + 0.5 * n)
    ax = fig.subplots()
    image = ax.imshow([[math.nan if v is None else v for v in row] for row in matrix], cmap=_METRICS[metric][1])
    image.cmap.set_bad("#dddddd")
    fig.colorbar(image, ax=ax, label=_METRICS[metric][0])
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
    return {"hosts": hosts, "matrix": matrix, "crossed": crossed, "boxed_links": boxed}
