#!/usr/bin/env python3
"""Convert an official YOLOv9 checkpoint (.pt) to safetensors, with nothing
but the Python standard library (no PyTorch needed; numpy, where it is
installed, as beside PyTorch, only makes it faster).

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

A checkpoint is untrusted input: nothing it names is imported or run, every
size is checked before anything is read or allocated (the archive's members
against their compressed sizes, each tensor against its storage, the
values in all), and any problem ends in one line naming the file and what
is wrong, with nothing written. The tensors are planned first, from their
shapes alone, then their storages are read one at a time and written out
as float32 bytes (never a Python object per value where numpy is there,
never a list of them where it is not). What is written is what yolov9.h's
loader accepts: unique names, finite values, the tensors tiling the data.
"""
import collections
import io
import json
import math
import os
import pickle
import struct
import sys
import zipfile
from array import array

try:
    import numpy
except ImportError:  # the standard library's array does the same, more slowly
    numpy = None

MAX_PICKLE_BYTES = 256 << 20      # the pickle of the module tree (yolov9-e's: under 2 MB)
MAX_STORAGE_BYTES = 4 << 30       # one tensor storage
MAX_INFLATION = 200               # a member may inflate at most this much (a zip bomb does 1000x)
MAX_MODULE_DEPTH = 64             # nn.Module nesting (the official models: 4)
MAX_MODULES = 100000              # modules visited (yolov9-e: about 1500)
MAX_NAME = 127                    # yolov9.h's tensor names
MAX_VALUES = 1 << 28              # values written in all (yolov9-e: 58M)
FLOAT32_MAX = 3.4028234663852886e38


class Refused(Exception):
    """What is wrong with the checkpoint, in one line."""

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
        if not isinstance(storage, Storage):
            raise Refused("a tensor without a storage")
        if not all(isinstance(v, int) for v in (offset, *size, *stride)) or len(size) != len(stride):
            raise Refused("a tensor with a malformed offset, size or stride")
        if offset < 0 or any(d < 0 for d in size) or any(st < 0 for st in stride) or len(size) > 8:
            raise Refused("a tensor with a negative offset, size or stride, or more than 8 dimensions")
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def numel(self):
        n = 1
        for d in self.size:
            n *= d
        return n

    def extent(self):
        """elements of the storage the tensor reaches: offset + 1 past its last"""
        if self.numel() == 0:
            return self.offset
        return self.offset + 1 + sum((d - 1) * st for d, st in zip(self.size, self.stride))


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


