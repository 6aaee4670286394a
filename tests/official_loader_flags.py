"""official_loader_flags: the official --rect training batches, the
--multi-scale arithmetic, --image-weights' weights and --quad's collate,
for tests/test_augment.

    python3 tests/official_loader_flags.py PATH/TO/yolov9 tests/data/coco8 tests/golden/augment

rect.txt, rectK.png: the official LoadImagesAndLabels (utils/dataloaders.py)
as train_dual.py makes it with --rect (augment=True, rect=True, pad 0,
stride 32) on the coco8 pictures at img 128, batch 3, every augmentation
gain 0 but mosaic 1 (--rect must turn mosaic off), read in order as the
rect loader's (unshuffled) batches: per batch its shape, per picture its
file and labels (class cx cy w h, normalised), and the batch's pictures
stacked top to bottom in rectK.png.

multiscale.txt: train_dual.py's multi-scale arithmetic: for S in 64, 96,
640 every value random.randrange(S * 0.5, S * 1.5 + gs) can take, as the
size it becomes (sz // gs * gs) and how often; for some batch shapes and
sizes the new shape (math.ceil(x * sf / gs) * gs); and a random float32
tensor [2, 3, 5, 7] with torch.nn.functional.interpolate(mode='bilinear',
align_corners=False) of it to 8 x 4 and to 3 x 12.

imageweights.txt: train_dual.py's --image-weights weights of the coco8
pictures (labels_to_class_weights(labels, 80) * 80 * (1 - maps)^2 / 80,
then labels_to_image_weights) for the listed per-class maps.

quad.txt: the official LoadImagesAndLabels.collate_fn4 of a batch of 9
random uint8 pictures [3, 4, 6] with random labels, random.random()
handing out 0.3 then 0.7 (the first group upsampled, the second tiled;
the ninth picture left out): the draws, the input batch and the output.

The official code is imported at run time (OpenCV real, the other optional
packages stood in for where missing). It fetches a font at start: without
a network, point YOLOV5_CONFIG_DIR at a folder holding an empty Arial.ttf."""
import collections
import math
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

official_env.use(sys.argv[1], keep=("cv2", "albumentations"))
import cv2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from utils.dataloaders import LoadImagesAndLabels  # noqa: E402
from utils.general import labels_to_class_weights, labels_to_image_weights  # noqa: E402

coco8, out = sys.argv[2], sys.argv[3]
HYP = dict(hsv_h=0.0, hsv_s=0.0, hsv_v=0.0, degrees=0.0, translate=0.0, scale=0.0, shear=0.0, perspective=0.0,
           flipud=0.0, fliplr=0.0, mosaic=1.0, mixup=0.0)   # mosaic 1: --rect must turn it off itself
IMG, BATCH, GS = 128, 3, 32

with tempfile.TemporaryDirectory() as tmp:   # the official writes its label cache beside the labels
    shutil.copytree(coco8, os.path.join(tmp, "coco8"))
    ds = LoadImagesAndLabels(os.path.join(tmp, "coco8", "images", "train2017"), IMG, BATCH, augment=True, hyp=HYP,
                             rect=True, stride=GS, pad=0.0)
    assert ds.rect and not ds.mosaic
    with open(os.path.join(out, "rect.txt"), "w") as f:
        for k in range(0, ds.n, BATCH):
            items = [ds[i] for i in range(k, min(k + BATCH, ds.n))]
            H, W = items[0][0].shape[1:]
            f.write(f"batch {k // BATCH} {H} {W} {len(items)}\n")
            for img, labels, path, _ in items:
                assert tuple(img.shape[1:]) == (H, W)
                f.write(f"{os.path.basename(path)} {len(labels)}\n")
                for row in labels.tolist():
                    f.write("%d %.6f %.6f %.6f %.6f\n" % tuple([int(row[1])] + row[2:]))
            stacked = np.concatenate([img.numpy().transpose(1, 2, 0)[:, :, ::-1] for img, *_ in items], 0)
            cv2.imwrite(os.path.join(out, f"rect{k // BATCH}.png"), stacked)
    ds = LoadImagesAndLabels(os.path.join(tmp, "coco8", "images", "train2017"), IMG, BATCH, augment=True, hyp=HYP)
    nc, maps = 80, np.array([(c % 7) / 10 for c in range(80)])
    cw = labels_to_class_weights(ds.labels, nc).numpy() * nc * (1 - maps) ** 2 / nc   # as train_dual.py
    iw = labels_to_image_weights(ds.labels, nc=nc, class_weights=cw)
    with open(os.path.join(out, "imageweights.txt"), "w") as f:
        f.write(f"maps {nc} " + " ".join("%g" % m for m in maps) + "\n")
        for path, w in zip(ds.im_files, iw):
            f.write("%s %.9g\n" % (os.path.basename(path), w))

