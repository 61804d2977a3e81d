#!/usr/bin/python3
"""Draws the plots of docs/benchmarks.md from the benchmark scripts' result lines in docs/benchmarks/data/*.txt.

Usage: bench/plots.py [OUTDIR]     (default docs/benchmarks/; writes throughput.png, convergence.png, cni.png,
                                    rss.png, wireguard-sessions.png)

Needs matplotlib from Debian's python3-matplotlib (Debian's /usr/bin/python3). Without it the script re-runs
itself under /usr/bin/python3 if that one has it, installs the package when run as root, or says what to install.
The data files' syntax: docs/benchmarks/data/README.md.
"""
import collections
import os
import re
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "benchmarks", "data")
DEBIAN_PYTHON = "/usr/bin/python3"


def need_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    here = os.path.realpath(sys.executable)
    if os.path.exists(DEBIAN_PYTHON) and here != os.path.realpath(DEBIAN_PYTHON) and not os.environ.get("PLOTS_REEXEC"):
        probe = subprocess.run([DEBIAN_PYTHON, "-c", "import matplotlib"], capture_output=True)
        if probe.returncode == 0:
            os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv, dict(os.environ, PLOTS_REEXEC="1"))
    if os.geteuid() == 0 and not os.environ.get("PLOTS_INSTALLED"):
        print("plots: installing python3-matplotlib (Debian's package)", file=sys.stderr)
        cmd = ["apt-get", "install", "-y", "--no-install-recommends", "python3-matplotlib"]
        if subprocess.run(cmd).returncode != 0:
            subprocess.run(["apt-get", "update"], check=True)
            subprocess.run(cmd, check=True)
        os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv, dict(os.environ, PLOTS_INSTALLED="1", PLOTS_REEXEC="1"))
    sys.exit("plots: needs matplotlib: apt-get install python3-matplotlib (as root), then run bench/plots.py again")


# ---------------------------------------------------------------- reading the result lines
CNI = re.compile(r"^\s+(\S+)\s+ADD wall\s+([\d.]+).*?cpu\s+([\d.]+).*?DEL wall\s+([\d.]+).*?cpu\s+([\d.]+)")


def kv(tokens):
    out, flags = {}, []
    for t in tokens:
        if "=" in t:
            k, v = t.split("=", 1)
            out[k] = v
        else:
            flags.append(t)
    return out, flags


def read_data():
    """Every result line as a dict: kind, the line's own keys, and the context of the @ line above it (ctx)."""
    rows = []
    for name in sorted(os.listdir(DATA)):
        if not name.endswith(".txt"):
            continue
        ctx = {}
        for n, line in enumerate(open(os.path.join(DATA, name), encoding="utf-8"), 1):
            if not line.strip() or line.startswith("#") or line.startswith("cni-ab:"):
                continue
            where = "%s:%d" % (name, n)
            if line.startswith("@"):
                ctx, _ = kv(shlex.split(line[1:]))
                ctx["file"] = name
                continue
            m = CNI.match(line)
            if m:
                rows.append(dict(kind="cni", label=m.group(1), add_wall=float(m.group(2)), add_cpu=float(m.group(3)),
                                 del_wall=float(m.group(4)), del_cpu=float(m.group(5)), ctx=ctx, where=where))
                continue
            toks = shlex.split(line)
            if toks[:2] == ["throughput", "median"]:
                d, _ = kv(toks[2:])
                rows.append(dict(d, kind="throughput", ctx=ctx, where=where))
            elif toks[0] in ("convergence", "grow", "restart", "late"):
                d, flags = kv(toks[1:])
                rows.append(dict(d, kind=toks[0], flags=flags, ctx=ctx, where=where))
            elif len(toks) > 1 and toks[1].startswith("routes="):
                d, _ = kv(toks[1:])
                rows.append(dict(d, kind="rss", label=toks[0], ctx=ctx, where=where))
            else:
                sys.exit("plots: %s: not a result line: %s" % (where, line.strip()))
    return rows


def num(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError):
        return None


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values):
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else (None, None)


