"""Measure our val against the official code, run where PyTorch and a
checkout of WongKinYiu/yolov9 are. Nothing of the official code is in this
file: it imports it from OFFICIAL at run time.

  python3 tests/official_metrics.py synth LABEL_DIR IMAGE_DIR DIR N
      DIR/labels, DIR/sizes.txt and DIR/preds for the first N pictures:
      predictions made from the labels (most boxes found with a jitter,
      some with the wrong class, some missed) plus false positives, seeded,
      in the val --save-txt --save-conf format (class cx cy w h conf).
  python3 tests/official_metrics.py metrics OFFICIAL DIR
      the official process_batch + ap_per_class on DIR's predictions and
      labels: P, R, mAP50, mAP50-95 into DIR/official.json, which
      tests/test_metrics compares ours with.
  python3 tests/official_metrics.py val OFFICIAL CFG_YAML WEIGHTS.safetensors DATA_YAML DEVICE OUT_DIR
      the official val_dual.run (val.run for GELAN) on our weights (loaded into the official
      model under the official names): P, R, mAP50, mAP50-95, and its
      detections in OUT_DIR/labels (class cx cy w h conf), to hold ours to.
      IMG=N sets --img (640); SINGLE_CLS=1 validates with --single-cls.
  python3 tests/official_metrics.py compare OURS_DIR THEIRS_DIR [MIN_CONF]
      two folders of such detections, picture by picture: how many of
      theirs (above MIN_CONF) we found (same class, every coordinate within
      0.002 of the picture's size: boxes clipped flat at an edge have no
      IoU), and how far the boxes and confidences of the pairs differ.
"""
import json
import os
import random
import sys


