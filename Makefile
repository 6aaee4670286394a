# yolov9.c: `make` builds the three programs, ./train ./val ./detect, with
# cc alone (the CPU reference), plus the CUDA backend linked in when nvcc is
# found, and train with mpicc (data-parallel training under mpirun) when
# mpicc is found. `make test` builds and runs the core tests (a few
# minutes), `make test-all` every test (what CI runs), `make test-cuda` the
# GPU's own (on a machine with a GPU). Nothing but the rules below: no
# built-in rule may make a program from a source of the same name.
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

CC        ?= cc
CFLAGS    ?= -O2 -march=native -fopenmp -Wall -Wno-format-truncation -Wno-stringop-overflow
LDLIBS    = -ljpeg -lstb -lm -lpthread
GOLDEN    = tests/golden/tiny-gelan tests/golden/tiny-dual tests/golden/tiny-cb

PROGS     = train val detect
all: $(PROGS)

# data parallel (yolov9.h section 16): train and its test built with mpicc
# (Open MPI: Debian's openmpi-bin libopenmpi-dev) and YOLO_MPI; without
# mpicc every program is one process.
MPICC     ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
TRAIN_CC  = $(MPICC) -DYOLO_MPI
DP_TESTS  = tests/test_dp
else
TRAIN_CC  = $(CC)
endif

# ==== the CUDA backend: toolkit, architecture, the simulator =================
# Everything about nvcc (or hipcc), the GPU's object and its tests, and the
# CUDA simulator (tests/sim) lives in this block. It gives the rest:
#   GPU_OBJ, GPU_LIBS   the backend's object and libraries (empty without nvcc)
#   GPU_TESTS           the GPU's test programs, built by make test-all
#   SIM_CORE, SIM_ALL   the simulator's tests that make test and make
#                       test-all run (run-* targets defined here)
# The backend (yolov9_kernels.cu) is its portable core and the fastest tier
# of tensor-core kernels the GPU of CUDA_ARCH has: sm_75 the Turing tier
# (T4), sm_80 sm_86 sm_87 sm_89 and Blackwell's sm_100 sm_120 the Ampere
# tier, sm_90 the Hopper tier (built for sm_90a); sm_60 and sm_70 the core
# alone. TIER=portable|sm75|sm80 builds a lower tier for the same GPU
# (portable: the core alone, no tensor cores), so that an H100 runs every
# tier (tests/gpu_check.sh). HIP=1 builds the core with hipcc for the AMD
# GPUs of HIP_ARCH instead.
NVCC      ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ARCH ?= sm_90
ARCH_NUM   = $(subst sm_,,$(CUDA_ARCH))
ARCH_TIER  = $(if $(filter 90 90a,$(ARCH_NUM)),90,$(if $(filter 75,$(ARCH_NUM)),75,$(if $(filter 6% 70 72,$(ARCH_NUM)),0,80)))
ifneq ($(filter 10 11 12 13 20 21 30 32 35 37 50 52 53,$(ARCH_NUM)),)
$(error CUDA_ARCH=$(CUDA_ARCH): the GPU backend needs sm_60 on (atomicAdd on doubles))
endif
TIER      ?=
YOLO_TIER  = $(if $(TIER),$(subst portable,0,$(subst sm,,$(TIER))),$(ARCH_TIER))
ifneq ($(filter-out 0 75 80 90,$(YOLO_TIER)),)
$(error TIER=$(TIER): portable, sm75, sm80 or sm90)
endif
ifeq ($(shell [ $(YOLO_TIER) -le $(ARCH_TIER) ] || echo over),over)
$(error TIER=$(TIER) needs a newer GPU than CUDA_ARCH=$(CUDA_ARCH) (its tier: $(ARCH_TIER)))
endif
ifeq ($(YOLO_TIER),90)
ARCH_FLAGS = -gencode=arch=compute_90a,code=[sm_90a,compute_90a]
else
ARCH_FLAGS = -arch=$(CUDA_ARCH)
endif
# --default-stream per-thread: the kernels go to a stream that CUDA graphs
# can capture (the legacy default stream cannot be captured): the backend
# runs a pass's regions as graphs (yolov9_kernels.cu, "graphs")
NVFLAGS   ?= -O3 -std=c++17 $(ARCH_FLAGS) -DYOLO_TIER=$(YOLO_TIER) --default-stream per-thread -Xptxas -v
# NVCC_JOBS=16: nvcc optimises the kernel file in that many threads
# (-split-compile: about a minute instead of three on the H200's machine)
ifneq ($(NVCC_JOBS),)
NVFLAGS  += -split-compile=$(NVCC_JOBS)
endif

