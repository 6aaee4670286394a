#!/usr/bin/env python3
"""Issue 15's comparison of training runs: the last epoch of each results.csv
(ours or the official's: the same columns, found by name), each side's mean,
and ours' mean against the official's (losses in %, mAP as a ratio), each
with the standard error that the runs' own spread gives the difference of
the means, sqrt(s1^2/n1 + s2^2/n2) (s: the runs' sample standard deviation).

    python3 tests/seeds_table.py OURS.csv ... -- OFFICIAL.csv ...

A run whose CSV was not kept may be given by its figures instead, as
NAME=box,cls,dfl,mAP50,mAP50-95 (issue 15's official seeds 0 and 1). A file
whose last epoch is not EPOCH (default 99) is listed but left out of the
means. Exits 1 when a side has no finished run."""
import csv, os, statistics, sys

COLS = {"box": "train/box_loss", "cls": "train/cls_loss", "dfl": "train/dfl_loss",
        "mAP50": "metrics/mAP_0.5", "mAP50-95": "metrics/mAP_0.5:0.95"}
EPOCH = int(os.environ.get("EPOCH", "99"))


def last_epoch(arg):
    """(epoch, [box, cls, dfl, mAP50, mAP50-95]) of a results.csv's last row, or of NAME=figures"""
    if "=" in arg:
        v = [float(x) for x in arg.split("=", 1)[1].split(",")]
        if len(v) != len(COLS):
            sys.exit(f"{arg}: {len(COLS)} figures expected")
        return EPOCH, v
    with open(arg) as f:
        rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(f)]
    if not rows:
        sys.exit(f"{arg}: no rows")
    missing = [c for c in ["epoch", *COLS.values()] if c not in rows[-1]]
    if missing:
        sys.exit(f"{arg}: no column {missing[0]}")
    return int(float(rows[-1]["epoch"])), [float(rows[-1][c]) for c in COLS.values()]


def side(label, args):
    """prints the side's rows and mean; returns the mean and the squared standard error of each column"""
    done = []
    for a in args:
        e, v = last_epoch(a)
        mark = "" if e == EPOCH else f" (epoch {e}: not in the mean)"
        print(f"| {label} {os.path.basename(a).split('=')[0]}{mark} | " + " | ".join(f"{x:.4g}" for x in v) + " |")
        if e == EPOCH:
            done.append(v)
    if not done:
        sys.exit(f"seeds_table: no {label} run reached epoch {EPOCH}")
    cols = list(zip(*done))
    mean = [statistics.fmean(c) for c in cols]
    se2 = [statistics.variance(c) / len(c) if len(c) > 1 else float("nan") for c in cols]
    print(f"| {label}, mean of {len(done)} | " + " | ".join(f"{x:.4g}" for x in mean) + " |")
    return mean, se2


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    print("| run | " + " | ".join(COLS) + " |\n|---|" + "---|" * len(COLS))
    ours, ours_se2 = side("ours", argv[:cut])
    official, official_se2 = side("official", argv[cut + 1:])
    parts = []
    for name, o, f, so, sf in zip(COLS, ours, official, ours_se2, official_se2):
        d, e = (o - f) / f, (so + sf) ** 0.5 / f   # the difference of the means, relative to the official's
        parts.append(f"{name} {1 + d:.2f}x (+-{e:.2f})" if name.startswith("mAP") else f"{name} {100 * d:+.1f}% (+-{100 * e:.1f})")
    print("\nours / official means (+- one standard error): " + ", ".join(parts))


if __name__ == "__main__":
    main(sys.argv[1:])
