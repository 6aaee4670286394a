"""same_batches: ours' train and the official train_dual.py trained step by
step on the same batch, from the same initial weights, on the CPU in
float32, and their losses compared step by step beside the official's
own float noise.

    python3 tests/same_batches.py OFFICIAL [--cfg yolov9-t] [--img 320] [--batch 16] [--steps 100]
                                  [--seed 0] [--data COCO128.yaml] [--work DIR]

1. A batch of BATCH training samples of the official loader
   (LoadImagesAndLabels.__getitem__ with hyp.scratch-high at IMG: mosaic,
   mixup, random perspective, HSV, flips; Python's and numpy's random
   seeded by SEED) is written as pictures (PNG, lossless) and label files:
   a dataset of exactly one batch, so that every epoch of either program
   is one step on it, whatever order each shuffles it in.
2. A fresh official model (models.yolo.Model of the CFG yaml, 80 classes,
   torch seeded by SEED) is saved as init.pt and converted for ours by
   weights/convert.py.
3. Both programs train STEPS epochs with --noval from those weights, with
   hyp.scratch-high's numbers and every augmentation off (the pictures are
   the augmented samples already), at once, on one thread each: the
   official train_dual.py (in-process, with stand-ins for the packages this
   machine lacks; its validation, which --noval still runs after the last
   epoch, is stood in for, as it needs torchvision), twice, the second
   time with the same pictures under other names (each program shuffles
   its epoch, so the names set where a picture sits in the batch: the
   sums over the batch then round otherwise, and nothing else changes: the
   envelope of float noise), then, for the first 10 steps, from weights
   each moved by a relative 1e-5 at most (a float difference of about
   ours' size from the first step); and ours' ./train (build it first:
   make train). Each epoch's row of results.csv is then that step's loss
   (the official warms up over max(3 epochs, 100 steps), so all of a
   hundred steps are warmup: the learning rates, the momentum and the
   accumulation ramp).
4. Printed: each program's box, cls and dfl at the first steps and every
   tenth; the largest relative difference of the three from the
   official's at each of the first steps and over windows of steps, for
   ours and the official's variants; the mean box loss over the steps;
   the boxes each side read into the batch.

Needs torch, numpy, cv2, yaml and an official checkout (nothing of the
official code is in this file: it is imported at run time)."""
import argparse
import csv
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import official_env  # noqa: E402

NO_AUG = ('hsv_h', 'hsv_s', 'hsv_v', 'degrees', 'translate', 'scale', 'shear', 'perspective', 'flipud', 'fliplr',
          'mosaic', 'mixup', 'copy_paste')


def record(repo, data_yaml, work, cfg, img, batch, seed):
    """the batch as a one-batch dataset, the initial weights, the hyp without augmentation"""
    official_env.use(repo, keep=('cv2', 'yaml'))
    import random

    import cv2
    import numpy as np
    import torch
    import yaml
    import utils.dataloaders as dl
    from models.yolo import Model

    with open(os.path.join(repo, 'data/hyps/hyp.scratch-high.yaml')) as f:
        hyp = yaml.safe_load(f)
    with open(data_yaml) as f:
        data = yaml.safe_load(f)
    train = os.path.join(os.path.dirname(os.path.abspath(data_yaml)), data.get('path', '.'), data['train'])
    # the official writes its label cache beside the labels: a view through links keeps it out of the dataset
    view = os.path.join(work, 'view')
    name = os.path.basename(os.path.normpath(train))
    for d in ('images', 'labels'):
        os.makedirs(os.path.join(view, d), exist_ok=True)
    os.symlink(os.path.abspath(train), os.path.join(view, 'images', name))
    os.symlink(os.path.dirname(os.path.abspath(dl.img2label_paths([os.path.join(train, 'x.jpg')])[0])),
               os.path.join(view, 'labels', name))
    ds = dl.LoadImagesAndLabels(os.path.join(view, 'images', name), img, batch, augment=True, hyp=hyp)
    random.seed(seed)
    np.random.seed(seed)
    out = os.path.join(work, 'data')
    for d in ('images/train', 'labels/train'):
        os.makedirs(os.path.join(out, d))
    boxes = 0
    for j, i in enumerate(np.random.default_rng(seed).permutation(len(ds))[:batch]):
        im, labels, _, _ = ds[int(i)]
        cv2.imwrite(os.path.join(out, 'images/train', f'{j:03d}.png'), im.numpy().transpose(1, 2, 0)[:, :, ::-1])
        with open(os.path.join(out, 'labels/train', f'{j:03d}.txt'), 'w') as f:
            for r in labels.numpy():
                f.write('%d %.9g %.9g %.9g %.9g\n' % tuple(r[1:]))
        boxes += len(labels)
    shutil.rmtree(view)
    # the same pictures under other names: each program's shuffle then puts them in other places in the batch
    renamed = os.path.join(work, 'data_renamed')
    for d in ('images/train', 'labels/train'):
        os.makedirs(os.path.join(renamed, d))
    for j in range(batch):
        for d, ext in (('images/train', 'png'), ('labels/train', 'txt')):
            shutil.copy(os.path.join(out, d, f'{j:03d}.{ext}'), os.path.join(renamed, d, f'{(5 * j + 3) % batch:03d}x.{ext}'))
    names = data['names'] if isinstance(data['names'], list) else [data['names'][k] for k in sorted(data['names'])]
    for d in (out, renamed):
        with open(os.path.join(d, 'data.yaml'), 'w') as f:
            f.write(f'path: {d}\ntrain: images/train\nval: images/train\nnc: {len(names)}\nnames:\n')
            f.write(''.join(f'  {k}: {n}\n' for k, n in enumerate(names)))
    for k in NO_AUG:
        hyp[k] = 0.0
    with open(os.path.join(work, 'hyp.yaml'), 'w') as f:
        yaml.safe_dump(hyp, f, sort_keys=False)
    torch.manual_seed(seed)
    model = Model(os.path.join(repo, f'models/detect/{cfg}.yaml'), ch=3, nc=len(names))
    torch.save({'model': model}, os.path.join(work, 'init.pt'))
    with torch.no_grad():   # every weight moved by a relative 1e-5 at most: a float difference of ours' size, in the official
        for v in model.state_dict().values():
            if v.is_floating_point():
                v.mul_(1 + 1e-5 * (2 * torch.rand(v.shape) - 1))
    torch.save({'model': model}, os.path.join(work, 'init_perturbed.pt'))
    return boxes


