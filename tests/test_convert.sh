#!/bin/sh
# weights/convert.py against what the official loader produces: an official
# last.pt (with EMA and optimizer state) must convert to exactly the tensors
# of the float32 state_dict beside it (names, shapes and every byte), and
# the result must load, with no --cfg, into the model it came from.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
python3 weights/convert.py tests/data/tiny-gelan-1epoch-unstripped.pt "$tmp/w.safetensors" || fail=1
python3 - "$tmp/w.safetensors" tests/data/tiny-gelan-1epoch-unstripped.model.safetensors <<'PY' || fail=1
import json, struct, sys
def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n)); data = f.read()
    head.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in head.items()}
ours, ref = load(sys.argv[1]), load(sys.argv[2])
missing, extra = sorted(set(ref) - set(ours)), sorted(set(ours) - set(ref))
differ = sorted(k for k in ref if k in ours and ours[k] != ref[k])
print("  convert: %d tensors, official %d; missing %d, extra %d, different %d" % (len(ours), len(ref), len(missing), len(extra), len(differ)))
for k in (missing + extra + differ)[:5]: print("    " + k)
sys.exit(1 if missing or extra or differ else 0)
PY
# the file carries its model, nc and names: no --cfg, no --nc
./detect --weights "$tmp/w.safetensors" --info --device cpu > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
[ $fail = 0 ] && echo "convert: 1 passed, 0 failed" || echo "convert: 0 passed, 1 failed"
exit $fail
