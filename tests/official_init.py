"""official_init: the statistics of every tensor of a fresh official model,
as train_dual.py builds it from scratch (models.yolo.Model: PyTorch's
default initialisation, the stride probe, initialize_weights, bias_init),
for tests/test_init.

    python3 tests/official_init.py PATH/TO/yolov9 yolov9-s tests/golden/init/yolov9-s.txt

One line per floating tensor of state_dict(): name, number of values, the
bound b of its uniform initialisation (1/sqrt(fan_in) for a Conv2d's
weight and bias; 0 for a tensor that is not random), mean, standard
deviation, minimum, maximum. Before model.half().float(), which train.c
applies after yolo_model_init_weights as train_dual.py does after Model().
Needs torch."""
import math
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

official_env.use(sys.argv[1])
import torch  # noqa: E402
from torch import nn  # noqa: E402
from models.yolo import Model  # noqa: E402

torch.manual_seed(0)
model = Model(os.path.join(sys.argv[1], 'models', 'detect', sys.argv[2] + '.yaml'), ch=3, nc=80)
bounds = {}   # a Conv2d's weight and bias: uniform within 1 / sqrt(fan_in), unless overwritten since
for name, mod in model.named_modules():
    if isinstance(mod, nn.Conv2d) and mod.weight.requires_grad:   # not the DFL's fixed arange
        b = 1 / math.sqrt(mod.weight.shape[1] * mod.weight.shape[2] * mod.weight.shape[3])
        bounds[name + '.weight'] = bounds[name + '.bias'] = b
with open(sys.argv[3], 'w') as f:
    for name, t in model.state_dict().items():
        if not t.is_floating_point():
            continue
        t = t.double()
        sd = t.std().item() if t.numel() > 1 else 0.0
        b = bounds.get(name, 0.0) if sd > 0 else 0.0   # constant: bias_init's, the DFL's arange, BatchNorm's
        f.write(f'{name} {t.numel()} {b:.9g} {t.mean().item():.9g} {sd:.9g} {t.min().item():.9g} {t.max().item():.9g}\n')
