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
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_env  # noqa: E402

root = os.path.abspath(sys.argv[1])
official_env.use(root)
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
