"""bench_official: the official PyTorch YOLOv9's inference forward, timed as
tests/bench_train --infer times ours: the model built from its yaml, BatchNorm
and RepConvN fused, batch 32 at 640 on random input, median of 7 after 3
warm-ups, in float32 (cuDNN's default, TF32 convolutions) and in half.

    python3 tests/bench_official.py PATH/TO/yolov9 gelan-s gelan-c yolov9-c

PATH/TO/yolov9 is a checkout of WongKinYiu/yolov9; only torch must be
installed: the packages its utils import for plotting and data loading (cv2,
pandas, ...) are stood in for by empty modules where missing. gelan-s and
gelan-c are the inference branches of yolov9-s and yolov9-c (the official
converts their weights into them); yolov9-c itself also runs its auxiliary
branch."""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import time
from unittest import mock

root = os.path.abspath(sys.argv[1])
sys.path.insert(0, root)

# the packages the official utils import that this machine lacks: empty stand-ins
missing = {name for name in ['cv2', 'pandas', 'IPython', 'seaborn', 'matplotlib', 'thop', 'psutil', 'requests', 'PIL',
                             'yaml', 'pkg_resources', 'tqdm', 'scipy', 'torchvision', 'albumentations', 'pycocotools',
                             'tensorboard', 'clearml', 'comet_ml', 'wandb'] if importlib.util.find_spec(name) is None}
print('stood in for:', sorted(missing), flush=True)


class StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in missing:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = mock.MagicMock()
        m.__name__, m.__path__, m.__spec__ = spec.name, [], spec
        m.get_ipython = lambda: None   # matplotlib asks IPython whether it runs inside it
        m.version_info = (99, 0)
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, StandIn())
import torch  # noqa: E402
from models.yolo import Model  # noqa: E402

print('torch', torch.__version__, 'cudnn.benchmark', torch.backends.cudnn.benchmark,
      'cudnn.allow_tf32', torch.backends.cudnn.allow_tf32, flush=True)
B = 32
x = torch.rand(B, 3, 640, 640, device='cuda')
for cfg in sys.argv[2:]:
    model = Model(os.path.join(root, 'models/detect', cfg + '.yaml'), ch=3, nc=80).cuda().eval()
    model.fuse()
    for half in (False, True):
        m, xx = (model.half(), x.half()) if half else (model, x)
        with torch.inference_mode():
            for _ in range(3):
                m(xx)
            torch.cuda.synchronize()
            t = []
            for _ in range(7):
                t0 = time.perf_counter()
                m(xx)
                torch.cuda.synchronize()
                t.append(time.perf_counter() - t0)
        ms = sorted(t)[3] * 1e3
        print(f'official {cfg} fused, batch {B} 640, {"half" if half else "float32"}: {ms:.1f} ms, {B * 1e3 / ms:.0f} img/s',
              flush=True)
    del model