def run_official(repo, work, name, data, *more):
    """train_dual.py in this process: STEPS epochs of the one batch; each step's loss items and boxes kept"""
    config = os.path.join(work, 'config')   # its check_dataset fetches a font into the config folder unless there is one
    os.makedirs(config, exist_ok=True)
    open(os.path.join(config, 'Arial.ttf'), 'a').close()
    os.environ['YOLOV5_CONFIG_DIR'] = config
    official_env.use(repo, keep=('cv2', 'yaml'))
    import runpy
    import types

    import numpy as np
    import utils.loss_tal_dual as loss_module
    import val_dual

    steps = []
    call = loss_module.ComputeLoss.__call__

    def recorded(self, p, targets, *a, **k):
        loss, items = call(self, p, targets, *a, **k)
        steps.append((len(targets), *items.tolist()))
        return loss, items
    loss_module.ComputeLoss.__call__ = recorded
    board = types.ModuleType('torch.utils.tensorboard')   # its loggers import it; the stand-in tensorboard fails torch's check
    board.SummaryWriter = type('SummaryWriter', (), {'__init__': lambda self, *a, **k: None,   # not callable: no hook
                                                     '__getattr__': lambda self, n: (lambda *a, **k: None)})
    sys.modules['torch.utils.tensorboard'] = board
    # its validation needs torchvision's NMS: --noval still validates after the last epoch
    val_dual.run = lambda data, *a, **k: ((0.0,) * 7, np.zeros(int(data['nc'])), (0.0, 0.0, 0.0))
    args = open(os.path.join(work, 'official_args')).read().split()
    os.chdir(repo)
    sys.argv = ['train_dual.py'] + args + ['--data', data, '--project', work, '--name', name, '--exist-ok'] + list(more)
    runpy.run_path('train_dual.py', run_name='__main__')
    with open(os.path.join(work, name, 'steps.txt'), 'w') as f:
        f.writelines('%d %.9g %.9g %.9g\n' % s for s in steps)


