#!/usr/bin/env python3
"""weights/convert.py against hostile .pt files (stdlib only).

    python3 tests/fuzz_convert.py DIR [--seed S] [--inputs N | --seconds T]

First the cases an attacker's run found (issue 17), each built as a small
checkpoint of the official layout (a zip holding ARCHIVE/data.pkl and
ARCHIVE/data/KEY storages) written by our own pickler; then seeded
mutations of such checkpoints and of tests/data's real one: bytes of the
archive, bytes and integers (sizes, strides, offsets) of the pickle, and
storages cut, grown or removed. convert.py runs in this process, its
input always in DIR/current.pt. An input fails the run when convert.py
raises instead of refusing, runs past the time limit, refuses with
anything but one line naming the input, or writes a file that yolov9.h's
loader would refuse (checked here independently: unique names, F32
tensors tiling the data exactly, finite values).
"""
import collections
import contextlib
import io
import json
import math
import os
import pickle
import pickletools
import random
import resource
import signal
import struct
import sys
import time
import types
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "weights"))
sys.dont_write_bytecode = True   # no __pycache__ in the checkout
import convert  # noqa: E402

INPUT_SECONDS = 20


# ---- writing checkpoints: stand-ins pickled under the names torch uses ------

def fake_module(name):
    if name not in sys.modules:
        sys.modules[name] = types.ModuleType(name)
        if "." in name:
            parent, _, child = name.rpartition(".")
            setattr(fake_module(parent), child, sys.modules[name])
    return sys.modules[name]


def _rebuild_tensor_v2(*args):
    raise AssertionError("never called here")


_rebuild_tensor_v2.__module__ = "torch._utils"
fake_module("torch._utils")._rebuild_tensor_v2 = _rebuild_tensor_v2
STORAGE_CLASSES = {}
for kind in ("FloatStorage", "HalfStorage", "LongStorage", "WeirdStorage"):
    cls = type(kind, (), {"__module__": "torch"})
    setattr(fake_module("torch"), kind, cls)
    STORAGE_CLASSES[kind] = cls


class StorageRef:
    def __init__(self, kind, key, numel):
        self.kind, self.key, self.numel = STORAGE_CLASSES[kind], key, numel


class Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    def __reduce__(self):
        return (_rebuild_tensor_v2, (self.storage, self.offset, tuple(self.size), tuple(self.stride), False,
                                     collections.OrderedDict()))


def module_class(name):
    cls = type(name, (), {"__module__": "models.common"})
    setattr(fake_module("models.common"), name, cls)
    return cls


Conv, BatchNorm, Model = module_class("Conv"), module_class("BatchNorm2d"), module_class("DetectionModel")


def module(cls, params=(), buffers=(), children=()):
    m = cls()
    m.__dict__.update({"_parameters": collections.OrderedDict(params), "_buffers": collections.OrderedDict(buffers),
                       "_modules": collections.OrderedDict(children), "training": False})
    return m


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, StorageRef):
            return ("storage", obj.kind, obj.key, "cpu", obj.numel)
        return None


