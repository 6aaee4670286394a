"""amp_loss: what the official AMP does to the official loss and its gradients at fixed
weights (issue 15). train_dual.py runs the forward AND the loss under
torch.cuda.amp.autocast (float16), and the backward through GradScaler. Here the same
weights see the same training batches (the official dataloader, hyp.scratch-high,
augmented, seeded as train_dual.py seeds it) with autocast off and on, and for each batch
this prints the three loss items both ways, how many foreground anchors each of the two
assigners (the main head's and the auxiliary head's) picks both ways and at how many
anchors the picks differ, and the cosine similarity and norm ratio of the weight
gradients both ways (on: after unscaling).

    python3 tests/amp_loss.py OFFICIAL_REPO WEIGHTS.safetensors DATA.yaml [--on MODES] [options]

--on is a comma list of what "on" means, each compared with autocast off:
  fp16     torch.autocast(device, float16), as train_dual.py (CUDA)
  bf16     torch.autocast(device, bfloat16) (on the CPU: a smoke test of this script)
  emulate  CUDA's float16 autocast emulated op by op (Autocast16, below): runs anywhere,
           so that the CPU can study what each step does; on the GPU, beside fp16, it
           checks the emulation against the real thing
--study (CPU or GPU): at each batch's float32 forward, which step of the loss moves the
  loss and the assignment: the loss on the maps rounded to float16 (and computed in
  float32), under the emulated autocast, and under it with one step (the DFL decode, the
  box loss (CIoU, DFL), the assigner) computed in float32 again; gradients here are
  those of the loss with respect to the maps.
Other options: --cfg yolov9-s --batch 16 --batches 4 --seed 0 --workers 4 --device cuda|cpu
--scale 65536 (GradScaler's first scale; halved while a gradient is not finite).
Needs torch, numpy, cv2, yaml and an official checkout; nothing of the official code is in
this file (it is imported at run time)."""
import argparse
from contextlib import nullcontext
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402
from official_metrics import official_model  # noqa: E402

ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1].strip())
ap.add_argument('repo')
ap.add_argument('weights')
ap.add_argument('data')
ap.add_argument('--cfg', default='yolov9-s')
ap.add_argument('--on', default='fp16')
ap.add_argument('--study', action='store_true')
ap.add_argument('--batch', type=int, default=16)
ap.add_argument('--batches', type=int, default=4)
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--workers', type=int, default=4)
ap.add_argument('--device', default=None)
ap.add_argument('--scale', type=float, default=65536.0)
opt = ap.parse_args()

official_env.use(opt.repo)
if not hasattr(numpy, 'trapz'):   # numpy 2 renamed it; the official utils still name it
    numpy.trapz = numpy.trapezoid
import torch  # noqa: E402
import yaml  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_map  # noqa: E402
from utils.dataloaders import create_dataloader  # noqa: E402
from utils.general import init_seeds  # noqa: E402
from utils.loss_tal_dual import ComputeLoss  # noqa: E402

F16, F32 = torch.float16, torch.float32

# ----------------------------------------------------------------------------
# Autocast16: CUDA's float16 autocast, emulated on float32 arithmetic.
# Autocast sorts ops into three lists (aten/src/ATen/autocast_mode.h of PyTorch 2.x:
# AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE; the
# PyTorch 1.13 autocast_mode.cpp has the same lists less the upsampling ops, which move
# no value): convolutions and matrix products cast their inputs to float16 and return
# float16 (summing in float32); the "fp32" ops (pow, exp, log, softmax, sum, the
# losses...) cast to float32 and return float32; every other op runs in its inputs'
# own type, promoted as usual (a float16 and a float32 tensor give float32; a 0-d
# tensor or a Python number does not promote a float16 tensor), so sigmoid, atan,
# +, -, *, / of float16 tensors round their result to float16. Here float16 tensors are
# real float16 tensors (so .dtype is what the official code sees under autocast),
# every op computes in float32 and its result is rounded to float16 where autocast's
# would be float16, which is what a CUDA float16 kernel does (it computes in float32
# and rounds once). The backward of each rounding casts the gradient to float16, as
# the gradient of a float16 tensor is float16.
# ----------------------------------------------------------------------------
LOWER = {'conv1d', 'conv2d', 'conv3d', 'convolution', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d',
         'prelu', 'addmm', 'addmv', 'addr', 'matmul', '__matmul__', '__rmatmul__', 'einsum', 'mm', 'mv', 'linear',
         'addbmm', 'baddbmm', 'bmm', 'chain_matmul'}
FP32 = {'acos', 'asin', 'cosh', 'erfinv', 'exp', 'expm1', 'log', 'log10', 'log2', 'log1p', 'reciprocal', 'rsqrt',
        'sinh', 'tan', 'pow', '__pow__', '__rpow__', 'softplus', 'layer_norm', 'group_norm', 'cosine_similarity',
        'nll_loss', 'cross_entropy', 'kl_div', 'l1_loss', 'smooth_l1_loss', 'huber_loss', 'mse_loss',
        'binary_cross_entropy_with_logits', 'dist', 'pdist', 'cdist', 'renorm', 'logsumexp', 'interpolate',
        'prod', 'softmax', 'log_softmax', 'cumprod', 'cumsum', 'norm', 'sum'}
