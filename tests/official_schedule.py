"""official_schedule: the learning rates, momentum, accumulation and optimizer
steps of the official train_dual.py, batch by batch, for tests/test_schedule.

    python3 tests/official_schedule.py PATH/TO/yolov9 tests/golden/schedule

Runs the official code itself where it can be imported: smart_optimizer
(utils/torch_utils.py) on a model with the three kinds of parameter,
torch's LambdaLR with the official lambdas (utils/general.py one_cycle,
one_flat_cycle, and train_dual.py's linear and fixed ones), and, line for
line, train_dual.py's warmup and step cadence (train(): "Warmup" and
"Optimize"), which live inside train() and cannot be imported. Resuming as
smart_resume does: a new optimizer and LambdaLR, then the optimizer state
saved after the last finished epoch, last_epoch = start_epoch - 1. Needs
torch and numpy (the official code's plotting imports are stood in for when
missing)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

official_env.use(sys.argv[1])
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.optim import lr_scheduler  # noqa: E402
from utils.general import one_cycle, one_flat_cycle  # noqa: E402
from utils.torch_utils import smart_optimizer  # noqa: E402

HYP = dict(lr0=0.01, lrf=0.01, momentum=0.937, weight_decay=0.0005, warmup_epochs=3.0, warmup_momentum=0.8,
           warmup_bias_lr=0.1)


def model():   # a conv weight (decayed), a BatchNorm weight and bias, a conv bias: the three groups
    return nn.Sequential(nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4), nn.Conv2d(4, 2, 1, bias=True))


def lambdas(shape, epochs, lrf):
    if shape == 'cos':
        return one_cycle(1, lrf, epochs)
    if shape == 'flat-cos':
        return one_flat_cycle(1, lrf, epochs)
    if shape == 'fixed':
        return lambda x: 1.0
    return lambda x: (1 - x / epochs) * (1.0 - lrf) + lrf   # train_dual.py's linear


def run(out, name, optimizer_name, shape, epochs, nb, batch_size, hyp, resume_at=0):
    hyp = dict(hyp)
    nbs = 64
    accumulate = max(round(nbs / batch_size), 1)
    hyp['weight_decay'] *= batch_size * accumulate / nbs
    lf = lambdas(shape, epochs, hyp['lrf'])

    def make():   # train_dual.py: smart_optimizer, then LambdaLR (which sets lr0 lf(0) at once)
        optimizer = smart_optimizer(model(), optimizer_name, hyp['lr0'], hyp['momentum'], hyp['weight_decay'])
        return optimizer, lr_scheduler.LambdaLR(optimizer, lr_lambda=lf)

    optimizer, scheduler = make()
    if resume_at:   # the interrupted run up to resume_at, then smart_resume loads its optimizer state
        first, first_scheduler = make()
        train(None, name, first, first_scheduler, lf, hyp, 0, resume_at, nb, batch_size, accumulate)
        optimizer.load_state_dict(first.state_dict())
    train(out, name, optimizer, scheduler, lf, hyp, resume_at, epochs, nb, batch_size, accumulate)


def train(out, name, optimizer, scheduler, lf, hyp, start_epoch, epochs, nb, batch_size, accumulate):
    nbs = 64
    nw = max(round(hyp['warmup_epochs'] * nb), 100)
    last_opt_step = -1
    scheduler.last_epoch = start_epoch - 1   # "do not move"
    for epoch in range(start_epoch, epochs):
        optimizer.zero_grad()
        for i in range(nb):
            ni = i + nb * epoch
            if ni <= nw:   # train_dual.py, Warmup
                xi = [0, nw]
                accumulate = max(1, np.interp(ni, xi, [1, nbs / batch_size]).round())
                for j, x in enumerate(optimizer.param_groups):
                    x['lr'] = np.interp(ni, xi, [hyp['warmup_bias_lr'] if j == 0 else 0.0, x['initial_lr'] * lf(epoch)])
                    if 'momentum' in x:
                        x['momentum'] = np.interp(ni, xi, [hyp['warmup_momentum'], hyp['momentum']])
            g = optimizer.param_groups
            mom = g[0]['momentum'] if 'momentum' in g[0] else g[0]['betas'][0]
            step = ni - last_opt_step >= accumulate
            if out is not None:
                out.write(f'{name},{epoch},{i},{ni},{g[0]["lr"]:.17g},{g[1]["lr"]:.17g},{g[2]["lr"]:.17g},{mom:.17g},'
                          f'{int(accumulate)},{int(step)}\n')
            if step:   # train_dual.py, Optimize (no gradients here: the step only counts)
                optimizer.step()
                optimizer.zero_grad()
                last_opt_step = ni
        scheduler.step()


os.makedirs(sys.argv[2], exist_ok=True)
with open(os.path.join(sys.argv[2], 'official.csv'), 'w') as out:
    out.write('# case,epoch,i,ni,lr_bias,lr_weight,lr_bn,momentum,accumulate,step; hyp ' +
              ' '.join(f'{k}={v}' for k, v in HYP.items()) + '; AdamW cases lr0=0.001\n')
    adam = dict(HYP, lr0=0.001)
    # name, optimizer, lr shape, epochs, batches an epoch, batch size, hyp, resumed at epoch
    cases = [('linear', 'SGD', 'linear', 12, 30, 16, HYP, 0),   # warmup ends inside epoch 3
             ('cos', 'SGD', 'cos', 12, 30, 16, HYP, 0),
             ('flat-cos', 'SGD', 'flat-cos', 16, 13, 8, HYP, 0),
             ('fixed', 'SGD', 'fixed', 8, 40, 64, HYP, 0),   # no accumulation
             ('adamw', 'AdamW', 'linear', 10, 50, 32, adam, 0),   # warmup ends on an epoch's first batch
             ('odd-batch', 'SGD', 'linear', 6, 40, 5, HYP, 0),   # accumulation 13, ties in the rounding
             ('resume-after-warmup', 'SGD', 'linear', 12, 30, 16, HYP, 6),
             ('resume-in-warmup', 'SGD', 'cos', 12, 30, 16, HYP, 2)]
    for c in cases:
        run(out, *c)
print('torch', torch.__version__, 'numpy', np.__version__, 'wrote', os.path.join(sys.argv[2], 'official.csv'))