# nvcc may be a link or a wrapper far from the toolkit: look for libcudart
# beside the real nvcc, then in CUDA_HOME; without it, build for the CPU only.
CUDA_HOME ?= /usr/local/cuda
CUDA_LIB  = $(firstword $(foreach d,$(dir $(realpath $(NVCC)))../lib64 $(CUDA_HOME)/lib64 \
              $(CUDA_HOME)/targets/x86_64-linux/lib,$(if $(wildcard $(d)/libcudart.so*),$(d))))
ifeq ($(CUDA_LIB),)
override NVCC :=
endif

# HIP=1: the portable core through hipcc (ROCm: Debian's hipcc package) for
# HIP_ARCH, gfx90a (MI200, wavefronts of 64) by default; gfx1100 (RX 7900,
# wavefronts of 32) needs a ROCm whose device library has it (Debian 12's
# 5.2 has none: tests/build_matrix.sh)
ifeq ($(HIP),1)
HIPCC     ?= hipcc
HIP_ARCH  ?= gfx90a
override NVCC :=
GPU_OBJ   = tests/yolov9_kernels.o
GPU_LIBS  = -lamdhip64 -lstdc++ -ldl -lpthread -lrt
GPU_TESTS = tests/test_cuda tests/test_graph tests/bench_train
endif

# The CUDA backend sums over the GPUs of a data-parallel run with NCCL:
# nccl.h and libnccl.so.2 in NCCL_HOME, found beside the CUDA toolkit or in
# PyTorch's nvidia-nccl package.
NCCL_HOME ?= $(firstword $(foreach d,$(CUDA_HOME) $(wildcard /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl),\
               $(if $(wildcard $(d)/include/nccl.h),$(d))))
NCCL_LIB  = $(firstword $(foreach d,$(NCCL_HOME)/lib $(NCCL_HOME)/lib64,$(if $(wildcard $(d)/libnccl.so*),$(d))))

# the CUDA backend's object and ptxas's report of its kernels (registers,
# spills: tests/gpu_check.sh reads it) are built into tests/, so that the
# top level holds only sources and the three programs
ifneq ($(NVCC),)
GPU_OBJ   = tests/yolov9_kernels.o
GPU_LIBS  = -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcudart -lstdc++ -ldl -lpthread -lrt
GPU_TESTS = tests/test_cuda tests/test_graph tests/bench_train
ifneq ($(MPICC),)
ifneq ($(NCCL_LIB),)
NVFLAGS  += -DYOLO_NCCL -I$(NCCL_HOME)/include
GPU_LIBS += -L$(NCCL_LIB) -Wl,-rpath,$(NCCL_LIB) -l:libnccl.so.2
endif
endif
endif

ifeq ($(HIP),1)
tests/yolov9_kernels.o: yolov9_kernels.cu yolov9.h
	$(HIPCC) -x hip -std=c++17 -O3 $(addprefix --offload-arch=,$(HIP_ARCH)) -DYOLO_TIER=0 -Wno-pass-failed -c -o $@ $<
else
tests/yolov9_kernels.o: yolov9_kernels.cu yolov9.h
	$(NVCC) $(NVFLAGS) -c -o $@ $< 2> tests/yolov9_kernels.ptxas.txt || (cat tests/yolov9_kernels.ptxas.txt; false)
endif

tests/test_cuda tests/test_graph tests/bench_train: tests/%: tests/%.c yolov9.h $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

# the tier and the nvcc flags this make builds the backend with (tests/build_matrix.sh)
cuda-flags:
	@echo "$(YOLO_TIER) $(ARCH_FLAGS)"

# on a machine with a GPU: every kernel against its CPU twin, the golden
# cases on the GPU (tests/gpu_check.sh does more: every tier)
test-cuda: tests/test_cuda tests/test_graph tests/golden_check
	./tests/test_cuda
	./tests/test_graph tests/golden/tiny-dual
	./tests/golden_check --device cuda $(GOLDEN)
	./tests/golden_check --device cuda --precision bf16 $(GOLDEN)

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

