#!/usr/bin/env python3
"""Issue 15's comparison of training runs: the last epoch of each results.csv
(ours or the official's: the same columns, found by name), each side's mean,
and ours' mean against the official's (losses in %, mAP as a ratio), each
with the standard error that the runs' own spread gives the difference of
the means (sqrt(s1^2/n1 + s2^2/n2), s the sample standard deviation).

    python3 tests/seeds_table.py OURS.csv ... -- OFFICIAL.csv ...

A run whose CSV was not kept may be given by its figures instead, as
NAME=box,cls,dfl,mAP50,mAP50-95 (issue 15's official seeds 0 and 1). A file whose last epoch is not EPOCH (default 99) is listed but left out of
the means. Exits 1 when either side has no finished run."""
import csv, os, sys

COLS = ["train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95"]
EPOCH = int(os.environ.get("EPOCH", "99"))


def last_row(path):
    if "=" in path:   # a run given by its last epoch's figures
        v = [float(x) for x in path.split("=", 1)[1].split(",")]
        if len(v) != len(COLS):
            sys.exit(f"{path}: {len(COLS)} figures expected")
        return EPOCH, v
    with open(path) as f:
        rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(f)]
    if not rows:
        sys.exit(f"{path}: no rows")
    r = rows[-1]
    missing = [c for c in COLS + ["epoch"] if c not in r]
    if missing:
        sys.exit(f"{path}: no column {missing[0]}")
    return int(float(r["epoch"])), [float(r[c]) for c in COLS]


def side(label, paths):
    done = []
    for p in paths:
        e, v = last_row(p)
        mark = "" if e == EPOCH else f" (epoch {e}: not in the mean)"
        print(f"| {label} {os.path.basename(p).split('=')[0]}{mark} | " + " | ".join(f"{x:.4g}" for x in v) + " |")
        if e == EPOCH:
            done.append(v)
    if not done:
        sys.exit(f"seeds_table: no {label} run reached epoch {EPOCH}")
    n = len(done)
    mean = [sum(col) / n for col in zip(*done)]
    var = [sum((x - mu) ** 2 for x in col) / (n - 1) if n > 1 else float("nan") for col, mu in zip(zip(*done), mean)]
    print(f"| {label}, mean of {n} | " + " | ".join(f"{x:.4g}" for x in mean) + " |")
    return mean, [v / n for v in var]


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    print("| run | box | cls | dfl | mAP50 | mAP50-95 |\n|---|---|---|---|---|---|")
    ours, ours_v = side("ours", argv[:cut])
    official, official_v = side("official", argv[cut + 1:])
    # the difference of the means and its standard error, relative to the official mean
    rel = [((o - f) / f, (vo + vf) ** 0.5 / f) for o, f, vo, vf in zip(ours, official, ours_v, official_v)]
    names = ("box", "cls", "dfl", "mAP50", "mAP50-95")
    losses = ", ".join(f"{n} {100 * d:+.1f}% (+-{100 * e:.1f})" for n, (d, e) in zip(names[:3], rel[:3]))
    maps = ", ".join(f"{n} {1 + d:.2f}x (+-{e:.2f})" for n, (d, e) in zip(names[3:], rel[3:]))
    print(f"\nours / official means (+- one standard error): {losses}; {maps}")


if __name__ == "__main__":
    main(sys.argv[1:])
