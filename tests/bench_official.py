"""bench_official: the official PyTorch YOLOv9 timed as tests/bench_train times
ours, on the same kind of synthetic batch.

    python3 tests/bench_official.py OFFICIAL_REPO gelan-s gelan-c yolov9-c
    python3 tests/bench_official.py OFFICIAL_REPO --step yolov9-s yolov9-c
        [--batch 32] [--img 640] [--steps 7] [--device cuda|cpu]
    python3 tests/bench_official.py OFFICIAL_REPO --step yolov9-e --batch 16,48

--batch takes a list: each model at each batch in turn, in one process (the
peak memory counted afresh for each). A case that runs out of device memory
says so in its last line ("official CFG step, batch B IMG: OOM") and the
next one runs.

Inference (the default): the model built from its yaml, BatchNorm and RepConvN
fused, median of --steps forwards after 3 warm-ups, in float32 (cuDNN's
default, TF32 convolutions) and in half. gelan-s and gelan-c are the
inference branches of yolov9-s and yolov9-c (the official converts their
weights into them); yolov9-c itself also runs its auxiliary branch.

--step: one training step as train_dual.py makes it, each piece taken from
the official code: init_seeds(0, deterministic=True), the model from
models/detect/CFG.yaml with 80 classes, AMP on CUDA and off on the CPU (what
check_amp answers), smart_optimizer's SGD with data/hyps/hyp.scratch-high.yaml's lr0,
momentum and weight decay (scaled by batch x accumulate / 64 as train_dual.py
scales it), ModelEMA, GradScaler, ComputeLoss of utils/loss_tal_dual (the
dual head's loss). A step: the uint8 batch from pinned memory to the device
and /255, the forward and loss under autocast, the scaled backward, unscale,
clip_grad_norm_(10), scaler.step and update, zero_grad, the EMA update.
Every step steps the optimizer, as bench_train does and as train_dual.py does
in its first warm-up batches (later, at batch 32, it steps every other
batch). The batch is bench_train's: uniform noise pictures, six random boxes
an image (centres in 0.2-0.8, sizes 0.05-0.35 of the picture, classes 0-79).
Median over --steps steps after 2 warm-ups, the device synchronized before
and after each; peak memory as torch.cuda.max_memory_allocated and
max_memory_reserved over the case (counted afresh for each).

OFFICIAL_REPO is a checkout of WongKinYiu/yolov9; torch and yaml must be
installed: the packages its utils import for plotting and data loading (cv2,
pandas, ...) are stood in for by empty modules where missing. The last line
of each case starts with "official" (tests/bench_compare.sh reads it)."""
import gc
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

ap = argparse.ArgumentParser(description='time the official YOLOv9: inference forward, or with --step a training step')
ap.add_argument('root', metavar='OFFICIAL_REPO')
ap.add_argument('cfgs', nargs='+', metavar='CFG', help='model yamls under models/detect, without .yaml')
ap.add_argument('--step', action='store_true', help="time train_dual.py's training step instead of the fused forward")
ap.add_argument('--batch', default='32', help='a batch size, or several: 16,48')
ap.add_argument('--img', type=int, default=640)
ap.add_argument('--steps', type=int, default=7, help='timed steps (the median is printed)')
ap.add_argument('--device', default='cuda')
args = ap.parse_args()

root = os.path.abspath(args.root)
official_env.use(root, keep=('yaml',))
warnings.filterwarnings('ignore', category=FutureWarning)   # torch 2.x on torch.cuda.amp's spelling, as train_dual.py writes it
import torch  # noqa: E402
import yaml  # noqa: E402
from models.yolo import Model  # noqa: E402
from utils.general import init_seeds  # noqa: E402
from utils.loss_tal_dual import ComputeLoss  # noqa: E402
from utils.torch_utils import ModelEMA, smart_optimizer  # noqa: E402

device = torch.device(args.device)
cuda = device.type == 'cuda'
if not cuda:
    print(f'official: torch {torch.__version__} on the CPU, {torch.get_num_threads()} threads', flush=True)
IMG = args.img
B = 0   # the batch of the case under way


def sync():
    if cuda:
        torch.cuda.synchronize()