# ---------------------------------------------------------------- common look
MACHINE = "the project's 2-vCPU VM (AMD EPYC, AVX-512), kernel 6.18.44"
OURS, OURS2, ANCHOR, UPSTREAM, OTHER = "#1f5fa8", "#7fa9d9", "#8c8c8c", "#d9822b", "#b0b0b0"


def style(plt):
    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.spines.top": False, "axes.spines.right": False,
                         "savefig.dpi": 110, "figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3,
                         "legend.fontsize": 8, "legend.frameon": False})


def save(fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.savefig(path, metadata={"Software": None}, bbox_inches="tight")
    print("plots: wrote %s" % os.path.relpath(path, ROOT))


# ---------------------------------------------------------------- 1. throughput per backend
def plot_throughput(plt, rows, outdir):
    runs = collections.OrderedDict()  # group → [ctx, {variant: [gbit medians of its runs]}, {variant: rounds}]
    for r in rows:
        if r["kind"] != "throughput" or r["ctx"].get("file") != "throughput.txt" or r.get("streams") != "1":
            continue
        g = r["ctx"].get("group") or r["ctx"]["run"]
        if g not in runs:
            runs[g] = [r["ctx"], collections.defaultdict(list), collections.defaultdict(list)]
        runs[g][1][r["variant"]].append(num(r, "gbit_s"))
        if "runs" in r:
            runs[g][2][r["variant"]] += [float(x) for x in r["runs"].split(",")]
    n = sum(len(c["plot"].split(",")) for c, _, _ in runs.values()) + len(runs)
    fig, ax = plt.subplots(figsize=(10, 0.36 * n + 1.4))
    y, yticks, ylabels = 0, [], []
    for g, (ctx, medians, rounds) in runs.items():
        order = ctx["plot"].split(",")
        headline = next(v for v in order if v.startswith("flannel"))
        kernel = med(medians["kernel"])
        ax.text(0.05, y + 0.1, "%s: session %s, %s, commit %s, load1 %s%s" % (
            ctx["backend"], ctx["session"], ctx["date"], ctx["commit"], ctx["load1"],
            ", the median of 3 runs" if len(medians["kernel"]) > 1 else ""),
            ha="left", va="center", fontsize=8, fontweight="bold")
        y += 1
        for v in order:
            m = med(medians[v])
            lo, hi = spread(medians[v]) if len(medians[v]) > 1 else (spread(rounds[v]) if rounds[v] else (m, m))
            col = ANCHOR if v.startswith("kernel") else UPSTREAM if v == "wireguard-go" else OURS if v == headline else OURS2
            ax.barh(y, m, 0.75, color=col)
            if hi > lo:
                ax.errorbar(m, y, xerr=[[m - lo], [hi - m]], color="#333333", capsize=2, lw=0.8)
            if v.startswith("kernel"):
                note = ""
            elif v == "wireguard-go":
                note = ": ours without NAT carries %.1f× this" % (med(medians["flannel-nomasq"]) / m)
            else:
                note = ", %.2f× the kernel's" % (m / kernel)
            ax.text(max(hi, m) + 0.15, y, "%.2f Gbit/s%s" % (m, note), va="center", fontsize=7.5)
            yticks.append(y)
            ylabels.append(ctx.get("label." + v, v))
            y += 1
        y += 0.4
    ax.set_yticks(yticks, ylabels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 16.5)
    ax.set_xlabel("Gbit/s, median of the rounds (whiskers: the rounds' range, or the runs' for wireguard)")
    ax.set_title("Pod-to-pod TCP, one stream, each backend beside the kernel's own path built by hand in the same run\n"
                 + MACHINE, loc="left")
    ax.grid(axis="y", visible=False)
    save(fig, outdir, "throughput.png")


# ---------------------------------------------------------------- 2. convergence against lease count
def series(rows, kind, run, who, key, count_key):
    """{lease count: [values]} of one run's rows for ours or upstream."""
    out = collections.defaultdict(list)
    for r in rows:
        if r["kind"] != kind or r["ctx"].get("run") != run:
            continue
        up = "upstream" in (r.get("variant", "") + r.get("label", "")) or "upstream" in r.get("flags", [])
        mine = {"ours": not up and r.get("label") not in ("before",), "upstream": up}[who]
        if mine and num(r, key) is not None and num(r, count_key):
            out[int(num(r, count_key))].append(num(r, key))
    return out


def draw_series(ax, data, **kw):
    xs = sorted(data)
    if not xs:
        return
    ms = [med(data[n]) for n in xs]
    lo = [m - min(data[n]) for n, m in zip(xs, ms)]
    hi = [max(data[n]) - m for n, m in zip(xs, ms)]
    ax.errorbar(xs, ms, yerr=[lo, hi], capsize=3, lw=1.4, ms=6, **kw)
    for n, m in zip(xs, ms):
        ax.annotate("%.2f s" % m, (n, m), textcoords="offset points", xytext=(6, -3), fontsize=7,
                    color=kw.get("color"))


def ctx_of(rows, run):
    return next(r["ctx"] for r in rows if r["ctx"].get("run") == run)


def plot_convergence(plt, rows, outdir):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    c10, c9 = ctx_of(rows, "scale-s10-quiet"), ctx_of(rows, "scale-s9-head")
    draw_series(a, series(rows, "convergence", "scale-s10-quiet", "ours", "converged_s", "leases"), color=OURS,
                marker="o", label="ours, session %s (%s, %s), load1 %s" % (c10["session"], c10["date"], c10["commit"],
                                                                         c10["load1"]))
    draw_series(a, series(rows, "convergence", "scale-s10-quiet", "upstream", "converged_s", "leases"),
                color=UPSTREAM, marker="s", ls="--", label="upstream v0.20.2, the same run")
    draw_series(a, series(rows, "convergence", "scale-s9-head", "ours", "converged_s", "leases"), color=OURS2,
                marker="^", label="ours, session %s (%s, %s), load1 %s; no upstream in that run"
                % (c9["session"], c9["date"], c9["commit"], c9["load1"]))
    a.set_title("etcd, each lease under its own etcd lease (upstream's layout)\nbench/flanneld-convergence.py, "
                "bin/flanneld (OpenJDK 17)", loc="left")
    e2, e10 = ctx_of(rows, "rss-etcd-2000-s8"), ctx_of(rows, "rss-etcd-10000-s8")
    ours = series(rows, "rss", "rss-etcd-2000-s8", "ours", "converged_s", "routes")
    ours.update(series(rows, "rss", "rss-etcd-10000-s8", "ours", "converged_s", "routes"))
    up = series(rows, "rss", "rss-etcd-2000-s8", "upstream", "converged_s", "routes")
    up.update(series(rows, "rss", "rss-etcd-10000-s8", "upstream", "converged_s", "routes"))
    draw_series(b, ours, color=OURS, marker="o", label="ours (the image), lean session 8 (%s)" % e2["date"])
    draw_series(b, up, color=UPSTREAM, marker="s", ls="--", label="upstream v0.20.2, the same invocations")
    b.set_title("etcd, bare keys; the daemons in their images\nbench/flanneld-rss-etcd.py; load1 %s at 2,000, %s at "
                "10,000" % (e2["load1"], e10["load1"]), loc="left")
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1300, 16000)
        ax.set_xticks([2000, 5000, 10000], ["2,000", "5,000", "10,000"])
        ax.minorticks_off()
        ax.set_xlabel("peer leases in etcd")
        ax.legend(loc="upper left")
    a.set_ylim(0.5, 40)
    a.set_yticks([0.5, 1, 2, 5, 10, 20, 40], ["0.5", "1", "2", "5", "10", "20", "40"])
    a.set_ylabel("exec → every peer's entries programmed, s\n(median of the runs; whiskers: their range)")
    fig.suptitle("Cold start to all peers programmed, ours and upstream flanneld, " + MACHINE, x=0.01, ha="left",
                 fontsize=10)
    fig.tight_layout()
    save(fig, outdir, "convergence.png")