# ops that move or reinterpret values (views, casts, shapes): run as they are
AS_IS = {'view', 'view_as', 'reshape', 'permute', 'transpose', 't', 'contiguous', 'split', 'chunk', 'unbind',
         '__getitem__', '__setitem__', 'unsqueeze', 'squeeze', 'flatten', 'expand', 'expand_as', 'narrow', 'select',
         'detach', 'to', 'type', 'float', 'half', 'double', 'long', 'int', 'bool', 'size', 'dim', 'numel', 'item',
         'tolist', '__get__', '__len__', '__bool__', '__index__', '__int__', '__float__', '__repr__', '__format__',
         'requires_grad_', 'is_floating_point', 'stride', 'data_ptr', 'element_size', 'cpu', 'cuda', 'numpy'}
INPLACE = {'__iadd__', '__isub__', '__imul__', '__itruediv__', '__ipow__'}


def _up(x):   # a float16 tensor as float32 (exact); the backward rounds the gradient to float16
    return x.float() if isinstance(x, torch.Tensor) and x.dtype == F16 else x


def _down(x):   # a float tensor rounded to float16
    return x.half() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


def _promoted(floats):
    """the float type PyTorch's promotion gives: dimensioned tensors outrank 0-d ones"""
    group = [t for t in floats if t.dim() > 0] or floats
    return F32 if any(t.dtype == F32 for t in group) else F16 if group else None


