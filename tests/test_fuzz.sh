#!/bin/sh
# Hostile input never crashes: tests/fuzz (built with AddressSanitizer and
# UBSan) runs the attacker's cases of issues 17 and 41, then a fixed seed of
# mutations over every C parser, data yamls made to mean known names and
# sources, label caches that must not change the dataset, and the programs
# (FUZZ_PROGRAMS: ., or make fuzz-ubsan's tests/ubsan) given hostile
# flag values and resumed from checkpoints of hostile metadata;
# tests/fuzz_convert.py does the same for weights/convert.py and .pt files.
# Any sanitizer report, crash, hang, damaged checkpoint or refusal that is
# not one line naming the file fails. A few minutes.
#   FUZZ_SEED=7 FUZZ_SECONDS=600 sh tests/test_fuzz.sh   # a longer, fresh run
. "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/.."
SEED=${FUZZ_SEED:-1}
if [ -n "${FUZZ_SECONDS:-}" ]; then C_RUN="--seconds $FUZZ_SECONDS"; PY_RUN="--seconds $FUZZ_SECONDS"
else C_RUN=""; PY_RUN="--inputs 150"; fi
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=1
run_c() {   # surface, inputs
    mkdir -p "$T/$1"
    n=""; [ -z "$C_RUN" ] && n="--inputs $2"
    if ./tests/fuzz "$T/$1" --seed "$SEED" $C_RUN $n --programs "${FUZZ_PROGRAMS:-.}" $1 > "$T/$1.out" 2> "$T/$1.err"; then ok "$(tail -1 "$T/$1.out")"
    else cat "$T/$1.out"; tail -40 "$T/$1.err"; bad "fuzz $1 (seed $SEED)"; fi
}
mkdir -p "$T/cases"
if ./tests/fuzz "$T/cases" --inputs 0 > "$T/cases.out" 2> "$T/cases.err" && grep -q "cases: [0-9]* passed, 0 failed" "$T/cases.out"
then ok "$(grep '^cases:' "$T/cases.out")"; else grep -v "  ok  " "$T/cases.out"; tail -40 "$T/cases.err"; bad "the attacker's cases"; fi
run_c st 300; run_c model 400; run_c data 1000; run_c labels 1000; run_c cache 1000; run_c hyp 1000; run_c image 1000
run_c meaning 300; run_c cli 40; run_c ckpt 4
if python3 tests/fuzz_convert.py "$T/pt" --seed "$SEED" $PY_RUN > "$T/pt.out" 2>&1; then ok "$(tail -1 "$T/pt.out")"
else tail -30 "$T/pt.out"; bad "fuzz convert.py (seed $SEED)"; fi
echo "fuzz: $((12 - fail)) passed, $fail failed"
[ $fail = 0 ]
