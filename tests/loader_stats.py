"""loader_stats: the training samples' boxes of ours and of the official loader,
side by side: boxes a sample, their sizes and places, the class histogram,
each side's run-to-run spread, and how far apart the sides are in units of
that spread.

    python3 tests/loader_stats.py official OFFICIAL DATA.yaml OUT [--samples 10000] [--seed 0] [--img 640] [--hyp FILE]
    python3 tests/loader_stats.py compare OURS1 OURS2 ... -- OFFICIAL1 OFFICIAL2 ...
    python3 tests/loader_stats.py streams OFFICIAL DATA.yaml SEED SEED ... [--workers 2] [--img 320]

`official` writes OUT, a line a sample (its box count, then class cx cy w
h of each box, normalised), of the official LoadImagesAndLabels.__getitem__
(mosaic, mixup, random perspective, flips, with hyp.scratch-high unless
--hyp), its pictures cached in memory, over SAMPLES samples in epochs of
shuffled indices, Python's and numpy's random seeded by SEED. The draws are
the official code's own; only what changes pixels and nothing else is stood
in for (cv2.warpAffine and warpPerspective return a grey canvas of their
output size, augment_hsv does nothing), which leaves every random draw in
its place. It also counts the boxes that go into random_perspective and
come out of it. Ours writes the same lines with

    tests/bench_loader --data DATA.yaml --batch 16 --batches N --seed S --boxes OUT [--cache ram]

`compare` prints, per statistic, each run's value, each side's mean and
run-to-run standard deviation, and the difference of the means in standard
errors (from the runs' spread; with few runs that spread is itself rough,
so the standard error from each run's 20 blocks of samples is printed too).
The class histogram is compared class by class, as a chi-square over the
classes with boxes, beside the same chi-square between two halves of each
side's runs.

`streams` prints, for each SEED, a hash of each of the first six batches
(of 4) of the official training loader as train_dual.py makes it
(init_seeds(SEED + 1), create_dataloader with shuffle and WORKERS
workers): the official's data stream does not follow its --seed.

Needs numpy (and for `official` and `streams`, torch, cv2, yaml and an official checkout:
nothing of the official code is in this file; it is imported at run time)."""
import math
import os
import sys

import numpy as np

SIZES = (32, 96)   # COCO's small / medium / large, in pixels of the sample


def read_samples(path):
    """[(n, array [n, 5] class cx cy w h)] of a --boxes file"""
    out = []
    with open(path) as f:
        for line in f:
            v = line.split()
            if not v:
                continue
            n = int(v[0])
            a = np.array(v[1:], dtype=np.float64).reshape(n, 5) if n else np.zeros((0, 5))
            out.append(a)
    return out


def statistics(samples, img, nc):
    """name -> value of one run's samples; 'classes' -> share per class"""
    boxes = np.concatenate(samples) if samples else np.zeros((0, 5))
    counts = np.array([len(s) for s in samples], dtype=np.float64)
    area = boxes[:, 3] * boxes[:, 4] * img * img
    st = {
        'boxes a sample': counts.mean(),
        'samples without a box': (counts == 0).mean(),
        'mean sqrt(w h), normalised': np.sqrt(boxes[:, 3] * boxes[:, 4]).mean(),
        'mean w': boxes[:, 3].mean(),
        'mean h': boxes[:, 4].mean(),
        f'share under {SIZES[0]}^2 px': (area < SIZES[0] ** 2).mean(),
        f'share {SIZES[0]}^2..{SIZES[1]}^2 px': ((area >= SIZES[0] ** 2) & (area < SIZES[1] ** 2)).mean(),
        'box centre x': boxes[:, 1].mean(),
        'box centre y': boxes[:, 2].mean(),
    }
    hist = np.bincount(boxes[:, 0].astype(int), minlength=nc).astype(np.float64)
    st['classes'] = hist / max(hist.sum(), 1)
    return st


def block_se(samples, img, nc, name, blocks=20):
    """standard error of a statistic from the spread of its value over blocks of consecutive samples"""
    k = len(samples) // blocks
    v = [statistics(samples[i * k:(i + 1) * k], img, nc)[name] for i in range(blocks)]
    return np.std(v, ddof=1) / math.sqrt(blocks)