# ---------------------------------------------------------------- 3. the CNI plugin
def plot_cni(plt, rows, outdir):
    runs = collections.OrderedDict()
    for r in rows:
        if r["kind"] == "cni":
            runs.setdefault(r["ctx"]["run"], (r["ctx"], {}))[1][r["label"]] = r
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    names = [("a", "bridge alone", ANCHOR), ("upstream", "upstream's Go plugin → bridge", UPSTREAM),
             ("new", "ours (/flannel, the image's) → bridge", OURS)]
    for ax, what in zip(axes, ("wall", "cpu")):
        x, ticks, labels = 0.0, [], []
        for run, (ctx, by) in runs.items():
            for op in ("add", "del"):
                start = x
                base = by["a"][op + "_" + what]
                for key, label, col in names:
                    v = by[key][op + "_" + what]
                    ax.bar(x, v, 0.8, color=col, edgecolor="white", label=label if x < 3 else None)
                    own = "" if key == "a" else "\n+%.1f" % (v - base)
                    ax.text(x, v + 0.8, "%.1f%s" % (v, own), ha="center", va="bottom", fontsize=7)
                    x += 0.9
                ticks.append(start + 0.9)
                labels.append("%s\nsession %s\n%s %s" % (op.upper(), ctx["session"], ctx["date"], ctx["time"]))
                x += 0.6
            x += 0.5
        ax.set_xticks(ticks, labels, fontsize=7.5)
        ax.grid(axis="x", visible=False)
        ax.set_title({"wall": "wall time per call", "cpu": "CPU per call (the plugin and every child it waited for)"}[what],
                     loc="left")
    axes[0].set_ylabel("ms per call, median of 40\n(+N: the plugin's own cost over bridge alone)")
    axes[0].set_ylim(0, 85)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, bbox_to_anchor=(0.5, -0.06))
    fig.suptitle("The flannel CNI plugin per pod ADD and DEL: ours, upstream's and bridge alone, interleaved in one run\n"
                 "bench/cni-ab.py under chrt -f 10, 200 ms before each DEL; " + MACHINE, x=0.01, ha="left", fontsize=10)
    fig.tight_layout()
    save(fig, outdir, "cni.png")


