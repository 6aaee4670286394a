#!/bin/sh
# No failure after training has begun leaves a checkpoint worse than it
# found it. A run is killed (SIGKILL) at random moments, saves included,
# and resumed each time: every checkpoint on disk is whole after every
# kill. Checkpoints corrupted, NaN-poisoned and given counters outside the
# run are refused at --resume in one line naming the file, every file of
# the run left as it was. A resumed run whose step makes a weight infinite
# stops with one line before it validates or saves: the files stay as they
# were. Run from the repository root.
. tests/common.sh
RUN="./train --cfg tests/golden/tiny-gelan/model.yaml --data tests/data/coco8/coco8.yaml --hyp tests/data/hyp-noaug.yaml
     --img 64 --device cpu --workers 1 --noplots --project $T"

# whole: the header is JSON (Python's reader), the tensors tile the data, every value is finite
whole() {
    python3 - "$@" <<'PY'
import json, math, struct, sys
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    head, at = json.loads(b[8:8 + n].decode("utf-8")), 8 + n
    head.pop("__metadata__", None)
    ranges = sorted(e["data_offsets"] for e in head.values())
    if [r[0] for r in ranges] != [0] + [r[1] for r in ranges[:-1]] or ranges[-1][1] != len(b) - at:
        sys.exit("%s: the tensors do not tile the data" % path)
    for name, e in head.items():
        code = {"F32": "f", "F16": "e"}[e["dtype"]]
        raw = b[at + e["data_offsets"][0]:at + e["data_offsets"][1]]
        if not all(math.isfinite(v) for (v,) in struct.iter_unpack("<" + code, raw)):
            sys.exit("%s: %s holds a value that is not finite" % (path, name))
PY
}
sums() { md5sum "$1"/* 2>/dev/null; }

# 1. killed, again and again, at moments of a run and while it writes a checkpoint (its .tmp there),
#    and resumed each time: every file on disk whole after every kill. The run is long (100,000 epochs) so
#    that every kill finds it training, however loaded the machine: the last one ends it.
start() {
    if [ -e "$T/k/weights/last.safetensors" ]; then ./train --resume "$T/k/weights/last.safetensors"
    else $RUN --batch 4 --epochs 100000 --save-period 1 --name k --exist-ok; fi > "$T/k.log" 2>&1 &
    pid=$!
}
kills=0 broken=0 in_save=0 moments=0
start
for moment in 2.5 save 1.1 save 3.7 save 0.6 save 2.9 save; do
    moments=$((moments + 1))
    if [ $moment = save ]; then   # the moment a .tmp appears (up to 60 s)
        for i in $(seq 6000); do ls "$T"/k/weights/*.tmp > /dev/null 2>&1 && break; kill -0 $pid 2>/dev/null || break; sleep 0.01; done
        ls "$T"/k/weights/*.tmp > /dev/null 2>&1 && in_save=$((in_save + 1))
    else sleep $moment; fi
    kill -9 $pid 2>/dev/null && kills=$((kills + 1))
    wait $pid 2>/dev/null
    for f in "$T"/k/weights/*.safetensors; do [ -e "$f" ] && { whole "$f" || broken=$((broken + 1)); }; done
    [ $moments -lt 10 ] && start
done
epoch=$(python3 -c "
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
print(json.loads(b[8:8 + struct.unpack('<Q', b[:8])[0]])['__metadata__']['epoch'])" "$T/k/weights/last.safetensors" 2>/dev/null)
if [ $broken = 0 ] && [ $kills = 10 ] && [ $in_save -ge 2 ] && [ -n "$epoch" ]
then ok "killed $kills times ($in_save while writing a checkpoint), resumed each time up to epoch $epoch: every checkpoint whole after each kill"
else bad "after $kills kills of 10 ($in_save while writing), epoch ${epoch:-none}: $broken checkpoints were not whole"; tail -5 "$T/k.log"; fi

# a 3-epoch run of one batch a step (batch 64 > coco8's 8 pictures: an optimizer step every batch) to poison
$RUN --batch 64 --epochs 3 --save-period 1 --name p > "$T/p.log" 2>&1 || { bad "the run to poison failed"; cat "$T/p.log"; }
mkdir -p "$T/r/weights"

# poison SRC DST KEY=VALUE... : a copy of a checkpoint with metadata set and tensor elements set
#   (meta:KEY=VALUE, or TENSOR:INDEX=VALUE for an F32 tensor)
poison() {
    python3 - "$@" <<'PY'
import json, struct, sys
src, dst, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
b = bytearray(open(src, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
head, body = json.loads(b[8:8 + n]), b[8 + n:]
for e in edits:
    where, value = e.split("=", 1)
    name, key = where.split(":", 1)
    if name == "meta":
        head["__metadata__"][key] = value
    else:
        off = head[name]["data_offsets"][0] + 4 * int(key)
        body[off:off + 4] = struct.pack("<f", float(value))
text = json.dumps(head, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + body)
PY
}
# refused CASE PATTERN: --resume of T/r/weights/last.safetensors refused in one line holding PATTERN, nothing changed
refused() {
    before=$(sums "$T/r/weights")
    if ./train --resume "$T/r/weights/last.safetensors" > "$T/out" 2> "$T/err"; then bad "$1: resumed"; return; fi
    if [ "$(wc -l < "$T/err")" = 1 ] && grep -q -- "$2" "$T/err" && [ "$before" = "$(sums "$T/r/weights")" ]
    then ok "$1: $(cat "$T/err")"; else bad "$1: $(head -c 300 "$T/err")"; fi
}
E0="$T/p/weights/epoch0.safetensors"
L="$T/r/weights/last.safetensors"
cp "$E0" "$L"; truncate -s 100000 "$L";                          refused "truncated" "last.safetensors"
cp "$E0" "$L"; printf '\377' | dd of="$L" bs=1 seek=20 conv=notrunc 2> /dev/null; refused "a byte of its header changed" "last.safetensors"
poison "$E0" "$L" "model.0.conv.weight:3=nan";                   refused "a NaN in the EMA weights" "model.0.conv.weight holds nan"
poison "$E0" "$L" "train.model:100=inf";                         refused "an infinity in the raw weights" "train.model holds inf"
poison "$E0" "$L" "train.optim.m:7=-inf";                        refused "an infinity in the optimizer's momentum" "train.optim.m holds -inf"
poison "$E0" "$L" "meta:epoch=3";                                refused "epoch 3 of a 3-epoch run" "metadata 'epoch' '3' is not an integer in \[0, 2\]"
poison "$E0" "$L" "meta:epoch=-5";                               refused "epoch -5" "metadata 'epoch' '-5'"
poison "$E0" "$L" "meta:ema_updates=-99999999999";               refused "EMA updates -99999999999" "metadata 'ema_updates'"
poison "$E0" "$L" "meta:loss_scale=nan";                         refused "loss scale nan" "metadata 'loss_scale' 'nan'"
poison "$E0" "$L" "meta:args=--cfg|x.yaml|--workers|-1";         refused "--workers -1 in its args" "metadata 'args': --workers '-1'"

# 2. a resumed run whose step makes a weight infinite (past the warmup, at epoch 151 of 200, learning rate
#    10, a momentum of 3e38 in one place): it stops with one line before validating or saving, and every
#    file stays as it was
meta() { python3 -c "
import json, struct, sys
b = open(sys.argv[1], 'rb').read(); n = struct.unpack('<Q', b[:8])[0]
m = json.loads(b[8:8 + n])['__metadata__']
h = m['hyp'].split(); d = dict(zip(h[0::2], h[1::2])); d.update(lr0='10')
print(m['args'].replace('--epochs|3', '--epochs|200') if sys.argv[2] == 'args' else ' '.join(k + ' ' + v for k, v in d.items()))" "$E0" $1; }
poison "$E0" "$L" "meta:hyp=$(meta hyp)" "meta:args=$(meta args)" "meta:epoch=150" "train.optim.m:0=3e38"
cp "$E0" "$T/r/weights/epoch0.safetensors"
before=$(sums "$T/r/weights")
if ./train --resume "$L" > "$T/out" 2> "$T/err"; then bad "the run with an infinite weight ends well"
elif [ "$(wc -l < "$T/err")" = 1 ] && grep -q "epoch 151: the weights hold -inf in model.0.conv.weight (element 0)" "$T/err" &&
     [ "$before" = "$(sums "$T/r/weights")" ] && ! grep -q "^ *all " "$T/out"
then ok "a weight made infinite by a step: $(cat "$T/err"), every file as it was"
else bad "a weight made infinite: $(head -c 300 "$T/err")"; fi

echo "test_checkpoints: $fail failed"
[ $fail = 0 ]