def compare(ours_files, official_files, img=640):
    runs = {'ours': [read_samples(f) for f in ours_files], 'official': [read_samples(f) for f in official_files]}
    nc = 1 + int(max(s[:, 0].max() for side in runs.values() for r in side for s in r if len(s)))
    stats = {side: [statistics(r, img, nc) for r in rs] for side, rs in runs.items()}
    for side, files in (('ours', ours_files), ('official', official_files)):
        print(f'{side}: ' + ', '.join(f'{os.path.basename(f)} ({len(r)} samples)' for f, r in zip(files, runs[side])))
    print(f"\n{'statistic':32s} {'side':9s} {'runs':40s} {'mean':>9s} {'run sd':>8s} {'block se':>9s}  difference")
    worst = 0.0
    for name in stats['ours'][0]:
        if name == 'classes':
            continue
        line = {}
        for side in ('ours', 'official'):
            v = np.array([s[name] for s in stats[side]])
            se_blocks = np.mean([block_se(r, img, nc, name) for r in runs[side]]) / math.sqrt(len(v))
            line[side] = (v, v.mean(), v.std(ddof=1) if len(v) > 1 else float('nan'), se_blocks)
        d = line['ours'][1] - line['official'][1]
        se_runs = math.sqrt(sum(line[s][2] ** 2 / len(line[s][0]) for s in line))
        se_blocks = math.sqrt(sum(line[s][3] ** 2 for s in line))
        z = d / se_runs if se_runs > 0 else float('nan')
        worst = max(worst, abs(z), abs(d / se_blocks) if se_blocks > 0 else 0)
        for side in ('ours', 'official'):
            v, m, sd, seb = line[side]
            runs_s = ' '.join(f'{x:.4f}' for x in v)
            tail = (f'  {d:+.4f} ({z:+.2f} se of the runs, {d / se_blocks:+.2f} of the blocks)' if side == 'official' else '')
            print(f"{name if side == 'ours' else '':32s} {side:9s} {runs_s:40s} {m:9.4f} {sd:8.4f} {seb:9.4f}{tail}")
    # the class histogram: per class, the sides' mean shares against the spread of the shares over blocks of samples
    def blocks(rs, part=slice(None), n=20):
        out = []
        for r in rs:
            k = len(r) // n
            out += [statistics(r[i * k:(i + 1) * k], img, nc)['classes'] for i in range(n)][part]
        return np.array(out)
    share = {side: blocks(rs) for side, rs in runs.items()}
    used = (share['ours'].sum(0) + share['official'].sum(0)) > 0

    def chi2(a, b):
        var = a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b)
        ok = used & (var > 0)
        return float(((a.mean(0) - b.mean(0))[ok] ** 2 / var[ok]).sum()), int(ok.sum())

    c, dof = chi2(share['ours'], share['official'])
    tvd = 0.5 * np.abs(share['ours'].mean(0) - share['official'].mean(0)).sum()
    print(f'\nclass histogram ({int(used.sum())} classes with boxes), shares per block of samples: chi-square of the sides '
          f'{c:.1f} on {dof} classes (expected {dof} +- {math.sqrt(2 * dof):.0f} if they agree), total variation distance {tvd:.4f}')
    for side, rs in runs.items():
        a, b = blocks(rs, slice(0, 10)), blocks(rs, slice(10, 20))
        c2, d2 = chi2(a, b)
        t2 = 0.5 * np.abs(a.mean(0) - b.mean(0)).sum()
        print(f'  {side}, the first half of each run against the second: chi-square {c2:.1f} on {d2}, '
              f'total variation distance {t2:.4f} (of half as many samples: expect about sqrt 2 times the sides\')')
    top = np.argsort(-(share['ours'].mean(0) + share['official'].mean(0)))[:5]
    print('  largest classes (ours / official share): ' +
          ', '.join(f'{k}: {share["ours"].mean(0)[k]:.4f} / {share["official"].mean(0)[k]:.4f}' for k in top))
    print(f'\nlargest difference of a statistic: {worst:.2f} standard errors')