with open(os.path.join(out, "multiscale.txt"), "w") as f:
    for S in (64, 96, 640):   # the official: sz = random.randrange(imgsz * 0.5, imgsz * 1.5 + gs) // gs * gs
        counts = collections.Counter(v // GS * GS for v in range(int(S * 0.5), int(S * 1.5 + GS)))
        f.write(f"sizes {S} {len(counts)} " + " ".join(f"{s} {n}" for s, n in sorted(counts.items())) + "\n")
    for H, W, sz in ((128, 128, 96), (96, 128, 160), (128, 96, 64), (64, 128, 224), (96, 96, 96)):
        sf = sz / max(H, W)
        ns = [math.ceil(x * sf / GS) * GS for x in (H, W)] if sf != 1 else [H, W]
        f.write(f"shape {H} {W} {sz} {ns[0]} {ns[1]}\n")
    g = torch.Generator().manual_seed(0)
    x = torch.rand(2, 3, 5, 7, generator=g)
    f.write("input 2 3 5 7 " + " ".join("%.9g" % v for v in x.flatten().tolist()) + "\n")
    for h, w in ((8, 4), (3, 12)):
        y = torch.nn.functional.interpolate(x, size=(h, w), mode="bilinear", align_corners=False)
        f.write(f"bilinear {h} {w} " + " ".join("%.9g" % v for v in y.flatten().tolist()) + "\n")

def rows(t):
    return " ".join("%.9g" % v for v in t.flatten().tolist())


g = torch.Generator().manual_seed(1)
batch = []
for i in range(9):
    im = torch.randint(0, 256, (3, 4, 6), generator=g, dtype=torch.uint8)
    nl = i % 3 + 1
    lb = torch.cat([torch.zeros(nl, 1), torch.randint(0, 5, (nl, 1), generator=g).float(),
                    torch.rand(nl, 4, generator=g) * 0.5 + 0.25], 1)
    batch.append((im, lb, f"p{i}", None))
ims = torch.stack([b[0] for b in batch])
labels = torch.cat([torch.cat([torch.full((len(b[1]), 1), float(i)), b[1][:, 1:]], 1) for i, b in enumerate(batch)])
draws, real_random = iter([0.3, 0.7]), random.random
random.random = lambda: next(draws)   # collate_fn4's coins: upsample the first group, tile the second
im4, label4, _, _ = LoadImagesAndLabels.collate_fn4([(b[0], b[1].clone(), b[2], b[3]) for b in batch])
random.random = real_random
with open(os.path.join(out, "quad.txt"), "w") as f:
    f.write("upsample 2 1 0\n")
    f.write(f"images {ims.shape[0]} {ims.shape[2]} {ims.shape[3]} " + rows(ims) + "\n")
    f.write(f"targets {len(labels)} " + rows(labels) + "\n")
    f.write(f"out_images {im4.shape[0]} {im4.shape[2]} {im4.shape[3]} " + rows(im4) + "\n")
    f.write(f"out_targets {len(label4)} " + rows(label4) + "\n")
print("rect.txt, rect*.png, multiscale.txt, imageweights.txt, quad.txt into", out)