def synth(label_dir, image_dir, out, n):
    from PIL import Image
    rng = random.Random(2026)
    names = sorted(os.listdir(image_dir))[:int(n)]
    for d in ("labels", "preds"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    sizes = []
    for name in names:
        stem = os.path.splitext(name)[0]
        w, h = Image.open(os.path.join(image_dir, name)).size
        sizes.append(f"{stem} {w} {h}")
        path = os.path.join(label_dir, stem + ".txt")
        rows = [list(map(float, l.split())) for l in open(path)] if os.path.exists(path) else []
        with open(os.path.join(out, "labels", stem + ".txt"), "w") as f:
            f.writelines("%d %.6g %.6g %.6g %.6g\n" % (c, x, y, bw, bh) for c, x, y, bw, bh in rows)
        preds = []
        for c, x, y, bw, bh in rows:
            if rng.random() < 0.15:   # missed
                continue
            j = rng.uniform(0.0, 0.35)   # jitter: from exact to loose
            x += rng.uniform(-j, j) * bw / 2
            y += rng.uniform(-j, j) * bh / 2
            bw *= 1 + rng.uniform(-j, j)
            bh *= 1 + rng.uniform(-j, j)
            if rng.random() < 0.1:
                c = rng.randrange(80)
            preds.append((c, x, y, bw, bh, rng.uniform(0.05, 1.0)))
        for _ in range(rng.randrange(6)):   # false positives
            preds.append((rng.randrange(80), rng.random(), rng.random(), rng.uniform(0.02, 0.5), rng.uniform(0.02, 0.5),
                          rng.uniform(0.001, 0.6)))
        with open(os.path.join(out, "preds", stem + ".txt"), "w") as f:
            f.writelines("%d %.6g %.6g %.6g %.6g %.6g\n" % p for p in preds)
    with open(os.path.join(out, "sizes.txt"), "w") as f:
        f.write("\n".join(sizes) + "\n")


def metrics(official, folder):
    sys.path.insert(0, official)
    import numpy as np
    import torch
    from utils.metrics import ap_per_class
    from val_dual import process_batch

    iouv = torch.linspace(0.5, 0.95, 10)
    stats = []
    for line in open(os.path.join(folder, "sizes.txt")):
        stem, w, h = line.split()
        w, h = int(w), int(h)

        def rows(path, n):
            if not os.path.exists(path) or os.path.getsize(path) == 0:
                return np.zeros((0, n), np.float32)
            return np.loadtxt(path, dtype=np.float32, ndmin=2).reshape(-1, n)

        def xyxy(b):  # normalised centre form -> pixels, float32 as in val_dual
            return torch.stack([(b[:, 0] - b[:, 2] / 2) * w, (b[:, 1] - b[:, 3] / 2) * h,
                                (b[:, 0] + b[:, 2] / 2) * w, (b[:, 1] + b[:, 3] / 2) * h], 1)

        lab = torch.from_numpy(rows(os.path.join(folder, "labels", stem + ".txt"), 5))
        prd = torch.from_numpy(rows(os.path.join(folder, "preds", stem + ".txt"), 6))
        labels = torch.cat([lab[:, :1], xyxy(lab[:, 1:5])], 1)
        det = torch.cat([xyxy(prd[:, 1:5]), prd[:, 5:6], prd[:, :1]], 1)
        order = sorted(range(len(det)), key=lambda i: -float(det[i, 4]))   # by confidence, stable, as NMS returns them
        det = det[order] if len(det) else det
        correct = process_batch(det, labels, iouv) if len(det) and len(labels) else torch.zeros(len(det), 10, dtype=torch.bool)
        stats.append((correct, det[:, 4], det[:, 5], labels[:, 0]))
    stats = [torch.cat(x, 0).cpu().numpy() for x in zip(*stats)]
    res = {"p": 0.0, "r": 0.0, "map50": 0.0, "map": 0.0}
    if len(stats) and stats[0].any():
        tp, fp, p, r, f1, ap, ap_class = ap_per_class(*stats, names={})   # its default () breaks names.items()
        res = {"p": float(p.mean()), "r": float(r.mean()), "map50": float(ap[:, 0].mean()), "map": float(ap.mean(1).mean())}
    with open(os.path.join(folder, "official.json"), "w") as f:
        json.dump(res, f)
    print("official metrics:", json.dumps(res))


def read_safetensors(path):
    """our weights as {name: float32 torch tensor}, without the safetensors package:
    F32, or F16 as ours keeps a finished run (as the official strip_optimizer does)"""
    import numpy as np
    import torch
    dtypes = {"F32": np.float32, "F16": np.float16}
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__" or name.startswith("train."):
            continue
        b, end = e["data_offsets"]
        if e["dtype"] not in dtypes:
            sys.exit(f"{path}: tensor {name} is {e['dtype']}, not F32 or F16")
        out[name] = torch.from_numpy(np.frombuffer(data[b:end], dtype=dtypes[e["dtype"]]).astype(np.float32).reshape(e["shape"]))
    return out


def official_model(repo, cfg, weights):
    """the official Model of cfg (a model yaml's name, yolov9-s, or a yaml file) holding every
    tensor of our weights, loaded strictly under the official names, with nc and names set
    as a training run sets them; the official checkout must be importable (official_env.use)"""
    from models.yolo import Model
    yaml_path = cfg if cfg.endswith('.yaml') else os.path.join(repo, 'models', 'detect', cfg + '.yaml')
    model = Model(yaml_path, ch=3)   # nc from the model yaml, as ours reads it
    model.load_state_dict(read_safetensors(weights), strict=True)
    model.nc = model.model[-1].nc
    model.names = {i: str(i) for i in range(model.nc)}
    return model


def val(official, cfg, weights, data, device, out_dir):
    weights, data, out_dir, official = map(os.path.abspath, (weights, data, out_dir, official))
    sys.path.insert(0, official)
    os.chdir(official)
    import torch
    from models.yolo import DetectionModel
    import val as val_single
    import val_dual

    import yaml
    nc = int(yaml.safe_load(open(data))["nc"])
    model = DetectionModel(cfg, ch=3, nc=nc)
    missing, unexpected = model.load_state_dict(read_safetensors(weights), strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    assert not missing and not unexpected, (missing, unexpected)
    model.nc, model.names = nc, {i: str(i) for i in range(nc)}   # what a training run would have set
    torch.save({"model": model}, "/tmp/ours.pt")
    # a dual head (YOLOv9) is validated by val_dual.py, a single one (GELAN) by val.py
    runner = val_dual if type(model.model[-1]).__name__ == "DualDDetect" else val_single
    runner.opt = __import__("argparse").Namespace(min_items=0)   # run() reads the CLI global opt.min_items
    (mp, mr, map50, map_, *_), _, t = runner.run(data=data, weights="/tmp/ours.pt", batch_size=32, imgsz=int(os.environ.get("IMG", "640")),
                                                   conf_thres=0.001, iou_thres=0.7, max_det=300, half=False,
                                                   device=device, plots=False, save_txt=True, save_conf=True,
                                                   project=os.path.dirname(out_dir), name=os.path.basename(out_dir),
                                                   exist_ok=True, single_cls=os.environ.get("SINGLE_CLS") == "1")
    print("official", runner.__name__, json.dumps({"p": mp, "r": mr, "map50": map50, "map": map_}),
          "ms per picture: pre-process %.1f, inference %.1f, NMS %.1f" % tuple(t[:3]))


def compare(ours, theirs, min_conf="0.01"):
    min_conf = float(min_conf)

    def load(path):
        if not os.path.exists(path):
            return []
        return [list(map(float, l.split())) for l in open(path) if l.strip()]

    def dist(a, b):   # the largest coordinate difference, normalised
        return max(abs(a[i] - b[i]) for i in range(1, 5))

    total = found = 0
    dconf, ious = [], []
    for name in sorted(os.listdir(theirs)):
        t = sorted([r for r in load(os.path.join(theirs, name)) if r[5] >= min_conf], key=lambda r: -r[5])
        o = load(os.path.join(ours, name))
        used = set()
        for r in t:
            total += 1
            best, bi = 0.002, -1
            for k, q in enumerate(o):
                if k not in used and int(q[0]) == int(r[0]) and dist(q, r) <= best:
                    best, bi = dist(q, r), k
            if bi >= 0:
                used.add(bi)
                found += 1
                dconf.append(abs(o[bi][5] - r[5]))
                ious.append(best)
    print("official detections with conf >= %g: %d; ours has %d of them (same class, coordinates within 0.002); "
          "pairs: coordinates differ by %.1e on average, %.1e at worst; |conf difference| mean %.2e, worst %.2e"
          % (min_conf, total, found, sum(ious) / max(len(ious), 1), max(ious or [0]),
             sum(dconf) / max(len(dconf), 1), max(dconf or [0])))


if __name__ == "__main__":
    {"synth": synth, "metrics": metrics, "val": val, "compare": compare}[sys.argv[1]](*sys.argv[2:])