# the GPU backend on the CPU (tests/sim): cu2cpp.py makes yolov9_kernels.cu
# plain C++ that cuda_sim.h runs, each block's threads as fibers (no GPU,
# no CUDA toolkit), built once a simulated GPU, each with its tier: sim60
# (a GPU older than any tier: the portable core alone), sim75 (Turing's
# mma.sync m16n8k8), sim80 (Ampere's m16n8k16, cp.async), sim90 (Hopper's
# wgmma, the copy engine). test_cuda and golden_check --device cuda link it
# as they link the GPU's object. -no-pie: shared memory's addresses must fit
# in 32 bits; -ffp-contract=fast: a * b + c fused, as nvcc does (-fmad).
# Built wherever python3 is.
PYTHON3   ?= $(shell command -v python3 2>/dev/null)
SIM_GPUS  = 60 75 80 90
SIM_CXXFLAGS = -std=c++17 -march=native -ffp-contract=fast -fno-pie -fno-strict-aliasing -w -I. -Itests/sim
tests/sim/kernels.cpp: yolov9_kernels.cu tests/sim/cu2cpp.py
	$(PYTHON3) tests/sim/cu2cpp.py yolov9_kernels.cu $@

$(foreach g,$(SIM_GPUS),tests/sim/kernels$(g).o): tests/sim/kernels%.o: tests/sim/kernels.cpp tests/sim/cuda_sim.h yolov9.h
	$(CXX) $(SIM_CXXFLAGS) -O2 -DYOLO_TIER=$(if $(filter 60,$*),0,$*) -c -o $@ $<

# the three programs compiled once, linked with each simulated GPU
tests/sim/test_cuda.o tests/sim/golden_check.o tests/sim/test_graph.o: tests/sim/%.o: tests/%.c yolov9.h
	$(CC) $(CFLAGS) -c -o $@ $<
define SIM_PROGRAMS
tests/test_cuda_sim$(1) tests/golden_check_sim$(1) tests/test_graph_sim$(1): tests/%_sim$(1): tests/sim/%.o tests/sim/kernels$(1).o
	$$(CC) $$(CFLAGS) -no-pie -o $$@ $$^ $$(LDLIBS) -lstdc++
endef
$(foreach g,$(SIM_GPUS),$(eval $(call SIM_PROGRAMS,$(g))))
SIM_PROGS = $(foreach g,$(SIM_GPUS),tests/test_cuda_sim$(g) tests/golden_check_sim$(g) tests/test_graph_sim$(g))

# What the simulator runs. make test (which must stay within 3 minutes on two
# idle cores, build included): the golden cases (forward, backward, the
# optimizers, folded inference) on the Hopper tier in bf16 and on the core
# alone in bf16 (about 20 and 10 s of one core), the first case on Turing's
# in half (15 s). make test-all: every kernel against its
# CPU twin on a GPU of each tier (test_cuda --quick: about 2.5 minutes each),
# and the golden cases in every precision a tier computes its own way: fp32,
# bf16 and half on Ampere's (fp32 is the core's on every tier), bf16 and half
# on Hopper's and on the core alone (its float32 products of rounded
# operands), half on Turing's (its bf16 is the core's).
run-golden-sim90-bf16: tests/golden_check_sim90
	./tests/golden_check_sim90 --device cuda --precision bf16 $(GOLDEN)
run-golden-sim90-half: tests/golden_check_sim90
	./tests/golden_check_sim90 --device cuda --precision half $(GOLDEN)
run-golden-sim80: tests/golden_check_sim80
	./tests/golden_check_sim80 --device cuda $(GOLDEN)
run-golden-sim80-bf16: tests/golden_check_sim80
	./tests/golden_check_sim80 --device cuda --precision bf16 $(GOLDEN)
run-golden-sim80-half: tests/golden_check_sim80
	./tests/golden_check_sim80 --device cuda --precision half $(GOLDEN)
run-golden-sim75-half: tests/golden_check_sim75
	./tests/golden_check_sim75 --device cuda --precision half $(firstword $(GOLDEN))
run-golden-sim75-half-more: tests/golden_check_sim75
	./tests/golden_check_sim75 --device cuda --precision half $(wordlist 2,99,$(GOLDEN))
run-golden-sim60-bf16: tests/golden_check_sim60
	./tests/golden_check_sim60 --device cuda --precision bf16 $(GOLDEN)
run-golden-sim60-half: tests/golden_check_sim60
	./tests/golden_check_sim60 --device cuda --precision half $(GOLDEN)
$(foreach g,$(SIM_GPUS),run-sim$(g)): run-sim%: tests/test_cuda_sim%
	./tests/test_cuda_sim$* --quick
# CUDA graphs: training steps and inference passes replayed = launched op by op, to the bit
run-graph-sim90: tests/test_graph_sim90
	./tests/test_graph_sim90 tests/golden/tiny-dual
SIM_RUNS  = run-golden-sim90-bf16 $(foreach g,$(SIM_GPUS),run-sim$(g)) run-golden-sim80 run-golden-sim80-bf16 \
            run-golden-sim80-half run-golden-sim90-half run-golden-sim75-half run-golden-sim75-half-more \
            run-golden-sim60-bf16 run-golden-sim60-half run-graph-sim90
