"""official_loader_bench: the official training dataloader alone, timed as
tests/bench_loader times ours: create_dataloader of utils/dataloaders.py
with the recipe's hyperparameters (mosaic, random perspective, mixup, HSV,
flips, letterbox, collate), shuffled, its workers kept between epochs (the
official InfiniteDataLoader), samples per second over BATCHES batches
after the first one (which also pays for starting the workers).

    python3 tests/official_loader_bench.py OFFICIAL DATA.yaml [--img 640] [--batch 16] [--workers 2]
                                           [--batches 64] [--cache ram|disk] [--hyp FILE]

OFFICIAL is a checkout of WongKinYiu/yolov9 (nothing of it is in this file:
it is imported at run time); torch, numpy and OpenCV must be installed, and
packages its utils import but the loader does not use are stood in for by
empty modules where missing. The last line is 'samples/s X'."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument('official')
p.add_argument('data')
p.add_argument('--img', type=int, default=640)
p.add_argument('--batch', type=int, default=16)
p.add_argument('--workers', type=int, default=2)
p.add_argument('--batches', type=int, default=64)
p.add_argument('--cache', choices=['ram', 'disk'])
p.add_argument('--hyp')
a = p.parse_args()
root = os.path.abspath(a.official)
official_env.use(root, keep=('cv2',))
import yaml  # noqa: E402
from utils.dataloaders import create_dataloader  # noqa: E402

with open(a.hyp or os.path.join(root, 'data/hyps/hyp.scratch-high.yaml')) as f:
    hyp = yaml.safe_load(f)
with open(a.data) as f:
    data = yaml.safe_load(f)
train = os.path.join(os.path.dirname(os.path.abspath(a.data)), data.get('path', '.'), data['train'])
t0 = time.time()
loader, dataset = create_dataloader(train, a.img, a.batch, 32, hyp=hyp, augment=True, cache=a.cache, rect=False,
                                    workers=a.workers, close_mosaic=False, prefix='train: ', shuffle=True)
if a.cache:
    print(f'--cache {a.cache}: {len(dataset)} pictures in {time.time() - t0:.2f} s', flush=True)
elif any(f.exists() for f in dataset.npy_files):   # its load_image reads PICTURE.npy whenever it exists
    print(f'warning: {sum(f.exists() for f in dataset.npy_files)} pictures have a .npy file from an earlier --cache disk: '
          'read instead of decoded, as with --cache disk (remove them to time decoding)', flush=True)
k, samples, start = 0, 0, 0.0
while k <= a.batches:
    for imgs, targets, paths, shapes in loader:
        if k == 0:
            start = time.time()
        else:
            samples += imgs.shape[0]
        k += 1
        if k > a.batches:
            break
dt = time.time() - start
print(f'{a.data}: {len(dataset)} images, batch {a.batch}, img {a.img}, {loader.num_workers} workers'
      f'{", --cache " + a.cache if a.cache else ""}: {samples} samples in {dt:.2f} s')
print(f'samples/s {samples / dt:.1f}')
