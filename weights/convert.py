#!/usr/bin/env python3
"""Convert an official YOLOv9 checkpoint (.pt) to safetensors, with nothing
but the Python standard library (no PyTorch, no numpy).

    python3 weights/convert.py yolov9-c.pt yolov9-c.safetensors

A .pt file is a zip archive: ARCHIVE/data.pkl is a pickle of a dict
({'model': DetectionModel, 'ema': DetectionModel or None, 'optimizer': ...})
and ARCHIVE/data/KEY holds the raw bytes of each tensor storage. The pickle
names PyTorch classes; we never import them. Every class it names becomes an
empty stand-in that simply keeps the attributes the pickle gives it, tensors
are rebuilt from their storage bytes, and the module tree (_parameters,
_buffers, _modules) is walked in the order PyTorch's state_dict() walks it.

The model's yaml, nc and class names go into the metadata, so that the
programs need no --cfg for the file. As the official loader: the EMA weights when the checkpoint has them, else
the model, converted to float32; only floating tensors are kept (so
BatchNorm's num_batches_tracked is dropped). Names are the state_dict names
(model.3.cv1.conv.weight, ...), which yolov9.h uses as they are.
"""
import collections
import json
import pickle
import struct
import sys
import zipfile

STORAGE_DTYPES = {  # storage class -> (struct code, bytes per element, floating)
    "HalfStorage": ("e", 2, True), "FloatStorage": ("f", 4, True), "DoubleStorage": ("d", 8, True),
    "BFloat16Storage": ("bf16", 2, True), "LongStorage": ("q", 8, False), "IntStorage": ("i", 4, False),
    "ShortStorage": ("h", 2, False), "CharStorage": ("b", 1, False), "ByteStorage": ("B", 1, False),
    "BoolStorage": ("?", 1, False),
}


class StandIn:
    """Any class the pickle names: keeps whatever state it is given."""

    def __init__(self, *args, **kwargs):
        self._args = args

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
            state = {**(state[0] or {}), **state[1]}  # (dict state, slot state)
        if isinstance(state, dict):
            self.__dict__.update(state)
        else:
            self._state = state


class Storage:
    def __init__(self, kind, key):
        self.kind, self.key = kind, key


class Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def numel(self):
        n = 1
        for d in self.size:
            n *= d
        return n


def rebuild_tensor(storage, offset, size, stride, *rest):
    return Tensor(storage, offset, size, stride)


def rebuild_parameter(data, *rest):
    return data


class Unpickler(pickle.Unpickler):
    def __init__(self, f):
        super().__init__(f)
        self.stand_ins = {}

    def find_class(self, module, name):
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return rebuild_tensor
        if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            return rebuild_parameter
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module in ("builtins", "__builtin__") and name in ("set", "frozenset", "dict", "list", "tuple", "slice"):
            return getattr(__import__("builtins"), name)
        if module == "torch" and name in STORAGE_DTYPES:
            return name
        if module == "torch" and name == "Size":
            return tuple
        key = module + "." + name
        if key not in self.stand_ins:
            self.stand_ins[key] = type(name, (StandIn,), {"_qualname": key})
        return self.stand_ins[key]

    def persistent_load(self, pid):
        # ('storage', storage type, key, location, numel)
        if isinstance(pid, tuple) and pid and pid[0] == "storage":
            kind = pid[1] if isinstance(pid[1], str) else getattr(pid[1], "__name__", str(pid[1]))
            return Storage(kind, str(pid[2]))
        raise pickle.UnpicklingError("unsupported persistent id %r" % (pid,))


