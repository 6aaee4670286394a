#!/bin/sh
# data-parallel training on the CPU, two processes under mpirun (a build
# with MPI): they take exactly the steps of one process that sums both
# shares' gradients (tests/test_dp), whether the sums overlap the backward
# or start after it; with --sync-bn the steps of one process that runs both
# shares as one batch; a two-process run of train killed mid-way resumes to
# exactly the numbers of an uninterrupted one, and what data parallelism
# cannot do gets one clear line. Run from the repository root.
. tests/common.sh
# mpirun as root (CI's containers) must be allowed, two processes on fewer
# cores oversubscribe them; containers often forbid Open MPI's cross-process
# memory copy
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np 2"

# 1. two processes, the sums overlapping the backward, against one process summing both shares (and the shards
# against DistributedSampler's, the backward's word that a layer's gradients are final), and against two processes
# summing after the backward: equal to the last bit
if $MPIRUN ./tests/test_dp "$T/ranks.bin" > "$T/dp.log" 2>&1 && $MPIRUN ./tests/test_dp --after "$T/after.bin" > "$T/after.log" 2>&1; then
    cat "$T/dp.log"
    ./tests/test_dp --reference 2 "$T/one.bin" || bad "the shards differ from DistributedSampler's, or the backward tells gradients final too early"
    ./tests/test_dp --compare "$T/ranks.bin" "$T/one.bin" 0 || bad "two processes differ from one summing both shares"
    ./tests/test_dp --compare "$T/ranks.bin.1" "$T/one.bin" 0 || bad "process 1's weights, EMA or BatchNorm statistics differ"
    ./tests/test_dp --compare "$T/ranks.bin" "$T/after.bin" 0 || bad "the sums overlapping the backward differ from those after it"
else bad "two processes of test_dp failed"; cat "$T/dp.log" "$T/after.log"; fi

# 1b. --sync-bn: two processes against one process with both shares in one batch, to 1e-5 (rounding apart, see
# test_dp.c); in one process under mpirun, equal to the last bit to one without it
if $MPIRUN ./tests/test_dp --sync-bn "$T/sync.bin" > "$T/sync.log" 2>&1 &&
   mpirun --allow-run-as-root -np 1 ./tests/test_dp --sync-bn "$T/sync1.bin" > "$T/sync1.log" 2>&1; then
    ./tests/test_dp --whole 2 "$T/whole.bin" || bad "test_dp --whole failed"
    ./tests/test_dp --compare "$T/sync.bin" "$T/whole.bin" 1e-5 || bad "--sync-bn differs from BatchNorm over the whole batch"
    ./tests/test_dp --compare "$T/sync.bin.1" "$T/sync.bin" 0 || bad "--sync-bn: process 1 differs from process 0"
    ./tests/test_dp --reference 1 "$T/one1.bin" > /dev/null || bad "test_dp --reference 1 failed"
    ./tests/test_dp --compare "$T/sync1.bin" "$T/one1.bin" 0 || bad "--sync-bn in one process changes the steps"
else bad "test_dp --sync-bn failed"; cat "$T/sync.log" "$T/sync1.log"; fi

# 2. train, two processes of 4 pictures: killed after epoch 2, resumed: the same last epoch as the uninterrupted run
# (16 epochs, as test_train's: the kill reaches the processes through mpirun, a second or so, while
# they train on; with 6 epochs the run sometimes finished first and there was nothing to resume)
RUN="./train --cfg tests/golden/tiny-gelan/model.yaml --data tests/data/coco8/coco8.yaml --img 96 --batch 8 --epochs 16 --device cpu --workers 1 --project $T"
$MPIRUN $RUN --name a > "$T/a.log" 2>&1 || { bad "two-process training run failed"; cat "$T/a.log"; }
[ "$(grep -c 'memory plan of each process' "$T/a.log")" = 1 ] && [ "$(grep -c '^ *all ' "$T/a.log")" -ge 16 ] &&
    ok "the plan and the progress printed once (by process 0)" || bad "the output is not process 0's alone"
$MPIRUN $RUN --name b > "$T/b.log" 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null && [ "$(cat "$T/b/results.csv" 2>/dev/null | grep -c '^ *[0-9]')" -lt 3 ]; do sleep 0.2; done
kill $pid 2>/dev/null; wait $pid 2>/dev/null
$MPIRUN ./train --resume "$T/b/weights/last.safetensors" > "$T/b2.log" 2>&1 || { bad "two-process resume failed"; cat "$T/b2.log"; }
ea=$(tail -n 1 "$T/a/results.csv" | cut -d, -f1-8); eb=$(tail -n 1 "$T/b/results.csv" | cut -d, -f1-8)
rows=$(grep -c '^ *[0-9]' "$T/b/results.csv")
if [ "$ea" = "$eb" ] && [ "$rows" = 16 ]; then ok "two processes killed and resumed: last epoch equal to the uninterrupted run ($eb)"
else bad "two-process resume differs: '$ea' vs '$eb' ($rows rows)"; fi

# 2b. train with --sync-bn, two processes: it runs, and says it normalises over both shares
$MPIRUN $RUN --epochs 2 --sync-bn --name s > "$T/s.log" 2>&1 && [ "$(grep -c '^ *[0-9]' "$T/s/results.csv")" = 2 ] &&
    ok "train --sync-bn, two processes: 2 epochs" || { bad "train --sync-bn with two processes failed"; cat "$T/s.log"; }

# 2c. train in half behind the loss scaler, two processes: it runs (each process's loss times the
# processes and the scale, as the official's; every process takes the same skips, from the summed norm)
$MPIRUN $RUN --epochs 2 --precision half --name h > "$T/h.log" 2>&1 && [ "$(grep -c '^ *[0-9]' "$T/h/results.csv")" = 2 ] &&
    ok "train --precision half, two processes: 2 epochs" || { bad "train --precision half with two processes failed"; cat "$T/h.log"; }

# 3. what it cannot do: one line, a non-zero exit
for flags in "--batch 7" "--batch 8 --rect"; do
    if $MPIRUN ./train --cfg tests/golden/tiny-gelan/model.yaml --data tests/data/coco8/coco8.yaml --img 64 --epochs 1 --device cpu \
           --project $T --name refused $flags > /dev/null 2> "$T/r.err"; then bad "$flags accepted with two processes"
    elif grep -q "^train: " "$T/r.err"; then ok "$flags refused: $(grep -m1 '^train: ' "$T/r.err")"
    else bad "$flags: no clear line"; cat "$T/r.err"; fi
done
echo "test_dp: $fail failed"
[ $fail = 0 ]
