"""Measure our val against the official code (run where PyTorch and a
checkout of WongKinYiu/yolov9 are, e.g. the GPU machine). Nothing of the
official code is in this file: it imports it from OFFICIAL at run time.

  python3 tests/official_metrics.py metrics OFFICIAL PRED_DIR LABEL_DIR IMAGE_DIR OUT.json
      the official process_batch + ap_per_class on our predictions
      (val --save-txt --save-conf files: class cx cy w h conf, normalised to
      the picture) and the dataset's labels: P, R, mAP50, mAP50-95 as JSON,
      and the picture sizes beside it (sizes.txt), for tests/test_metrics.
  python3 tests/official_metrics.py val OFFICIAL CFG_YAML WEIGHTS.safetensors DATA_YAML
      the official val_dual.run on our weights (loaded into the official
      model under the official names): P, R, mAP50, mAP50-95.
"""
import json
import os
import sys


def metrics(official, pred_dir, label_dir, image_dir, out):
    sys.path.insert(0, official)
    import numpy as np
    import torch
    from PIL import Image
    from utils.metrics import ap_per_class
    from val_dual import process_batch

    iouv = torch.linspace(0.5, 0.95, 10)
    stats, sizes = [], []
    for name in sorted(os.listdir(image_dir)):
        stem = os.path.splitext(name)[0]
        w, h = Image.open(os.path.join(image_dir, name)).size
        sizes.append(f"{stem} {w} {h}")

        def rows(path, n):
            if not os.path.exists(path):
                return np.zeros((0, n), np.float32)
            a = np.loadtxt(path, dtype=np.float32, ndmin=2)
            return a.reshape(-1, n)

        def xyxy(b):  # normalised centre form -> pixels
            return torch.stack([(b[:, 0] - b[:, 2] / 2) * w, (b[:, 1] - b[:, 3] / 2) * h,
                                (b[:, 0] + b[:, 2] / 2) * w, (b[:, 1] + b[:, 3] / 2) * h], 1)

        lab = torch.from_numpy(rows(os.path.join(label_dir, stem + '.txt'), 5))
        prd = torch.from_numpy(rows(os.path.join(pred_dir, stem + '.txt'), 6))
        labels = torch.cat([lab[:, :1], xyxy(lab[:, 1:5])], 1)
        det = torch.cat([xyxy(prd[:, 1:5]), prd[:, 5:6], prd[:, :1]], 1)
        det = det[det[:, 4].argsort(descending=True, stable=True)]
        correct = process_batch(det, labels, iouv) if len(det) and len(labels) else torch.zeros(len(det), 10, dtype=torch.bool)
        stats.append((correct, det[:, 4], det[:, 5], labels[:, 0]))
    stats = [torch.cat(x, 0).cpu().numpy() for x in zip(*stats)]
    res = {"p": 0.0, "r": 0.0, "map50": 0.0, "map": 0.0}
    if len(stats) and stats[0].any():
        tp, fp, p, r, f1, ap, ap_class = ap_per_class(*stats)
        res = {"p": float(p.mean()), "r": float(r.mean()), "map50": float(ap[:, 0].mean()), "map": float(ap.mean(1).mean())}
    with open(out, "w") as f:
        json.dump(res, f)
    with open(os.path.join(os.path.dirname(out), "sizes.txt"), "w") as f:
        f.write("\n".join(sizes) + "\n")
    print("official metrics on our predictions:", json.dumps(res))


def val(official, cfg, weights, data):
    sys.path.insert(0, official)
    os.chdir(official)
    import torch
    from safetensors.torch import load_file
    from models.yolo import DetectionModel
    import val_dual

    model = DetectionModel(cfg, ch=3, nc=80)
    missing, unexpected = model.load_state_dict(load_file(weights), strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    assert not missing and not unexpected, (missing, unexpected)
    torch.save({"model": model}, "/tmp/ours.pt")
    (mp, mr, map50, map_, *_), _, t = val_dual.run(data=data, weights="/tmp/ours.pt", batch_size=32, imgsz=640,
                                                   conf_thres=0.001, iou_thres=0.7, max_det=300, half=False,
                                                   device="0", plots=False)
    print("official val_dual on our weights:", json.dumps({"p": mp, "r": mr, "map50": map50, "map": map_}),
          "speed ms/img pre, inference, nms:", t[:3])


if __name__ == "__main__":
    if sys.argv[1] == "metrics":
        metrics(*sys.argv[2:7])
    else:
        val(*sys.argv[2:6])