def tensor_floats(zf, prefix, t):
    """The tensor's values as a list of Python floats (row-major), or None
    when it is not floating point."""
    code, width, floating = STORAGE_DTYPES.get(t.storage.kind, (None, 0, False))
    if not floating:
        return None
    raw = zf.read(prefix + "data/" + t.storage.key)
    n_storage = len(raw) // width
    if code == "bf16":
        vals = struct.unpack("<%dH" % n_storage, raw)
        vals = [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in vals]
    else:
        vals = struct.unpack("<%d%s" % (n_storage, code), raw)
    n = t.numel()
    contiguous, expect = True, 1
    for d, s in zip(reversed(t.size), reversed(t.stride)):
        if d != 1 and s != expect:
            contiguous = False
        expect *= d
    if contiguous:
        return list(vals[t.offset:t.offset + n])
    out = []
    def walk(dim, base):
        if dim == len(t.size):
            out.append(vals[base])
            return
        for i in range(t.size[dim]):
            walk(dim + 1, base + i * t.stride[dim])
    walk(0, t.offset)
    return out


def state_dict(module, prefix=""):
    """(name, Tensor) in the order of PyTorch's Module.state_dict()."""
    items = []
    d = module.__dict__
    for name, p in (d.get("_parameters") or {}).items():
        if p is not None:
            items.append((prefix + name, p))
    non_persistent = d.get("_non_persistent_buffers_set") or set()
    for name, b in (d.get("_buffers") or {}).items():
        if b is not None and name not in non_persistent:
            items.append((prefix + name, b))
    for name, child in (d.get("_modules") or {}).items():
        if child is not None:
            items.extend(state_dict(child, prefix + name + "."))
    return items


def description(model):
    """The model's own description for the safetensors metadata, as yolov9.c
    writes it: its yaml (the dict the official Model keeps, written back as
    a model yaml), nc, and the class names one a line. Empty when the
    checkpoint does not carry them."""
    d = model.__dict__
    meta = {}
    def flow(v):  # a yaml flow value: lists in brackets, strings bare (module names, None, nc, 'nearest')
        return "[" + ", ".join(flow(x) for x in v) + "]" if isinstance(v, (list, tuple)) else str(v)
    yaml = d.get("yaml")
    if isinstance(yaml, dict):
        lines = ["%s: %s" % (k, flow(v)) for k, v in yaml.items() if k not in ("backbone", "head")]
        for part in ("backbone", "head"):
            lines.append("%s:\n  [\n%s\n  ]" % (part, ",\n".join("   " + flow(row) for row in yaml.get(part, []))))
        meta["yaml"] = "\n".join(lines) + "\n"
    if isinstance(d.get("nc"), int):
        meta["nc"] = str(d["nc"])
    names = d.get("names")
    if isinstance(names, dict):
        names = [names[k] for k in sorted(names)]
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        meta["names"] = "\n".join(names)
    return meta


def convert(src, dst):
    zf = zipfile.ZipFile(src)
    pkl = [n for n in zf.namelist() if n.endswith("data.pkl")]
    if not pkl:
        sys.exit("%s: not a PyTorch zip checkpoint (no data.pkl)" % src)
    prefix = pkl[0][: -len("data.pkl")]
    with zf.open(pkl[0]) as f:
        ckpt = Unpickler(f).load()
    if isinstance(ckpt, dict):
        root = ckpt.get("ema") or ckpt.get("model")
    else:
        root = ckpt
    if root is None or not hasattr(root, "_modules"):
        sys.exit("%s: no model in the checkpoint" % src)
    header, blobs, offset = {}, [], 0
    meta = description(root)
    if meta:
        header["__metadata__"] = meta
    for name, t in state_dict(root):
        vals = tensor_floats(zf, prefix, t)
        if vals is None:
            continue  # num_batches_tracked and other integer buffers
        blob = struct.pack("<%df" % len(vals), *vals)
        header[name] = {"dtype": "F32", "shape": list(t.size), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    import os
    os.replace(tmp, dst)
    return len(header) - ("__metadata__" in header)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 weights/convert.py IN.pt OUT.safetensors")
    n = convert(sys.argv[1], sys.argv[2])
    print("%s: %d tensors -> %s" % (sys.argv[1], n, sys.argv[2]))