class Autocast16(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.paused = 0   # > 0 inside a region computed in float32 (fp32_region)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, '__name__', '')
        if self.paused or name in AS_IS:
            return func(*args, **kwargs)
        floats = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
        inplace = name.endswith('_') and not name.endswith('__') or name in INPLACE
        if inplace:   # the result keeps the type of the tensor written to
            if args[0].dtype == F16:
                return func(*args, **kwargs)
            return func(args[0], *tree_map(_up, args[1:]), **tree_map(_up, kwargs))
        if name in LOWER:
            args, kwargs = tree_map(lambda x: _up(_down(x)), (args, kwargs))
            return tree_map(_down, func(*args, **kwargs))
        args, kwargs = tree_map(_up, (args, kwargs))
        out = func(*args, **kwargs)
        if name in FP32:
            return out
        # batch_norm of a float16 input (float32 weights and statistics) returns float16
        to = floats[0].dtype if name == 'batch_norm' else _promoted(floats)
        return tree_map(_down, out) if to == F16 else out


def fp32_region(mode, fn):
    """fn computed in float32 under the emulated autocast: float16 arguments cast up, the mode paused"""
    def run(*args, **kwargs):
        args, kwargs = tree_map(_up, (args, kwargs))
        mode.paused += 1
        try:
            return fn(*args, **kwargs)
        finally:
            mode.paused -= 1
    return run


# ----------------------------------------------------------------------------
# the model, the loss and the batches, as train_dual.py makes them
# ----------------------------------------------------------------------------
device = torch.device(opt.device or ('cuda' if torch.cuda.is_available() else 'cpu'))
init_seeds(opt.seed, deterministic=True)   # train_dual.py: opt.seed + 1 + RANK, RANK -1 without DDP
hyp = yaml.safe_load(open(os.path.join(opt.repo, 'data', 'hyps', 'hyp.scratch-high.yaml')))
model = official_model(opt.repo, opt.cfg, opt.weights).to(device).train()
model.hyp = hyp
compute_loss = ComputeLoss(model)
dataset_yaml = yaml.safe_load(open(opt.data))   # its path relative to the yaml's folder, as ours reads it
root = os.path.join(os.path.dirname(os.path.abspath(opt.data)), dataset_yaml.get('path', '.'))
loader, _ = create_dataloader(os.path.join(root, dataset_yaml['train']), 640, opt.batch, 32, hyp=hyp, augment=True,
                              workers=opt.workers, shuffle=True, prefix='train: ')
params = [(n, p) for n, p in model.named_parameters()]

fg_masks = []   # the fg_mask of each assigner call, in call order (main head, then auxiliary)
for assigner in (compute_loss.assigner, compute_loss.assigner2):
    assigner.register_forward_hook(lambda m, i, out: fg_masks.append(out[3].clone()))


def loss_of(feats_or_imgs, targets, ctx, from_maps=False):
    """loss, items and the two fg masks, the forward (unless from_maps) and the loss under ctx"""
    fg_masks.clear()
    with ctx:
        pred = feats_or_imgs if from_maps else model(feats_or_imgs)
        loss, items = compute_loss(pred, targets)
    return loss, items.float(), list(fg_masks)


def weight_grads(loss, scale):
    """the weight gradients of loss, unscaled: scaled by `scale`, halved while one is not finite
    (what GradScaler does over the skipped steps); returns the grads and the scale used"""
    while True:
        model.zero_grad(set_to_none=True)
        (loss * scale).backward(retain_graph=True)
        g = torch.cat([(p.grad.float() / scale).flatten() for _, p in params if p.grad is not None])
        if torch.isfinite(g).all() or scale < 1:
            return g, scale
        scale /= 2


def compare(tag, off, on, g_off=None, g_on=None, extra=''):
    (_, io, fo), (_, inn, fn) = off, on
    rel = (inn - io) / io
    print(f'  {tag:16s} box {inn[0]:.5f} cls {inn[1]:.5f} dfl {inn[2]:.5f}   rel diff '
          f'{rel[0]:+.2e} {rel[1]:+.2e} {rel[2]:+.2e}', end='')
    for k, (a, b) in enumerate(zip(fo, fn)):
        print(f'   fg[{"main" if k == 0 else "aux"}] {int(b.sum())} ({int((a != b).sum())} differ)', end='')
    if g_off is not None:
        print(f'   grad cos {cosine(g_off, g_on):.6f} norm ratio {float(g_on.norm() / g_off.norm()):.6f}', end='')
    print(extra)


contexts = {'fp16': lambda: torch.autocast(device.type, dtype=F16),
            'bf16': lambda: torch.autocast(device.type, dtype=torch.bfloat16),
            'emulate': Autocast16}
for name in opt.on.split(',') if opt.on else []:
    assert name in contexts, f'amp_loss: --on {name}: not one of {", ".join(contexts)}'
print(f'amp_loss: {opt.cfg} {opt.weights} on {device}, batches of {opt.batch}, seed {opt.seed}, torch {torch.__version__}')
def cosine(a, b):
    return float(torch.dot(a, b) / (a.norm() * b.norm()))


g_prev = None   # the previous batch's gradient (off): how far one batch's gradient is from another's
for b, (imgs, targets, _, _) in enumerate(loader):
    if b == opt.batches:
        break
    imgs = imgs.to(device).float() / 255
    targets = targets.to(device)
    print(f'batch {b}: {len(targets)} boxes')
    loss, items, fg = loss_of(imgs, targets, nullcontext())
    g_off, _ = weight_grads(loss, 1.0)
    del loss   # its graph: one forward's activations held at a time
    print(f'  {"autocast off":16s} box {items[0]:.5f} cls {items[1]:.5f} dfl {items[2]:.5f}   ' +
          '   '.join(f'fg[{"main" if k == 0 else "aux"}] {int(m.sum())}' for k, m in enumerate(fg)) +
          ('' if g_prev is None else f'   grad cos with the previous batch\'s {cosine(g_off, g_prev):.6f}'))
    for name in opt.on.split(',') if opt.on else []:
        on = loss_of(imgs, targets, contexts[name]())
        g_on, scale = weight_grads(on[0], opt.scale)
        compare(name, (None, items, fg), on, g_off, g_on, f'   scale {scale:g}')
        del on, g_on
    g_prev = g_off
    if not opt.study:
        continue
    # the study: the loss at this batch's float32 maps, each way
    with torch.no_grad():
        maps = model(imgs)
    maps = [[x.detach().requires_grad_() for x in head] for head in maps]

    def from_maps(rounded, ctx, regions=()):
        """the loss of the maps under ctx, with the named steps in float32; rounded: the maps
        rounded to float16, as float16 tensors under the emulation, else as float32 ones"""
        emulated = isinstance(ctx, Autocast16)
        leaves = [[(x.half() if emulated else x.half().float()) if rounded else x for x in head] for head in maps]
        saved = {}
        for r in regions:   # computed in float32: instance attributes shadow the methods
            owner, attr = {'decode': (compute_loss, 'bbox_decode'), 'boxloss': (compute_loss.bbox_loss, 'forward'),
                           'boxloss2': (compute_loss.bbox_loss2, 'forward'), 'assigner': (compute_loss.assigner, 'forward'),
                           'assigner2': (compute_loss.assigner2, 'forward')}[r]
            saved[r] = (owner, attr)
            setattr(owner, attr, fp32_region(ctx, getattr(owner, attr)))
        try:
            res = loss_of(leaves, targets, ctx, from_maps=True)
        finally:
            for owner, attr in saved.values():
                delattr(owner, attr)
        g = torch.autograd.grad(res[0], [x for head in maps for x in head])
        return res, torch.cat([x.float().flatten() for x in g])

    ref, g_ref = from_maps(False, nullcontext())
    for tag, rounded, ctx, regions in (('maps f16', True, nullcontext(), ()),
                                       ('emulated loss', True, Autocast16(), ()),
                                       (' decode f32', True, Autocast16(), ('decode',)),
                                       (' box loss f32', True, Autocast16(), ('boxloss', 'boxloss2')),
                                       (' assigner f32', True, Autocast16(), ('assigner', 'assigner2'))):
        res, g = from_maps(rounded, ctx, regions)
        compare(tag, ref, res, g_ref, g, '   (gradient: of the maps)')