ifneq ($(PYTHON3),)
SIM_CORE  = run-golden-sim90-bf16 run-golden-sim60-bf16 run-golden-sim75-half
SIM_ALL   = $(SIM_RUNS)
endif

# the Hopper tier on the simulator under AddressSanitizer (not in make test:
# about ten minutes): a kernel that reads or writes past a buffer is named,
# with its line, as compute-sanitizer's memcheck names it on a GPU
sim-memcheck: tests/sim/kernels.cpp tests/sim/cuda_sim.h yolov9.h
	$(CXX) $(SIM_CXXFLAGS) -O1 -g -fsanitize=address -DYOLO_TIER=90 -c -o tests/sim/kernels90_asan.o tests/sim/kernels.cpp
	$(CC) $(CFLAGS) -g -fsanitize=address -no-pie -o tests/test_cuda_sim90_asan tests/test_cuda.c tests/sim/kernels90_asan.o \
	    $(LDLIBS) -lstdc++
	ASAN_OPTIONS=detect_leaks=0 ./tests/test_cuda_sim90_asan --quick

CUDA_CLEAN = tests/yolov9_kernels.o tests/yolov9_kernels.ptxas.txt tests/test_cuda tests/test_graph tests/bench_train \
             tests/bench_conv tests/bench_conv.o tests/bench_conv.ptxas.txt tests/probe_tma \
             tests/sim/kernels.cpp $(foreach g,$(SIM_GPUS),tests/sim/kernels$(g).o) tests/sim/test_cuda.o \
             tests/sim/golden_check.o tests/sim/test_graph.o $(SIM_PROGS) \
             tests/sim/kernels90_asan.o tests/test_cuda_sim90_asan
.PHONY: test-cuda sim-memcheck cuda-flags $(SIM_RUNS)
# ==== end of the CUDA backend's block =========================================

