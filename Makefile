# yolov9.c — `make` builds the programs and tests: with cc alone (the CPU
# reference), plus the CUDA backend when nvcc is found, plus data-parallel
# training (train under mpirun) when mpicc is found, over NCCL on the GPU
# when nccl.h is found too. `make test` runs the CPU tests, and the CUDA
# backend's on the simulator (tests/sim, no GPU needed); `make test-cuda`
# the GPU ones (on a machine with a GPU).
CC        ?= cc
CFLAGS    ?= -O2 -march=native -fopenmp -Wall -Wno-format-truncation -Wno-stringop-overflow
LDLIBS    = -ljpeg -lstb -lm -lpthread
NVCC      ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ARCH ?= sm_90
# sm_90 builds the Hopper path too (yolov9_kernels.cu's conv_wg_kernel:
# wgmma, which needs the sm_90a target, and YOLO_WGMMA); WGMMA=0 builds
# sm_90 without it, the sm_80 path (mma.sync) alone on the same GPU, so
# that the two can be compared
WGMMA     ?= 1
ifeq ($(CUDA_ARCH) $(WGMMA),sm_90 1)
ARCH_FLAGS = -gencode=arch=compute_90a,code=[sm_90a,compute_90a] -DYOLO_WGMMA=1
else
ARCH_FLAGS = -arch=$(CUDA_ARCH)
endif
NVFLAGS   ?= -O3 $(ARCH_FLAGS) -Xptxas -v
# NVCC_JOBS=16: nvcc optimises the kernel file in that many threads
# (-split-compile: about a minute instead of three on the H200's machine)
ifneq ($(NVCC_JOBS),)
NVFLAGS  += -split-compile=$(NVCC_JOBS)
endif
GOLDEN    = tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb

# nvcc may be a link or a wrapper far from the toolkit: look for libcudart
# beside the real nvcc, then in CUDA_HOME; without it, build for the CPU only.
CUDA_HOME ?= /usr/local/cuda
CUDA_LIB  = $(firstword $(foreach d,$(dir $(realpath $(NVCC)))../lib64 $(CUDA_HOME)/lib64 \
              $(CUDA_HOME)/targets/x86_64-linux/lib,$(if $(wildcard $(d)/libcudart.so*),$(d))))
ifeq ($(CUDA_LIB),)
override NVCC :=
endif

# the GPU's test programs, built where nvcc is
CUDA_TESTS = tests/test_cuda tests/bench_train
# and two of them on the CUDA simulator (below), built wherever python3 is:
# the sm_80 path (mma.sync) and the Hopper path (wgmma, the copy engine)
PYTHON3   ?= $(shell command -v python3 2>/dev/null)
ifneq ($(PYTHON3),)
SIM_TESTS = tests/test_cuda_sim80 tests/golden_check_sim80 tests/test_cuda_sim90 tests/golden_check_sim90
endif

# data parallel (yolov9.h section 16): train and its test built with mpicc
# (Open MPI: Debian's openmpi-bin libopenmpi-dev) and YOLO_MPI; without
# mpicc every program is one process. The CUDA backend sums over the GPUs
# with NCCL: nccl.h and libnccl.so.2 in NCCL_HOME, found beside the CUDA
# toolkit or in PyTorch's nvidia-nccl package.
MPICC     ?= $(shell command -v mpicc 2>/dev/null)
NCCL_HOME ?= $(firstword $(foreach d,$(CUDA_HOME) $(wildcard /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl),\
               $(if $(wildcard $(d)/include/nccl.h),$(d))))
NCCL_LIB  = $(firstword $(foreach d,$(NCCL_HOME)/lib $(NCCL_HOME)/lib64,$(if $(wildcard $(d)/libnccl.so*),$(d))))
ifneq ($(MPICC),)
TRAIN_CC  = $(MPICC) -DYOLO_MPI
DP_TESTS  = tests/test_dp
else
TRAIN_CC  = $(CC)
endif

# the CUDA backend's object and ptxas's report of its kernels (registers,
# spills: tests/gpu_check.sh reads it) are built into tests/, so that the
# top level holds only sources and the three programs
ifneq ($(NVCC),)
GPU_OBJ   = tests/yolov9_kernels.o
GPU_LIBS  = -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcudart -lstdc++ -ldl -lpthread -lrt
GPU_TESTS = $(CUDA_TESTS)
ifneq ($(MPICC),)
ifneq ($(NCCL_LIB),)
NVFLAGS  += -DYOLO_NCCL -I$(NCCL_HOME)/include
GPU_LIBS += -L$(NCCL_LIB) -Wl,-rpath,$(NCCL_LIB) -l:libnccl.so.2
endif
endif
endif

