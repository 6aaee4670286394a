"""official_lion: two steps of the official Lion optimizer on a golden
case's gradients, for tests/golden_check (its lion.NAME stage).

    python3 tests/official_lion.py PATH/TO/yolov9 tests/golden/tiny-gelan

Builds the official DetectionModel of CASE/model.yaml in float64, loads
CASE/weights.safetensors, sets every parameter's .grad to CASE's grad.NAME
(the official loss's gradient), builds the optimizer with the official
smart_optimizer(model, 'LION', lr, momentum, decay) (utils/torch_utils.py:
biases without decay, BatchNorm weights without decay, conv weights with
it; utils/lion.py's Lion, betas (momentum, 0.99)), steps once on those
gradients and once on -0.1 times them (so that the sign of Lion's
interpolated momentum depends on both betas), and writes every parameter
as lion.NAME and Lion's state exp_avg as lion.m.NAME (float32) into
CASE/lion.safetensors. The official code is imported at run time; needs
torch and numpy."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

official_env.use(sys.argv[1])
import numpy as np  # noqa: E402
import torch  # noqa: E402
from models.yolo import DetectionModel  # noqa: E402
from utils.torch_utils import smart_optimizer  # noqa: E402

# hyp.scratch-high's lr0 and momentum; a weight decay 100 times its own, so that decay moves the
# weights by more than the test's tolerance (lr decay = 5e-4 of each weight a step)
LR, MOMENTUM, DECAY, SECOND = 0.01, 0.937, 0.05, -0.1


def read(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    return {k: torch.from_numpy(np.frombuffer(data[e["data_offsets"][0]:e["data_offsets"][1]], np.float32)
                                .reshape(e["shape"]).copy()) for k, e in header.items() if k != "__metadata__"}


def write(path, tensors, meta):
    header, blobs, off = {"__metadata__": meta}, [], 0
    for k, t in tensors.items():
        b = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


case = sys.argv[2]
meta = json.load(open(os.path.join(case, "meta.json")))
model = DetectionModel(os.path.join(case, "model.yaml"), ch=3, nc=meta["nc"]).double()
missing, unexpected = model.load_state_dict(read(os.path.join(case, "weights.safetensors")), strict=False)
assert not unexpected and all(k.endswith("num_batches_tracked") for k in missing), (missing, unexpected)
ref = read(os.path.join(case, "reference.safetensors"))
params = dict(model.named_parameters())
for name, p in params.items():
    p.grad = ref["grad." + name].to(torch.float64) if "grad." + name in ref else None
optimizer = smart_optimizer(model, "LION", LR, MOMENTUM, DECAY)
assert type(optimizer).__name__ == "Lion"
optimizer.step()
for p in params.values():   # the second step on -0.1 grad: the interpolated momentum changes sign where
    if p.grad is not None:  # beta1 (1 - beta2) > 0.1 (1 - beta1), which tells the betas apart
        p.grad.mul_(SECOND)
optimizer.step()
out = {"lion." + name: p for name, p in params.items() if p.grad is not None}
out.update({"lion.m." + name: optimizer.state[p]["exp_avg"] for name, p in params.items() if p.grad is not None})
write(os.path.join(case, "lion.safetensors"), out,
      {"lion": f"official smart_optimizer LION: lr {LR}, betas ({MOMENTUM}, 0.99), weight_decay {DECAY} on conv weights "
               f"only; a step on grad.NAME of reference.safetensors, a step on {SECOND} grad.NAME; float64. lion.NAME: "
               "the parameters after them, lion.m.NAME: Lion's exp_avg"})
print(f"{len(out)} tensors after two Lion steps into {case}/lion.safetensors")