# ---- the three programs, at the top level (make's default goal, all) ---------------
train: train.c yolov9.h $(GPU_OBJ)
	$(TRAIN_CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

val: val.c yolov9.h $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

detect: detect.c yolov9.h $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

# ---- the test programs, in tests/ -------------------------------------------------
# with the CUDA backend where it is built: golden_check --device cuda, and
# grad_fidelity (a step's gradient in half and bf16 against float32's)
tests/golden_check tests/grad_fidelity: tests/%: tests/%.c yolov9.h $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

CPU_TESTS = tests/test_conv tests/test_weights tests/test_plan tests/test_metrics tests/test_augment tests/test_schedule \
            tests/test_init tests/bench_loader tests/test_decode tests/test_plots
$(CPU_TESTS): tests/%: tests/%.c yolov9.h
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

tests/test_dp: tests/test_dp.c yolov9.h $(GPU_OBJ)
	$(MPICC) -DYOLO_MPI $(CFLAGS) -o $@ $< $(GPU_OBJ) $(LDLIBS) $(GPU_LIBS)

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

# the programs and the test programs built with the same sanitizers into
# tests/ubsan/ (CPU only), for make fuzz-ubsan: optimised as they are
# otherwise (the golden tolerances hold for the usual rounding)
UBSAN_CFLAGS = $(CFLAGS) -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
UBSAN_PROGS = tests/ubsan/train tests/ubsan/val tests/ubsan/detect
UBSAN_TESTS = $(addprefix tests/ubsan/,test_weights test_plan test_metrics test_augment test_schedule test_init test_model_only \
                test_plots test_decode golden_check test_grad bench_loader)
$(UBSAN_PROGS): tests/ubsan/%: %.c yolov9.h
	@mkdir -p tests/ubsan
	$(CC) $(UBSAN_CFLAGS) -o $@ $< $(LDLIBS)
$(UBSAN_TESTS): tests/ubsan/%: tests/%.c yolov9.h
	@mkdir -p tests/ubsan
	$(CC) $(UBSAN_CFLAGS) $(if $(filter %/test_grad,$@),-DYOLO_REAL=double) -o $@ $< $(LDLIBS)

# the header must also compile as C++ (nvcc compiles it so)
tests/cxx_check: tests/golden_check.c tests/test_model_only.c yolov9.h
	$(CXX) -x c++ -std=c++11 -O0 -fsyntax-only -Wall -Wno-format-truncation -Wno-unknown-pragmas tests/golden_check.c
	$(CXX) -x c++ -std=c++11 -O0 -fsyntax-only -Wall -Wno-format-truncation -Wno-unknown-pragmas tests/test_model_only.c
	@touch $@

# ---- the tests ---------------------------------------------------------------------
# Each test is a target of its own, run-NAME, that builds what it needs and
# runs it. `make test` runs the core (CORE), `make test-all` every test
# (CORE and REST), both JOBS at a time with one OpenMP thread each (two
# programs of several threads on two cores mostly wait for each other),
# each test's output printed whole when it ends; make names any that fail.
run-conv: tests/test_conv
	./tests/test_conv
run-weights: tests/test_weights
	./tests/test_weights
run-plan: tests/test_plan
	./tests/test_plan
run-metrics: tests/test_metrics
	./tests/test_metrics tests/golden/metrics
run-augment: tests/test_augment
	./tests/test_augment tests/golden/augment
run-schedule: tests/test_schedule
	./tests/test_schedule tests/golden/schedule
run-init: tests/test_init
	./tests/test_init tests/golden/init
run-model-only: tests/test_model_only tests/cxx_check
	./tests/test_model_only tests/golden/tiny-gelan
run-plots: tests/test_plots
	d=$$(mktemp -d) && ./tests/test_plots $$d; s=$$?; rm -rf $$d; exit $$s
run-decode: tests/test_decode
	sh tests/test_decode.sh
run-loader: tests/bench_loader
	sh tests/test_loader.sh
run-convert: detect
	sh tests/test_convert.sh
run-voc: tests/bench_loader
	sh tests/test_voc.sh
run-golden: tests/golden_check
	./tests/golden_check $(GOLDEN)
run-golden-bf16: tests/golden_check
	./tests/golden_check --precision bf16 $(GOLDEN)
run-golden-half: tests/golden_check
	./tests/golden_check --precision half $(GOLDEN)
run-grad: tests/test_grad
	./tests/test_grad tests/golden
run-train: train val
	sh tests/test_train.sh
run-detect: detect tests/asan_detect
	sh tests/test_detect.sh
run-val: val
	sh tests/test_val.sh
run-official: train val detect
	sh tests/test_official.sh
run-official-commands: train val detect
	sh tests/test_official_commands.sh
run-fuzz: tests/fuzz train val detect
	sh tests/test_fuzz.sh
run-checkpoints: train detect
	sh tests/test_checkpoints.sh
run-hostile: train val detect
	sh tests/test_hostile.sh
run-reading-order:
	sh tests/test_reading_order.sh
# make fuzz-ubsan (in make test-all): under UndefinedBehaviorSanitizer and
# AddressSanitizer, the whole fuzzer driving the sanitized programs (every
# flag's values, a checkpoint's metadata), then the test programs: 0 reports
fuzz-ubsan run-ubsan: tests/fuzz $(UBSAN_PROGS) $(UBSAN_TESTS)
	sh tests/test_ubsan.sh
run-dp: train tests/test_dp
	sh tests/test_dp.sh

# the longest first, so that two at a time end together
CORE = $(SIM_CORE) run-train run-grad run-loader run-official run-official-commands run-plan run-golden run-golden-bf16 run-golden-half \
       run-weights run-metrics run-augment run-schedule run-init run-model-only run-plots run-decode run-convert \
       run-voc run-detect run-val run-conv run-reading-order
REST = $(filter-out $(SIM_CORE),$(SIM_ALL)) run-fuzz run-checkpoints run-hostile run-ubsan $(if $(DP_TESTS),run-dp)
# built by make test-all though no test runs them, so that they keep compiling
BUILD_ONLY = tests/grad_fidelity $(GPU_TESTS)

JOBS ?= 2
# -jJOBS unless make was given -j itself; each test on one thread unless told, the CPU backend's fresh
# values NaN (YOLO_CPU_NAN: a value read before it is written shows)
TEST_MAKE = OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} YOLO_CPU_NAN=1 $(MAKE) --no-print-directory -k -O \
            $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))
test:
	@$(TEST_MAKE) $(CORE) && echo "make test: every core test passed" || { echo "make test: FAILED (the lines marked ***)"; exit 1; }
test-all:
	@$(TEST_MAKE) $(CORE) $(REST) $(BUILD_ONLY) && echo "make test-all: every test passed" || \
	    { echo "make test-all: FAILED (the lines marked ***)"; exit 1; }

clean:
	rm -f $(PROGS) tests/golden_check tests/grad_fidelity $(CPU_TESTS) tests/test_dp tests/test_model_only tests/test_grad \
	      tests/asan_detect tests/fuzz tests/cxx_check $(CUDA_CLEAN)
	rm -rf tests/ubsan

.PHONY: all test test-all clean fuzz-ubsan $(CORE) $(REST)
