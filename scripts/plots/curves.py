"""busbw and time against size from fabricbench results records, on log-log
axes, one panel per op and scope.

Each line is one record's rows of one kind (placement, datatype, ranks,
groups): the median over the timed iterations at each size, the spread
(fastest to slowest iteration) shaded, and the scope's spec peak from the
inventory (the figure `spec` rules compare against: the lowest known peak of
the scope's paths) as a dashed line. Legends say what a line is; the records
are A, B, ... and the title says what each one is.
"""
import statistics

SCOPES = ["global", "intra", "inter", "rail"]


def read_record(lines, name):
    """Checks a record's header; raises ValueError saying what is wrong."""
    if not lines or lines[0].get("type") != "run":
        raise ValueError(f"{name}: not a fabricbench record (no run header)")
    major = str(lines[0].get("schema_version", "")).split(".")[0]
    if major != "1":
        raise ValueError(f"{name}: schema version {lines[0].get('schema_version')} is not 1.x")
    return lines


def identity(head):
    """What a record is, in words (never its file name)."""
    who = "nccl-tests (imported)" if head.get("command") == "import" else f"fabricbench {head.get('command', 'run')}"
    hosts = head.get("hosts") or []
    text = who + (" on " + ", ".join(hosts[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "") if hosts else "")
    if head.get("ranks", -1) > 0:
        text += f", {head['ranks']} rank{'s' if head['ranks'] != 1 else ''}"
    if head.get("backend"):
        text += f", {head['backend']} {head.get('backend_version') or ''}".rstrip()
    return text + (f", {head['start_time']}" if head.get("start_time") else "")


def spec_peak(lines, scope):
    """(GB/s, basis) of the scope as accept's spec rules reckon it, or (None, why)."""
    inventory = [l for l in lines if l.get("type") == "inventory"]
    if not inventory:
        return None, "no inventory lines"
    wanted = {scope}
    if scope == "global":
        wanted = {"intra", "inter"} if lines[0].get("nodes", 1) > 1 else {"intra"}
    best = None
    for line in inventory:
        for p in line.get("paths", []):
            if p.get("scope") in wanted and p.get("peak_gbps"):
                if best is None or p["peak_gbps"] < best[0]:
                    best = (p["peak_gbps"], f'{p.get("class")}: {p.get("basis")}')
    return best if best else (None, f"no known spec peak for scope {scope}")


def kind_label(key):
    _, _, dtype, nranks, groups, in_place, peers = key
    text = f"{'in-place' if in_place else 'out-of-place'}, {dtype}, {nranks} rank{'s' if nranks != 1 else ''}"
    if groups > 1:
        text += f" x {groups} groups"
    if peers[0] >= 0:
        text += f", ranks {peers[0]}-{peers[1]}"
    return text


def gather(records):
    """{(op, scope): {(record, backend, dtype, nranks, groups, in_place, peers): {bytes: [rows]}}}"""
    panels = {}
    for r, lines in enumerate(records):
        for m in (l for l in lines if l.get("type") == "measurement"):
            if m.get("bytes", 0) <= 0:
                continue
            key = (r, m.get("backend"), m.get("dtype"), m.get("nranks"), m.get("groups", 1), m.get("in_place"),
                   (m.get("peer_a", -1), m.get("peer_b", -1)))
            panels.setdefault((m["op"], m["scope"]), {}).setdefault(key, {}).setdefault(m["bytes"], []).append(m)
    order = sorted(panels, key=lambda k: (k[0], SCOPES.index(k[1]) if k[1] in SCOPES else 9))
    return [(k, panels[k]) for k in order]


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:g} {unit}"
        n /= 1024


