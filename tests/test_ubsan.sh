#!/bin/sh
# make fuzz-ubsan: under UndefinedBehaviorSanitizer and AddressSanitizer
# (tests/ubsan/, built by make fuzz-ubsan; any report aborts): the whole
# fuzzer, its program families driving the sanitized train, val and
# detect, then the test programs with make test's arguments. Passes with 0
# reports. FUZZ_SECONDS=600 gives every family of the fuzzer that long.
# Run from the repository root.
. tests/common.sh
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OMP_NUM_THREADS=2
BIN=tests/ubsan FUZZ_PROGRAMS=tests/ubsan sh tests/test_fuzz.sh || fail=$((fail + 1))
run() {   # a test program and its arguments
    if "$@" > "$T/out" 2>&1; then ok "$*: $(tail -n 1 "$T/out")"; else tail -n 30 "$T/out"; bad "$*"; fi
}
U=tests/ubsan
G="tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb"
run $U/test_weights
run $U/test_plan
run $U/test_metrics tests/golden/metrics
run $U/test_augment tests/golden/augment
run $U/test_schedule tests/golden/schedule
run $U/test_init tests/golden/init
run $U/test_model_only tests/golden/tiny-gelan
mkdir -p "$T/plots"; run $U/test_plots "$T/plots"
run $U/golden_check $G
run $U/golden_check --precision bf16 $G
run $U/golden_check --precision half $G
run $U/test_grad tests/golden
BIN=$U sh tests/test_decode.sh > "$T/out" 2>&1 && ok "test_decode.sh" || { cat "$T/out"; bad "test_decode.sh"; }
BIN=$U sh tests/test_loader.sh > "$T/out" 2>&1 && ok "test_loader.sh" || { cat "$T/out"; bad "test_loader.sh"; }
echo "fuzz-ubsan: $fail failed"
[ $fail = 0 ]
