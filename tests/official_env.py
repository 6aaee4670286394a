"""official_env: the official YOLOv9 imported from a checkout on a machine
that lacks some of the packages its utils import for plotting, logging and
downloads: each missing one is stood in for by an empty module (nothing of
the official code is in this project; it is imported at run time).

    import official_env
    missing = official_env.use('PATH/TO/yolov9')   # then: from models.yolo import Model
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from unittest import mock

OPTIONAL = ['cv2', 'pandas', 'IPython', 'seaborn', 'matplotlib', 'thop', 'psutil', 'requests', 'PIL', 'yaml',
            'pkg_resources', 'tqdm', 'scipy', 'torchvision', 'albumentations', 'pycocotools', 'tensorboard',
            'clearml', 'comet_ml', 'wandb']


class _Passthrough:
    """tqdm's stand-in: iterates over what it wraps, shows nothing"""
    def __init__(self, iterable=None, *args, **kwargs):
        self.iterable = iterable if iterable is not None else []

    def __iter__(self):
        return iter(self.iterable)

    def __getattr__(self, name):   # set_description, update, close, ...
        return lambda *args, **kwargs: None


class _StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, missing):
        self.missing = missing

    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in self.missing:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        if spec.name == 'tqdm':   # a progress bar over an iterable must still hand its items on
            m = type(sys)('tqdm')
            m.tqdm, m.__path__, m.__spec__ = _Passthrough, [], spec
            return m
        m = mock.MagicMock()
        m.__name__, m.__path__, m.__spec__ = spec.name, [], spec
        m.get_ipython = lambda: None   # matplotlib asks IPython whether it runs inside it
        m.version_info = (99, 0)
        return m

    def exec_module(self, module):
        pass


def use(root, keep=()):
    """Put the checkout at root first on the path and stand in for the
    missing optional packages, except those in keep (which must be real).
    Returns the names stood in for."""
    sys.path.insert(0, os.path.abspath(root))
    missing = {n for n in OPTIONAL if n not in keep and importlib.util.find_spec(n) is None}
    sys.meta_path.insert(0, _StandIn(missing))
    print('stood in for:', sorted(missing), flush=True)
    return missing
