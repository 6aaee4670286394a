#!/bin/sh
# yolov9.h read as a learner reads it (issue 39): the first block's forward
# (the Conv unit's, yolo_conv_run) within the first 700 lines, and the
# blocks' and the head's passes their maths alone: no function of sections
# 3 and 4 that a forward or a backward runs (yolo_*_forward, _backward,
# _run, and the makers their lifetime rows name: _again, _sum, _concat,
# _split, _inputs, _pools) calls the backend itself or the memory
# machinery; they run the primitive ops, yolo_op_*, which name themselves
# to it (section 9). Exits 1 with the offending lines.
set -u
cd "$(dirname "$0")/.."
fail=0
line=$(grep -n '^static void yolo_conv_run(' yolov9.h | cut -d: -f1)
if [ -z "$line" ] || [ "$line" -ge 700 ]; then
    echo "  FAIL  the first block's forward, yolo_conv_run, starts at line ${line:-?} of yolov9.h (wanted before 700)"
    fail=1
else
    echo "  ok    the first block's forward, yolo_conv_run, starts at line $line"
fi
# the bodies of those functions between the headers of sections 3 and 5
bad=$(awk '
    /^\/\* 3\. the blocks/ { on = 1 }
    /^\/\* 5\. the loss/ { on = 0 }
    on && /^static [a-z_ *]+ yolo_[a-z0-9_]+_(forward|backward|run|again|sum|concat|split|inputs|pools)\(.*\{ *$/ { body = 1; name = $3; sub(/\(.*/, "", name) }
    body && /(yolo_memory_before|yolo_shapes_take|yolo_tensor_(take|drop|resize|free|store|slot)|yolo_grads?_(need|done|zeroed|add)|yolo_conv_dx|be->)/ {
        printf "    %s, line %d: %s\n", name, NR, $0 }
    body && /^}/ { body = 0 }' yolov9.h)
if [ -n "$bad" ]; then
    echo "  FAIL  a block's pass calls the backend or the memory machinery itself:"
    echo "$bad"
    fail=1
else
    echo "  ok    the blocks' and the head's passes call only yolo_op_* and each other"
fi
[ $fail = 0 ] && echo "test_reading_order: 0 failed" || echo "test_reading_order: failed"
exit $fail