def write_pt(path, ckpt, storages, prefix="archive/", compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(ckpt)
    with zipfile.ZipFile(path, "w", compress) as zf:
        zf.writestr(prefix + "data.pkl", buf.getvalue())
        for key, raw in storages.items():
            zf.writestr(prefix + "data/" + key, raw)


def small_checkpoint(shapes=((4, 3, 3, 3), (4,), (4,)), kinds=None):
    """{'model': DetectionModel(model.0 = Conv(conv, bn))} with the given tensors"""
    storages, tensors = {}, []
    for i, shape in enumerate(shapes):
        n = 1
        for d in shape:
            n *= d
        storages[str(i)] = struct.pack("<%df" % n, *[(k % 7) / 7 for k in range(n)])
        stride = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            stride[d] = stride[d + 1] * shape[d + 1]
        tensors.append(Tensor(StorageRef((kinds or {}).get(i, "FloatStorage"), str(i), n), 0, list(shape), stride))
    bn = module(BatchNorm, params=[("weight", tensors[1]), ("bias", tensors[2])])
    conv = module(Conv, params=[("weight", tensors[0])], children=[("bn", bn)])
    return {"model": module(Model, children=[("model", module(Model, children=[("0", conv)]))]), "ema": None}, storages, tensors


# ---- what a written file must be: what yolov9.h's loader accepts -----------------

def loader_accepts(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        return "shorter than 8 bytes"
    n = struct.unpack("<Q", data[:8])[0]
    pairs = json.loads(data[8:8 + n].decode(), object_pairs_hook=lambda kv: kv)
    names = [k for k, _ in pairs]
    if len(set(names)) != len(names):
        return "duplicate names"
    body, ranges = data[8 + n:], []
    for name, entry in pairs:
        if name == "__metadata__":
            continue
        e = dict(entry)
        if e["dtype"] != "F32" or len(name) > 127 or len(e["shape"]) > 8:
            return "%s: dtype, name or rank the loader refuses" % name
        count = 1
        for d in e["shape"]:
            count *= d
        b, end = e["data_offsets"]
        if end - b != 4 * count:
            return "%s: bytes do not fit the shape" % name
        if not all(math.isfinite(v) for v in struct.unpack("<%df" % count, body[b:end])):
            return "%s: a value that is not finite" % name
        ranges.append((b, end))
    at = 0
    for b, end in sorted(ranges):
        if b != at:
            return "a gap or an overlap at byte %d" % b
        at = end
    return None if at == len(body) else "%d bytes after the last tensor" % (len(body) - at)


# ---- running convert.py on one input ------------------------------------------

class Hang(Exception):
    pass


def on_alarm(sig, frame):
    raise Hang()


def run(src, dst):
    """(ok, message): ok when convert.py refused in one line naming src, or
    wrote a file the loader accepts"""
    err = io.StringIO()
    if os.path.exists(dst):
        os.remove(dst)
    signal.setitimer(signal.ITIMER_PROF, INPUT_SECONDS)   # CPU time: a loaded machine is no hang
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = convert.main(["convert.py", src, dst])
    except Hang:
        return False, "ran past %d s of CPU time" % INPUT_SECONDS
    except BaseException as e:  # a traceback is what must never happen
        return False, "raised %s: %s" % (type(e).__name__, str(e)[:200])
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    text = err.getvalue()
    if rc != 0:
        if text.count("\n") != 1 or not text.startswith(src + ": "):
            return False, "refused with %r" % text[:300]
        return True, text.strip()
    why = loader_accepts(dst)
    return (why is None), ("wrote %s" % dst if why is None else "wrote a file the loader refuses: " + why)


# ---- the cases of issue 17 --------------------------------------------------------

def cases(d):
    results = []
    src, dst = os.path.join(d, "case.pt"), os.path.join(d, "case.safetensors")

    def case(what, want, build, check=None, cpu_seconds=None):
        if os.path.lexists(src):
            os.remove(src)   # (the FIFO of a case before would block the next one's writing)
        build(src)
        t0 = time.process_time()
        ok, msg = run(src, dst)
        spent = time.process_time() - t0
        ok = ok and (want is None and msg.startswith("wrote") or want is not None and want in msg)
        if ok and check:
            why = check(dst)
            ok, msg = why is None, msg if why is None else why
        if ok and cpu_seconds is not None and spent > cpu_seconds:
            ok, msg = False, "took %.1f s of CPU, more than %g" % (spent, cpu_seconds)
        results.append(ok)
        print("  %-58s %s  | %s" % (what, "ok  " if ok else "FAIL", msg[:150]))

    def with_tensor(offset=0, size=(4,), stride=(1,), numel=4, nbytes=16, kind="FloatStorage", key="0", keep=True):
        def build(path):
            t = Tensor(StorageRef(kind, key, numel), offset, list(size), list(stride))
            m = module(Model, children=[("model", module(Conv, params=[("weight", t)]))])
            write_pt(path, {"model": m}, {"0": bytes(nbytes)} if keep else {})
        return build

    def small(path, **kw):
        ckpt, storages, _ = small_checkpoint()
        write_pt(path, ckpt, storages, **kw)

    def cut(frac, member=None):
        def build(path):
            small(path)
            with open(path, "rb") as f:
                raw = f.read()
            if member is None:
                raw = raw[: int(len(raw) * frac)]
                with open(path, "wb") as f:
                    f.write(raw)
            else:
                with zipfile.ZipFile(path) as zf:
                    items = {n: zf.read(n) for n in zf.namelist()}
                items[member] = items[member][: int(len(items[member]) * frac)]
                with zipfile.ZipFile(path, "w") as zf:
                    for n, b in items.items():
                        zf.writestr(n, b)
        return build

    def bad_opcode(path):
        small(path)
        with zipfile.ZipFile(path) as zf:
            items = {n: zf.read(n) for n in zf.namelist()}
        pkl = bytearray(items["archive/data.pkl"])
        pkl[len(pkl) // 2] = 0xFE
        items["archive/data.pkl"] = bytes(pkl)
        with zipfile.ZipFile(path, "w") as zf:
            for n, b in items.items():
                zf.writestr(n, b)

    def deep(path):
        t = Tensor(StorageRef("FloatStorage", "0", 1), 0, [1], [1])
        m = module(Conv, params=[("weight", t)])
        for _ in range(5000):
            m = module(Conv, children=[("m", m)])
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(100000)
        try:
            write_pt(path, {"model": module(Model, children=[("model", m)])}, {"0": bytes(4)})
        finally:
            sys.setrecursionlimit(limit)

    def nul_name(path):
        t = Tensor(StorageRef("FloatStorage", "0", 1), 0, [1], [1])
        write_pt(path, {"model": module(Model, params=[("we\0ight", t)])}, {"0": bytes(4)})

    def nan_value(path):
        t = Tensor(StorageRef("FloatStorage", "0", 2), 0, [2], [1])
        write_pt(path, {"model": module(Model, params=[("weight", t)])}, {"0": struct.pack("<2f", 1.0, float("nan"))})

    def bomb(path):
        ckpt, storages, _ = small_checkpoint()
        del storages["0"]
        write_pt(path, ckpt, storages, compress=zipfile.ZIP_DEFLATED)
        with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf, zf.open("archive/data/0", "w", force_zip64=True) as f:
            zero = bytes(1 << 20)
            for _ in range(300):
                f.write(zero)

    def many_views(path):   # 300 full views of one storage of 2^20 values: 3e8 values in all, from 4 MB
        n = 1 << 20
        ts = [(str(i), Tensor(StorageRef("FloatStorage", "0", n), 0, [n], [1])) for i in range(300)]
        write_pt(path, {"model": module(Model, params=ts)}, {"0": bytes(4 * n)})

    half_vals = [0.5, -2.0, 65504.0, 6e-8, 1.0, 3.0]   # a subnormal and half's largest among them

    def half_and_view(path):   # a half storage, and a float one read through a transposed view
        t = Tensor(StorageRef("HalfStorage", "0", 6), 0, [6], [1])
        v = Tensor(StorageRef("FloatStorage", "1", 6), 0, [3, 2], [1, 3])
        write_pt(path, {"model": module(Model, params=[("half", t), ("view", v)])},
                 {"0": struct.pack("<6e", *half_vals), "1": struct.pack("<6f", *range(6))})

    def half_and_view_values(path):
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            head, body = json.loads(f.read(n)), f.read()
        got = {k: list(struct.unpack("<%df" % ((e["data_offsets"][1] - e["data_offsets"][0]) // 4),
                                     body[e["data_offsets"][0]:e["data_offsets"][1]])) for k, e in head.items()}
        want = {"half": [struct.unpack("<e", struct.pack("<e", x))[0] for x in half_vals], "view": [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]}
        return None if got == want else "values %s, not %s" % (got, want)

    print("convert.py and the attacker's .pt files (issue 17):")
    case("a small checkpoint converts to what the loader accepts", None, small)
    case("a truncated zip", "not a PyTorch zip", cut(0.5))
    case("a truncated pickle", "not a readable checkpoint", cut(0.5, "archive/data.pkl"))
    case("a truncated storage", "does not fit its storage", cut(0.5, "archive/data/0"))
    case("a missing storage", "is missing from the archive", with_tensor(keep=False))
    case("an odd-sized storage", "not a whole number", with_tensor(nbytes=15))
    case("a view past the end of its storage", "does not fit its storage", with_tensor(offset=2))
    case("a storage shorter than its tensor", "does not fit its storage", with_tensor(size=(8,), nbytes=16))
    case("a negative offset", "negative offset", with_tensor(offset=-4))
    case("an unknown storage type", "unknown type WeirdStorage", with_tensor(kind="WeirdStorage"))
    case("a stride-0 tensor of 3e7 elements", "does not fit its storage", with_tensor(size=(30000000,), stride=(0,), numel=1, nbytes=4))
    case("a 5000-deep module tree", "nested deeper than", deep)
    case("a NUL in a tensor name", "not a printable name", nul_name)
    case("an unknown pickle opcode", "not a readable checkpoint", bad_opcode)
    case("a NaN weight", "NaN or infinite", nan_value)
    case("a zip bomb (300 MB of zeros in 300 KB)", "a zip bomb", bomb)
    case("no file at all", "cannot open", lambda p: os.remove(p) if os.path.exists(p) else None)
    case("a FIFO", "not a regular file", lambda p: os.mkfifo(p))
    case("3e8 values as 300 views of one 4 MB storage: refused before any is read", "values in all", many_views, cpu_seconds=2)
    case("half values and a transposed view convert exactly", None, half_and_view, check=half_and_view_values)
    return sum(results), len(results)


# ---- mutations -------------------------------------------------------------------

INTS = [0, 1, 2, 3, -1, -2, 255, 256, 65535, 65536, 2 ** 31 - 1, -2 ** 31, 30000000]


def mutate_pickle_ints(pkl, rng):
    """an integer operand of the pickle (a size, stride, offset or key) replaced"""
    spots = [(op.name, pos) for op, arg, pos in pickletools.genops(pkl) if op.name in ("BININT", "BININT1", "BININT2")]
    if not spots:
        return pkl
    name, pos = rng.choice(spots)
    out = bytearray(pkl)
    v = rng.choice(INTS)
    if name == "BININT1":
        out[pos + 1] = v & 0xFF
    elif name == "BININT2":
        out[pos + 1:pos + 3] = struct.pack("<H", v & 0xFFFF)
    else:
        out[pos + 1:pos + 5] = struct.pack("<i", max(-2 ** 31, min(2 ** 31 - 1, v)))
    return bytes(out)


def mutate_bytes(raw, rng):
    out = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        if not out:
            break
        at = rng.randrange(len(out))
        op = rng.randrange(4)
        if op == 0:
            out[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            out[at] = rng.randrange(256)
        elif op == 2:
            del out[at:at + rng.randint(1, 16)]
        else:
            out[at:at] = bytes([rng.randrange(256)]) * rng.randint(1, 64)
    return bytes(out)


def mutant(seed_items, rng, path):
    items = dict(seed_items)
    pkl_name = [n for n in items if n.endswith("data.pkl")][0]
    storages = [n for n in items if n != pkl_name]
    op = rng.randrange(6)
    if op == 0:
        items[pkl_name] = mutate_pickle_ints(items[pkl_name], rng)
    elif op == 1:
        items[pkl_name] = mutate_bytes(items[pkl_name], rng)
    elif op == 2 and storages:
        name = rng.choice(storages)
        items[name] = items[name][: rng.randrange(len(items[name]) + 1)] if rng.randrange(2) else items[name] + bytes(rng.randint(1, 9))
    elif op == 3 and storages:
        del items[rng.choice(storages)]
    else:
        for _ in range(rng.randint(1, 3)):
            items[pkl_name] = mutate_pickle_ints(items[pkl_name], rng)
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in items.items():
            zf.writestr(n, b)
    if op == 5:   # and the archive's own bytes
        with open(path, "rb") as f:
            raw = mutate_bytes(f.read(), rng)
        with open(path, "wb") as f:
            f.write(raw)


def main():
    args = sys.argv[1:]
    d, seed, inputs, seconds = args[0], 1, 150, 0.0
    for i, a in enumerate(args):
        if a == "--seed":
            seed = int(args[i + 1])
        elif a == "--inputs":
            inputs = int(args[i + 1])
        elif a == "--seconds":
            seconds = float(args[i + 1])
    os.makedirs(d, exist_ok=True)
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))   # a runaway allocation fails, not the machine
    signal.signal(signal.SIGPROF, on_alarm)
    passed, ncases = cases(d)
    print("cases: %d passed, %d failed" % (passed, ncases - passed))
    seeds = []
    for shapes in (((4, 3, 3, 3), (4,), (4,)), ((2, 2), (1,), (3, 1, 1, 1))):
        ckpt, storages, _ = small_checkpoint(shapes)
        path = os.path.join(d, "seed%d.pt" % len(seeds))
        write_pt(path, ckpt, storages)
        with zipfile.ZipFile(path) as zf:
            seeds.append({n: zf.read(n) for n in zf.namelist()})
    real = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiny-gelan-1epoch-unstripped.pt")
    with zipfile.ZipFile(real) as zf:
        real_items = {n: zf.read(n) for n in zf.namelist()}
    rng = random.Random(seed)
    src, dst = os.path.join(d, "current.pt"), os.path.join(d, "out.safetensors")
    n = accepted = 0
    t0 = time.time()
    while (time.time() - t0 < seconds) if seconds else n < inputs:
        base = real_items if rng.randrange(25) == 0 else rng.choice(seeds)
        mutant(base, rng, src)
        ok, msg = run(src, dst)
        n += 1
        accepted += msg.startswith("wrote")
        if not ok:
            print("fuzz: pt input %d (seed %d): %s (reproducer: %s)" % (n - 1, seed, msg, src))
            return 1
    print("fuzz: pt     seed %d: %d inputs in %.1f s, %d converted, %d refused with one clear line"
          % (seed, n, time.time() - t0, accepted, n - accepted))
    return 0 if passed == ncases else 1


if __name__ == "__main__":
    sys.exit(main())