def read_results(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = list(csv.reader(f))
    head = [h.strip() for h in rows[0]]
    ix = [head.index(k) for k in ('train/box_loss', 'train/cls_loss', 'train/dfl_loss')]
    return [[float(r[i]) for i in ix] for r in rows[1:] if r]


def ours_instances(log):
    """the Instances column of ours' progress lines (epoch N/M, GPU_mem, box, cls, dfl, Instances, ...)"""
    seen = set()
    with open(log, errors='replace') as f:
        for line in f:
            v = line.split()
            if len(v) > 6 and '/' in v[0] and v[0].split('/')[0].isdigit():
                seen.add(int(v[5]))
    return sorted(seen)


def compare(work, steps):
    a = read_results(os.path.join(work, 'official', 'results.csv'))
    b = read_results(os.path.join(work, 'official_renamed', 'results.csv'))
    o = read_results(os.path.join(work, 'ours', 'results.csv'))
    p = read_results(os.path.join(work, 'official_perturbed', 'results.csv'))
    n = min(len(a), len(b), len(o))
    if n < steps:
        print(f'same_batches: only {n} of {steps} steps in every results.csv')
    print(f"\n{'step':>4s} | {'ours box cls dfl':>26s} | {'official':>26s} | {'official, renamed':>26s}")
    for s in range(n):
        if s < 5 or s % 10 == 9 or s == n - 1:
            print(f'{s:4d} | ' + ' | '.join(' '.join(f'{v:8.5g}' for v in x[s]) for x in (o, a, b)))

    def rel(x, y, lo, hi):
        return max(abs(x[s][c] - y[s][c]) / abs(y[s][c]) for s in range(lo, min(hi, n, len(x))) for c in range(3))
    others = [('ours', o), ('official renamed', b), ('official from weights moved by 1e-5', p)]
    print('\nlargest relative difference of box, cls, dfl from the official\'s, step by step:')
    print(f"  {'step':36s}" + ''.join(f'{s:9d}' for s in range(min(n, 8))))
    for name, x in others:
        print(f'  {name:36s}' + ''.join(f'{rel(x, a, s, s + 1):9.1e}' for s in range(min(n, 8, len(x)))))
    windows = [(lo, hi) for lo, hi in [(0, 4), (4, 10), (10, 25), (25, 50), (50, 75), (75, 100)] if lo < n]
    print('and over windows of steps:')
    print(f"  {'steps':36s}" + ''.join(f'{f"{lo}-{min(hi, n) - 1}":>9s}' for lo, hi in windows))
    for name, x in others[:2]:
        print(f'  {name:36s}' + ''.join(f'{rel(x, a, lo, hi):9.1e}' for lo, hi in windows))
    mean = [sum(x[s][0] for s in range(n)) / n for x in (o, a, b)]
    print(f'\nbox loss over the {n} steps, mean: ours {mean[0]:.5f}, official {mean[1]:.5f}, renamed {mean[2]:.5f} '
          f'(ours {100 * (mean[0] / mean[1] - 1):+.3f}%, the official renamed {100 * (mean[2] / mean[1] - 1):+.3f}%)')


def main():
    if sys.argv[1:2] == ['--run-official']:
        return run_official(*sys.argv[2:])
    ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1].strip())
    ap.add_argument('official')
    ap.add_argument('--cfg', default='yolov9-t')
    ap.add_argument('--img', type=int, default=320)
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--steps', type=int, default=100)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--data', default=os.path.join(HERE, '..', '..', 'shared', 'coco128', 'coco128.yaml'))
    ap.add_argument('--work', default='/tmp/same_batches')
    opt = ap.parse_args()
    repo, work = os.path.abspath(opt.official), os.path.abspath(opt.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    root = os.path.dirname(HERE)
    boxes = record(repo, opt.data, work, opt.cfg, opt.img, opt.batch, opt.seed)
    print(f'the batch: {opt.batch} samples of the official loader at {opt.img}, {boxes} boxes', flush=True)
    subprocess.run([sys.executable, os.path.join(root, 'weights/convert.py'), os.path.join(work, 'init.pt'),
                    os.path.join(work, 'init.safetensors')], check=True)
    common = ['--hyp', os.path.join(work, 'hyp.yaml'), '--img', str(opt.img), '--epochs', str(opt.steps), '--device', 'cpu',
              '--noval', '--seed', str(opt.seed)]
    with open(os.path.join(work, 'official_args'), 'w') as f:
        f.write(' '.join(['--weights', os.path.join(work, 'init.pt'), '--cfg', f'models/detect/{opt.cfg}.yaml',
                          '--batch-size', str(opt.batch), '--workers', '0', '--noplots'] + common))
    env = dict(os.environ, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')   # one thread each: a shared machine, no spinning
    runs = {'official': [sys.executable, os.path.abspath(__file__), '--run-official', repo, work, 'official',
                         os.path.join(work, 'data/data.yaml')],
            'official_renamed': [sys.executable, os.path.abspath(__file__), '--run-official', repo, work, 'official_renamed',
                                 os.path.join(work, 'data_renamed/data.yaml')],
            'official_perturbed': [sys.executable, os.path.abspath(__file__), '--run-official', repo, work, 'official_perturbed',
                                   os.path.join(work, 'data/data.yaml'), '--weights', os.path.join(work, 'init_perturbed.pt'),
                                   '--epochs', str(min(opt.steps, 10))],
            'ours': [os.path.join(root, 'train'), '--cfg', opt.cfg, '--weights', os.path.join(work, 'init.safetensors'),
                     '--data', os.path.join(work, 'data/data.yaml'), '--batch', str(opt.batch), '--workers', '1',
                     '--project', work, '--name', 'ours'] + common}
    procs = {k: subprocess.Popen(v, env=env, stdout=open(os.path.join(work, k + '.log'), 'w'), stderr=subprocess.STDOUT)
             for k, v in runs.items()}
    for k, p in procs.items():
        if p.wait():
            sys.exit(f'same_batches: the {k} run failed (exit {p.returncode}): see {work}/{k}.log')
    seen = sorted({int(line.split()[0]) for line in open(os.path.join(work, 'official', 'steps.txt'))})
    print(f'boxes in the batch as each read it: official {seen}, ours {ours_instances(os.path.join(work, "ours.log"))}')
    compare(work, opt.steps)


if __name__ == '__main__':
    main()