def official(repo, data_yaml, out, samples, seed, img, hyp_path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import random

    import official_env
    root = os.path.abspath(repo)
    official_env.use(root, keep=('cv2',))

    import cv2
    import yaml
    import utils.augmentations as aug
    import utils.dataloaders as dl

    # pixels only: the warps return a grey canvas of their size, HSV does nothing (no random draw moves)
    def grey(im, M, dsize, borderValue=None, **k):
        return np.full((dsize[1], dsize[0], im.shape[2]), 114, np.uint8)
    class PixelsOff:
        warpAffine = warpPerspective = staticmethod(grey)

        def __getattr__(self, name):
            return getattr(cv2, name)
    aug.cv2 = PixelsOff()
    dl.augment_hsv = lambda *a, **k: None
    kept = [0, 0]   # boxes into and out of random_perspective
    perspective = dl.random_perspective

    def counted(im, targets=(), *a, **k):
        kept[0] += len(targets)
        im, t = perspective(im, targets, *a, **k)
        kept[1] += len(t)
        return im, t
    dl.random_perspective = counted

    with open(hyp_path or os.path.join(root, 'data/hyps/hyp.scratch-high.yaml')) as f:
        hyp = yaml.safe_load(f)
    with open(data_yaml) as f:
        data = yaml.safe_load(f)
    train = os.path.join(os.path.dirname(os.path.abspath(data_yaml)), data.get('path', '.'), data['train'])
    view, split = official_view(train, dl)
    ds = dl.LoadImagesAndLabels(split, img, 16, augment=True, hyp=hyp, cache_images='ram')
    random.seed(seed)
    np.random.seed(seed)
    order = np.random.default_rng(seed + 1 << 20)   # the epochs' orders, apart from the draws
    with open(out, 'w') as f:
        done = 0
        while done < samples:
            for i in order.permutation(len(ds)):
                if done == samples:
                    break
                _, labels, _, _ = ds[int(i)]
                lb = labels.numpy()
                f.write(str(len(lb)) + ''.join(' %d %.6f %.6f %.6f %.6f' % (r[1], r[2], r[3], r[4], r[5]) for r in lb) + '\n')
                done += 1
    import shutil
    shutil.rmtree(view)
    print(f'official: {samples} samples, seed {seed} -> {out}; random_perspective kept {kept[1]} of {kept[0]} boxes '
          f'({kept[1] / max(kept[0], 1):.4f})')


def official_view(train, dl):
    """a folder of links to the split, so that the official writes its label cache there, not beside the dataset"""
    import tempfile
    view = tempfile.mkdtemp()
    name = os.path.basename(os.path.normpath(train))
    os.makedirs(os.path.join(view, 'images'))
    os.makedirs(os.path.join(view, 'labels'))
    os.symlink(os.path.abspath(train), os.path.join(view, 'images', name))
    os.symlink(os.path.dirname(os.path.abspath(dl.img2label_paths([os.path.join(train, 'x.jpg')])[0])),
               os.path.join(view, 'labels', name))
    return view, os.path.join(view, 'images', name)


def streams(repo, data_yaml, seeds, workers, img):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hashlib
    import shutil

    import official_env
    official_env.use(os.path.abspath(repo), keep=('cv2',))
    import yaml
    import utils.dataloaders as dl
    from utils.general import init_seeds
    with open(os.path.join(repo, 'data/hyps/hyp.scratch-high.yaml')) as f:
        hyp = yaml.safe_load(f)
    with open(data_yaml) as f:
        data = yaml.safe_load(f)
    view, train = official_view(os.path.join(os.path.dirname(os.path.abspath(data_yaml)), data.get('path', '.'), data['train']), dl)
    for seed in seeds:
        init_seeds(seed + 1, deterministic=True)   # as train_dual.py
        loader, _ = dl.create_dataloader(train, img, 4, 32, hyp=hyp, augment=True, workers=workers, prefix='', shuffle=True)
        hashes = []
        for k, (imgs, targets, _, _) in enumerate(loader):
            hashes.append(hashlib.md5(imgs.numpy().tobytes() + targets.numpy().tobytes()).hexdigest()[:8])
            if k == 5:
                break
        print(f'--seed {seed}, {loader.num_workers} workers: batches ' + ' '.join(hashes), flush=True)
    shutil.rmtree(view)


def main():
    a = sys.argv[1:]
    if a[:1] == ['compare'] and '--' in a:
        k = a.index('--')
        compare(a[1:k], a[k + 1:])
    elif a[:1] == ['streams'] and len(a) >= 4:
        opts = {'--workers': 2, '--img': 320}
        seeds = []
        rest = a[3:]
        while rest:
            if rest[0] in opts and len(rest) > 1:
                opts[rest[0]] = int(rest[1])
                rest = rest[2:]
            else:
                seeds.append(int(rest[0]))
                rest = rest[1:]
        streams(a[1], a[2], seeds, opts['--workers'], opts['--img'])
    elif a[:1] == ['official'] and len(a) >= 4:
        opts = {'--samples': 10000, '--seed': 0, '--img': 640, '--hyp': None}
        rest = a[4:]
        for i in range(0, len(rest), 2):
            if rest[i] not in opts or i + 1 >= len(rest):
                sys.exit(f'loader_stats: unknown or incomplete option {rest[i]}')
            opts[rest[i]] = rest[i + 1] if rest[i] == '--hyp' else int(rest[i + 1])
        official(a[1], a[2], a[3], opts['--samples'], opts['--seed'], opts['--img'], opts['--hyp'])
    else:
        sys.exit(__doc__.split('\n\n')[1])


if __name__ == '__main__':
    main()