def median_ms(seconds):
    return sorted(seconds)[len(seconds) // 2] * 1e3


def synthetic_batch():
    """bench_train's batch: noise pictures as uint8 (what train_dual.py's
    loader hands over, pinned), targets (image, class, x, y, w, h)
    normalised, six boxes an image."""
    g = torch.Generator().manual_seed(7)
    pictures = torch.randint(0, 256, (B, 3, IMG, IMG), dtype=torch.uint8, generator=g)
    if cuda:
        pictures = pictures.pin_memory()
    n = 6 * B
    u = torch.rand(n, 4, generator=g)
    targets = torch.cat([(torch.arange(n) % B).float()[:, None], torch.randint(0, 80, (n, 1), generator=g).float(),
                         0.2 + 0.6 * u[:, :2], 0.05 + 0.3 * u[:, 2:]], 1)
    return pictures, targets


def bench_infer(cfg):
    model = Model(os.path.join(root, 'models/detect', cfg + '.yaml'), ch=3, nc=80).to(device).eval()
    model.fuse()
    x = torch.rand(B, 3, IMG, IMG, device=device)
    for half in (False, True):
        if half and not cuda:
            print(f'official {cfg} fused, half: only on CUDA', flush=True)
            break
        m, xx = (model.half(), x.half()) if half else (model, x)
        t = []
        with torch.inference_mode():
            for s in range(3 + args.steps):   # 3 warm-ups
                sync()
                t0 = time.perf_counter()
                m(xx)
                sync()
                if s >= 3:
                    t.append(time.perf_counter() - t0)
        ms = median_ms(t)
        print(f'official {cfg} fused, batch {B} {IMG}, {"half" if half else "float32"}: {ms:.2f} ms, {B * 1e3 / ms:.1f} img/s',
              flush=True)


def bench_step(cfg):
    # train_dual.py's set-up, in its order (seed 0, RANK -1, no pretrained weights, nc 80)
    init_seeds(0, deterministic=True)
    with open(os.path.join(root, 'data/hyps/hyp.scratch-high.yaml')) as f:
        hyp = yaml.safe_load(f)
    hyp['anchor_t'] = 5.0
    model = Model(os.path.join(root, 'models/detect', cfg + '.yaml'), ch=3, nc=80, anchors=hyp.get('anchors')).to(device)
    amp = cuda   # check_amp: True on CUDA (its test is commented out; it only probes the network), False on the CPU
    nbs = 64   # nominal batch size
    accumulate = max(round(nbs / B), 1)
    hyp['weight_decay'] *= B * accumulate / nbs
    optimizer = smart_optimizer(model, 'SGD', hyp['lr0'], hyp['momentum'], hyp['weight_decay'])
    ema = ModelEMA(model)
    model.half().float()   # train_dual.py: pre-reduce anchor precision
    hyp['label_smoothing'] = 0.0
    model.nc, model.hyp = 80, hyp
    scaler = torch.cuda.amp.GradScaler(enabled=amp)
    compute_loss = ComputeLoss(model)
    model.train()
    optimizer.zero_grad()
    print(f'official {cfg}: torch {torch.__version__}, AMP {amp}, deterministic {torch.are_deterministic_algorithms_enabled()}, '
          f'cudnn.benchmark {torch.backends.cudnn.benchmark}, weight decay {hyp["weight_decay"]:g}', flush=True)

    pictures, targets = synthetic_batch()
    warmup, t, skipped = 2, [], 0
    for s in range(warmup + args.steps):
        scale = scaler.get_scale()   # it falls where GradScaler finds inf/NaN gradients and skips the optimizer's step
        sync()
        t0 = time.perf_counter()
        imgs = pictures.to(device, non_blocking=True).float() / 255
        with torch.cuda.amp.autocast(amp):
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets.to(device))
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        ema.update(model)
        sync()
        dt = time.perf_counter() - t0
        if s >= warmup:
            t.append(dt)
            skipped += scaler.get_scale() < scale
        box, cls, dfl = loss_items.tolist()
        print(f'  step {s}: loss {loss.item():.3f} (box {box:.3f} cls {cls:.3f} dfl {dfl:.3f})  {dt * 1e3:.1f} ms', flush=True)
    ms = median_ms(t)
    mem = (f'peak memory allocated {torch.cuda.max_memory_allocated() / 1e9:.2f} GB, reserved '
           f'{torch.cuda.max_memory_reserved() / 1e9:.2f} GB') if cuda else 'peak memory: CPU'
    print(f'official {cfg} step, batch {B} {IMG}, {"AMP" if amp else "float32"}: {ms:.1f} ms, {B * 1e3 / ms:.1f} img/s '
          f'(median of {args.steps}), {mem}, optimizer steps GradScaler skipped {skipped}/{args.steps}', flush=True)


def run_case(cfg):
    """one model at batch B, its peak memory counted from nothing; running out of device memory is a result"""
    if cuda:
        gc.collect()   # the case before, out of memory, may leave tensors in reference cycles
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    try:
        (bench_step if args.step else bench_infer)(cfg)
        return
    except RuntimeError as e:   # torch.cuda.OutOfMemoryError is one
        if 'out of memory' not in str(e):
            raise
    print(f'official {cfg} {"step" if args.step else "fused"}, batch {B} {IMG}: OOM', flush=True)


for B in [int(b) for b in args.batch.split(',')]:
    for cfg in args.cfgs:
        run_case(cfg)
