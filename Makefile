# yolov9.c — build with cc alone (the CPU reference); `make test` runs the
# unit tests and the golden checks.
CC      ?= cc
CFLAGS  ?= -O2 -march=native -fopenmp -Wall -Wno-format-truncation -Wno-stringop-overflow
LDLIBS  = -lm
PROGS   = detect
TESTS   = tests/golden_check tests/test_grad tests/test_weights
GOLDEN  = tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb

all: $(PROGS) $(TESTS)

detect: detect.c yolov9.h
	$(CC) $(CFLAGS) -o $@ $< -lstb $(LDLIBS)

tests/golden_check: tests/golden_check.c yolov9.h
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

tests/test_weights: tests/test_weights.c yolov9.h
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

# finite differences want double precision: the same code, YOLO_REAL=double
tests/test_grad: tests/test_grad.c yolov9.h
	$(CC) $(CFLAGS) -DYOLO_REAL=double -o $@ $< $(LDLIBS)

# the header must also compile as C++ (nvcc compiles it so)
tests/cxx_check: tests/golden_check.c yolov9.h
	$(CXX) -x c++ -std=c++11 -O0 -fsyntax-only -Wall -Wno-format-truncation -Wno-unknown-pragmas $<
	@touch $@

test: all tests/cxx_check
	@fail=0; \
	./tests/test_weights || fail=$$((fail + 1)); \
	./tests/golden_check $(GOLDEN) || fail=$$((fail + 1)); \
	./tests/test_grad tests/golden || fail=$$((fail + 1)); \
	echo "programs: $$((3 - fail)) passed, $$fail failed"; [ $$fail = 0 ]

clean:
	rm -f $(PROGS) $(TESTS) tests/cxx_check

.PHONY: all test clean