# the three programs are built into tests/, beside every other binary, so that
# the top level holds the sources alone (the design's layout): tests/train ...
PROGS = tests/detect tests/train tests/val
TESTS = tests/golden_check tests/grad_fidelity tests/test_grad tests/test_weights tests/test_plan tests/test_metrics tests/test_augment tests/test_schedule tests/test_init tests/bench_loader tests/test_decode tests/test_plots tests/test_model_only $(SIM_TESTS) $(GPU_TESTS) $(DP_TESTS)

all: $(PROGS) $(TESTS)

tests/yolov9_kernels.o: yolov9_kernels.cu yolov9.h
	$(NVCC) $(NVFLAGS) -c -o $@ $< 2> tests/yolov9_kernels.ptxas.txt || (cat tests/yolov9_kernels.ptxas.txt; false)

tests/detect tests/val: tests/%: %.c yolov9.h $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

tests/train: train.c yolov9.h $(GPU_OBJ)
	$(TRAIN_CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

tests/test_dp: tests/test_dp.c yolov9.h $(GPU_OBJ)
	$(MPICC) -DYOLO_MPI $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

tests/golden_check tests/grad_fidelity tests/test_cuda tests/bench_train: tests/%: tests/%.c yolov9.h $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

tests/test_weights tests/test_plan tests/test_metrics tests/test_augment tests/test_schedule tests/test_init tests/bench_loader tests/test_decode tests/test_plots: tests/%: tests/%.c yolov9.h
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

# the model alone (YOLO_NO_DATA): nothing but libm to link
tests/test_model_only: tests/test_model_only.c yolov9.h
	$(CC) $(CFLAGS) -o $@ $< -lm

# finite differences want double precision: the same code, YOLO_REAL=double
tests/test_grad: tests/test_grad.c yolov9.h
	$(CC) $(CFLAGS) -DYOLO_REAL=double -o $@ $< $(LDLIBS)

# detect once more with AddressSanitizer (CPU only): a buffer the model
# still reads after its owner freed it fails test_detect
tests/asan_detect: detect.c yolov9.h
	$(CC) -O1 -g -fsanitize=address -fopenmp -o $@ $< $(LDLIBS)

# every parser fuzzed under AddressSanitizer and UndefinedBehaviorSanitizer
# (float-to-int overflow included): any report aborts the run
tests/fuzz: tests/fuzz.c yolov9.h
	$(CC) -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fopenmp -o $@ $< $(LDLIBS)

# the header must also compile as C++ (nvcc compiles it so)
tests/cxx_check: tests/golden_check.c tests/test_model_only.c yolov9.h
	$(CXX) -x c++ -std=c++11 -O0 -fsyntax-only -Wall -Wno-format-truncation -Wno-unknown-pragmas tests/golden_check.c
	$(CXX) -x c++ -std=c++11 -O0 -fsyntax-only -Wall -Wno-format-truncation -Wno-unknown-pragmas tests/test_model_only.c
	@touch $@

test: $(PROGS) tests/golden_check tests/test_grad tests/test_weights tests/test_plan tests/test_metrics tests/test_augment tests/test_schedule tests/test_init tests/bench_loader tests/test_decode tests/test_plots tests/test_model_only tests/cxx_check \
      tests/asan_detect tests/fuzz $(SIM_TESTS) $(DP_TESTS)
	@fail=0; n=0; run() { n=$$((n + 1)); "$$@" || fail=$$((fail + 1)); }; \
	run ./tests/test_weights; \
	run ./tests/test_plan; \
	run ./tests/test_metrics tests/golden/metrics; \
	run ./tests/test_augment tests/golden/augment; \
	run ./tests/test_schedule tests/golden/schedule; \
	run ./tests/test_init tests/golden/init; \
	run ./tests/test_model_only tests/golden/tiny-gelan; \
	d=$$(mktemp -d); run ./tests/test_plots $$d; rm -rf $$d; \
	run sh tests/test_decode.sh; \
	run sh tests/test_loader.sh; \
	run sh tests/test_convert.sh; \
	run ./tests/golden_check $(GOLDEN); \
	run ./tests/golden_check --precision bf16 $(GOLDEN); \
	run ./tests/golden_check --precision half $(GOLDEN); \
	run ./tests/test_grad tests/golden; \
	if [ -n "$(SIM_TESTS)" ]; then \
	    run ./tests/test_cuda_sim80 --quick; \
	    run ./tests/test_cuda_sim90 --quick; \
	    run ./tests/golden_check_sim80 --device cuda $(GOLDEN); \
	    run ./tests/golden_check_sim80 --device cuda --precision bf16 $(GOLDEN); \
	    run ./tests/golden_check_sim90 --device cuda --precision bf16 $(GOLDEN); \
	    run ./tests/golden_check_sim80 --device cuda --precision half $(GOLDEN); \
	    run ./tests/golden_check_sim90 --device cuda --precision half $(GOLDEN); \
	fi; \
	run sh tests/test_train.sh; \
	run sh tests/test_detect.sh; \
	run sh tests/test_val.sh; \
	run sh tests/test_official.sh; \
	run sh tests/test_fuzz.sh; \
	if [ -n "$(DP_TESTS)" ]; then run sh tests/test_dp.sh; fi; \
	echo "programs: $$((n - fail)) passed, $$fail failed"; [ $$fail = 0 ]

# bench_conv (GPU, prints figures; not in all): the backend's source with a
# timing main, linked with yolov9.h's implementation as the programs are
tests/bench_conv: tests/bench_conv.cu tests/bench_conv_shapes.inc tests/yolov9_impl.c yolov9_kernels.cu yolov9.h
	$(NVCC) $(NVFLAGS) -c -o tests/bench_conv.o tests/bench_conv.cu 2> tests/bench_conv.ptxas.txt || \
	    (cat tests/bench_conv.ptxas.txt; false)
	$(CC) $(CFLAGS) -o $@ tests/yolov9_impl.c tests/bench_conv.o $(LDLIBS) $(GPU_LIBS)

# probe_tma (GPU of sm_90, prints a line a case; not in all, run by
# tests/gpu_check.sh): the tensor maps and boxes conv_wg_kernel's copy
# engine loaders use, against a CPU gather
tests/probe_tma: tests/probe_tma.cu
	$(NVCC) -O2 -arch=sm_90 -o $@ $<

# the CUDA backend on the CPU (tests/sim): cu2cpp.py makes yolov9_kernels.cu
# plain C++ that cuda_sim.h runs, each block's threads as fibers (no GPU,
# no CUDA toolkit), built twice: the sm_80 path and (YOLO_WGMMA=1) the
# Hopper path. test_cuda and golden_check --device cuda link it as they
# link the GPU's object. -no-pie: shared memory's addresses must fit in 32
# bits; -ffp-contract=fast: a * b + c fused, as nvcc does (-fmad).
SIM_CXXFLAGS = -std=c++17 -march=native -ffp-contract=fast -fno-pie -fno-strict-aliasing -w -I. -Itests/sim
tests/sim/kernels.cpp: yolov9_kernels.cu tests/sim/cu2cpp.py
	$(PYTHON3) tests/sim/cu2cpp.py yolov9_kernels.cu $@

tests/sim/kernels80.o tests/sim/kernels90.o: tests/sim/kernels%.o: tests/sim/kernels.cpp tests/sim/cuda_sim.h yolov9.h
	$(CXX) $(SIM_CXXFLAGS) -O2 -DYOLO_WGMMA=$(if $(filter 90,$*),1,0) -c -o $@ $<

tests/test_cuda_sim80 tests/golden_check_sim80: tests/%_sim80: tests/%.c yolov9.h tests/sim/kernels80.o
	$(CC) $(CFLAGS) -no-pie -o $@ $< tests/sim/kernels80.o $(LDLIBS) -lstdc++

tests/test_cuda_sim90 tests/golden_check_sim90: tests/%_sim90: tests/%.c yolov9.h tests/sim/kernels90.o
	$(CC) $(CFLAGS) -no-pie -o $@ $< tests/sim/kernels90.o $(LDLIBS) -lstdc++

# the Hopper path on the simulator under AddressSanitizer (not in make test:
# about ten minutes): a kernel that reads or writes past a buffer is named,
# with its line, as compute-sanitizer's memcheck names it on a GPU
sim-memcheck: tests/sim/kernels.cpp tests/sim/cuda_sim.h yolov9.h
	$(CXX) $(SIM_CXXFLAGS) -O1 -g -fsanitize=address -DYOLO_WGMMA=1 -c -o tests/sim/kernels90_asan.o tests/sim/kernels.cpp
	$(CC) $(CFLAGS) -g -fsanitize=address -no-pie -o tests/test_cuda_sim90_asan tests/test_cuda.c tests/sim/kernels90_asan.o \
	    $(LDLIBS) -lstdc++
	ASAN_OPTIONS=detect_leaks=0 ./tests/test_cuda_sim90_asan --quick

test-cuda: tests/test_cuda tests/golden_check
	./tests/test_cuda
	./tests/golden_check --device cuda $(GOLDEN)
	./tests/golden_check --device cuda --precision bf16 $(GOLDEN)

clean:
	rm -f $(PROGS) $(TESTS) $(CUDA_TESTS) tests/test_dp tests/cxx_check tests/asan_detect tests/fuzz \
	      tests/yolov9_kernels.o tests/yolov9_kernels.ptxas.txt tests/bench_conv tests/bench_conv.o tests/bench_conv.ptxas.txt \
	      tests/probe_tma $(SIM_TESTS) tests/sim/kernels.cpp tests/sim/kernels80.o tests/sim/kernels90.o \
	      tests/sim/kernels90_asan.o tests/test_cuda_sim90_asan

.PHONY: all test test-cuda sim-memcheck clean