def draw_curves(records, fig, labels=None):
    """Draws `records` (each a list of its JSON lines, header first) on `fig`.

    Returns what was drawn, for callers and tests: per panel its op, scope,
    axis scales, metric, lines (label, sizes, whether spread is shaded) and
    the peak lines (GB/s, label). Raises ValueError when there is nothing to draw.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator

    panels = gather(records)
    if not panels:
        raise ValueError("no measurement lines to draw (is it a run, check or imported record?)")
    labels = labels or [chr(ord("A") + i) for i in range(len(records))]
    several = len(records) > 1
    axes = fig.subplots(len(panels), 2, squeeze=False)
    fig.set_size_inches(11, 3.6 * len(panels))
    drawn = []
    kinds = sorted({key[1:] for _, lines in panels for key in lines})
    for row, ((op, scope), lines) in enumerate(panels):
        bw_ax, t_ax = axes[row]
        busbw_zero = all(m.get("busbw_gbps", 0) <= 0 for rows_by_size in lines.values()
                         for rows in rows_by_size.values() for m in rows)
        metric = "algbw_gbps" if busbw_zero else "busbw_gbps"
        panel = {"op": op, "scope": scope, "metric": metric, "lines": [], "peaks": []}
        for key, by_size in sorted(lines.items()):
            sizes = sorted(by_size)
            med = [statistics.median(m["time_median_us"] for m in by_size[s]) for s in sizes]
            bw = [statistics.median(m[metric] for m in by_size[s]) for s in sizes]
            tmin = [min(m["time_min_us"] for m in by_size[s]) for s in sizes]
            tmax = [max(m["time_max_us"] for m in by_size[s]) for s in sizes]
            label = (labels[key[0]] + ": " if several else "") + kind_label(key)
            colour = f"C{kinds.index(key[1:]) % 10}"
            style = "--" if key[0] % 2 else "-"
            bw_ax.plot(sizes, bw, style, marker="o", ms=3, color=colour, label=label)
            t_ax.plot(sizes, med, style, marker="o", ms=3, color=colour, label=label)
            spread = any(hi > lo for lo, hi in zip(tmin, tmax))
            if spread:
                # busbw goes as 1/time: the fastest iteration is the top of the band.
                bw_ax.fill_between(sizes, [b * t / hi if hi > 0 else b for b, t, hi in zip(bw, med, tmax)],
                                   [b * t / lo if lo > 0 else b for b, t, lo in zip(bw, med, tmin)],
                                   color=colour, alpha=0.15, lw=0)
                t_ax.fill_between(sizes, tmin, tmax, color=colour, alpha=0.15, lw=0)
            panel["lines"].append({"label": label, "sizes": len(sizes), "spread": spread})
        if not busbw_zero:
            seen = set()
            for r, lines_of in enumerate(records):
                if not any(key[0] == r for key in lines):
                    continue
                gbps, basis = spec_peak(lines_of, scope)
                if gbps is None or gbps in seen:
                    continue
                seen.add(gbps)
                text = (labels[r] + ": " if several else "") + f"spec peak {gbps:.3g} GB/s ({basis})"
                bw_ax.axhline(gbps, color="#C0392B", ls="--", lw=1.2, label=text)
                panel["peaks"].append((gbps, text))
        for ax, ylabel in ((bw_ax, ("algbw" if busbw_zero else "busbw") + " (GB/s)"), (t_ax, "time per op, median (us)")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.xaxis.set_major_locator(LogLocator(base=2, numticks=12))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
            ax.tick_params(axis="x", labelsize=7)
            ax.set_xlabel("size (bytes, nccl-tests convention)", fontsize=8)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.grid(True, which="major", alpha=0.35)
            ax.grid(True, which="minor", alpha=0.12)
            ax.tick_params(axis="y", labelsize=7)
        one_rank = all(key[3] == 1 for key in lines)
        what = "busbw" if not busbw_zero else "algbw (busbw is 0 on one rank)" if one_rank else "algbw (busbw is 0)"
        bw_ax.set_title(f"{op} / {scope}: {what}", fontsize=9)
        t_ax.set_title(f"{op} / {scope}: time per op", fontsize=9)
        bw_ax.legend(fontsize=6, loc="best")
        panel["xscale"], panel["yscale"] = bw_ax.get_xscale(), bw_ax.get_yscale()
        drawn.append(panel)
    fig.suptitle("; ".join((labels[i] + " = " if several else "") + identity(r[0]) for i, r in enumerate(records))
                 + "\nshaded: spread over the timed iterations (fastest to slowest)", fontsize=8)
    return {"panels": drawn}
