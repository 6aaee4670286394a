"""official_val: the official val_dual.py on weights that ours wrote, so that
the two validators can be compared on the same trained model (issue 15).

    python3 tests/official_val.py OFFICIAL_REPO CFG WEIGHTS.safetensors DATA.yaml OUTDIR [BATCH]

CFG is the official model yaml's name (yolov9-s) or a yaml file: the official model is
built from it, every tensor of WEIGHTS (the official names, as ours saves
them) is loaded into it, strictly, and the model is saved as
OUTDIR/weights.pt, which val_dual.py then validates at 640 on the CPU in
float32 with --save-txt --save-conf into OUTDIR/official/labels. The last
line printed is the official mAP50 and mAP50-95. Needs torch, numpy, cv2."""
import argparse
import os
import sys

if len(sys.argv) not in (6, 7):
    sys.exit('usage: python3 tests/official_val.py OFFICIAL_REPO CFG WEIGHTS.safetensors DATA.yaml OUTDIR [BATCH]')
import numpy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402
from official_metrics import official_model  # noqa: E402

repo, cfg, weights, data, out = sys.argv[1:6]
batch = int(sys.argv[6]) if len(sys.argv) > 6 else 32
os.makedirs(os.path.join(out, 'config'), exist_ok=True)   # no network: its font check finds an empty Arial.ttf
open(os.path.join(out, 'config', 'Arial.ttf'), 'a').close()
os.environ.setdefault('YOLOV5_CONFIG_DIR', os.path.join(out, 'config'))
official_env.use(repo)
if not hasattr(numpy, 'trapz'):   # numpy 2 renamed it; the official compute_ap calls it
    numpy.trapz = numpy.trapezoid
import torch  # noqa: E402
import val_dual  # noqa: E402


with open(data) as f:   # the dataset's path made absolute (relative to the yaml's folder, as ours reads it)
    lines = f.read().splitlines()
root = os.path.dirname(os.path.abspath(data))
for i, line in enumerate(lines):
    if line.startswith('path:'):
        lines[i] = 'path: ' + os.path.normpath(os.path.join(root, line[5:].strip()))
data = os.path.join(out, 'data.yaml')
with open(data, 'w') as f:
    f.write('\n'.join(lines) + '\n')
model = official_model(repo, cfg, weights).eval()
pt = os.path.join(out, 'weights.pt')
torch.save({'model': model, 'epoch': -1}, pt)
val_dual.opt = argparse.Namespace(min_items=0)   # run() reads the module's global opt, set only by its main
results = val_dual.run(data=data, weights=pt, batch_size=batch, imgsz=640, device='cpu', workers=0,
                       save_txt=True, save_conf=True, project=out, name='official', exist_ok=True, half=False,
                       plots=False)[0]
print(f'official mAP50 {results[2]:.6g} mAP50-95 {results[3]:.6g}')