# ---------------------------------------------------------------- 4. RSS against lease count
def plot_rss(plt, rows, outdir):
    fig, ax = plt.subplots(figsize=(9, 5.2))

    def pts(runs, kind, who, key, count):
        out = collections.defaultdict(list)
        for run in runs:
            for n, v in series(rows, kind, run, who, key, count).items():
                out[n] += v
        return out
    e = ["rss-etcd-2000-s8", "rss-etcd-10000-s8"]
    k = ["rss-kube-2000-s8", "rss-kube-10000-s8"]
    s8 = ctx_of(rows, e[0])
    draw = [(pts(e, "rss", "ours", "rss_mb", "routes"), dict(color=OURS, marker="o",
             label="ours, etcd mode, the image (lean session 8, %s)" % s8["date"]), (6, -11)),
            (pts(k, "rss", "ours", "rss_mb", "routes"), dict(color=OURS, marker="D", ls=":",
             label="ours, kube mode, the image (same session)"), (6, 3)),
            (pts(["scale-s9-final"], "convergence", "ours", "rss_mb_5s_later", "leases"), dict(color=OURS2, marker="^",
             label="ours, etcd mode, bin/flanneld on OpenJDK 17, per-key leases (session 9, 2026-11-26)"), (-30, 6)),
            (pts(e, "rss", "upstream", "rss_mb", "routes"), dict(color=UPSTREAM, marker="s", ls="--",
             label="upstream v0.20.2, etcd mode (same invocations as the image's)"), (6, -11)),
            (pts(k[:1], "rss", "upstream", "rss_mb", "routes"), dict(color=UPSTREAM, marker="P", ls=":",
             label="upstream, kube mode (2,000; at 10,000 it programmed no route in 120 s)"), (6, 3)),
            (pts(["scale-s10-quiet"], "convergence", "upstream", "rss_mb_5s_later", "leases"),
             dict(color="#a35a14", marker="x", label="upstream, per-key leases (session 10, beside ours at 107 MB)"), (-30, 6))]
    for data, kw, off in draw:
        xs = sorted(data)
        ys = [med(data[n]) for n in xs]
        ax.plot(xs, ys, lw=1.4, ms=6, **kw)
        for n, y in zip(xs, ys):
            ax.annotate("%.1f" % y, (n, y), textcoords="offset points", xytext=off, fontsize=7, color=kw["color"])
    ax.set_xscale("log")
    ax.set_xlim(60, 20000)
    ax.set_xticks([100, 1000, 2000, 10000], ["100", "1,000", "2,000", "10,000"])
    ax.set_ylim(0, 130)
    ax.set_xlabel("peer leases (etcd) or Nodes (kube)")
    ax.set_ylabel("daemon RSS 5 s after every route is programmed, MB")
    ax.set_title("flanneld's resident memory against cluster size, ours and upstream\n" + MACHINE, loc="left")
    ax.legend(loc="lower right", fontsize=7)
    save(fig, outdir, "rss.png")