def member_info(zf, name, limit):
    """An archive member's entry, its declared size checked before anything is inflated."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise Refused("%s is missing from the archive" % name)
    if info.file_size > limit:
        raise Refused("%s claims %d bytes, more than the %d allowed" % (name, info.file_size, limit))
    if info.file_size > MAX_INFLATION * info.compress_size + (1 << 20):
        raise Refused("%s inflates %d bytes into %d (a zip bomb?)" % (name, info.compress_size, info.file_size))
    return info


def read_member(zf, name, limit):
    """One archive member, exactly as long as its entry says."""
    info = member_info(zf, name, limit)
    with zf.open(info) as f:
        data = f.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise Refused("%s holds %d bytes, its entry says %d" % (name, len(data), info.file_size))
    return data


def storage_values(zf, prefix, t):
    """How many values t's storage holds, from its archive entry alone (None:
    not floating point, not written), after checking that t fits in it:
    inside it, and with no more elements than it (no view that repeats one
    value millions of times)."""
    if t.storage.kind not in STORAGE_DTYPES:
        raise Refused("storage %s has the unknown type %s" % (t.storage.key, t.storage.kind))
    _, width, floating = STORAGE_DTYPES[t.storage.kind]
    if not floating:
        return None
    size = member_info(zf, prefix + "data/" + t.storage.key, MAX_STORAGE_BYTES).file_size
    if size % width:
        raise Refused("storage %s has %d bytes, not a whole number of %d-byte values" % (t.storage.key, size, width))
    n_storage = size // width
    if t.extent() > n_storage or t.numel() > n_storage:
        raise Refused("a tensor of shape %s (offset %d, stride %s) does not fit its storage %s of %d values"
                      % (list(t.size), t.offset, list(t.stride), t.storage.key, n_storage))
    return n_storage


def as_float32(raw, code):
    """A storage's bytes as float32 values: a numpy array, or an array('f')
    (values beyond float32 become infinite, and are refused as such)."""
    if numpy is not None:
        dtype = {"e": "<f2", "f": "<f4", "d": "<f8", "bf16": "<u2"}[code]
        v = numpy.frombuffer(raw, dtype=dtype)
        if code == "bf16":   # the upper half of a float32
            return (v.astype("<u4") << 16).view("<f4")
        with numpy.errstate(over="ignore"):
            return v.astype("<f4")
    if code == "bf16":   # two zero bytes below each value: the float32 it is the top of
        wide = bytearray(2 * len(raw))
        wide[2::4], wide[3::4] = raw[0::2], raw[1::2]
        raw, code = bytes(wide), "f"
    if code == "f":
        vals = array("f")
        vals.frombytes(raw)
        if sys.byteorder == "big":
            vals.byteswap()
        return vals
    wide = array("f")
    for (v,) in struct.iter_unpack("<" + code, raw):
        wide.append(v if abs(v) <= FLOAT32_MAX or v != v else math.copysign(math.inf, v))
    return wide


def gather(vals, t):
    """t's values, row-major, from its storage's values (t fits: storage_values)."""
    n = t.numel()
    if numpy is not None:
        item = vals.itemsize
        view = numpy.lib.stride_tricks.as_strided(vals[t.offset:], shape=t.size, strides=[s * item for s in t.stride])
        return numpy.ascontiguousarray(view).reshape(-1) if n else vals[:0]
    contiguous, expect = True, 1
    for d, st in zip(reversed(t.size), reversed(t.stride)):
        if d != 1 and st != expect:
            contiguous = False
        expect *= d
    if contiguous or n == 0:
        return vals[t.offset:t.offset + n]
    out, last, step = array("f"), t.size[-1], t.stride[-1]
    rows = [(t.offset, 0)]   # each row of the last dimension: an extended slice of the storage
    while rows:
        base, dim = rows.pop()
        if dim == len(t.size) - 1:
            out.extend(vals[base:base + (last - 1) * step + 1:step] if step else array("f", [vals[base]]) * last)
        else:
            rows.extend((base + i * t.stride[dim], dim + 1) for i in reversed(range(t.size[dim])))
    return out


def all_finite(vals):
    if numpy is not None:
        return bool(numpy.isfinite(vals).all())
    try:   # an infinity or a NaN makes the exact sum one (float32 values cannot overflow it)
        return math.isfinite(math.fsum(vals))
    except ValueError:   # inf + -inf
        return False


def float32_bytes(vals):
    if numpy is not None:
        return vals.astype("<f4").tobytes()
    if sys.byteorder == "big":
        vals = array("f", vals)
        vals.byteswap()
    return vals.tobytes()


def state_dict(root):
    """(name, Tensor) in the order of PyTorch's Module.state_dict(), walked
    with an explicit stack (a hostile tree may be thousands deep)."""
    items, stack, visits = [], [(root, "", 0)], 0
    while stack:
        module, prefix, depth = stack.pop()
        visits += 1   # a module may be shared (the official act); a tree of shared ones may explode
        if depth > MAX_MODULE_DEPTH or visits > MAX_MODULES:
            raise Refused("modules nested deeper than %d or more than %d of them" % (MAX_MODULE_DEPTH, MAX_MODULES))
        d = getattr(module, "__dict__", None)
        if not isinstance(d, dict):
            raise Refused("%s is not a module" % (prefix.rstrip(".") or "root"))
        tables = [d.get(k) or {} for k in ("_parameters", "_buffers", "_modules")]
        if not all(isinstance(tab, dict) for tab in tables):
            raise Refused("%s has a malformed parameter, buffer or module table" % (prefix.rstrip(".") or "root"))
        params, buffers, modules = tables
        non_persistent = d.get("_non_persistent_buffers_set") or set()
        for kind, table in (("parameter", params), ("buffer", buffers)):
            for name, p in table.items():
                if p is None or (kind == "buffer" and name in non_persistent):
                    continue
                if not isinstance(p, Tensor):
                    raise Refused("%s%s is a %s that is no tensor" % (prefix, name, kind))
                items.append((prefix + str(name), p))
        children = [(m, prefix + str(name) + ".", depth + 1) for name, m in modules.items() if m is not None]
        stack.extend(reversed(children))   # depth first, in order, as state_dict()
    return items


def check_name(name):
    if len(name) > MAX_NAME or not name.isprintable() or '"' in name or "\\" in name:
        raise Refused("tensor name %r is not a printable name of at most %d characters" % (name[:80], MAX_NAME))


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
    if not os.path.exists(src):
        raise Refused("cannot open: no such file")
    if not os.path.isfile(src):
        raise Refused("not a regular file")
    try:
        zf = zipfile.ZipFile(src)
    except zipfile.BadZipFile:
        raise Refused("not a PyTorch zip checkpoint (an old-style torch.save file? save it again with a recent PyTorch)")
    pkl = [n for n in zf.namelist() if n.endswith("data.pkl")]
    if not pkl:
        raise Refused("not a PyTorch zip checkpoint (no data.pkl)")
    prefix = pkl[0][: -len("data.pkl")]
    ckpt = Unpickler(io.BytesIO(read_member(zf, pkl[0], MAX_PICKLE_BYTES))).load()
    if isinstance(ckpt, dict):
        root = ckpt.get("ema") or ckpt.get("model")
    else:
        root = ckpt
    if root is None or not hasattr(root, "_modules"):
        raise Refused("no model in the checkpoint")
    # the plan, from the shapes and the archive's entries alone: names, sizes, offsets
    header, plan, offset = {}, [], 0
    meta = description(root)
    if meta:
        header["__metadata__"] = meta
    for name, t in state_dict(root):
        check_name(name)
        if name in header:
            raise Refused("tensor %s appears twice" % name)
        if storage_values(zf, prefix, t) is None:
            continue  # num_batches_tracked and other integer buffers
        if offset // 4 + t.numel() > MAX_VALUES:
            raise Refused("more than %d values in all (tensors sharing one storage many times?)" % MAX_VALUES)
        header[name] = {"dtype": "F32", "shape": list(t.size), "data_offsets": [offset, offset + 4 * t.numel()]}
        plan.append((name, t))
        offset += 4 * t.numel()
    ntensors = len(header) - ("__metadata__" in header)
    if not ntensors:
        raise Refused("no floating-point tensors in the model")
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    # then the values, a storage at a time (tensors sharing one read it once when they come one after another)
    tmp, done = dst + ".tmp", False
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            key, vals = None, None
            for name, t in plan:
                if (t.storage.key, t.storage.kind) != key:
                    key, vals = None, None   # the last storage's values go before the next is read
                    code = STORAGE_DTYPES[t.storage.kind][0]
                    vals = as_float32(read_member(zf, prefix + "data/" + t.storage.key, MAX_STORAGE_BYTES), code)
                    key = (t.storage.key, t.storage.kind)
                out = gather(vals, t)
                if not all_finite(out):
                    raise Refused("%s holds NaN or infinite values, or values beyond float32" % name)
                f.write(float32_bytes(out))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dst)
        done = True
    except OSError as e:
        raise Refused("cannot write %s (%s)" % (dst, e.strerror or e))
    finally:
        if not done and os.path.exists(tmp):
            os.remove(tmp)
    return ntensors


def one_line(e):
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:300]


def main(argv):
    """0, or 1 with one line on stderr naming the file and what is wrong."""
    if len(argv) != 3:
        sys.stderr.write("usage: python3 weights/convert.py IN.pt OUT.safetensors\n")
        return 1
    src, dst = argv[1], argv[2]
    try:
        n = convert(src, dst)
    except Refused as e:
        sys.stderr.write("%s: %s\n" % (src, one_line(e)))
        return 1
    except Exception as e:
        # the archive or the pickle is damaged (a bad zip, an unknown opcode,
        # a REDUCE of the wrong arguments, ...): say so in one line
        sys.stderr.write("%s: not a readable checkpoint (%s: %s)\n" % (src, type(e).__name__, one_line(e)))
        return 1
    print("%s: %d tensors -> %s" % (src, n, dst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