# ---------------------------------------------------------------- 5. wireguard across sessions: the host moves it
def plot_wireguard_sessions(plt, rows, outdir):
    per = collections.OrderedDict()
    for r in rows:
        if r["kind"] != "throughput" or r["ctx"].get("backend") != "wireguard" or r.get("streams") != "1":
            continue
        per.setdefault(r["ctx"]["run"], (r["ctx"], {}))[1][r["variant"]] = num(r, "gbit_s")
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for run, (ctx, v) in per.items():
        if not {"flannel", "kernel", "wireguard-go"} <= set(v):
            continue
        s = int(ctx["session"])
        a.scatter(s, v["flannel"] / v["kernel"], color=OURS, s=22, zorder=3)
        b.scatter(s, v["flannel"] / v["wireguard-go"], color=OURS, s=22, zorder=3)
    a.axhline(0.35, color="#999999", ls="--", lw=1)
    a.text(8.7, 0.355, "issue 22's goal 0.35×", fontsize=7, color="#666666")
    b.axhline(10, color="#999999", ls="--", lw=1)
    b.text(8.7, 10.1, "issue 22's goal 10×", fontsize=7, color="#666666")
    for ax in (a, b):
        ax.set_xlabel("session (code and day changed; each dot one run)")
        ax.set_xticks(range(9, 18))
        ax.axvspan(14.5, 17.5, color="#f2f2f2", zorder=0)
    a.text(14.6, 0.06, "sessions 15-17: the same host name, faster\nfor this path (session 14's code gave\n"
           "0.449× in session 15's run)", fontsize=7, color="#555555")
    a.set_ylim(0, 0.6)
    b.set_ylim(0, 13)
    a.set_ylabel("ours / kernel VXLAN, same run")
    b.set_ylabel("ours / wireguard-go, same run")
    a.set_title("userspace WireGuard, one stream, --ip-masq, against kernel VXLAN", loc="left")
    b.set_title("the same runs against wireguard-go", loc="left")
    fig.suptitle("The userspace WireGuard moves with the host: every quiet run of sessions 9-17 on " + MACHINE
                 + "\n(the CPU \"AMD EPYC\" with AVX-512 as sessions 15-17 recorded it); Temurin 25.0.3, C2", x=0.01, ha="left",
                 fontsize=10)
    fig.tight_layout()
    save(fig, outdir, "wireguard-sessions.png")


def main():
    need_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    style(plt)
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "benchmarks")
    os.makedirs(outdir, exist_ok=True)
    rows = read_data()
    plot_throughput(plt, rows, outdir)
    plot_convergence(plt, rows, outdir)
    plot_cni(plt, rows, outdir)
    plot_rss(plt, rows, outdir)
    plot_wireguard_sessions(plt, rows, outdir)


if __name__ == "__main__":
    main()
