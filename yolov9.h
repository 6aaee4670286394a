/* yolov9.h — YOLOv9 object detection in one C header: the model, its
   backward pass, the loss, the optimizers and the weights format.

   This file is the plain-C reference implementation: every operation is a
   readable loop nest, and every one of them is the specification that the
   CUDA kernels in yolov9_kernels.cu are tested against. Both sit behind
   one table of ops, the backend, chosen once at start.

   HOW TO USE
     In exactly one C or C++ file:
         #define YOLOV9_IMPLEMENTATION
         #include "yolov9.h"
     Everywhere else include it without the define. Build with OpenMP
     (-fopenmp) to use all cores; without it everything runs on one. The
     implementation decodes JPEG pictures with libjpeg-turbo (-ljpeg) as
     OpenCV's imread does, other pictures with stb_image (link -lstb, or
     compile stb_image's implementation in), and runs loader threads
     (-lpthread).

   OPTIONS (define before including)
     YOLO_REAL    the scalar type of every tensor, float by default. The
                  gradient-check test builds with double so that finite
                  differences are precise; files on disk are always float32.
     YOLO_MPI     data parallel training (section 17) over MPI: build with
                  mpicc and run under mpirun. Without it every program is
                  one process (world 1), and mpi.h is not needed.
     YOLO_NO_DATA the model alone (a port, a lab): leaves out datasets,
                  pictures, augmentation, the loader and its threads,
                  validation and plots, and with them libjpeg, stb and
                  pthread. The model, its backward, the loss, optimizers,
                  weights, NMS and metrics stay; -lm suffices.

   NOTATION (used in every shape comment)
     B      batch size                 C, H, W   channels, height, width
     A      anchor points: one per cell of the three output grids, level by
            level (strides 8, 16, 32), row-major inside a level
     NC     number of classes          REG_MAX   16 bins per box side (DFL)
     NO     outputs per anchor = 4*REG_MAX + NC
     Tensors are NCHW, float, contiguous.

   SECTIONS
   Part one, the model, top to bottom as the paper builds it:
     1. the tensor
     2. the primitive ops: the backend table, each op's maths
     3. the blocks: Conv, RepConvN, RepNBottleneck, RepNCSP, RepNCSPELAN4
        and ELAN1, AConv and ADown, SPPELAN; each its struct, forward and
        backward side by side (the maths alone), and beside them, as data,
        what its forward makes (shapes) and what training keeps of its
        intermediates (the lifetime table)
     4. the head: DDetect / DualDDetect, DFL, anchors, decode; the layers
     5. the loss: the task-aligned assigner, CIoU, DFL, BCE and their
        gradient, in the steps of the CUDA loss kernels
     6. the optimizers: SGD (Nesterov), Adam, AdamW (amsgrad), Lion, EMA,
        the official schedule (warmup, accumulation), gradient clipping,
        the loss scaler
     7. the training step: forward and backward over the layers, what a
        step keeps, recompute checkpointing (--ckpt)
   Part two, the machinery:
     8. utilities: errors, host memory, files, random numbers, timers
     9. memory: tensors' memory and gradients, shapes and lifetimes
        (the blocks' declarations, run between their ops: yolo_op_*),
        the weights on the backend (staged, folded for inference), the
        arena and the planner
    10. the CPU backend: every primitive op as plain loops, the
        specification that each kernel of yolov9_kernels.cu is tested
        against; choosing a backend
    11. model files: the built-in variants, the official model yaml, a
        weights file's model; building a model, its first weights
    12. weights: safetensors read/write under the official PyTorch names;
        training checkpoints
    13. data: dataset and hyperparameter yaml, labels, letterbox,
        augmentation (mosaic, perspective, mixup, HSV, flips), the loader
        threads, drawing detections (YOLO_NO_DATA leaves it out)
    14. evaluation: non-maximum suppression, matching, AP, validation
    15. command line: the official flags with their arity, progress bars
    16. plots: results.png, the confusion matrix, the precision-recall
        curves, labels.jpg and the mosaics of batches, drawn with
        stb_image_write and stb_easy_font (YOLO_NO_DATA leaves them out)
    17. data parallel: one process per GPU, the gradients summed over them
        (NCCL on the GPU, MPI on the CPU; YOLO_MPI)
   Each section declares its types and functions, then implements them
   (in the file that defines YOLOV9_IMPLEMENTATION).
   The maths follows the official PyTorch YOLOv9 (WongKinYiu/yolov9); the
   comments say where a detail comes from when it is easy to get wrong. */

#ifndef YOLOV9_H
#define YOLOV9_H
#define YOLOV9_DECLARING   /* the declarations below, at the first include (undefined at the end) */

#ifndef YOLO_NO_DATA
#include <pthread.h>   /* the loader's threads */
#endif
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef YOLO_REAL
#define YOLO_REAL float
#endif
typedef YOLO_REAL yolo_real;

#define YOLO_REG_MAX 16   /* DFL bins per box side */
#define YOLO_MAX_FROM 12  /* inputs of one layer (Concat, CBFuse, Detect) */
#define YOLO_MAX_ARGS 8
#define YOLO_ERR 512      /* size of an error message buffer */
/* What a model file, a dataset or a weights file may ask for: far above
   every official model (yolov9-e: 58M parameters, widths up to 1024,
   strides 8..32) and far below what would exhaust the machine. */
#define YOLO_MAX_WIDTH 8192          /* channels of one layer */
#define YOLO_MAX_PARAMS (1L << 28)   /* values of one model */
#define YOLO_MAX_NC 100000           /* classes */
#define YOLO_MAX_STRIDE 32           /* the programs take --img as a multiple of 32 */
#define YOLO_MAX_IMG 8192            /* --img: the largest picture read is 8192 x 8192 */
#define YOLO_MAX_BATCH 65536         /* --batch-size */
#define YOLO_MAX_DET 30000           /* --max-det: NMS takes at most 30000 boxes (the official's max_nms) */
#define YOLO_MAX_WORKERS 65536       /* --workers (then at most the CPUs: yolo_loader_workers) */
#define YOLO_MAX_LAYERS 1000         /* --freeze: a layer index */

/* YOLO_HD: code that the CUDA kernels share with the CPU as it is */
#if defined(__CUDACC__) || defined(__HIPCC__)
#define YOLO_HD __host__ __device__
#else
#define YOLO_HD
#endif
#include <math.h>
/* the functions have C linkage where a C++ compiler (nvcc) reads this */
#ifdef __cplusplus
#define YOLO_C_BEGIN extern "C" {
#define YOLO_C_END }
#else
#define YOLO_C_BEGIN
#define YOLO_C_END
#endif
#endif /* YOLOV9_H */

/* the implementation, once, in the file that defines YOLOV9_IMPLEMENTATION */
#if defined(YOLOV9_IMPLEMENTATION) && !defined(YOLOV9_IMPLEMENTATION_DONE)
#define YOLOV9_IMPLEMENTING   /* (undefined at the end) */
#include <ctype.h>
#ifdef __GLIBC__
#include <malloc.h>   /* mallopt: the CPU backend keeps the memory it frees */
#endif
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#ifndef YOLO_NO_DATA
#include <jpeglib.h>
#include <stb/stb_easy_font.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#endif
#include <strings.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#endif

/* ======================================================================== */
/* PART ONE: the model                                                      */
/* ======================================================================== */
/* From the tensor to the training step, top to bottom as the paper builds
   it. Each block's forward and backward sit side by side. */

/* ------------------------------------------------------------------------ */
/* 1. the tensor                                                            */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING

/* An activation: values and, when training, the gradient of the loss with
   respect to those values (same shape). Backward passes *add* into grad, so
   a tensor read by several layers collects the sum of their gradients; the
   first of them assigns instead, into memory taken not zeroed (grad_fresh). */
#define YOLO_MAX_PARTS 4  /* parts of a concatenation whose gradient is theirs (SPPELAN's four) */
typedef struct yolo_tensor {
    int n, c, h, w;      /* shape [B, C, H, W] */
    yolo_real *data;     /* [n*c*h*w] */
    yolo_real *grad;     /* [n*c*h*w] or NULL when no gradient is wanted (or not yet) */
    size_t cap;          /* elements allocated */
    int wants_grad;      /* a training forward wrote it: its layer's backward needs grad */
    /* how the values are stored, a yolo_precision: YOLO_FP32, as above; YOLO_BF16 or YOLO_FP16 in a
       training pass or a folded inference pass in that precision (yolo_forward), each value rounded to
       it where it is written, in the backend's own layout (the CUDA backend: NHWC, two bytes a value;
       the CPU: the NCHW floats above, rounded). Only the backend's ops read it. The gradient is float32
       NCHW whatever the store: it is a sum over the tensor's readers. */
    int store;
    int grad_fresh;      /* 1: grad taken and not yet written (not zeroed: the first writer assigns; yolo_grad_need) */
    /* A slot (folded inference, yolo_tensor_slot): channels [c0, c0 + c) of a wider buffer of ctot
       channels whose memory is data (not owned: the buffer's, the same store), so that a concatenation's
       parts are written and read where the concatenation holds them, with no copies. In the CUDA
       backend's NHWC store a pixel's channels are then ctot apart, in the NCHW floats an image's ctot HW.
       Only ops that honour a slot may see one (conv2d_forward, maxpool_forward; the others refuse it,
       yolo_dense). ctot 0: a tensor of its own. */
    int c0, ctot;
    /* A concatenation that only convs read (RepNCSPELAN4's, RepNCSP's, SPPELAN's; a Concat layer's,
       yolo_layer.convs_read), in training: its gradient is never formed. Each conv's backward writes
       its share of dL/dx straight into the parts' own gradients (yolo_concat_grads, yolo_dx), where a
       copy a part would split it: channels part_c0[i] .. of part[i] (0 .., all of it, but for a split's
       half, yolo_split_grad). nparts 0: a gradient of its own. */
    struct yolo_tensor *part[YOLO_MAX_PARTS];
    int part_c0[YOLO_MAX_PARTS], nparts;
} yolo_tensor;

/* the channels an image of t's memory holds: a slot's buffer's, else t's own (shared with the CUDA backend) */
static inline int yolo_buffer_channels(const yolo_tensor *t) { return t->ctot ? t->ctot : t->c; }
/* an op that does not honour slots refuses one (shared with the CUDA backend) */
static inline void yolo_dense(const yolo_tensor *t, const char *op) {
    if (!t->ctot) return;
    fprintf(stderr, "yolov9: %s: a tensor [%d, %d, %d, %d] that is channels %d.. of a buffer of %d, which it does not read as a slot\n",
            op, t->n, t->c, t->h, t->w, t->c0, t->ctot);
    exit(1);
}
#endif /* YOLOV9_DECLARING */

/* ------------------------------------------------------------------------ */
/* 2. the primitive ops: the backend table                                  */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
/* Every op the model runs goes through this table, chosen once at start
   (--device): the plain-C reference (section 10), or the CUDA kernels of
   yolov9_kernels.cu. The model code never asks which one it has. Pointers
   to tensor data are in the backend's memory (host or device). The three
   tables (yolo_cpu, the planner's yolo_planner, the .cu's yolo_cuda) are
   filled by name, in the order of the members below: an op added here
   gets one line in each. */

typedef enum { YOLO_SGD, YOLO_ADAM, YOLO_ADAMW, YOLO_LION } yolo_optim_kind;
/* one optimizer step; lr per parameter group (yolo_pkind: conv weights, BatchNorm weights, biases), wd on
   the conv weights only; gs multiplies the gradient first (clipping, accumulation) */
typedef struct { yolo_optim_kind kind; double lr[3], wd, b1, b2, eps, bc1, bc2, gs; } yolo_update;
typedef struct { float x1, y1, x2, y2, conf; int cls; } yolo_det;                 /* one detection, input pixels */

/* What the assigner decided for one head branch (arrays in backend
   memory). It depends on the predictions but is not differentiated
   through, as the official runs it under no_grad. */
typedef struct {
    int B, A, nc;
    unsigned char *fg;   /* [B*A] 1 where the anchor has a target */
    int *label;          /* [B*A] target class */
    yolo_real *box;      /* [B*A*4] target box x1,y1,x2,y2 in grid units */
    yolo_real *score;    /* [B*A] target score of the target class */
    yolo_real *alpha;    /* [B*A] CIoU's alpha (a constant of the gradient) */
    double score_sum;    /* max(sum of target scores, 1) */
} yolo_assignment;

/* One head branch of the loss, for the backend's loss op. */
typedef struct {
    int B, nc, A;                 /* batch, classes, anchors over the three levels */
    int h[3], w[3], stride[3];    /* the levels */
    const yolo_real *maps[3];     /* [B, 4*REG_MAX + NC, h, w] raw outputs */
    yolo_real *grads[3];          /* the same shapes: written with d loss / d map */
    int ngt;
    const yolo_real *gt;          /* [ngt, 5] (class, x1, y1, x2, y2) in pixels, image by image */
    const int *gstart;            /* [B + 1] image n owns gt rows [gstart[n], gstart[n+1]) */
    yolo_assignment *as;
    void *work;                   /* yolo_loss_work_bytes of backend memory for the op's scratch */
    int reuse;                    /* 1: keep the assignment (and alpha) of the previous call */
    double grad_scale;            /* gradients are d(sum of terms)/d map * grad_scale / S */
    double box, cls, dfl;         /* out: the three sums, not yet divided by S */
} yolo_loss_branch;

/* Where one allocation of a planned training step goes: at off bytes past
   the arena's base, if it asks for at most size bytes (yolo_arena_follow). */
typedef struct { size_t off, size; } yolo_place;

/* The precision of a convolution's matrix products. YOLO_FP32: float32
   operands and sums. YOLO_BF16 and YOLO_FP16: both operands of each
   product (forward: weights and input; backward-data: weights and dY;
   backward-weight: dY and input) rounded to the nearest bfloat16 (8
   significant bits, float32's range) or IEEE half (11 bits, up to 65504),
   ties to even; their products are exact in float32 and the sums run in
   float32, on the GPU's tensor cores. A training pass and a folded
   inference pass also store the tensors they pass between ops in that
   precision (yolo_tensor.store: half the memory and traffic of float32);
   gradients, BatchNorm statistics and the head's maps stay float32.
   bf16 is for training (its range needs no loss scaling), half for
   inference (--half, as the official: more bits, and a folded model's
   values fit its range) and for training as the official's AMP does, with
   a loss scaler (yolo_loss_scaler). */
typedef enum { YOLO_FP32, YOLO_BF16, YOLO_FP16 } yolo_precision;

/* --sync-bn (section 17): the processes a BatchNorm's training statistics
   run over, each on a share of the same shape (the sampler deals them
   equal numbers, --multi-scale draws one size for all). The BatchNorm op
   hands sum its per-channel sums over its own share, doubles in backend
   memory, and sum adds them up over the processes in place, before they
   become statistics (forward: the sum, then the squared deviations from
   the mean; backward: the sums of g and g xhat). NULL: the share's own. */
typedef struct {
    int world;                          /* processes */
    void (*sum)(double *x, size_t n);   /* x summed over them, the same sum in every one */
} yolo_bn_group;

/* one conv's weights for stage_train_weights: w [c2, cin, k, k] (stride s, groups g) into the two
   forms a training step's products read, fwd and bwd, each c2 cin k k values in the step's precision */
typedef struct {
    const yolo_real *w;
    void *fwd, *bwd;
    int c2, cin, k, s, g;
} yolo_stage_conv;

/* Where a conv's backward writes dL/dx: x's channels in runs, in order, run i (c[i] channels) into
   channels c0[i] .. c0[i] + c[i] of the float32 NCHW gradient g[i] [B, cd[i], H, W], added to its
   values (add[i]) or written over them (0 + dL/dx: a fresh gradient, yolo_grad_need). One run: x's
   own gradient (c0 0, cd = c); several: the parts of a concatenation (yolo_tensor.part); c0 > 0: a
   split's half, whose gradient is its whole's. */
typedef struct {
    int n;
    yolo_real *g[YOLO_MAX_PARTS];
    int c[YOLO_MAX_PARTS], c0[YOLO_MAX_PARTS], cd[YOLO_MAX_PARTS], add[YOLO_MAX_PARTS];
} yolo_dx;

typedef struct yolo_backend {
    const char *name;
    void *(*alloc)(size_t bytes);                       /* zeroed memory */
    /* memory for a tensor's n values held as store says (yolo_tensor.store: the CUDA backend keeps a
       low-precision store in two bytes a value, the CPU twin in floats), not zeroed: the op that makes
       them writes every one (the CPU fills it with NaN where YOLO_CPU_NAN=1, as make test runs, so
       that a value read before it is written shows in the tests) */
    void *(*alloc_values)(size_t n, int store);
    void (*release)(void *p);
    void (*zero)(void *p, size_t bytes);
    void (*upload)(void *dst, const void *host, size_t bytes);
    void (*download)(void *host, const void *src, size_t bytes);
    void (*copy)(void *dst, const void *src, size_t bytes);
    /* y [B, C2, Ho, Wo] = conv(x [B, C1, H, W], w [C2, C1/g, k, k]) + b [C2] (b may be NULL), products in
       prec; then SiLU(y) when act, in the same pass (a folded Conv: bias and SiLU in the product's epilogue);
       then, when r [B, C2, Ho, Wo] is not NULL, y = r + that, rounded to y's store before the add as well
       as after (a folded RepNBottleneck's shortcut: the bits of a separate add). x and y may be slots
       (yolo_tensor.ctot), r not. ws: w as stage_weights made it for prec, read in place of w where the
       backend would stage it (weights that stay put: a folded model's), or NULL: staged from w on the way,
       as training's change each step */
    void (*conv2d_forward)(const yolo_tensor *x, const yolo_real *w, const yolo_real *b, const void *ws, int C2, int k,
                           int s, int g, int act, const yolo_tensor *r, yolo_precision prec, yolo_tensor *y);
    /* from dy = dL/dy [B, C2, Ho, Wo] (float32, or stored in prec: a BatchNorm backward's dL/dz written over
       z): dw += dL/dw, db += dL/db (db may be NULL), and dL/dx into dx's runs (dx may be NULL: none wanted).
       wsd: w in the form backward-data's products in prec read, as stage_train_weights made it (its bwd),
       or NULL: staged from w on the way */
    void (*conv2d_backward)(const yolo_tensor *x, const yolo_real *w, const void *wsd, const yolo_tensor *dy, int C2,
                            int k, int s, int g, yolo_precision prec, const yolo_dx *dx, yolo_real *dw, yolo_real *db);
    /* ws = w [C2, cin, k, k] in the form the forward's products in prec read (the CUDA backend: two-byte
       [C2][k][k][cin], the tensor cores' operand; the CPU twin: floats rounded to prec, w's layout), in
       alloc_values(C2 cin k k, prec) memory */
    void (*stage_weights)(const yolo_real *w, int C2, int cin, int k, yolo_precision prec, void *ws);
    /* a training step's weights staged once for its products in prec, every conv of the n in one pass a
       form: .fwd as stage_weights would make it, .bwd as conv2d_backward's wsd (each 256-byte aligned, in
       alloc_values(.., prec) memory, two bytes a value). NULL where the backend stages nothing (the CPU:
       its twin rounds w at every call); the planner's does nothing */
    void (*stage_train_weights)(const yolo_stage_conv *convs, int n, yolo_precision prec);
    /* u = BN(z), or SiLU(BN(z)) when act: the SiLU in the same pass; the statistics over group's shares
       (NULL: z's own) */
    void (*bn_train_forward)(const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta, yolo_real *mean,
                             yolo_real *invstd, yolo_real *rmean, yolo_real *rvar, double momentum, double eps,
                             int act, const yolo_bn_group *group, yolo_tensor *u);
    /* u = gamma (z - mean) s + beta per channel [C] (SiLU'd when act), s = invstd, or 1 / sqrt(var + eps)
       when invstd is NULL: a training pass's batch statistics again (the backward remaking u from z), or the
       running statistics (eval) */
    void (*bn_apply)(const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta, const yolo_real *mean,
                     const yolo_real *invstd, const yolo_real *var, double eps, int act, yolo_tensor *u);
    /* from dy = dL/du (float32): dgamma, dbeta += their gradients, and dL/dz written over z, in z's store
       (z is read by nothing after its BatchNorm backward; the conv's backward takes z as its dy) */
    void (*bn_act_backward)(yolo_tensor *z, const yolo_real *dy, const yolo_real *gamma, const yolo_real *beta,
                            const yolo_real *mean, const yolo_real *invstd, int act, const yolo_bn_group *group,
                            yolo_real *dgamma, yolo_real *dbeta);
    /* y = SiLU(a + b) (RepConvN's two branches; a, b and y stored alike), and its backward: da += g,
       db += g, g = dy SiLU'(a + b) (dy, da, db: float32 gradients of a's shape; add 0: da = db = 0 + g) */
    void (*silu_forward)(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y);
    void (*silu_backward)(const yolo_real *dy, const yolo_tensor *a, const yolo_tensor *b, yolo_real *da, yolo_real *db,
                          int add);
    void (*add)(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y);        /* y = a + b, stored alike */
    void (*accumulate)(yolo_real *y, const yolo_real *x, size_t n, int add);        /* y += x (add 0: y = 0 + x) */
    void (*avgpool2_forward)(const yolo_tensor *x, yolo_tensor *y);
    void (*avgpool2_backward)(const yolo_tensor *y, yolo_real *dx, int H, int W, int add);   /* dx += (add 0: 0 +) */
    void (*maxpool_forward)(const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y);   /* x, y may be slots */
    void (*maxpool_backward)(const yolo_tensor *x, int k, int s, int pad, const yolo_tensor *y, yolo_real *dx,
                             int add);   /* dx += each window's dy at its winner (add 0: dx = 0 + those) */
    /* channels [c0, c0 + C) of x, nearest, at y's size into y [B, C, Ho, Wo] (add: added to y) */
    void (*resize_forward)(const yolo_tensor *x, int c0, int add, yolo_tensor *y);
    void (*resize_backward)(const yolo_tensor *y, yolo_tensor *x, int c0, int add);   /* its gradient into x's channels (add 0: 0 +) */
    /* channels [sc, sc + C) of src [B, src_c, HW] into (accumulate: added to) [dc, dc + C) of dst
       [B, dst_c, HW], float32: the backward's gradients of concatenations and splits (accumulate 0 into
       a fresh gradient: its first writer) */
    void (*copy_channels)(const yolo_real *src, int src_c, int sc, yolo_real *dst, int dst_c, int dc,
                          int B, int C, int HW, int accumulate);
    /* channels [sc, sc + C) of src into [dc, dc + C) of dst (a concatenation's slot, a split's half,
       the head's maps), each as its store says (a float32 dst gets a low-precision src's values) */
    void (*concat)(const yolo_tensor *src, int sc, yolo_tensor *dst, int dc, int C);
    /* one optimizer step over all n values, value i as its group[i] says (yolo_optim_value) */
    void (*optim_update)(const yolo_update *u, const unsigned char *group, yolo_real *w, const yolo_real *g,
                         yolo_real *m, yolo_real *v, yolo_real *vmax, size_t n);
    void (*lerp)(yolo_real *y, const yolo_real *x, double d, size_t n);   /* y = d y + (1 - d) x (EMA) */
    double (*sumsq)(const yolo_real *x, size_t n);                          /* sum of x^2 (gradient norm) */
    void (*loss)(yolo_loss_branch *lb);   /* assigner, three terms and their gradient, one head branch */
    /* decoded predictions pred [B, 4 + NC, A] of one head branch: lb's levels and maps only */
    void (*decode)(const yolo_loss_branch *lb, yolo_real *pred);
    /* non-maximum suppression of one image's pred [4 + NC, A] (backend memory), as yolo_nms */
    int (*nms)(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres, int max_det,
               int agnostic, const int *classes, int nclasses, yolo_det *out);
    void (*sync)(void);                                 /* wait for queued work (timing) */
    /* bytes held now and at most since the start; a per-op time table when profiling */
    void (*memory)(size_t *in_use, size_t *peak);
    /* take `bytes` at once; later allocations are carved from it (0: no-op backend-side) */
    int (*reserve)(size_t bytes);
    /* the device's free and total memory now (AutoBatch, train --batch -1): 0, or -1 when it cannot
       say; NULL: a backend without device memory of its own (the CPU) */
    int (*free_memory)(size_t *free_bytes, size_t *total_bytes);
    /* the next n allocations go where script says (a planned training
       step); NULL: best fit again. Only a backend with an arena follows it. */
    void (*place)(const yolo_place *script, int n);
    void (*profile)(int on, FILE *report);
    /* the precisions whose products run on tensor cores, faster than
       float32, as bits 1 << YOLO_BF16 | 1 << YOLO_FP16 (the GPU's Ampere and
       Hopper tiers; Turing's: half alone). Training's default precision
       (bf16, else half, else float32) and --half follow it. The others are
       computed all the same, as float32 products of rounded operands (the
       CPU twin; the GPU's portable core), slower */
    int tensor_cores;
    /* dst = pixels / 255: a batch handed over as uint8 [B, 3, H, W]
       (yolo_set_input_pixels) made into the model's input where it lives,
       from host memory (uploaded as bytes) or from backend memory (a
       training step's copy of them, yolo_model.input_bytes) */
    void (*pixels_to_input)(yolo_real *dst, const unsigned char *pixels, size_t n);
    /* host memory the backend reads directly (pin 1: page-locked and
       mapped on the GPU, so pixels_to_input reads it in place and upload
       copies from it at the bus's full speed), or no longer (pin 0, before
       it is freed) */
    void (*pin)(void *host, size_t bytes, int pin);
    /* data parallel (section 17), where the backend sums over processes
       itself (the CUDA one through NCCL; NULL elsewhere: the sum goes
       through MPI on the host): join the group of `world` processes as
       `rank`, bcast handing rank 0's bytes to every one (0, or -1 and err);
       x summed over the group, in place, the same sum in every process,
       started behind the work queued so far and run beside the work queued
       next (the GPU: on a stream of its own), until group_wait: every sum
       started is done before the work queued after it; --sync-bn's sums
       (yolo_bn_group), done before the work queued next; the group left,
       its resources given back (every process, at the end) */
    int (*group_join)(int rank, int world, void (*bcast)(void *bytes, size_t n), char *err);
    void (*group_sum)(yolo_real *x, size_t n);
    void (*group_wait)(void);
    void (*group_sum_f64)(double *x, size_t n);
    void (*group_leave)(void);
    /* CUDA graphs (NULL where the backend has none). A region of a pass (the layers of a forward, a
       training backward) makes the same requests at every step of a shape: the same allocations and
       the same launches on them. graph_begin(key) comes before the region's host code, graph_end()
       after it; graph_begin answers how the region runs (yolo_region_begin, section 9):
       YOLO_GRAPH_EAGER: as always, each op launched as it is asked for; YOLO_GRAPH_RECORD: its
       launches recorded into a graph kept under key (and the memory's state), which graph_end
       launches; YOLO_GRAPH_REPLAY: the graph kept under key does the work, launched by graph_end,
       and the host code runs for its allocations alone, each checked to land where the recording's
       did */
    int (*graph_begin)(uint64_t key);
    void (*graph_end)(void);
} yolo_backend;
enum { YOLO_GRAPH_EAGER, YOLO_GRAPH_RECORD, YOLO_GRAPH_REPLAY };
/* a step of the hash that makes a region's key: h and v mixed (the backend adds its memory's state) */
static inline uint64_t yolo_key_mix(uint64_t h, uint64_t v) {
    h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
    return h ^ h >> 29;
}
#endif /* YOLOV9_DECLARING */

/* ------------------------------------------------------------------------ */
/* 3. the blocks                                                            */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
/* Each block: a struct of its convs and tensors (shapes in comments), a
   forward and a backward, what its forward makes (yolo_<block>_shapes),
   the table of what training keeps of its intermediates
   (yolo_<block>_lifetimes), and an init that registers its tensors under
   the official names. Every block's function takes the model, m: where
   its ops run (m->be) and the precision of the pass under way. */

/* Parameter groups as the official optimizer builds them: conv weights
   (weight decay), BatchNorm weights (no decay), biases (no decay); plus the
   tensors of the state_dict that are not trained. */
typedef enum {
    YOLO_P_WEIGHT, YOLO_P_BN_WEIGHT, YOLO_P_BIAS,
    YOLO_P_RUNNING_MEAN, YOLO_P_RUNNING_VAR, YOLO_P_FIXED
} yolo_pkind;

typedef struct {
    char name[96];       /* official state_dict name, e.g. model.3.cv1.conv.weight */
    yolo_pkind kind;
    int frozen;          /* 1: --freeze: no gradient, the optimizer leaves it */
    int ndim, shape[4];
    size_t offset, numel;  /* into yolo_model.values / .grads */
} yolo_param;

/* the lifetime table that runs now (section 9, "lifetimes") */
typedef struct {
    int on, backward, busy;  /* a training pass's table runs; its backward; a row is running */
    int r0, r1;              /* its rows: m->life[r0 .. r1), the layer's */
    const yolo_tensor *at;   /* the op under way, named by its tensor */
} yolo_life_run;

typedef struct yolo_layer yolo_layer;         /* one layer of the graph (section 4) */
typedef struct yolo_conv yolo_conv;           /* the blocks' conv unit (below) */
typedef struct yolo_repconvn yolo_repconvn;   /* RepConvN (below) */

typedef struct yolo_model {
    int nc;
    char **names;            /* [nc] class names (owned), or NULL: written into every weights file */
    int nlayers;
    yolo_layer *layers;      /* [nlayers] */
    int detect;              /* index of the detect layer */
    /* every tensor of the state_dict lives in one array, in official order */
    int nparams;
    yolo_param *params;      /* [nparams] */
    size_t nvalues;
    yolo_real *values;       /* [nvalues] */
    yolo_real *grads;        /* [nvalues] d loss / d value (trained kinds only) */
    /* every activation tensor, so that gradients can be zeroed at once */
    int nacts, cap_acts;
    yolo_tensor **acts;
    /* per-channel batch statistics of every BatchNorm (scratch) */
    size_t nstats;
    yolo_real *stats;
    /* every conv unit and RepConvN, for folding into the inference form */
    int nconvs, nreps, cap_convs, cap_reps;
    yolo_conv **convs;
    yolo_repconvn **reps;
    yolo_real *folded;       /* backend memory of all fw, fb */
    /* what each block declares about its intermediates (section 3), run
       between its ops in training (section 9, "lifetimes") */
    struct yolo_life_row *life;
    int nlife, cap_life;
    yolo_life_run life_run;
    /* what the layer's forward under way makes and where (section 9, "shapes"): its blocks' shapes
       functions declare them before it runs */
    struct yolo_shape_row *shapes;
    int nshapes, cap_shapes;
    int fused;               /* 1 while the folded weights match the trained ones */
    yolo_precision staged;   /* the precision every conv's ws is staged for (YOLO_FP32: none, or out of date) */
    int stages_train;        /* its backend stages a training step's weights (stage_train_weights; set by
                                yolo_model_precision_flags, before the plan, and yolo_model_use_backend) */
    void *wtrain;            /* the training step's staged weights (every conv's wt, wtd), or NULL */
    yolo_tensor input;       /* [B, 3, H, W] the image batch, RGB in [0,1] */
    const yolo_real *input_host;  /* the caller's copy of it (yolo_set_input), uploaded again when dropped */
    const unsigned char *input_pixels;  /* or the caller's uint8 copy (yolo_set_input_pixels), normalised on upload */
    /* 1: training batches come as uint8 pixels (yolo_set_input_pixels: the loader's on the GPU), and a
       training step uploads them once, into input_bytes (backend memory, [B, 3, H, W] uint8), where both
       makes of the image read them (the forward's and the backward's); the plan places that copy, so
       set it before planning, as ckpt and precision. 0: each make reads the caller's pixels itself */
    int train_pixels;
    unsigned char *input_bytes;
    int input_last_reader;   /* the last layer that reads the image */
    /* where the allocations of the first training step and of every later
       one go (yolo_plan_run_bytes places them); which the next step takes */
    yolo_place *place[2];
    int nplace[2], place_next;
    double bn_momentum, bn_eps;  /* 0.03 and 1e-3, as the official */
    const yolo_bn_group *bn_group;   /* --sync-bn: the processes every BatchNorm's statistics run over (section 17), or NULL */
    /* told by yolo_backward after each layer's backward, the last layer first: layer's parameter gradients
       are final (section 17 starts summing them over the processes meanwhile); NULL: nobody listens */
    void (*grads_final)(void *ctx, struct yolo_model *m, int layer);
    void *grads_final_ctx;
    int ckpt;                /* 1: recompute checkpointing (yolo_backward recomputes each block's inside) */
    /* 1: every pass launches op by op; 0: the regions of a pass run as CUDA graphs where the backend
       has them (yolo_region_begin), counted in graph_records and graph_replays */
    int no_graphs;
    long graph_records, graph_replays;
    int grads_zeroed;        /* 1: gradients taken zeroed, every writer adds (the first-writer-assigns path off: tests) */
    yolo_precision precision;   /* of every conv's products, forward and backward (YOLO_FP32 unless set) */
    /* internal: the store of the activations the pass under way makes (yolo_tensor.store): a
       training pass or a folded inference pass (yolo_forward) in bf16 or half keeps them in that
       precision, as the official AMP and --half do, so that each conv reads its input as the
       tensor cores take it; float32 otherwise (an unfolded inference pass; yolo_forward_all,
       whose outputs are read as floats) */
    yolo_precision store;
    double flops;            /* multiply-adds x2 of the convolutions run so far */
    const yolo_backend *be;  /* where the tensors live and the ops run */
    int building;            /* internal: the next tensor to bind in the second build pass */
} yolo_model;
#endif /* YOLOV9_DECLARING */

#ifdef YOLOV9_IMPLEMENTING
/* a tensor's number of values */
static size_t yolo_numel(const yolo_tensor *t) { return (size_t)t->n * t->c * t->h * t->w; }

/* The primitive ops as the blocks run them: the backend's op (section 2) in the pass's precision, once the
   machinery (section 9) is told which op comes next by its tensor (the one a forward op writes, the one whose
   gradient a backward op hands on), so that a block is its maths alone. A backward op takes tensors. */
static void yolo_op_conv2d(yolo_model *m, const yolo_tensor *x, const yolo_real *w, const yolo_real *b, const void *ws,
                           int C2, int k, int s, int g, int act, const yolo_tensor *r, yolo_tensor *y);
static void yolo_op_bn_train(yolo_model *m, const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta,
                             yolo_real *mean, yolo_real *invstd, yolo_real *rmean, yolo_real *rvar, int act, yolo_tensor *u);
static void yolo_op_bn_apply(yolo_model *m, const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta,
                             const yolo_real *mean, const yolo_real *invstd, const yolo_real *var, int act, yolo_tensor *u);
static void yolo_op_silu_sum(yolo_model *m, const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y);
static void yolo_op_add(yolo_model *m, const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y);
static void yolo_op_avgpool2(yolo_model *m, const yolo_tensor *x, yolo_tensor *y);
static void yolo_op_maxpool(yolo_model *m, const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y);
static void yolo_op_resize(yolo_model *m, const yolo_tensor *x, int c0, int add, yolo_tensor *y);
static void yolo_op_concat(yolo_model *m, const yolo_tensor *src, int sc, yolo_tensor *dst, int dc, int C);
static void yolo_op_bn_backward(yolo_model *m, const yolo_tensor *u, yolo_tensor *z, const yolo_real *gamma,
                                const yolo_real *beta, const yolo_real *mean, const yolo_real *invstd, int act,
                                yolo_real *dgamma, yolo_real *dbeta);
static void yolo_op_conv2d_backward(yolo_model *m, yolo_tensor *x, const yolo_real *w, const void *wsd, const yolo_tensor *y,
                                    int C2, int k, int s, int g, yolo_real *dw, yolo_real *db);
static void yolo_op_silu_sum_backward(yolo_model *m, const yolo_tensor *y, yolo_tensor *a, yolo_tensor *b);
static void yolo_op_add_backward(yolo_model *m, const yolo_tensor *y, yolo_tensor *a);
static void yolo_op_avgpool2_backward(yolo_model *m, const yolo_tensor *y, yolo_tensor *x);
static void yolo_op_maxpool_backward(yolo_model *m, yolo_tensor *x, int k, int s, int pad, const yolo_tensor *y);
static void yolo_op_concat_backward(yolo_model *m, const yolo_tensor *y, int c0, yolo_tensor *x, int C);
static void yolo_op_split_backward(yolo_model *m, yolo_tensor *const *parts, int n, yolo_tensor *whole);
/* What else the model calls of the sections below it, declared here and defined where each belongs. */
/* the training step (section 7) */
static yolo_tensor *yolo_layer_input(yolo_model *m, const yolo_layer *L, int j);
static int yolo_step_keeps_z(const yolo_model *m);
static int yolo_output_remakeable(const yolo_model *m, const yolo_layer *L);
static void yolo_output_make(yolo_model *m, yolo_layer *L);
static void yolo_output_drop(yolo_model *m, yolo_layer *L);
/* utilities (section 8) */
static void *yolo_xmalloc(size_t bytes);
static void *yolo_xcalloc(size_t n, size_t size);
static void *yolo_grow(void *p, size_t item, long n, int *cap);
static double yolo_interp(double x, const double *xp, const double *fp, long n, double left, double right);
/* memory (section 9): tensors, gradients, lifetimes, the weights on the backend */
static void yolo_tensor_resize(const yolo_backend *be, yolo_tensor *t, int n, int c, int h, int w, int with_grad);
static void yolo_tensor_free(const yolo_backend *be, yolo_tensor *t);
static void yolo_tensor_drop(const yolo_backend *be, yolo_tensor *t);
static void yolo_tensor_take(const yolo_backend *be, yolo_tensor *t);
static void yolo_grad_need(yolo_model *m, yolo_tensor *t);
static void yolo_grad_done(yolo_model *m, yolo_tensor *t);
static void yolo_grad_zeroed(yolo_model *m, yolo_tensor *t);
static int yolo_grad_add(yolo_model *m, yolo_tensor *t);
static void yolo_concat_grads(yolo_tensor *cat, yolo_tensor *const *parts, int n);
static void yolo_split_grad(yolo_tensor *half, yolo_tensor *whole, int c0);
static void yolo_shape(yolo_model *m, const yolo_tensor *op, yolo_tensor *t, int n, int c, int h, int w, int wants_grad);
static void yolo_shape_slot(yolo_model *m, const yolo_tensor *op, yolo_tensor *t, yolo_tensor *buf, int c0, int c);
static void yolo_shapes_store(yolo_model *m, int from, yolo_precision store);
static void yolo_shapes_end(yolo_model *m, int from);
static yolo_life_run yolo_life_begin(yolo_model *m, const yolo_layer *L, int on, int backward);
static void yolo_life_end(yolo_model *m, yolo_life_run outer);
static void yolo_pixels_hold(yolo_model *m);
static void yolo_pixels_release(yolo_model *m);
static void yolo_model_unfold(yolo_model *m);
static void yolo_model_stage(yolo_model *m);
static void yolo_model_stage_train(yolo_model *m);
static void yolo_model_unstage_train(yolo_model *m);
YOLO_C_BEGIN
yolo_real *yolo_fetch(const yolo_model *m, const yolo_real *p, size_t n);
YOLO_C_END
/* the CPU backend (section 10) */
static float yolo_round_half(float f);
static yolo_real yolo_sigmoid(yolo_real x);
static size_t yolo_loss_work_bytes(int B, int A, int ngt);
/* building a model (section 11) */
static int yolo_binding(const yolo_model *m);
static yolo_real *yolo_param_new(yolo_model *m, const char *prefix, const char *suffix, yolo_pkind kind,
                                 int ndim, int d0, int d1, int d2, int d3, yolo_real **grad);
static void yolo_act_new(yolo_model *m, yolo_tensor *t);
static yolo_real *yolo_stats_new(yolo_model *m, int n);
static int yolo_make_divisible(double x, int d);
static int yolo_reads_image(const yolo_model *m, const yolo_layer *L, int j);
/* evaluation (section 14) */
YOLO_C_BEGIN
int  yolo_nms_labels(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres, int max_det, int agnostic,
                     const int *classes, int nclasses, int multi_label, yolo_det *out);
YOLO_C_END
#endif /* YOLOV9_IMPLEMENTING */

/* ---- Conv ---------------------------------------------------------------- */

#ifdef YOLOV9_DECLARING
/* Conv: the unit everything is made of, conv2d -> BatchNorm -> SiLU. The
   same struct also serves the two places where YOLOv9 uses a bare Conv2d
   with a bias (CBLinear and the last conv of each detect branch): then
   bn = act = 0 and bias = 1. Padding is always k/2 ("same"). */
struct yolo_conv {
    int c1, c2, k, s, g;     /* in/out channels, kernel, stride, groups */
    int bn, act, bias;       /* which of BatchNorm, SiLU, conv bias it has */
    yolo_real *w, *gw;       /* [c2, c1/g, k, k] weights and their gradient */
    yolo_real *b, *gb;       /* [c2] conv bias (bare Conv2d only) */
    yolo_real *gamma, *ggamma, *beta, *gbeta; /* [c2] BatchNorm affine */
    yolo_real *rmean, *rvar;  /* [c2] BatchNorm running statistics */
    yolo_real *mean, *invstd; /* [c2] batch statistics of the last training forward */
    yolo_real *fw, *fb;      /* [c2, c1/g, k, k], [c2]: the inference form, BN folded in (yolo_model_fuse) */
    void *ws;                /* fw staged for the products of yolo_model.staged (backend stage_weights), or NULL */
    const void *wt, *wtd;    /* a training step's w staged for its products (stage_train_weights), or NULL:
                                the forward's form [c2][k k][c1/g], backward-data's [phase][g c1/g][taps][c2/g] */
    yolo_tensor z;           /* [B, c2, Ho, Wo] conv output, kept for backward (no gradient of its own) */
    yolo_tensor y;           /* [B, c2, Ho, Wo] the block's output */
    yolo_tensor *x;          /* [B, c1, H, W] the input of the last forward (not owned) */
};
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* a folded conv's staged weights, where they are staged for this pass's products (yolo_forward); else NULL */
static const void *yolo_conv_staged(const yolo_model *m, const yolo_conv *c) {
    return m->precision != YOLO_FP32 && m->staged == m->precision ? c->ws : NULL;
}

/* y = SiLU(BN(conv(x))), or any prefix of that chain: z [B, c2, Ho, Wo] = conv(x), then y = SiLU(BN(z)).
   Folded, one op: y = SiLU(conv(x) + b), a shortcut r perhaps in the conv's epilogue: y = r + that. */
static void yolo_conv_run(yolo_model *m, yolo_conv *c, yolo_tensor *x, const yolo_tensor *r, int train) {
    int folded = !train && m->fused && c->fw;
    c->x = x;
    if (!c->bn || folded) {   /* the bias and the SiLU in the conv's own pass */
        yolo_op_conv2d(m, x, folded ? c->fw : c->w, folded ? c->fb : c->b, folded ? yolo_conv_staged(m, c) : c->wt,
                       c->c2, c->k, c->s, c->g, c->act, r, &c->y);
        return;
    }
    yolo_op_conv2d(m, x, c->w, NULL, c->wt, c->c2, c->k, c->s, c->g, 0, NULL, &c->z);
    if (train)   /* the SiLU comes with the BatchNorm */
        yolo_op_bn_train(m, &c->z, c->gamma, c->beta, c->mean, c->invstd, c->rmean, c->rvar, c->act, &c->y);
    else
        yolo_op_bn_apply(m, &c->z, c->gamma, c->beta, c->rmean, NULL, c->rvar, c->act, &c->y);
}
static void yolo_conv_forward(yolo_model *m, yolo_conv *c, yolo_tensor *x, int train) { yolo_conv_run(m, c, x, NULL, train); }

/* a folded inference pass: BatchNorm (and RepConvN's second branch) in the convs' weights, a
   RepNBottleneck's shortcut in its conv's epilogue; a block takes its concatenation first and its
   convs write their parts into it, and read them there (slots: the block's shapes say which) */
static int yolo_folded(const yolo_model *m, int train) { return !train && m->fused; }

/* a conv's output size along one axis: padding k/2, stride s */
static int yolo_conv_out(int in, int k, int s) { return (in + 2 * (k / 2) - k) / s + 1; }

/* Inside a block, y = SiLU(BN(z)) need not be kept: z is (the BatchNorm
   backward reads it), and y follows from it by one elementwise pass with
   the batch statistics the forward kept (mean, invstd [C]). This makes y
   again, into memory that is there: the maker
   that blocks name in their tables for a conv's output.

   So every block's training forward keeps, of its inside, only its convs'
   z: its table drops the y of each inner conv, and the sums, splits,
   concatenations and pools, as soon as the next step has read them, and
   makes each again just before the backward op that reads it (the conv
   whose input it is needs it for the weight gradient), dropping it right
   after: the memory of a few tensors at a time, for elementwise passes
   and copies, and the same numbers. */
static void yolo_conv_again(yolo_model *m, void *blk) {
    yolo_conv *c = (yolo_conv *)blk;
    yolo_op_bn_apply(m, &c->z, c->gamma, c->beta, c->mean, c->invstd, NULL, c->act, &c->y);
}

/* from y.grad: the weight gradients, and x.grad += dL/dx */
static void yolo_conv_backward(yolo_model *m, yolo_conv *c) {
    if (c->bn)   /* dL/dz, written over z (read by nothing after this) */
        yolo_op_bn_backward(m, &c->y, &c->z, c->gamma, c->beta, c->mean, c->invstd, c->act, c->ggamma, c->gbeta);
    yolo_op_conv2d_backward(m, c->x, c->w, c->wtd, c->bn ? &c->z : &c->y, c->c2, c->k, c->s, c->g, c->gw, c->gb);
}

/* --- what a block declares about its intermediates ---
   Each block's forward and backward are written as if every
   intermediate tensor existed from the op that makes it to the end of the
   backward. Training cannot afford that, so each block also declares, in
   a table of rows (yolo_elan_lifetimes and its like, each just after the
   block's backward; the Conv unit's and RepConvN's in their inits),
   what happens to its intermediates between its ops: after which op of
   the forward a tensor dies; before which op of the backward it is made
   again, and how; when it dies again; when its gradient is taken and when
   given back. An op is named by its tensor: the one it makes in the
   forward, the one whose gradient it hands on in the backward (a Conv
   unit with BatchNorm is two ops each way: z and y). Each op names itself
   (yolo_op_conv2d and the others above), and the machinery runs the rows
   between ops (section 9, "lifetimes"): the maths never sees them.
   Beside the table, each block's shapes function declares what its
   forward makes (yolo_shape_row): each tensor's shape [B, C, H, W], or in
   a folded pass the channels of the concatenation it is a slot of, and
   before which op its memory is taken. The graph runs it before the
   block's forward (section 9, "shapes"). */
typedef enum {
    YOLO_FWD_AFTER,    /* in a training forward, after the op */
    YOLO_BWD_BEFORE,   /* in the backward, before the op */
    YOLO_BWD_AFTER     /* in the backward, after it */
} yolo_life_when;
typedef enum {
    YOLO_DROP,         /* t's values go (its shape and gradient stay) */
    YOLO_MAKE,         /* t's values again: memory, then make(m, blk), the forward step that writes them */
    YOLO_NEED,         /* t's gradient is taken, zeroed: an op that adds into it follows (t NULL: none, or *in) */
    YOLO_DONE,         /* t's gradient is given back: the op that reads it is done */
    YOLO_RUN           /* make(m, blk) alone: the graph's step for a layer output (the head's inputs) */
} yolo_life_what;
struct yolo_life_row {
    yolo_life_when when;
    const yolo_tensor *op;                    /* the op, named by its tensor */
    yolo_life_what what;
    yolo_tensor *t;
    void (*make)(yolo_model *m, void *blk);   /* YOLO_MAKE: the maker and its block (NULL: memory only) */
    void *blk;
    yolo_tensor **in;                         /* YOLO_NEED, t NULL: the tensor *in is when it runs (a block's input) */
    int done;                                 /* ran in the pass under way */
};
typedef struct yolo_life_row yolo_life_row;
#define YOLO_LIFE_TABLE(m, rows) yolo_life_table(m, rows, (int)(sizeof rows / sizeof *rows))
static void yolo_life_table(yolo_model *m, const yolo_life_row *rows, int n);
struct yolo_shape_row {
    const yolo_tensor *op;   /* its memory is taken before this op (NULL: taken) */
    yolo_tensor *t;
    yolo_tensor *buf;        /* a slot: channels [c0, c0 + c) of buf; NULL: memory of its own, [n, c, h, w] */
    int n, c, h, w, c0;
    int wants_grad;          /* a training forward's output (1), an inference one's (0); -1: a conv's z, which has none */
    int store;               /* how its values are held (yolo_tensor.store); -1: as the pass holds its tensors */
};
typedef struct yolo_shape_row yolo_shape_row;

/* What the Conv unit's forward makes from an input [n, c1, h, w]: y [n, c2, Ho, Wo] and, unless its
   BatchNorm is folded, z, y's shape (for the backward); both before its first op (z's, or folded y's),
   the longer-lived of the two first (z where the step keeps it to the backward, else y), which places
   them tighter */
static void yolo_conv_shapes(yolo_model *m, yolo_conv *c, int n, int h, int w, int train) {
    int Ho = yolo_conv_out(h, c->k, c->s), Wo = yolo_conv_out(w, c->k, c->s);
    int unfolded = c->bn && !(!train && m->fused && c->fw), z_first = yolo_step_keeps_z(m);
    const yolo_tensor *op = unfolded ? &c->z : &c->y;
    if (unfolded && z_first) yolo_shape(m, op, &c->z, n, c->c2, Ho, Wo, -1);
    yolo_shape(m, op, &c->y, n, c->c2, Ho, Wo, train);
    if (unfolded && !z_first) yolo_shape(m, op, &c->z, n, c->c2, Ho, Wo, -1);
}

static void yolo_conv_init(yolo_model *m, yolo_conv *c, const char *prefix, int c1, int c2, int k, int s,
                           int g, int bn, int act) {
    char p[96];
    memset(c, 0, sizeof *c);
    c->c1 = c1; c->c2 = c2; c->k = k; c->s = s; c->g = g; c->bn = bn; c->act = act; c->bias = !bn;
    if (bn) {
        snprintf(p, sizeof p, "%s.conv", prefix);
        c->w = yolo_param_new(m, p, "weight", YOLO_P_WEIGHT, 4, c2, c1 / g, k, k, &c->gw);
        snprintf(p, sizeof p, "%s.bn", prefix);
        c->gamma = yolo_param_new(m, p, "weight", YOLO_P_BN_WEIGHT, 1, c2, 0, 0, 0, &c->ggamma);
        c->beta = yolo_param_new(m, p, "bias", YOLO_P_BIAS, 1, c2, 0, 0, 0, &c->gbeta);
        c->rmean = yolo_param_new(m, p, "running_mean", YOLO_P_RUNNING_MEAN, 1, c2, 0, 0, 0, NULL);
        c->rvar = yolo_param_new(m, p, "running_var", YOLO_P_RUNNING_VAR, 1, c2, 0, 0, 0, NULL);
        c->mean = yolo_stats_new(m, c2);
        c->invstd = yolo_stats_new(m, c2);
    } else {   /* a bare nn.Conv2d with bias */
        c->w = yolo_param_new(m, prefix, "weight", YOLO_P_WEIGHT, 4, c2, c1 / g, k, k, &c->gw);
        c->b = yolo_param_new(m, prefix, "bias", YOLO_P_BIAS, 1, c2, 0, 0, 0, &c->gb);
    }
    yolo_act_new(m, &c->z);
    yolo_act_new(m, &c->y);
    if (yolo_binding(m)) {
        m->convs = (yolo_conv **)yolo_grow(m->convs, sizeof *m->convs, m->nconvs + 1, &m->cap_convs);
        m->convs[m->nconvs++] = c;
    }
    /* y's gradient goes once BatchNorm is differentiated, which writes
       dL/dz over z; the conv's backward reads that, adds into x's
       gradient, and z goes (the next forward makes it again) */
    yolo_life_row unit[] = {
        { YOLO_BWD_AFTER, &c->y, YOLO_DONE, &c->y },
        { YOLO_BWD_BEFORE, &c->z, YOLO_NEED, NULL, NULL, NULL, &c->x },
        { YOLO_BWD_AFTER, &c->z, YOLO_DROP, &c->z },
    }, bare[] = {   /* without BatchNorm, one op */
        { YOLO_BWD_BEFORE, &c->y, YOLO_NEED, NULL, NULL, NULL, &c->x },
        { YOLO_BWD_AFTER, &c->y, YOLO_DONE, &c->y },
    };
    if (bn) YOLO_LIFE_TABLE(m, unit);
    else YOLO_LIFE_TABLE(m, bare);
}

#endif /* YOLOV9_IMPLEMENTING */

/* ---- RepConvN ------------------------------------------------------------- */
/* A 3x3 and a 1x1 conv, each with its own BN, summed before the SiLU. At
   inference the 1x1 kernel is padded to 3x3 and both BNs fold in, giving
   one plain 3x3 conv: training capacity of two branches, cost of one. */

#ifdef YOLOV9_DECLARING
/* RepConvN: SiLU(BN(conv3x3(x)) + BN(conv1x1(x))). Two branches while
   training, one 3x3 conv after folding for inference. */
struct yolo_repconvn {
    yolo_conv conv1, conv2;  /* 3x3 and 1x1 branches, no activation */
    yolo_tensor y;           /* [B, c2, H, W] */
};
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* y = SiLU(branch 1 + branch 2) */
static void yolo_repconvn_sum(yolo_model *m, void *blk) {
    yolo_repconvn *r = (yolo_repconvn *)blk;
    yolo_op_silu_sum(m, &r->conv1.y, &r->conv2.y, &r->y);
}

/* x [B, c1, H, W] -> y [B, c2, H, W] */
static void yolo_repconvn_forward(yolo_model *m, yolo_repconvn *r, yolo_tensor *x, int train) {
    if (yolo_folded(m, train)) {   /* conv1 holds both branches in one 3x3 kernel: it and the SiLU write y */
        yolo_op_conv2d(m, x, r->conv1.fw, r->conv1.fb, yolo_conv_staged(m, &r->conv1), r->conv1.c2, 3, 1, 1, 1, NULL, &r->y);
        return;
    }
    yolo_conv_forward(m, &r->conv1, x, train);   /* conv1.y = BN(conv3x3(x)) */
    yolo_conv_forward(m, &r->conv2, x, train);   /* conv2.y = BN(conv1x1(x)) */
    yolo_repconvn_sum(m, r);
}

static void yolo_repconvn_backward(yolo_model *m, yolo_repconvn *r) {
    yolo_op_silu_sum_backward(m, &r->y, &r->conv1.y, &r->conv2.y);
    yolo_conv_backward(m, &r->conv1);
    yolo_conv_backward(m, &r->conv2);
}

/* what its forward makes from x [n, c1, h, w]: the branches' and y [n, c2, h, w] (folded: y alone) */
static void yolo_repconvn_shapes(yolo_model *m, yolo_repconvn *r, int n, int h, int w, int train) {
    if (!yolo_folded(m, train)) {
        yolo_conv_shapes(m, &r->conv1, n, h, w, train);
        yolo_conv_shapes(m, &r->conv2, n, h, w, train);
    }
    yolo_shape(m, &r->y, &r->y, n, r->conv1.c2, h, w, train);
}

static void yolo_repconvn_init(yolo_model *m, yolo_repconvn *r, const char *prefix, int c1, int c2) {
    char p[96];
    snprintf(p, sizeof p, "%s.conv1", prefix);
    yolo_conv_init(m, &r->conv1, p, c1, c2, 3, 1, 1, 1, 0);
    snprintf(p, sizeof p, "%s.conv2", prefix);
    yolo_conv_init(m, &r->conv2, p, c1, c2, 1, 1, 1, 1, 0);
    yolo_act_new(m, &r->y);
    if (yolo_binding(m)) {
        m->reps = (yolo_repconvn **)yolo_grow(m->reps, sizeof *m->reps, m->nreps + 1, &m->cap_reps);
        m->reps[m->nreps++] = r;
    }
    /* the SiLU's backward takes both branches' gradients; then their values go */
    yolo_life_row rows[] = {
        { YOLO_BWD_BEFORE, &r->y, YOLO_NEED, &r->conv1.y },
        { YOLO_BWD_BEFORE, &r->y, YOLO_NEED, &r->conv2.y },
        { YOLO_BWD_AFTER, &r->y, YOLO_DONE, &r->y },
        { YOLO_BWD_AFTER, &r->y, YOLO_DROP, &r->conv1.y },
        { YOLO_BWD_AFTER, &r->y, YOLO_DROP, &r->conv2.y },
    };
    YOLO_LIFE_TABLE(m, rows);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ---- RepNBottleneck --------------------------------------------------------- */

#ifdef YOLOV9_DECLARING
/* RepNBottleneck: x + Conv3x3(RepConvN(x)) (the add only when c1 == c2). */
typedef struct {
    yolo_repconvn cv1;
    yolo_conv cv2;
    int add;
    yolo_tensor y;           /* [B, c2, H, W] */
    yolo_tensor *x;          /* [B, c1, H, W] the input of the last forward (not owned) */
} yolo_repnbottleneck;
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* y = x + cv2.y (the shortcut), or cv2.y */
static void yolo_bottleneck_sum(yolo_model *m, void *blk) {
    yolo_repnbottleneck *b = (yolo_repnbottleneck *)blk;
    if (b->add) yolo_op_add(m, &b->cv2.y, b->x, &b->y);
    else yolo_op_concat(m, &b->cv2.y, 0, &b->y, 0, b->y.c);
}

/* x [B, c1, H, W] -> y [B, c2, H, W] */
static void yolo_bottleneck_forward(yolo_model *m, yolo_repnbottleneck *b, yolo_tensor *x, int train) {
    b->x = x;
    yolo_repconvn_forward(m, &b->cv1, x, train);
    if (yolo_folded(m, train)) {   /* cv2 writes y (cv2.y is y), the shortcut in its epilogue */
        yolo_conv_run(m, &b->cv2, &b->cv1.y, b->add ? x : NULL, train);
        return;
    }
    yolo_conv_forward(m, &b->cv2, &b->cv1.y, train);
    yolo_bottleneck_sum(m, b);
}

static void yolo_bottleneck_backward(yolo_model *m, yolo_repnbottleneck *b) {
    yolo_op_add_backward(m, &b->y, &b->cv2.y);
    if (b->add) yolo_op_add_backward(m, &b->y, b->x);
    yolo_conv_backward(m, &b->cv2);
    yolo_repconvn_backward(m, &b->cv1);
}

/* what training keeps of a RepNBottleneck */
static void yolo_bottleneck_lifetimes(yolo_model *m, yolo_repnbottleneck *b) {
    yolo_life_row rows[] = {
        /* training keeps y and the convs' z: once the sum is made, the
           RepConvN's branches and output and cv2's output go */
        { YOLO_FWD_AFTER, &b->y, YOLO_DROP, &b->cv1.conv1.y },
        { YOLO_FWD_AFTER, &b->y, YOLO_DROP, &b->cv1.conv2.y },
        { YOLO_FWD_AFTER, &b->y, YOLO_DROP, &b->cv1.y },
        { YOLO_FWD_AFTER, &b->y, YOLO_DROP, &b->cv2.y },
        /* the sum's backward reads no values (its readers' backwards are
           done: y goes) and hands its gradient to cv2's output and x */
        { YOLO_BWD_BEFORE, &b->y, YOLO_DROP, &b->y },
        { YOLO_BWD_BEFORE, &b->y, YOLO_NEED, &b->cv2.y },
        { YOLO_BWD_BEFORE, &b->y, YOLO_NEED, NULL, NULL, NULL, b->add ? &b->x : NULL },
        { YOLO_BWD_AFTER, &b->y, YOLO_DONE, &b->y },
        /* cv2's weight gradient reads its input: the RepConvN's output,
           made again with both branches (the SiLU's backward reads them) */
        { YOLO_BWD_BEFORE, &b->cv2.y, YOLO_MAKE, &b->cv1.conv1.y, yolo_conv_again, &b->cv1.conv1 },
        { YOLO_BWD_BEFORE, &b->cv2.y, YOLO_MAKE, &b->cv1.conv2.y, yolo_conv_again, &b->cv1.conv2 },
        { YOLO_BWD_BEFORE, &b->cv2.y, YOLO_MAKE, &b->cv1.y, yolo_repconvn_sum, &b->cv1 },
        { YOLO_BWD_AFTER, &b->cv2.z, YOLO_DROP, &b->cv1.y },
    };
    YOLO_LIFE_TABLE(m, rows);
}

/* what its forward makes from x [n, c1, h, w]: the RepConvN's and cv2's tensors, y [n, c2, h, w];
   folded, cv2 writes y: y's memory (perhaps a slot of its reader's concatenation) before cv2's op,
   cv2.y a slot of all of it */
static void yolo_bottleneck_shapes(yolo_model *m, yolo_repnbottleneck *b, int n, int h, int w, int train) {
    yolo_repconvn_shapes(m, &b->cv1, n, h, w, train);
    if (yolo_folded(m, train)) {
        yolo_shape(m, &b->cv2.y, &b->y, n, b->cv2.c2, h, w, 0);
        yolo_shape_slot(m, &b->cv2.y, &b->cv2.y, &b->y, 0, b->cv2.c2);
        yolo_conv_shapes(m, &b->cv2, n, h, w, train);
        return;
    }
    yolo_conv_shapes(m, &b->cv2, n, h, w, train);
    yolo_shape(m, &b->y, &b->y, n, b->cv2.c2, h, w, train);
}

static void yolo_bottleneck_init(yolo_model *m, yolo_repnbottleneck *b, const char *prefix, int c1, int c2) {
    char p[96];
    snprintf(p, sizeof p, "%s.cv1", prefix);
    yolo_repconvn_init(m, &b->cv1, p, c1, c2);        /* hidden width c2 (expansion 1.0) */
    snprintf(p, sizeof p, "%s.cv2", prefix);
    yolo_conv_init(m, &b->cv2, p, c2, c2, 3, 1, 1, 1, 1);
    b->add = (c1 == c2);
    yolo_act_new(m, &b->y);
    yolo_bottleneck_lifetimes(m, b);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ---- RepNCSP ----------------------------------------------------------------- */
/* Cross Stage Partial: half the channels go through the bottlenecks, the
   other half bypass them, and a 1x1 conv merges both. */

#ifdef YOLOV9_DECLARING
/* RepNCSP: cv3(cat(m(cv1(x)), cv2(x))), m = n RepNBottlenecks. */
typedef struct {
    yolo_conv cv1, cv2, cv3;
    int n;
    yolo_repnbottleneck *m;  /* [n] */
    yolo_tensor cat;         /* [B, 2*c_, H, W] */
} yolo_repncsp;
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
static yolo_tensor *yolo_repncsp_out(yolo_repncsp *r) { return &r->cv3.y; }

/* the input of bottleneck i (cv1's output for the first) */
static yolo_tensor *yolo_repncsp_link(yolo_repncsp *r, int i) { return i ? &r->m[i - 1].y : &r->cv1.y; }

/* cat [B, 2 c_, H, W] = (the last bottleneck's output, cv2.y); a half that is a slot of cat (a folded
   pass) was written there */
static void yolo_repncsp_concat(yolo_model *m, void *blk) {
    yolo_repncsp *r = (yolo_repncsp *)blk;
    const yolo_tensor *h = yolo_repncsp_link(r, r->n);
    int c_ = r->cv1.c2;
    if (!h->ctot) yolo_op_concat(m, h, 0, &r->cat, 0, c_);
    if (!r->cv2.y.ctot) yolo_op_concat(m, &r->cv2.y, 0, &r->cat, c_, c_);
}

/* x [B, c1, H, W] -> cv3.y [B, c2, H, W], through c_ = c2/2 channels a half */
static void yolo_repncsp_forward(yolo_model *m, yolo_repncsp *r, yolo_tensor *x, int train) {
    yolo_conv_forward(m, &r->cv1, x, train);   /* [B, c_, H, W] */
    for (int i = 0; i < r->n; i++) yolo_bottleneck_forward(m, &r->m[i], yolo_repncsp_link(r, i), train);
    yolo_conv_forward(m, &r->cv2, x, train);   /* [B, c_, H, W]: the half that bypasses the bottlenecks */
    yolo_repncsp_concat(m, r);                 /* [B, 2 c_, H, W] */
    yolo_conv_forward(m, &r->cv3, &r->cat, train);
}

static void yolo_repncsp_backward(yolo_model *m, yolo_repncsp *r) {
    yolo_conv_backward(m, &r->cv3);   /* dL/dcat into its halves' gradients */
    for (int i = r->n - 1; i >= 0; i--) yolo_bottleneck_backward(m, &r->m[i]);
    yolo_conv_backward(m, &r->cv2);
    yolo_conv_backward(m, &r->cv1);
}

/* what training keeps of a RepNCSP */
static void yolo_repncsp_lifetimes(yolo_model *m, yolo_repncsp *r) {
    int n = r->n;
    if (!yolo_binding(m)) return;
    /* training keeps only the output cv3.y and the convs' z: each input
       of a bottleneck goes once the bottleneck has run, the
       concatenation's inputs once it is made, it once cv3 has read it */
    for (int i = 0; i < n; i++) {
        yolo_life_row link[] = { { YOLO_FWD_AFTER, &r->m[i].y, YOLO_DROP, yolo_repncsp_link(r, i) } };
        YOLO_LIFE_TABLE(m, link);
    }
    yolo_tensor *h = yolo_repncsp_link(r, n);
    yolo_life_row fwd[] = {
        { YOLO_FWD_AFTER, &r->cat, YOLO_DROP, h },
        { YOLO_FWD_AFTER, &r->cat, YOLO_DROP, &r->cv2.y },
        { YOLO_FWD_AFTER, &r->cv3.y, YOLO_DROP, &r->cat },
        /* before cv3's backward (which reads cat), the chain cv1 ->
           bottlenecks is made again (each bottleneck's sum reads the one
           before; its cv2's output only for the sum), then cat */
        { YOLO_BWD_BEFORE, &r->cv3.y, YOLO_MAKE, &r->cv1.y, yolo_conv_again, &r->cv1 },
    };
    YOLO_LIFE_TABLE(m, fwd);
    for (int i = 0; i < n; i++) {
        yolo_repnbottleneck *b = &r->m[i];
        yolo_life_row chain[] = {
            { YOLO_BWD_BEFORE, &r->cv3.y, YOLO_MAKE, &b->cv2.y, yolo_conv_again, &b->cv2 },
            { YOLO_BWD_BEFORE, &r->cv3.y, YOLO_MAKE, &b->y, yolo_bottleneck_sum, b },
            { YOLO_BWD_BEFORE, &r->cv3.y, YOLO_DROP, &b->cv2.y },
        };
        YOLO_LIFE_TABLE(m, chain);
    }
    yolo_life_row bwd[] = {
        { YOLO_BWD_BEFORE, &r->cv3.y, YOLO_MAKE, &r->cv2.y, yolo_conv_again, &r->cv2 },
        { YOLO_BWD_BEFORE, &r->cv3.y, YOLO_MAKE, &r->cat, yolo_repncsp_concat, r },
        { YOLO_BWD_AFTER, &r->cv3.z, YOLO_DROP, &r->cat },
        /* cv2's and cv1's outputs, made again above, go after their own backward */
        { YOLO_BWD_AFTER, &r->cv2.z, YOLO_DROP, &r->cv2.y },
        { YOLO_BWD_AFTER, &r->cv1.z, YOLO_DROP, &r->cv1.y },
    };
    YOLO_LIFE_TABLE(m, bwd);
}

/* what its forward makes from x [n, c1, h, w]: every conv's and bottleneck's tensors, cat
   [n, 2 c_, h, w] (its gradient its halves'); folded, cat first (before cv1's op), the last
   bottleneck's output and cv2.y slots of it */
static void yolo_repncsp_shapes(yolo_model *m, yolo_repncsp *r, int n, int h, int w, int train) {
    int c_ = r->cv1.c2, folded = yolo_folded(m, train);
    yolo_tensor *parts[] = { yolo_repncsp_link(r, r->n), &r->cv2.y };   /* cat's halves */
    yolo_concat_grads(&r->cat, parts, 2);
    if (folded) {
        yolo_shape(m, &r->cv1.y, &r->cat, n, 2 * c_, h, w, 0);
        yolo_shape_slot(m, &r->cv1.y, parts[0], &r->cat, 0, c_);
        yolo_shape_slot(m, &r->cv1.y, parts[1], &r->cat, c_, c_);
    }
    yolo_conv_shapes(m, &r->cv1, n, h, w, train);
    for (int i = 0; i < r->n; i++) yolo_bottleneck_shapes(m, &r->m[i], n, h, w, train);
    yolo_conv_shapes(m, &r->cv2, n, h, w, train);
    if (!folded) yolo_shape(m, &r->cat, &r->cat, n, 2 * c_, h, w, train);
    yolo_conv_shapes(m, &r->cv3, n, h, w, train);
}

static void yolo_repncsp_init(yolo_model *m, yolo_repncsp *r, const char *prefix, int c1, int c2, int n) {
    char p[96];
    int c_ = c2 / 2;
    snprintf(p, sizeof p, "%s.cv1", prefix); yolo_conv_init(m, &r->cv1, p, c1, c_, 1, 1, 1, 1, 1);
    snprintf(p, sizeof p, "%s.cv2", prefix); yolo_conv_init(m, &r->cv2, p, c1, c_, 1, 1, 1, 1, 1);
    snprintf(p, sizeof p, "%s.cv3", prefix); yolo_conv_init(m, &r->cv3, p, 2 * c_, c2, 1, 1, 1, 1, 1);
    r->n = n;
    if (yolo_binding(m)) r->m = (yolo_repnbottleneck *)yolo_xcalloc(n, sizeof(yolo_repnbottleneck));
    for (int i = 0; i < n; i++) {
        yolo_repnbottleneck tmp, *b = r->m ? &r->m[i] : &tmp;
        snprintf(p, sizeof p, "%s.m.%d", prefix, i);
        yolo_bottleneck_init(m, b, p, c_, c_);
    }
    yolo_act_new(m, &r->cat);
    yolo_repncsp_lifetimes(m, r);
}

static void yolo_repncsp_free(yolo_repncsp *r) { free(r->m); r->m = NULL; }
#endif /* YOLOV9_IMPLEMENTING */

/* ---- RepNCSPELAN4 and ELAN1 ------------------------------------------------- */
/* GELAN, the paper's generalised ELAN: a 1x1 conv splits the features in
   two; the second half runs through two stacked computational blocks
   (RepNCSP + 3x3 Conv, or a single 3x3 Conv in ELAN1); every intermediate
   result is kept and concatenated, so gradients reach each depth by a
   short path. */

#ifdef YOLOV9_DECLARING
/* RepNCSPELAN4 (GELAN's block): cv1 then split in halves a|b; b feeds
   RepNCSP+Conv (branch 2) which feeds RepNCSP+Conv (branch 3);
   cv4(cat(a, b, branch2, branch3)). ELAN1 is the same with one plain
   3x3 Conv per branch (csp2/csp3 unused). */
typedef struct {
    int elan1;               /* 1: ELAN1, 0: RepNCSPELAN4 */
    int c3, c4;              /* cv1 width, branch width */
    yolo_conv cv1;
    yolo_repncsp csp2, csp3;
    yolo_conv cv2, cv3, cv4;
    yolo_tensor half_b;      /* [B, c3/2, H, W] the second half of cv1 */
    yolo_tensor cat;         /* [B, c3 + 2*c4, H, W] */
} yolo_elan;
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* half_b [B, c3/2, H, W] = cv1.y[c3/2:] and cat [B, c3 + 2 c4, H, W] = (cv1.y, cv2.y, cv3.y): copies,
   which the backward can also make again from the convs' outputs; a part that is a slot of cat (a
   folded pass) was written there */
static void yolo_elan_split(yolo_model *m, void *blk) {
    yolo_elan *e = (yolo_elan *)blk;
    int h = e->c3 / 2;
    if (!e->half_b.ctot) yolo_op_concat(m, &e->cv1.y, h, &e->half_b, 0, h);
}
static void yolo_elan_concat(yolo_model *m, void *blk) {
    yolo_elan *e = (yolo_elan *)blk;
    int c3 = e->c3, c4 = e->c4;
    if (!e->cv1.y.ctot) yolo_op_concat(m, &e->cv1.y, 0, &e->cat, 0, c3);
    if (!e->cv2.y.ctot) yolo_op_concat(m, &e->cv2.y, 0, &e->cat, c3, c4);
    if (!e->cv3.y.ctot) yolo_op_concat(m, &e->cv3.y, 0, &e->cat, c3 + c4, c4);
}

/* x [B, c1, H, W] -> cv4.y [B, c2, H, W] */
static void yolo_elan_forward(yolo_model *m, yolo_elan *e, yolo_tensor *x, int train) {
    yolo_conv_forward(m, &e->cv1, x, train);   /* [B, c3, H, W] */
    yolo_elan_split(m, e);                     /* [B, c3/2, H, W] */
    if (e->elan1) {
        yolo_conv_forward(m, &e->cv2, &e->half_b, train);   /* [B, c4, H, W] */
        yolo_conv_forward(m, &e->cv3, &e->cv2.y, train);    /* [B, c4, H, W] */
    } else {   /* each branch a RepNCSP [B, c4, H, W] and a 3x3 Conv [B, c4, H, W] */
        yolo_repncsp_forward(m, &e->csp2, &e->half_b, train);
        yolo_conv_forward(m, &e->cv2, yolo_repncsp_out(&e->csp2), train);
        yolo_repncsp_forward(m, &e->csp3, &e->cv2.y, train);
        yolo_conv_forward(m, &e->cv3, yolo_repncsp_out(&e->csp3), train);
    }
    yolo_elan_concat(m, e);                    /* [B, c3 + 2 c4, H, W] */
    yolo_conv_forward(m, &e->cv4, &e->cat, train);
}

/* backwards from cv4, which writes dL/dcat into its three parts'
   gradients; each branch's conv and computational block, the convs that
   read half_b adding into cv1's gradient's second half */
static void yolo_elan_backward(yolo_model *m, yolo_elan *e) {
    yolo_conv_backward(m, &e->cv4);
    yolo_conv_backward(m, &e->cv3);
    if (!e->elan1) yolo_repncsp_backward(m, &e->csp3);
    yolo_conv_backward(m, &e->cv2);
    if (!e->elan1) yolo_repncsp_backward(m, &e->csp2);
    yolo_conv_backward(m, &e->cv1);
}

/* what training keeps of RepNCSPELAN4 and ELAN1 */
static void yolo_elan_lifetimes(yolo_model *m, yolo_elan *e) {
    int elan1 = e->elan1;
    /* training keeps the output cv4.y and the convs' z: each copy goes once its last reader has run */
    yolo_life_row branches[] = {   /* each branch's input, once read */
        { YOLO_FWD_AFTER, elan1 ? &e->cv2.y : yolo_repncsp_out(&e->csp2), YOLO_DROP, &e->half_b },
        { YOLO_FWD_AFTER, &e->cv2.y, YOLO_DROP, yolo_repncsp_out(&e->csp2) },
        { YOLO_FWD_AFTER, &e->cv3.y, YOLO_DROP, yolo_repncsp_out(&e->csp3) },
    };
    yolo_life_table(m, branches, elan1 ? 1 : 3);
    yolo_life_row rows[] = {
        { YOLO_FWD_AFTER, &e->cat, YOLO_DROP, &e->cv1.y },
        { YOLO_FWD_AFTER, &e->cat, YOLO_DROP, &e->cv2.y },
        { YOLO_FWD_AFTER, &e->cat, YOLO_DROP, &e->cv3.y },
        { YOLO_FWD_AFTER, &e->cv4.y, YOLO_DROP, &e->cat },
        /* before cv4's backward: cat and half_b again, from the three
           convs' outputs; of those only cv2.y stays (the next block's input) */
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_MAKE, &e->cv1.y, yolo_conv_again, &e->cv1 },
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_MAKE, &e->cv2.y, yolo_conv_again, &e->cv2 },
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_MAKE, &e->cv3.y, yolo_conv_again, &e->cv3 },
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_MAKE, &e->cat, yolo_elan_concat, e },
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_MAKE, &e->half_b, yolo_elan_split, e },
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_DROP, &e->cv1.y },
        { YOLO_BWD_BEFORE, &e->cv4.y, YOLO_DROP, &e->cv3.y },
        { YOLO_BWD_AFTER, &e->cv4.z, YOLO_DROP, &e->cat },
        /* cv2.y (the input of csp3, or of ELAN1's cv3) goes before cv2's
           backward; half_b once its readers' backwards are done */
        { YOLO_BWD_BEFORE, &e->cv2.y, YOLO_DROP, &e->cv2.y },
        { YOLO_BWD_BEFORE, &e->cv1.y, YOLO_DROP, &e->half_b },
    };
    YOLO_LIFE_TABLE(m, rows);
    if (elan1) return;
    yolo_life_row csp[] = {   /* the 3x3 convs' inputs, the RepNCSPs' outputs, for their backward */
        { YOLO_BWD_BEFORE, &e->cv3.y, YOLO_MAKE, yolo_repncsp_out(&e->csp3), yolo_conv_again, &e->csp3.cv3 },
        { YOLO_BWD_AFTER, &e->cv3.z, YOLO_DROP, yolo_repncsp_out(&e->csp3) },
        { YOLO_BWD_BEFORE, &e->cv2.y, YOLO_MAKE, yolo_repncsp_out(&e->csp2), yolo_conv_again, &e->csp2.cv3 },
        { YOLO_BWD_AFTER, &e->cv2.z, YOLO_DROP, yolo_repncsp_out(&e->csp2) },
    };
    YOLO_LIFE_TABLE(m, csp);
}

/* what its forward makes from x [n, c1, h, w]: every conv's and RepNCSP's tensors, half_b (its
   gradient cv1's second half's) and cat (its gradient its parts'); folded, cat first (before cv1's
   op), cv1.y, cv2.y and cv3.y slots of it and half_b cv1.y's second half there */
static void yolo_elan_shapes(yolo_model *m, yolo_elan *e, const yolo_tensor *x, int train) {
    int c3 = e->c3, c4 = e->c4, n = x->n, h = x->h, w = x->w, folded = yolo_folded(m, train);
    yolo_tensor *parts[] = { &e->cv1.y, &e->cv2.y, &e->cv3.y };   /* cat's, [B, c3 | c4 | c4, H, W] */
    yolo_concat_grads(&e->cat, parts, 3);
    yolo_split_grad(&e->half_b, &e->cv1.y, c3 / 2);
    if (folded) {
        yolo_shape(m, &e->cv1.y, &e->cat, n, c3 + 2 * c4, h, w, 0);
        yolo_shape_slot(m, &e->cv1.y, &e->cv1.y, &e->cat, 0, c3);
        yolo_shape_slot(m, &e->cv1.y, &e->half_b, &e->cat, c3 / 2, c3 / 2);
        yolo_shape_slot(m, &e->cv1.y, &e->cv2.y, &e->cat, c3, c4);
        yolo_shape_slot(m, &e->cv1.y, &e->cv3.y, &e->cat, c3 + c4, c4);
    }
    yolo_conv_shapes(m, &e->cv1, n, h, w, train);
    if (!folded) yolo_shape(m, &e->half_b, &e->half_b, n, c3 / 2, h, w, train);
    if (!e->elan1) yolo_repncsp_shapes(m, &e->csp2, n, h, w, train);
    yolo_conv_shapes(m, &e->cv2, n, h, w, train);
    if (!e->elan1) yolo_repncsp_shapes(m, &e->csp3, n, h, w, train);
    yolo_conv_shapes(m, &e->cv3, n, h, w, train);
    if (!folded) yolo_shape(m, &e->cat, &e->cat, n, c3 + 2 * c4, h, w, train);
    yolo_conv_shapes(m, &e->cv4, n, h, w, train);
}

static void yolo_elan_init(yolo_model *m, yolo_elan *e, const char *prefix, int elan1,
                           int c1, int c2, int c3, int c4, int n) {
    char p[96];
    memset(e, 0, sizeof *e);
    e->elan1 = elan1; e->c3 = c3; e->c4 = c4;
    snprintf(p, sizeof p, "%s.cv1", prefix); yolo_conv_init(m, &e->cv1, p, c1, c3, 1, 1, 1, 1, 1);
    if (elan1) {
        snprintf(p, sizeof p, "%s.cv2", prefix); yolo_conv_init(m, &e->cv2, p, c3 / 2, c4, 3, 1, 1, 1, 1);
        snprintf(p, sizeof p, "%s.cv3", prefix); yolo_conv_init(m, &e->cv3, p, c4, c4, 3, 1, 1, 1, 1);
    } else {
        snprintf(p, sizeof p, "%s.cv2.0", prefix); yolo_repncsp_init(m, &e->csp2, p, c3 / 2, c4, n);
        snprintf(p, sizeof p, "%s.cv2.1", prefix); yolo_conv_init(m, &e->cv2, p, c4, c4, 3, 1, 1, 1, 1);
        snprintf(p, sizeof p, "%s.cv3.0", prefix); yolo_repncsp_init(m, &e->csp3, p, c4, c4, n);
        snprintf(p, sizeof p, "%s.cv3.1", prefix); yolo_conv_init(m, &e->cv3, p, c4, c4, 3, 1, 1, 1, 1);
    }
    snprintf(p, sizeof p, "%s.cv4", prefix); yolo_conv_init(m, &e->cv4, p, c3 + 2 * c4, c2, 1, 1, 1, 1, 1);
    yolo_act_new(m, &e->half_b);
    yolo_act_new(m, &e->cat);
    yolo_elan_lifetimes(m, e);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ---- AConv and ADown ---------------------------------------------------------- */
/* Downsampling by 2. The 2x2 stride-1 average pool first smooths the map;
   ADown then halves the channels into a learned path (3x3 s2 conv) and a
   max-pool path (3x3 s2 max, 1x1 conv): cheaper than one 3x3 s2 conv. */

#ifdef YOLOV9_DECLARING
/* AConv: avgpool 2x2 s1, then Conv 3x3 s2. ADown: the same avgpool, then
   split channels: half 1 -> Conv 3x3 s2; half 2 -> maxpool 3x3 s2 p1 ->
   Conv 1x1; concat. Both halve the resolution. */
typedef struct {
    int adown;
    yolo_tensor pool;        /* [B, c1, H-1, W-1] */
    yolo_tensor half1, half2, maxp; /* ADown only */
    yolo_conv cv1, cv2;      /* cv2: ADown only */
    yolo_tensor y;           /* ADown: [B, c2, H/2, W/2] */
    yolo_tensor *x;          /* [B, c1, H, W] the input of the last forward (not owned) */
} yolo_down;
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* what the convs read: the average pool of x and, for ADown, its two
   halves and the max pool of the second */
static void yolo_down_inputs(yolo_model *m, void *blk) {
    yolo_down *d = (yolo_down *)blk;
    const yolo_tensor *x = d->x;
    yolo_op_avgpool2(m, x, &d->pool);   /* [B, c1, H-1, W-1] */
    if (!d->adown) return;
    int h = x->c / 2;
    if (!d->half1.ctot) {   /* slots of pool (a folded pass) need no copies */
        yolo_op_concat(m, &d->pool, 0, &d->half1, 0, h);   /* [B, c1/2, H-1, W-1] */
        yolo_op_concat(m, &d->pool, h, &d->half2, 0, h);
    }
    yolo_op_maxpool(m, &d->half2, 3, 2, 1, &d->maxp);   /* [B, c1/2, H/2, W/2] */
}

static yolo_tensor *yolo_down_out(yolo_down *d) { return d->adown ? &d->y : &d->cv1.y; }

/* ADown's output y [B, c2, H/2, W/2] = cat(cv1.y, cv2.y), c2/2 channels each (slots of y in a folded
   pass: written there) */
static void yolo_down_concat(yolo_model *m, void *blk) {
    yolo_down *d = (yolo_down *)blk;
    int c = d->cv1.c2;
    if (!d->cv1.y.ctot) yolo_op_concat(m, &d->cv1.y, 0, &d->y, 0, c);
    if (!d->cv2.y.ctot) yolo_op_concat(m, &d->cv2.y, 0, &d->y, c, c);
}

/* x [B, c1, H, W] -> [B, c2, H/2, W/2]: AConv's cv1.y, ADown's y */
static void yolo_down_forward(yolo_model *m, yolo_down *d, yolo_tensor *x, int train) {
    d->x = x;
    yolo_down_inputs(m, d);
    if (!d->adown) {
        yolo_conv_forward(m, &d->cv1, &d->pool, train);
        return;
    }
    yolo_conv_forward(m, &d->cv1, &d->half1, train);   /* 3x3 s2: [B, c2/2, H/2, W/2] */
    yolo_conv_forward(m, &d->cv2, &d->maxp, train);    /* 1x1: [B, c2/2, H/2, W/2] */
    yolo_down_concat(m, d);
}

static void yolo_down_backward(yolo_model *m, yolo_down *d) {
    if (d->adown) {
        int c = d->cv1.c2;
        yolo_tensor *halves[2] = { &d->half1, &d->half2 };
        yolo_op_concat_backward(m, &d->y, 0, &d->cv1.y, c);   /* y's gradient to its two halves */
        yolo_op_concat_backward(m, &d->y, c, &d->cv2.y, c);
        yolo_conv_backward(m, &d->cv2);
        yolo_op_maxpool_backward(m, &d->half2, 3, 2, 1, &d->maxp);
        yolo_conv_backward(m, &d->cv1);
        yolo_op_split_backward(m, halves, 2, &d->pool);   /* pool's gradient: its halves' side by side */
    } else {
        yolo_conv_backward(m, &d->cv1);
    }
    yolo_op_avgpool2_backward(m, &d->pool, d->x);
}

/* what training keeps of AConv and ADown */
static void yolo_down_lifetimes(yolo_model *m, yolo_down *d) {
    /* the average pool's backward adds into x's gradient; then the pool
       goes, and with it (ADown) the halves and the max pool */
    yolo_life_row pool[] = {
        { YOLO_BWD_BEFORE, &d->pool, YOLO_NEED, NULL, NULL, NULL, &d->x },
        { YOLO_BWD_AFTER, &d->pool, YOLO_DONE, &d->pool },
        { YOLO_BWD_AFTER, &d->pool, YOLO_DROP, &d->pool },
        { YOLO_BWD_AFTER, &d->pool, YOLO_DROP, &d->half1 },
        { YOLO_BWD_AFTER, &d->pool, YOLO_DROP, &d->half2 },
        { YOLO_BWD_AFTER, &d->pool, YOLO_DROP, &d->maxp },
    };
    if (!d->adown) {   /* training keeps cv1's z and output; its input, the pool, is made again for its backward */
        yolo_life_row aconv[] = {
            { YOLO_FWD_AFTER, &d->cv1.y, YOLO_DROP, &d->pool },
            { YOLO_BWD_BEFORE, &d->cv1.y, YOLO_MAKE, &d->pool, yolo_down_inputs, d },
        };
        YOLO_LIFE_TABLE(m, aconv);
        yolo_life_table(m, pool, 3);
        return;
    }
    yolo_life_row rows[] = {
        /* training keeps y and the convs' z */
        { YOLO_FWD_AFTER, &d->y, YOLO_DROP, &d->pool },
        { YOLO_FWD_AFTER, &d->y, YOLO_DROP, &d->half1 },
        { YOLO_FWD_AFTER, &d->y, YOLO_DROP, &d->half2 },
        { YOLO_FWD_AFTER, &d->y, YOLO_DROP, &d->maxp },
        { YOLO_FWD_AFTER, &d->y, YOLO_DROP, &d->cv1.y },
        { YOLO_FWD_AFTER, &d->y, YOLO_DROP, &d->cv2.y },
        /* the convs' inputs again, from x, before the first backward op;
           y's gradient to its two halves */
        { YOLO_BWD_BEFORE, &d->y, YOLO_MAKE, &d->pool },
        { YOLO_BWD_BEFORE, &d->y, YOLO_MAKE, &d->half1 },
        { YOLO_BWD_BEFORE, &d->y, YOLO_MAKE, &d->half2 },
        { YOLO_BWD_BEFORE, &d->y, YOLO_MAKE, &d->maxp, yolo_down_inputs, d },
        { YOLO_BWD_BEFORE, &d->y, YOLO_NEED, &d->cv1.y },
        { YOLO_BWD_BEFORE, &d->y, YOLO_NEED, &d->cv2.y },
        { YOLO_BWD_AFTER, &d->y, YOLO_DONE, &d->y },
        { YOLO_BWD_BEFORE, &d->maxp, YOLO_NEED, &d->half2 },
        { YOLO_BWD_AFTER, &d->maxp, YOLO_DONE, &d->maxp },
        { YOLO_BWD_BEFORE, &d->half1, YOLO_NEED, &d->pool },
        { YOLO_BWD_AFTER, &d->half1, YOLO_DONE, &d->half1 },
        { YOLO_BWD_AFTER, &d->half2, YOLO_DONE, &d->half2 },
    };
    YOLO_LIFE_TABLE(m, rows);
    YOLO_LIFE_TABLE(m, pool);
}

/* what its forward makes from x [n, c1, h, w]: pool [n, c1, h-1, w-1], cv1's tensors; ADown's halves
   of pool, maxp [n, c1/2, Ho, Wo], cv2's tensors and y [n, c2, Ho, Wo]. Folded, the halves are slots
   of pool, cv1.y and cv2.y of y, pool and y taken first (before the average pool) */
static void yolo_down_shapes(yolo_model *m, yolo_down *d, const yolo_tensor *x, int train) {
    int n = x->n, h = x->c / 2, H = x->h - 1, W = x->w - 1, Ho = yolo_conv_out(H, 3, 2), Wo = yolo_conv_out(W, 3, 2);
    int c = d->cv1.c2, folded = d->adown && yolo_folded(m, train);
    yolo_shape(m, &d->pool, &d->pool, n, x->c, H, W, train);
    if (!d->adown) {
        yolo_conv_shapes(m, &d->cv1, n, H, W, train);
        return;
    }
    if (folded) {
        yolo_shape_slot(m, &d->pool, &d->half1, &d->pool, 0, h);
        yolo_shape_slot(m, &d->pool, &d->half2, &d->pool, h, h);
        yolo_shape(m, &d->pool, &d->y, n, 2 * c, Ho, Wo, 0);
        yolo_shape_slot(m, &d->pool, &d->cv1.y, &d->y, 0, c);
        yolo_shape_slot(m, &d->pool, &d->cv2.y, &d->y, c, c);
    } else {
        yolo_shape(m, &d->half1, &d->half1, n, h, H, W, train);
        yolo_shape(m, &d->half2, &d->half2, n, h, H, W, train);
    }
    yolo_shape(m, &d->maxp, &d->maxp, n, h, Ho, Wo, train);
    yolo_conv_shapes(m, &d->cv1, n, H, W, train);
    yolo_conv_shapes(m, &d->cv2, n, Ho, Wo, train);
    if (!folded) yolo_shape(m, &d->y, &d->y, n, 2 * c, Ho, Wo, train);
}

static void yolo_down_init(yolo_model *m, yolo_down *d, const char *prefix, int adown, int c1, int c2) {
    char p[96];
    memset(d, 0, sizeof *d);
    d->adown = adown;
    snprintf(p, sizeof p, "%s.cv1", prefix);
    if (!adown) {
        yolo_conv_init(m, &d->cv1, p, c1, c2, 3, 2, 1, 1, 1);
    } else {
        yolo_conv_init(m, &d->cv1, p, c1 / 2, c2 / 2, 3, 2, 1, 1, 1);
        snprintf(p, sizeof p, "%s.cv2", prefix);
        yolo_conv_init(m, &d->cv2, p, c1 / 2, c2 / 2, 1, 1, 1, 1, 1);
    }
    yolo_act_new(m, &d->pool);
    yolo_act_new(m, &d->half1);
    yolo_act_new(m, &d->half2);
    yolo_act_new(m, &d->maxp);
    yolo_act_new(m, &d->y);
    yolo_down_lifetimes(m, d);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ---- SPPELAN -------------------------------------------------------------------- */

#ifdef YOLOV9_DECLARING
/* SPPELAN: cv1 1x1, three chained maxpool 5x5 s1 p2, concat of the four,
   cv5 1x1: a spatial pyramid at three receptive fields. */
typedef struct {
    yolo_conv cv1, cv5;
    yolo_tensor p1, p2, p3;  /* [B, c3, H, W] each */
    yolo_tensor cat;         /* [B, 4*c3, H, W] */
} yolo_sppelan;
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* p1..p3 [B, c3, H, W] (chained 5x5 max pools of cv1.y) and cat [B, 4 c3, H, W] */
static void yolo_sppelan_pools(yolo_model *m, void *blk) {
    yolo_sppelan *s = (yolo_sppelan *)blk;
    int c = s->cv1.c2;
    yolo_tensor *pools[4] = { &s->cv1.y, &s->p1, &s->p2, &s->p3 };
    for (int i = 0; i < 4; i++) {
        if (i) yolo_op_maxpool(m, pools[i - 1], 5, 1, 2, pools[i]);
        if (!pools[i]->ctot) yolo_op_concat(m, pools[i], 0, &s->cat, i * c, c);   /* a slot is in cat already */
    }
}

/* x [B, c1, H, W] -> cv5.y [B, c2, H, W] */
static void yolo_sppelan_forward(yolo_model *m, yolo_sppelan *s, yolo_tensor *x, int train) {
    yolo_conv_forward(m, &s->cv1, x, train);   /* [B, c3, H, W] */
    yolo_sppelan_pools(m, s);                  /* p1..p3 [B, c3, H, W], cat [B, 4 c3, H, W] */
    yolo_conv_forward(m, &s->cv5, &s->cat, train);
}

/* cv5 writes dL/dcat into its four quarters' gradients; then the pools'
   backwards, from the last pool to cv1.y, each named by the pool it hands
   on */
static void yolo_sppelan_backward(yolo_model *m, yolo_sppelan *s) {
    yolo_tensor *pools[4] = { &s->cv1.y, &s->p1, &s->p2, &s->p3 };
    yolo_conv_backward(m, &s->cv5);
    for (int i = 3; i > 0; i--) yolo_op_maxpool_backward(m, pools[i - 1], 5, 1, 2, pools[i]);
    yolo_conv_backward(m, &s->cv1);
}

/* what training keeps of SPPELAN */
static void yolo_sppelan_lifetimes(yolo_model *m, yolo_sppelan *s) {
    yolo_life_row rows[] = {
        /* training keeps the output cv5.y and the convs' z */
        { YOLO_FWD_AFTER, &s->cv5.y, YOLO_DROP, &s->cv1.y },
        { YOLO_FWD_AFTER, &s->cv5.y, YOLO_DROP, &s->p1 },
        { YOLO_FWD_AFTER, &s->cv5.y, YOLO_DROP, &s->p2 },
        { YOLO_FWD_AFTER, &s->cv5.y, YOLO_DROP, &s->p3 },
        { YOLO_FWD_AFTER, &s->cv5.y, YOLO_DROP, &s->cat },
        /* cv5's input again: cv1.y, the pools and cat, all five for the backward */
        { YOLO_BWD_BEFORE, &s->cv5.y, YOLO_MAKE, &s->cv1.y, yolo_conv_again, &s->cv1 },
        { YOLO_BWD_BEFORE, &s->cv5.y, YOLO_MAKE, &s->p1 },
        { YOLO_BWD_BEFORE, &s->cv5.y, YOLO_MAKE, &s->p2 },
        { YOLO_BWD_BEFORE, &s->cv5.y, YOLO_MAKE, &s->p3 },
        { YOLO_BWD_BEFORE, &s->cv5.y, YOLO_MAKE, &s->cat, yolo_sppelan_pools, s },
        { YOLO_BWD_AFTER, &s->cv5.z, YOLO_DROP, &s->cat },
        /* each pool's gradient (cv5 took all four quarters'), handed on
           to the pool before it; the values go after the last */
        { YOLO_BWD_AFTER, &s->p3, YOLO_DONE, &s->p3 },
        { YOLO_BWD_AFTER, &s->p2, YOLO_DONE, &s->p2 },
        { YOLO_BWD_AFTER, &s->p1, YOLO_DONE, &s->p1 },
        { YOLO_BWD_AFTER, &s->p1, YOLO_DROP, &s->cv1.y },
        { YOLO_BWD_AFTER, &s->p1, YOLO_DROP, &s->p1 },
        { YOLO_BWD_AFTER, &s->p1, YOLO_DROP, &s->p2 },
        { YOLO_BWD_AFTER, &s->p1, YOLO_DROP, &s->p3 },
    };
    YOLO_LIFE_TABLE(m, rows);
}

/* what its forward makes from x [n, c1, h, w]: the convs' tensors, p1..p3 [n, c3, h, w] and cat
   [n, 4 c3, h, w] (its gradient its quarters'); folded, cat first (before cv1's op), cv1.y and the
   pools slots of it */
static void yolo_sppelan_shapes(yolo_model *m, yolo_sppelan *s, const yolo_tensor *x, int train) {
    int c = s->cv1.c2, n = x->n, h = x->h, w = x->w, folded = yolo_folded(m, train);
    yolo_tensor *parts[4] = { &s->cv1.y, &s->p1, &s->p2, &s->p3 };   /* cat's quarters */
    yolo_concat_grads(&s->cat, parts, 4);
    if (folded) {
        yolo_shape(m, &s->cv1.y, &s->cat, n, 4 * c, h, w, 0);
        for (int i = 0; i < 4; i++) yolo_shape_slot(m, &s->cv1.y, parts[i], &s->cat, i * c, c);
    }
    yolo_conv_shapes(m, &s->cv1, n, h, w, train);
    if (!folded) {
        yolo_shape(m, &s->cat, &s->cat, n, 4 * c, h, w, train);
        for (int i = 1; i < 4; i++) yolo_shape(m, parts[i], parts[i], n, c, h, w, train);
    }
    yolo_conv_shapes(m, &s->cv5, n, h, w, train);
}

static void yolo_sppelan_init(yolo_model *m, yolo_sppelan *s, const char *prefix, int c1, int c2, int c3) {
    char p[96];
    snprintf(p, sizeof p, "%s.cv1", prefix); yolo_conv_init(m, &s->cv1, p, c1, c3, 1, 1, 1, 1, 1);
    snprintf(p, sizeof p, "%s.cv5", prefix); yolo_conv_init(m, &s->cv5, p, 4 * c3, c2, 1, 1, 1, 1, 1);
    yolo_act_new(m, &s->p1); yolo_act_new(m, &s->p2); yolo_act_new(m, &s->p3);
    yolo_act_new(m, &s->cat);
    yolo_sppelan_lifetimes(m, s);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 4. the head: DDetect / DualDDetect, DFL, anchors, decode                 */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
/* Anchor-free: every cell of the three grids is an anchor point at the
   cell centre. For each one the head predicts, per box side (left, top,
   right, bottom), a distribution over REG_MAX = 16 distances 0..15 in grid
   units (Distribution Focal Loss); the distance is its expectation. Class
   scores are independent sigmoids. */

/* DDetect / DualDDetect: per level a box branch (Conv3x3, Conv3x3 g4,
   Conv2d 1x1 g4 + bias -> 4*REG_MAX) and a class branch (Conv3x3, Conv3x3,
   Conv2d 1x1 + bias -> NC). A dual head has two such sets: branch 0 the
   auxiliary (PGI) one fed by the first three inputs, branch 1 the main one. */
typedef struct {
    int nc, nl, nbranch;     /* classes, levels (3), 1 or 2 branches */
    int strides[3];
    yolo_conv box[2][3][3];  /* [branch][level][stage] */
    yolo_conv cls[2][3][3];
    yolo_real *dfl[2];       /* [1, REG_MAX, 1, 1] fixed weights 0..15 */
    yolo_tensor out[2][3];   /* [B, NO, h, w] raw maps per branch and level */
} yolo_detect;

/* A model is a list of layers: the blocks, the head, and the layers that
   only move values (Upsample, Concat, CBFuse); each reads the outputs of
   earlier layers (from; -1: the image). */

typedef enum {
    YOLO_SILENCE, YOLO_CONV, YOLO_ACONV, YOLO_ADOWN, YOLO_ELAN1,
    YOLO_REPNCSPELAN4, YOLO_SPPELAN, YOLO_UPSAMPLE, YOLO_CONCAT,
    YOLO_CBLINEAR, YOLO_CBFUSE, YOLO_DDETECT, YOLO_DUALDDETECT, YOLO_NMODULES
} yolo_module;

struct yolo_layer {
    yolo_module type;
    int nfrom, from[YOLO_MAX_FROM];  /* absolute layer indices, -1 = image */
    int from_row[YOLO_MAX_FROM];     /* as written in the model description */
    int nargs, args[YOLO_MAX_ARGS];  /* after width scaling */
    int c_out, stride;               /* output channels, downsampling factor */
    long nparams;
    union {
        yolo_conv conv;              /* Conv, CBLinear */
        yolo_elan elan;              /* ELAN1, RepNCSPELAN4 */
        yolo_down down;              /* AConv, ADown */
        yolo_sppelan spp;
    } b;
    yolo_detect *det;                /* DDetect, DualDDetect */
    int infer;                       /* 1 when inference needs this layer */
    int last_reader;                 /* the last layer that reads its output (-1: none) */
    int last_infer_reader;           /* the same among the layers inference runs */
    int convs_read;                  /* Concat: only convs read it (yolo_mark_readers): its gradient is its inputs' */
    int act0, act1;                  /* its activations are m->acts[act0 .. act1) */
    int life0, life1;                /* its blocks' lifetime rows are m->life[life0 .. life1) */
    int param0, param1;              /* its tensors are m->params[param0 .. param1), side by side in values */
    yolo_tensor own;                 /* output of Upsample, Concat, CBFuse */
    yolo_tensor *out;                /* the layer's output tensor */
};


YOLO_C_BEGIN
/* eval: decoded predictions of the inference branch, [B, 4+NC, A] */
int  yolo_num_anchors(const yolo_model *m);
void yolo_decode(const yolo_model *m, yolo_real *pred);
/* the detections of every image of the last eval forward, decoded and
   suppressed on the model's backend: out[n] gets at most max_det of image
   n, count[n] how many */
void yolo_predict(const yolo_model *m, float conf_thres, float iou_thres, int max_det, int agnostic,
                  const int *classes, int nclasses, int multi_label, yolo_det **out, int *count);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* out[b][l] = cat(box branch, class branch): [B, 4*REG_MAX + NC, h, w],
   level by level */
static void yolo_detect_forward(yolo_model *m, yolo_layer *L, int train) {
    yolo_detect *d = L->det;
    for (int b = train ? 0 : d->nbranch - 1; b < d->nbranch; b++)
        for (int l = 0; l < 3; l++) {
            yolo_tensor *x = yolo_layer_input(m, L, b * 3 + l);   /* [B, C, h, w] */
            for (int s = 0; s < 3; s++) {   /* [B, c_, h, w], then [B, 4 REG_MAX, h, w] and [B, NC, h, w] */
                yolo_conv_forward(m, &d->box[b][l][s], s ? &d->box[b][l][s - 1].y : x, train);
                yolo_conv_forward(m, &d->cls[b][l][s], s ? &d->cls[b][l][s - 1].y : x, train);
            }
            yolo_tensor *o = &d->out[b][l];
            yolo_op_concat(m, &d->box[b][l][2].y, 0, o, 0, 4 * YOLO_REG_MAX);
            yolo_op_concat(m, &d->cls[b][l][2].y, 0, o, 4 * YOLO_REG_MAX, d->nc);
        }
}

/* level by level: the map's gradient to its two branches, then each
   branch's convs from the last */
static void yolo_detect_backward(yolo_model *m, yolo_layer *L) {
    yolo_detect *d = L->det;
    for (int b = 0; b < d->nbranch; b++)
        for (int l = 0; l < 3; l++) {
            yolo_tensor *o = &d->out[b][l];
            yolo_op_concat_backward(m, o, 0, &d->box[b][l][2].y, 4 * YOLO_REG_MAX);
            yolo_op_concat_backward(m, o, 4 * YOLO_REG_MAX, &d->cls[b][l][2].y, d->nc);
            for (int s = 2; s >= 0; s--) {
                yolo_conv_backward(m, &d->box[b][l][s]);
                yolo_conv_backward(m, &d->cls[b][l][s]);
            }
        }
}

int yolo_num_anchors(const yolo_model *m) {
    const yolo_detect *d = m->layers[m->detect].det;
    int b = d->nbranch - 1, A = 0;
    for (int l = 0; l < 3; l++) A += d->out[b][l].h * d->out[b][l].w;
    return A;
}

/* DFL: the expected distance under softmax(logits) over bins 0..15 */
static yolo_real yolo_dfl_expect(const yolo_real *logits, int stride, yolo_real *prob) {
    double mx = logits[0], s = 0, e = 0;
    for (int k = 1; k < YOLO_REG_MAX; k++) if (logits[k * stride] > mx) mx = logits[k * stride];
    for (int k = 0; k < YOLO_REG_MAX; k++) { double v = exp(logits[k * stride] - mx); prob[k] = (yolo_real)v; s += v; }
    for (int k = 0; k < YOLO_REG_MAX; k++) { prob[k] = (yolo_real)(prob[k] / s); e += prob[k] * k; }
    return (yolo_real)e;
}

/* pred[B, 4 + NC, A]: boxes (cx, cy, w, h) in input pixels and class
   probabilities, from the inference branch (the main one of a dual head).
   A box is the anchor point minus/plus the four expected distances, times
   the level's stride. */
/* the CPU twin of the backend's decode op */
static void yolo_cpu_decode(const yolo_loss_branch *lb, yolo_real *pred) {
    int A = lb->A, B = lb->B, nc = lb->nc, no = 4 * YOLO_REG_MAX + nc;
    #pragma omp parallel for schedule(static)
    for (int na = 0; na < B * A; na++) {
        int n = na / A, a = na % A, level = 0;
        while (level < 2 && a >= lb->h[level] * lb->w[level]) { a -= lb->h[level] * lb->w[level]; level++; }
        int HW = lb->h[level] * lb->w[level], cell = a;
        const yolo_real *base = lb->maps[level] + (size_t)n * no * HW + cell;
        yolo_real prob[YOLO_REG_MAX], dist[4];
        for (int side = 0; side < 4; side++) dist[side] = yolo_dfl_expect(base + (size_t)side * YOLO_REG_MAX * HW, HW, prob);
        yolo_real ax = (yolo_real)(cell % lb->w[level] + 0.5), ay = (yolo_real)(cell / lb->w[level] + 0.5), s = (yolo_real)lb->stride[level];
        yolo_real x1 = ax - dist[0], y1 = ay - dist[1], x2 = ax + dist[2], y2 = ay + dist[3];
        yolo_real *out = pred + (size_t)n * (4 + nc) * A + na % A;
        out[0] = (x1 + x2) / 2 * s; out[(size_t)A] = (y1 + y2) / 2 * s;
        out[(size_t)2 * A] = (x2 - x1) * s; out[(size_t)3 * A] = (y2 - y1) * s;
        for (int c = 0; c < nc; c++) out[(size_t)(4 + c) * A] = yolo_sigmoid(base[(size_t)(4 * YOLO_REG_MAX + c) * HW]);
    }
}

static void yolo_decode_on_backend(const yolo_model *m, yolo_real *dev) {
    const yolo_detect *d = m->layers[m->detect].det;
    int b = d->nbranch - 1;
    yolo_loss_branch lb;
    memset(&lb, 0, sizeof lb);
    lb.B = d->out[b][0].n; lb.nc = d->nc; lb.A = yolo_num_anchors(m);
    for (int l = 0; l < 3; l++) {
        lb.h[l] = d->out[b][l].h; lb.w[l] = d->out[b][l].w; lb.stride[l] = d->strides[l]; lb.maps[l] = d->out[b][l].data;
    }
    m->be->decode(&lb, dev);
}

void yolo_predict(const yolo_model *m, float conf_thres, float iou_thres, int max_det, int agnostic,
                  const int *classes, int nclasses, int multi_label, yolo_det **out, int *count) {
    const yolo_detect *d = m->layers[m->detect].det;
    int B = d->out[d->nbranch - 1][0].n, A = yolo_num_anchors(m), nc = d->nc;
    size_t per = (size_t)(4 + nc) * A;
    yolo_real *dev = (yolo_real *)m->be->alloc((size_t)B * per * sizeof(yolo_real));
    yolo_decode_on_backend(m, dev);
    if (multi_label && nc > 1) {   /* the multi-label NMS runs on the host */
        yolo_real *host = (yolo_real *)yolo_xmalloc((size_t)B * per * sizeof(yolo_real));
        m->be->download(host, dev, (size_t)B * per * sizeof(yolo_real));
        #pragma omp parallel for schedule(dynamic)
        for (int n = 0; n < B; n++)
            count[n] = yolo_nms_labels(host + (size_t)n * per, A, nc, conf_thres, iou_thres, max_det, agnostic,
                                       classes, nclasses, 1, out[n]);
        free(host);
    } else
        for (int n = 0; n < B; n++)
            count[n] = m->be->nms(dev + (size_t)n * per, A, nc, conf_thres, iou_thres, max_det, agnostic, classes, nclasses, out[n]);
    m->be->release(dev);
}

void yolo_decode(const yolo_model *m, yolo_real *pred) {
    const yolo_detect *d = m->layers[m->detect].det;
    size_t n = (size_t)d->out[d->nbranch - 1][0].n * (4 + d->nc) * yolo_num_anchors(m);
    yolo_real *dev = (yolo_real *)m->be->alloc(n * sizeof(yolo_real));
    yolo_decode_on_backend(m, dev);
    m->be->download(pred, dev, n * sizeof(yolo_real));
    m->be->release(dev);
}

/* a level's input (another layer's output, which the graph may drop):
   made again for the level's first convs' backward, dropped after it */
static void yolo_level_input_make(yolo_model *m, void *src) {
    if (yolo_output_remakeable(m, (yolo_layer *)src)) yolo_output_make(m, (yolo_layer *)src);
}
static void yolo_level_input_drop(yolo_model *m, void *src) {
    if (yolo_output_remakeable(m, (yolo_layer *)src)) yolo_output_drop(m, (yolo_layer *)src);
}
/* in the forward, dropped if the head is the last layer to read it */
static void yolo_level_input_read(yolo_model *m, void *src) {
    if (((yolo_layer *)src)->last_reader == m->detect) yolo_level_input_drop(m, src);
}

/* what its forward makes: per branch and level the convs' tensors and the map [B, NO, h, w]; the
   last convs' outputs and the maps in float32 whatever the pass's store, as decoding reads them */
static void yolo_detect_shapes(yolo_model *m, yolo_layer *L, int train) {
    yolo_detect *d = L->det;
    for (int b = train ? 0 : d->nbranch - 1; b < d->nbranch; b++)
        for (int l = 0; l < 3; l++) {
            const yolo_tensor *x = yolo_layer_input(m, L, b * 3 + l);
            int last = 0;
            for (int s = 0; s < 3; s++) {   /* all stride 1 */
                if (s == 2) last = m->nshapes;
                yolo_conv_shapes(m, &d->box[b][l][s], x->n, x->h, x->w, train);
                yolo_conv_shapes(m, &d->cls[b][l][s], x->n, x->h, x->w, train);
            }
            yolo_shape(m, &d->out[b][l], &d->out[b][l], x->n, 4 * YOLO_REG_MAX + d->nc, x->h, x->w, train);
            yolo_shapes_store(m, last, YOLO_FP32);
        }
}

/* what training keeps of the head: the level's convs' z and its map */
static void yolo_detect_lifetimes(yolo_model *m, yolo_layer *L) {
    yolo_detect *d = L->det;
    int nbranch = d->nbranch;
    if (!yolo_binding(m)) return;
    /* the loss, the maps' last reader, is done: the backward starts by dropping them */
    for (int b = 0; b < nbranch; b++)
        for (int l = 0; l < 3; l++) {
            yolo_life_row map[] = { { YOLO_BWD_BEFORE, &d->out[0][0], YOLO_DROP, &d->out[b][l] } };
            YOLO_LIFE_TABLE(m, map);
        }
    for (int b = 0; b < nbranch; b++)
        for (int l = 0; l < 3; l++) {
            yolo_conv *box = d->box[b][l], *cls = d->cls[b][l];
            yolo_tensor *o = &d->out[b][l];
            yolo_layer *src = &m->layers[L->from[b * 3 + l]];
            yolo_life_row rows[] = {
                /* training: each inner conv's output goes once the next
                   conv has read it, the last ones once copied into the map,
                   and the level's input once it is read for the last time */
                { YOLO_FWD_AFTER, &cls[1].y, YOLO_DROP, &box[0].y },
                { YOLO_FWD_AFTER, &cls[1].y, YOLO_DROP, &cls[0].y },
                { YOLO_FWD_AFTER, &cls[2].y, YOLO_DROP, &box[1].y },
                { YOLO_FWD_AFTER, &cls[2].y, YOLO_DROP, &cls[1].y },
                { YOLO_FWD_AFTER, o, YOLO_DROP, &box[2].y },
                { YOLO_FWD_AFTER, o, YOLO_DROP, &cls[2].y },
                { YOLO_FWD_AFTER, o, YOLO_RUN, NULL, yolo_level_input_read, src },
                /* the map's gradient to the two branches; each conv's
                   input made again for its backward */
                { YOLO_BWD_BEFORE, o, YOLO_NEED, &box[2].y },
                { YOLO_BWD_BEFORE, o, YOLO_NEED, &cls[2].y },
                { YOLO_BWD_AFTER, o, YOLO_DONE, o },
                { YOLO_BWD_AFTER, o, YOLO_MAKE, &box[1].y, yolo_conv_again, &box[1] },
                { YOLO_BWD_AFTER, &box[2].y, YOLO_DROP, &box[1].y },
                { YOLO_BWD_AFTER, &box[2].y, YOLO_MAKE, &cls[1].y, yolo_conv_again, &cls[1] },
                { YOLO_BWD_AFTER, &cls[2].y, YOLO_DROP, &cls[1].y },
                { YOLO_BWD_BEFORE, &box[1].y, YOLO_MAKE, &box[0].y, yolo_conv_again, &box[0] },
                { YOLO_BWD_AFTER, &box[1].z, YOLO_DROP, &box[0].y },
                { YOLO_BWD_BEFORE, &cls[1].y, YOLO_MAKE, &cls[0].y, yolo_conv_again, &cls[0] },
                { YOLO_BWD_AFTER, &cls[1].z, YOLO_DROP, &cls[0].y },
                { YOLO_BWD_BEFORE, &box[0].y, YOLO_RUN, NULL, yolo_level_input_make, src },
                { YOLO_BWD_AFTER, &cls[0].z, YOLO_RUN, NULL, yolo_level_input_drop, src },
            };
            YOLO_LIFE_TABLE(m, rows);
        }
}

/* one level's branch of the head, PREFIX.NAME.L.{0,1,2}: [B, c1, h, w] ->
   3x3 Conv -> [B, c_, h, w] -> 3x3 Conv (g groups) -> 1x1 conv with bias,
   no BatchNorm, no SiLU (g groups) -> [B, c_out, h, w] */
static void yolo_detect_branch_init(yolo_model *m, yolo_conv conv[3], const char *prefix, const char *name, int l,
                                    int c1, int c_, int c_out, int g) {
    char p[96];
    snprintf(p, sizeof p, "%s.%s.%d.0", prefix, name, l);
    yolo_conv_init(m, &conv[0], p, c1, c_, 3, 1, 1, 1, 1);
    snprintf(p, sizeof p, "%s.%s.%d.1", prefix, name, l);
    yolo_conv_init(m, &conv[1], p, c_, c_, 3, 1, g, 1, 1);
    snprintf(p, sizeof p, "%s.%s.%d.2", prefix, name, l);
    yolo_conv_init(m, &conv[2], p, c_, c_out, 1, 1, g, 0, 0);
}

static void yolo_detect_init(yolo_model *m, yolo_layer *L, const char *prefix, int nc, int nbranch,
                             const int *ch, const int *strides) {
    static const char *box_name[2] = { "cv2", "cv4" }, *cls_name[2] = { "cv3", "cv5" };
    yolo_detect *d = L->det;
    char p[96];
    d->nc = nc; d->nl = 3; d->nbranch = nbranch;
    for (int l = 0; l < 3; l++) d->strides[l] = strides[(nbranch - 1) * 3 + l];
    for (int b = 0; b < nbranch; b++) {
        /* widths from the first input of the branch, as the official */
        int c0 = ch[b * 3];
        int c2 = yolo_make_divisible(c0 / 4 > 4 * YOLO_REG_MAX ? c0 / 4 : 4 * YOLO_REG_MAX, 4);
        int c3 = c0 > (2 * nc < 128 ? 2 * nc : 128) ? c0 : (2 * nc < 128 ? 2 * nc : 128);
        /* the official state_dict order: every level's box branch, then every level's class branch */
        for (int l = 0; l < 3; l++)   /* DDetect's box branch runs its last two convs in 4 groups */
            yolo_detect_branch_init(m, d->box[b][l], prefix, box_name[b], l, ch[b * 3 + l], c2, 4 * YOLO_REG_MAX, 4);
        for (int l = 0; l < 3; l++)
            yolo_detect_branch_init(m, d->cls[b][l], prefix, cls_name[b], l, ch[b * 3 + l], c3, nc, 1);
    }
    for (int b = 0; b < nbranch; b++) {
        snprintf(p, sizeof p, "%s.%s.conv", prefix, b ? "dfl2" : "dfl");
        d->dfl[b] = yolo_param_new(m, p, "weight", YOLO_P_FIXED, 4, 1, YOLO_REG_MAX, 1, 1, NULL);
    }
    for (int b = 0; b < 2; b++)
        for (int l = 0; l < 3; l++) if (b < nbranch) yolo_act_new(m, &d->out[b][l]);
    yolo_detect_lifetimes(m, L);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 5. the loss: task-aligned assigner, CIoU, DFL, BCE, and their gradients  */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
/* For each head branch:
     box  = sum over positives of (1 - CIoU(pred, target)) * score / S
     dfl  = sum over positives of DFL(pred distributions, target) * score / S
     cls  = sum over all anchors and classes of BCE(logit, target score) / S
   with S = max(sum of target scores, 1). The gains 7.5, 0.5, 1.5 weight
   them; in a dual head the auxiliary branch counts 0.25. The official
   returns (box + cls + dfl) * B as the loss to differentiate. */


/* the official's constants: the assigner's 10 best anchors per box and its
   alignment s^0.5 u^6; the gains of the box, class and DFL terms */
#define YOLO_TOPK 10
#define YOLO_TAL_ALPHA 0.5
#define YOLO_TAL_BETA 6.0
#define YOLO_GAIN_BOX 7.5
#define YOLO_GAIN_CLS 0.5
#define YOLO_GAIN_DFL 1.5

typedef struct {
    const struct yolo_backend *be;  /* where the assignment lives */
    yolo_assignment as[2];       /* per head branch */
    double items[3];             /* box, cls, dfl after gains (official loss_items) */
    double loss;                 /* (box + cls + dfl) * B, what is differentiated */
    double scale;                /* the gradient is of loss * scale (train: the loss scaler's, times the processes and --quad's 4; 0 as 1) */
} yolo_loss;

/* Complete IoU of box p against box t, both (x1, y1, x2, y2):
     CIoU = IoU - rho^2 / c^2 - alpha v
   rho: distance of the centres, c: diagonal of the smallest enclosing box,
   v = 4/pi^2 (atan(w_t/h_t) - atan(w_p/h_p))^2 compares aspect ratios and
   alpha = v / (v - IoU + 1) weighs it. alpha is a constant for the gradient
   (the official computes it under no_grad); pass *fixed_alpha to impose it.
   With g != NULL, g = dCIoU/dp. eps 1e-7 as the official bbox_iou. It is
   shared with the CUDA kernels (YOLO_HD: host and device), so both
   backends compute the same assigner and loss. */
static inline YOLO_HD double yolo_ciou(const double *p, const double *t, const double *fixed_alpha, double *alpha_out, double *g) {
    const double eps = 1e-7, K = 4.0 / (3.14159265358979323846 * 3.14159265358979323846);
    double w1 = p[2] - p[0], h1 = p[3] - p[1] + eps, w2 = t[2] - t[0], h2 = t[3] - t[1] + eps;
    double iw = fmin(p[2], t[2]) - fmax(p[0], t[0]), ih = fmin(p[3], t[3]) - fmax(p[1], t[1]);
    double iwc = iw > 0 ? iw : 0, ihc = ih > 0 ? ih : 0, inter = iwc * ihc;
    double uni = w1 * h1 + w2 * h2 - inter + eps, iou = inter / uni;
    double cw = fmax(p[2], t[2]) - fmin(p[0], t[0]), ch = fmax(p[3], t[3]) - fmin(p[1], t[1]);
    double c2 = cw * cw + ch * ch + eps;
    double sx = t[0] + t[2] - p[0] - p[2], sy = t[1] + t[3] - p[1] - p[3];
    double rho2 = (sx * sx + sy * sy) / 4;
    double dif = atan(w2 / h2) - atan(w1 / h1), v = K * dif * dif;
    double alpha = fixed_alpha ? *fixed_alpha : v / (v - iou + (1 + eps));
    if (alpha_out) *alpha_out = alpha;
    if (g) {
        /* d inter, d union, d enclosing box, d rho^2, d v for x1, y1, x2, y2 */
        double dinter[4] = { 0, 0, 0, 0 }, dunion[4], dc2[4] = { 0, 0, 0, 0 }, drho2[4], dv[4];
        if (iw > 0 && ih > 0) {
            if (p[0] > t[0]) dinter[0] = -ihc;
            if (p[2] < t[2]) dinter[2] = ihc;
            if (p[1] > t[1]) dinter[1] = -iwc;
            if (p[3] < t[3]) dinter[3] = iwc;
        }
        dunion[0] = -h1 - dinter[0]; dunion[2] = h1 - dinter[2];
        dunion[1] = -w1 - dinter[1]; dunion[3] = w1 - dinter[3];
        if (p[0] < t[0]) dc2[0] = -2 * cw;
        if (p[2] > t[2]) dc2[2] = 2 * cw;
        if (p[1] < t[1]) dc2[1] = -2 * ch;
        if (p[3] > t[3]) dc2[3] = 2 * ch;
        drho2[0] = drho2[2] = -sx / 2;
        drho2[1] = drho2[3] = -sy / 2;
        double r = w1 * w1 + h1 * h1, dvdw = -2 * K * dif * h1 / r, dvdh = 2 * K * dif * w1 / r;
        dv[0] = -dvdw; dv[2] = dvdw; dv[1] = -dvdh; dv[3] = dvdh;
        for (int i = 0; i < 4; i++)
            g[i] = (dinter[i] - iou * dunion[i]) / uni - (drho2[i] / c2 - rho2 * dc2[i] / (c2 * c2)) - alpha * dv[i];
    }
    return iou - (rho2 / c2 + v * alpha);
}

YOLO_C_BEGIN
/* The loss of the last training forward against targets [ntargets, 6]
   (image, class, cx, cy, w, h normalised), and at the same time its
   gradient with respect to the detect maps, written into their grads, ready
   for yolo_backward. reuse_assignment = 1 keeps the previous assignment
   (and CIoU's alpha) fixed: the gradient check needs that. Returns
   L->loss. */
double yolo_loss_compute(yolo_model *m, yolo_loss *L, const yolo_real *targets, int ntargets,
                         int reuse_assignment);
void yolo_loss_free(yolo_loss *L);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* (the constants, YOLO_TOPK ... YOLO_GAIN_DFL, are with yolo_loss above) */

static void yolo_assignment_release(const yolo_backend *be, yolo_assignment *as) {
    be->release(as->fg); be->release(as->label); be->release(as->box); be->release(as->score); be->release(as->alpha);
    memset(as, 0, sizeof *as);
}

static void yolo_assignment_resize(const yolo_backend *be, yolo_assignment *as, int B, int A, int nc) {
    if (as->B * as->A < B * A) {
        yolo_assignment_release(be, as);
        as->fg = (unsigned char *)be->alloc((size_t)B * A);
        as->label = (int *)be->alloc((size_t)B * A * sizeof(int));
        as->box = (yolo_real *)be->alloc((size_t)B * A * 4 * sizeof(yolo_real));
        as->score = (yolo_real *)be->alloc((size_t)B * A * sizeof(yolo_real));
        as->alpha = (yolo_real *)be->alloc((size_t)B * A * sizeof(yolo_real));
    }
    as->B = B; as->A = A; as->nc = nc;
}

void yolo_loss_free(yolo_loss *L) {
    if (L->be)
        for (int b = 0; b < 2; b++) yolo_assignment_release(L->be, &L->as[b]);
    memset(L, 0, sizeof *L);
}

/* The task-aligned assigner (TOOD) and the three loss terms of one head
   branch, in the named steps that yolov9_kernels.cu launches as kernels of
   the same names (yolo_loss_decode = loss_decode_kernel, yolo_assign_topk =
   assign_topk_kernel, ...), in the same order. The CPU runs them image by
   image; the assigner's steps are:
   1. topk: alignment t(g, a) = s^0.5 * u^6, s the predicted probability of
      g's class at anchor a, u = max(CIoU(g, predicted box), 0); among the
      anchors whose centre lies inside g, the 10 with the largest alignment
      become positives of g;
   2. resolve: an anchor positive for several boxes keeps only the box it
      overlaps most (largest u over *all* boxes of the image, as the
      official), and takes that box's class and coordinates;
   3. norm: per box, its best alignment and best overlap over its positives;
   4. score: target score = t(g, a) * max_a u(g, .) / max_a t(g, .): the
      best aligned anchor of each box gets that box's best IoU. */

/* One image's view of the loss, for the steps below. Anchor points (cell
   centres, level by level) in grid units and in pixels, strides; the raw
   outputs gathered anchor by anchor, and what yolo_loss_decode makes of
   them. */
typedef struct {
    int A, nc, no;            /* anchors, classes, outputs per anchor */
    const double *anc;        /* [A, 2] anchor points, grid units */
    const double *anc_px;     /* [A, 2] the same in pixels */
    const int *stride;        /* [A] */
    double *P;                /* [A, NO] raw outputs */
    double *G;                /* [A, NO] their gradient, before 1/S */
    double *pbox;             /* [A, 4] predicted x1 y1 x2 y2, grid units */
    double *pbox_px;          /* [A, 4] the same in pixels */
    yolo_real *prob;          /* [A, NC] class probabilities */
    yolo_real *dflp;          /* [A, 4, REG_MAX] the softmax of each side's bins */
} yolo_loss_image;

/* decode: image n's outputs gathered from the three maps; expected side
   distances -> predicted boxes; class probabilities */
static void yolo_loss_decode(const yolo_loss_branch *lb, int n, yolo_loss_image *im) {
    int A = im->A, nc = im->nc, no = im->no;
    double *P = im->P;
    for (int l = 0, a0 = 0; l < 3; l++) {
        int HW = lb->h[l] * lb->w[l];
        for (int c = 0; c < no; c++)
            for (int i = 0; i < HW; i++) P[(size_t)(a0 + i) * no + c] = lb->maps[l][((size_t)n * no + c) * HW + i];
        a0 += HW;
    }
    for (int a = 0; a < A; a++) {
        double dist[4];
        for (int s = 0; s < 4; s++) {
            yolo_real logit[YOLO_REG_MAX];
            for (int k = 0; k < YOLO_REG_MAX; k++) logit[k] = (yolo_real)P[(size_t)a * no + s * YOLO_REG_MAX + k];
            dist[s] = yolo_dfl_expect(logit, 1, im->dflp + ((size_t)a * 4 + s) * YOLO_REG_MAX);
        }
        const double *anc = im->anc + 2 * a;
        double *pb = im->pbox + 4 * a;
        pb[0] = anc[0] - dist[0]; pb[1] = anc[1] - dist[1];
        pb[2] = anc[0] + dist[2]; pb[3] = anc[1] + dist[3];
        for (int i = 0; i < 4; i++) im->pbox_px[4 * a + i] = pb[i] * im->stride[a];
        for (int c = 0; c < nc; c++) im->prob[(size_t)a * nc + c] = yolo_sigmoid((yolo_real)P[(size_t)a * no + 4 * YOLO_REG_MAX + c]);
    }
}

/* 1. per box g of gt [G, 5] (class, x1, y1, x2, y2 in pixels): overlaps
   ov [G, A] and alignments al [G, A] with every anchor; pos [G, A] 1 on
   its (at most) 10 best aligned anchors inside it */
static void yolo_assign_topk(const yolo_loss_image *im, int G, const double *gt, double *ov, double *al,
                             unsigned char *pos) {
    int A = im->A, nc = im->nc;
    for (int g = 0; g < G; g++) {
        const double *b = gt + 5 * g;
        int cls = (int)b[0];
        int top[YOLO_TOPK], ntop = 0;
        for (int a = 0; a < A; a++) {
            double u = yolo_ciou(b + 1, im->pbox_px + 4 * a, NULL, NULL, NULL);
            u = u > 0 ? u : 0;
            ov[(size_t)g * A + a] = u;
            al[(size_t)g * A + a] = pow(im->prob[(size_t)a * nc + cls], YOLO_TAL_ALPHA) * pow(u, YOLO_TAL_BETA);
            double ax = im->anc_px[2 * a], ay = im->anc_px[2 * a + 1];
            double dmin = fmin(fmin(ax - b[1], ay - b[2]), fmin(b[3] - ax, b[4] - ay));
            double metric = dmin > 1e-9 ? al[(size_t)g * A + a] : 0;
            if (metric <= 0) continue;
            /* keep the YOLO_TOPK largest, sorted; on ties the earlier anchor */
            int k;
            if (ntop < YOLO_TOPK) k = ntop++;
            else if (metric > al[(size_t)g * A + top[YOLO_TOPK - 1]]) k = YOLO_TOPK - 1;
            else continue;
            while (k > 0 && al[(size_t)g * A + top[k - 1]] < metric) { top[k] = top[k - 1]; k--; }
            top[k] = a;
        }
        for (int k = 0; k < ntop; k++) pos[(size_t)g * A + top[k]] = 1;
    }
}

/* 2. per anchor: the box it keeps when several claim it (pos updated), and
   its target: fg, label and box (in grid units), zero when it has none */
static void yolo_assign_resolve(const yolo_loss_image *im, int G, const double *gt, const double *ov,
                                unsigned char *pos, unsigned char *fg, int *label, yolo_real *tbox) {
    int A = im->A;
    for (int a = 0; a < A; a++) {
        int count = 0, first = -1;
        for (int g = 0; g < G; g++) if (pos[(size_t)g * A + a]) { count++; if (first < 0) first = g; }
        if (count > 1) {   /* several boxes claim it: the one it overlaps most */
            int best = 0;
            for (int g = 1; g < G; g++) if (ov[(size_t)g * A + a] > ov[(size_t)best * A + a]) best = g;
            for (int g = 0; g < G; g++) pos[(size_t)g * A + a] = (g == best);
            first = best;
        }
        fg[a] = count > 0;
        label[a] = count > 0 ? (int)gt[5 * first] : 0;
        for (int i = 0; i < 4; i++) tbox[4 * a + i] = count > 0 ? (yolo_real)(gt[5 * first + 1 + i] / im->stride[a]) : 0;
    }
}

/* 3. per box: its best alignment pal [G] and best overlap pov [G] over its positives */
static void yolo_assign_norm(int G, int A, const double *ov, const double *al, const unsigned char *pos,
                             double *pal, double *pov) {
    for (int g = 0; g < G; g++) {
        pal[g] = pov[g] = 0;
        for (int a = 0; a < A; a++)
            if (pos[(size_t)g * A + a]) {
                pal[g] = fmax(pal[g], al[(size_t)g * A + a]);
                pov[g] = fmax(pov[g], ov[(size_t)g * A + a]);
            }
    }
}

/* 4. per anchor: the target score, its best normalised alignment over the boxes it is positive for */
static void yolo_assign_score(int G, int A, const double *al, const unsigned char *pos, const double *pal,
                              const double *pov, yolo_real *score) {
    for (int a = 0; a < A; a++) {
        score[a] = 0;
        for (int g = 0; g < G; g++)
            if (pos[(size_t)g * A + a]) {
                double t = al[(size_t)g * A + a] * pov[g] / (pal[g] + 1e-9);
                if (t > score[a]) score[a] = (yolo_real)t;
            }
    }
}

/* numerically stable BCE with logits and its derivative sigmoid(x) - t */
static double yolo_bce(double x, double t) { return fmax(x, 0) - x * t + log1p(exp(-fabs(x))); }

/* The three terms of image n, per anchor, and their gradient, still to be
   divided by S: written into lb->grads (the maps' layout). sums: box,
   cls, dfl and the sum of target scores. With reuse, CIoU's alpha is the
   one stored by the call that assigned. */
static void yolo_loss_terms(const yolo_loss_branch *lb, int n, yolo_loss_image *im, double sums[4]) {
    int A = im->A, nc = im->nc, no = im->no, reuse = lb->reuse;
    const yolo_assignment *as = lb->as;
    size_t o0 = (size_t)n * A;
    double box_l = 0, cls_l = 0, dfl_l = 0, ssum = 0, *P = im->P, *G = im->G;
    memset(G, 0, (size_t)A * no * sizeof(double));
    for (int a = 0; a < A; a++) {
        int fg = as->fg[o0 + a], lab = as->label[o0 + a];
        double sc = as->score[o0 + a];
        ssum += sc;
        for (int c = 0; c < nc; c++) {
            double x = P[(size_t)a * no + 4 * YOLO_REG_MAX + c], t = (fg && c == lab) ? sc : 0;
            cls_l += yolo_bce(x, t);
            G[(size_t)a * no + 4 * YOLO_REG_MAX + c] = (im->prob[(size_t)a * nc + c] - t) * YOLO_GAIN_CLS;
        }
        if (!fg) continue;
        double tb[4], gb[4], alpha = as->alpha[o0 + a];
        for (int i = 0; i < 4; i++) tb[i] = as->box[(o0 + a) * 4 + i];
        double ciou = yolo_ciou(im->pbox + 4 * a, tb, reuse ? &alpha : NULL, &alpha, gb);
        if (!reuse) as->alpha[o0 + a] = (yolo_real)alpha;
        box_l += (1 - ciou) * sc;
        /* corners -> side distances: x1 = ax - l, y1 = ay - t, x2 = ax + r, y2 = ay + b */
        double gdist[4] = { gb[0], gb[1], -gb[2], -gb[3] };
        const double *anc = im->anc + 2 * a;
        for (int s = 0; s < 4; s++) {
            const yolo_real *p = im->dflp + ((size_t)a * 4 + s) * YOLO_REG_MAX;
            double e = 0;
            for (int k = 0; k < YOLO_REG_MAX; k++) e += p[k] * k;
            /* target distance, clamped below the last bin; DFL spreads it on the two bins around it */
            double tgt = s < 2 ? anc[s] - tb[s] : tb[s] - anc[s - 2];
            tgt = fmin(fmax(tgt, 0), YOLO_REG_MAX - 1 - 0.01);
            int tl = (int)tgt;
            double wl = tl + 1 - tgt, wr = 1 - wl;
            dfl_l -= (wl * log(fmax(p[tl], 1e-300)) + wr * log(fmax(p[tl + 1], 1e-300))) / 4 * sc;
            for (int k = 0; k < YOLO_REG_MAX; k++) {
                double onehot = (k == tl ? wl : 0) + (k == tl + 1 ? wr : 0);
                double gce = (p[k] - onehot) / 4 * sc * YOLO_GAIN_DFL;             /* cross-entropy */
                double gexp = gdist[s] * sc * YOLO_GAIN_BOX * p[k] * (k - e);    /* d(1 - CIoU) through the expectation */
                G[(size_t)a * no + s * YOLO_REG_MAX + k] = gce + gexp;
            }
        }
    }
    for (int l = 0, a0 = 0; l < 3; l++) {
        int HW = lb->h[l] * lb->w[l];
        for (int c = 0; c < no; c++)
            for (int i = 0; i < HW; i++) lb->grads[l][((size_t)n * no + c) * HW + i] = (yolo_real)G[(size_t)(a0 + i) * no + c];
        a0 += HW;
    }
    sums[0] = box_l; sums[1] = cls_l; sums[2] = dfl_l; sums[3] = ssum;
}

/* On the CPU (section 10, and the loss's twin in section 5) a pass over
   memory runs on OpenMP's threads from this many values on: below it,
   starting the threads costs more than the second core gives. The threads
   split a pass into parts fixed by its shape, and every sum adds its parts
   in an order fixed by the shape, so that no result depends on the number
   of threads. */
#define YOLO_CPU_THREADS_FROM 16384

/* S = max(sum of target scores, 1) normalises all three terms: the gradient
   scaled by grad_scale / S (the sums are divided by the caller) */
static void yolo_loss_scale(yolo_loss_branch *lb, double ssum) {
    if (!lb->reuse) lb->as->score_sum = ssum > 1 ? ssum : 1;
    double k = lb->grad_scale / lb->as->score_sum;
    size_t no = 4 * YOLO_REG_MAX + lb->nc;
    for (int l = 0; l < 3; l++) {
        size_t n = (size_t)lb->B * no * lb->h[l] * lb->w[l];
        #pragma omp parallel for simd schedule(static) if (n > YOLO_CPU_THREADS_FROM)
        for (size_t i = 0; i < n; i++) lb->grads[l][i] *= (yolo_real)k;
    }
}

/* The CPU twin of the backend's loss op, one head branch: the steps above,
   image by image. */
static void yolo_cpu_loss(yolo_loss_branch *lb) {
    int nc = lb->nc, no = 4 * YOLO_REG_MAX + nc, B = lb->B, A = lb->A;
    yolo_assignment *as = lb->as;
    /* anchor points (cell centres) in grid units and in pixels, and strides: [A, 2], [A] */
    double *anc = (double *)yolo_xmalloc((size_t)A * 2 * sizeof(double));
    double *anc_px = (double *)yolo_xmalloc((size_t)A * 2 * sizeof(double));
    int *str = (int *)yolo_xmalloc((size_t)A * sizeof(int));
    for (int l = 0, a = 0; l < 3; l++)
        for (int i = 0; i < lb->h[l]; i++)
            for (int j = 0; j < lb->w[l]; j++, a++) {
                anc[2 * a] = j + 0.5; anc[2 * a + 1] = i + 0.5; str[a] = lb->stride[l];
                anc_px[2 * a] = anc[2 * a] * str[a]; anc_px[2 * a + 1] = anc[2 * a + 1] * str[a];
            }
    double *gt = (double *)yolo_xmalloc((size_t)(lb->ngt + 1) * 5 * sizeof(double));
    for (int i = 0; i < 5 * lb->ngt; i++) gt[i] = lb->gt[i];
    /* images are independent: one per thread; their sums [B, 4] are added
       in image order afterwards, so that the result does not depend on
       the number of threads */
    double *part = (double *)yolo_xcalloc((size_t)B * 4, sizeof(double));
    #pragma omp parallel
    {
    yolo_loss_image im = { A, nc, no, anc, anc_px, str };
    im.P = (double *)yolo_xmalloc((size_t)A * no * sizeof(double));
    im.G = (double *)yolo_xmalloc((size_t)A * no * sizeof(double));
    im.pbox = (double *)yolo_xmalloc((size_t)A * 4 * sizeof(double));
    im.pbox_px = (double *)yolo_xmalloc((size_t)A * 4 * sizeof(double));
    im.prob = (yolo_real *)yolo_xmalloc((size_t)A * nc * sizeof(yolo_real));
    im.dflp = (yolo_real *)yolo_xmalloc((size_t)A * 4 * YOLO_REG_MAX * sizeof(yolo_real));
    #pragma omp for schedule(dynamic)
    for (int n = 0; n < B; n++) {
        yolo_loss_decode(lb, n, &im);
        if (!lb->reuse) {
            int G = lb->gstart[n + 1] - lb->gstart[n];
            const double *g = gt + 5 * lb->gstart[n];
            size_t o0 = (size_t)n * A;
            double *ov = (double *)yolo_xcalloc((size_t)G * A, sizeof(double));       /* [G, A] */
            double *al = (double *)yolo_xcalloc((size_t)G * A, sizeof(double));       /* [G, A] */
            unsigned char *pos = (unsigned char *)yolo_xcalloc((size_t)G * A, 1);     /* [G, A] */
            double *pal = (double *)yolo_xcalloc(G, sizeof(double)), *pov = (double *)yolo_xcalloc(G, sizeof(double));
            yolo_assign_topk(&im, G, g, ov, al, pos);
            yolo_assign_resolve(&im, G, g, ov, pos, as->fg + o0, as->label + o0, as->box + o0 * 4);
            yolo_assign_norm(G, A, ov, al, pos, pal, pov);
            yolo_assign_score(G, A, al, pos, pal, pov, as->score + o0);
            free(ov); free(al); free(pos); free(pal); free(pov);
        }
        yolo_loss_terms(lb, n, &im, part + 4 * n);
    }
    free(im.P); free(im.G); free(im.pbox); free(im.pbox_px); free(im.prob); free(im.dflp);
    }
    double box_l = 0, cls_l = 0, dfl_l = 0, ssum = 0;
    for (int n = 0; n < B; n++) { box_l += part[4 * n]; cls_l += part[4 * n + 1]; dfl_l += part[4 * n + 2]; ssum += part[4 * n + 3]; }
    free(part);
    yolo_loss_scale(lb, ssum);
    lb->box = box_l; lb->cls = cls_l; lb->dfl = dfl_l;
    free(anc); free(anc_px); free(str); free(gt);
}

double yolo_loss_compute(yolo_model *m, yolo_loss *L, const yolo_real *targets, int ntargets, int reuse) {
    const yolo_backend *be = m->be;
    yolo_detect *d = m->layers[m->detect].det;
    int B = d->out[0][0].n, A = yolo_num_anchors(m);
    if (L->be && L->be != be) yolo_loss_free(L);
    L->be = be;
    /* ground truth in input pixels, grouped by image: gt [ntargets, 5] rows
       (class, x1, y1, x2, y2); image n owns rows [gstart[n], gstart[n+1]) */
    double imw = (double)d->out[0][0].w * d->strides[0], imh = (double)d->out[0][0].h * d->strides[0];
    yolo_real *gt = (yolo_real *)yolo_xcalloc((size_t)(ntargets + 1) * 5, sizeof(yolo_real));
    int *gstart = (int *)yolo_xcalloc(B + 1, sizeof(int)), k = 0;
    for (int n = 0; n < B; n++) {
        gstart[n] = k;
        for (int t = 0; t < ntargets; t++) {
            const yolo_real *r = targets + 6 * t;
            if ((int)r[0] != n) continue;
            double cx = r[2] * imw, cy = r[3] * imh, w = r[4] * imw, h = r[5] * imh;
            yolo_real *o = gt + 5 * k++;
            o[0] = r[1];
            o[1] = (yolo_real)(cx - w / 2); o[2] = (yolo_real)(cy - h / 2); o[3] = (yolo_real)(cx + w / 2); o[4] = (yolo_real)(cy + h / 2);
            if (o[1] + o[2] + o[3] + o[4] <= 0) k--;   /* the official masks boxes that sum to 0 */
        }
        gstart[n + 1] = k;
    }
    yolo_real *gt_be = (yolo_real *)be->alloc((size_t)(k + 1) * 5 * sizeof(yolo_real));
    int *gstart_be = (int *)be->alloc((size_t)(B + 1) * sizeof(int));
    be->upload(gt_be, gt, (size_t)k * 5 * sizeof(yolo_real));
    be->upload(gstart_be, gstart, (size_t)(B + 1) * sizeof(int));
    memset(L->items, 0, sizeof L->items);
    for (int b = 0; b < d->nbranch; b++) {
        double bw = (d->nbranch == 2 && b == 0) ? 0.25 : 1.0;   /* the auxiliary branch counts 0.25 */
        yolo_loss_branch lb;
        memset(&lb, 0, sizeof lb);
        lb.B = B; lb.nc = d->nc; lb.A = A; lb.ngt = k; lb.gt = gt_be; lb.gstart = gstart_be;
        for (int l = 0; l < 3; l++) {
            lb.h[l] = d->out[b][l].h; lb.w[l] = d->out[b][l].w; lb.stride[l] = d->strides[l];
            lb.maps[l] = d->out[b][l].data;
            if (d->out[b][l].wants_grad) yolo_grad_need(m, &d->out[b][l]);   /* for the backward; else for the op only */
            lb.grads[l] = d->out[b][l].grad ? d->out[b][l].grad : (yolo_real *)be->alloc(yolo_numel(&d->out[b][l]) * sizeof(yolo_real));
        }
        if (!reuse) yolo_assignment_resize(be, &L->as[b], B, A, d->nc);
        lb.as = &L->as[b]; lb.reuse = reuse; lb.grad_scale = bw * B * (L->scale > 0 ? L->scale : 1);
        lb.work = be->alloc(yolo_loss_work_bytes(B, A, k));
        for (int l = 0; l < 3; l++) if (d->out[b][l].grad) yolo_grad_add(m, &d->out[b][l]);   /* the loss writes them all */
        be->loss(&lb);
        be->release(lb.work);
        double S = L->as[b].score_sum;
        L->items[0] += bw * YOLO_GAIN_BOX * lb.box / S;
        L->items[1] += bw * YOLO_GAIN_CLS * lb.cls / S;
        L->items[2] += bw * YOLO_GAIN_DFL * lb.dfl / S;
        for (int l = 0; l < 3; l++) if (!d->out[b][l].grad) be->release(lb.grads[l]);
    }
    L->loss = (L->items[0] + L->items[1] + L->items[2]) * B;
    be->release(gt_be); be->release(gstart_be);
    free(gt); free(gstart);
    return L->loss;
}
#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 6. the optimizers and the schedule                                       */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
/* As torch.optim with the official three groups: 0 conv weights (with
   weight decay), 1 BatchNorm weights, 2 biases (no decay). SGD: Nesterov
   momentum, decay as an L2 term; Adam: L2 decay; AdamW: decoupled decay and
   amsgrad (the official passes amsgrad=True); Lion: betas (momentum, 0.99),
   decoupled decay (the official smart_optimizer's LION). */
/* (yolo_optim_kind is declared with the backend's yolo_update) */

/* The shape of the learning rate over the epochs, lf(e): linear from 1 to
   lrf (the default), cosine (--cos-lr), flat then cosine over the second
   half (--flat-cos-lr), constant (--fixed-lr). */
typedef enum { YOLO_LR_LINEAR, YOLO_LR_COS, YOLO_LR_FLAT_COS, YOLO_LR_FIXED } yolo_lr_shape;

/* The official schedule of one run (train_dual.py): of nb batches an
   epoch, the first nw = max(round(warmup_epochs nb), 100) warm up; the
   nominal batch of 64 is reached by accumulating gradients. */
typedef struct {
    const struct yolo_hyp *hyp;
    int epochs, batch;
    yolo_lr_shape shape;
    long nw;
} yolo_schedule;

typedef struct {
    yolo_optim_kind kind;
    double lr[3];            /* per parameter group: weights, BN weights, biases */
    double momentum;         /* SGD momentum, or Adam's and Lion's beta1 */
    double beta2, eps;       /* Adam: 0.999, 1e-8; Lion: 0.99 */
    double weight_decay;     /* on group 0 (conv weights) only */
    long step;
    double grad_scale;       /* the gradient is multiplied by it first (clipping): 1 by default */
    yolo_real *m, *v, *vmax; /* [nvalues] state: SGD and Lion use m only */
    /* [nvalues] each value's group, a yolo_pkind: conv weights, BatchNorm weights, biases, or past
       YOLO_P_BIAS a value not trained (running statistics, DFL's bins, --freeze), so that one op steps
       them all; written once, at yolo_optim_init */
    unsigned char *group;
    const struct yolo_backend *be;  /* where the state lives */
} yolo_optim;

/* Loss scaling, for training in half precision (--precision half: the
   official's AMP, torch's GradScaler with its defaults). Half's largest
   value is 65504 and its smallest normal 6.1e-5, while a backward pass's
   gradients reach far below that: stored in half (every conv's dL/dz) they
   would flush to zero. So the loss is differentiated times `scale` (2^16 at
   first), every gradient grows with it, and the step divides it out again
   (yolo_grad_clip_scale). A step whose gradient overflowed is skipped and
   the scale halved; after 2000 steps in a row that did not, it doubles.
   bf16 has float32's range and needs none: scale 1, never moved. */
#define YOLO_SCALER_GROWTH 2000      /* finite steps in a row that double the scale */
typedef struct {
    int on;
    double scale;
    long good;               /* finite steps in a row since the scale last moved */
} yolo_loss_scaler;

/* --- one value's step, as torch.optim ---
   SGD: g += wd w; m = momentum m + g; w -= lr (g + momentum m)   (Nesterov)
   Adam: g += wd w; AdamW: w *= 1 - lr wd; then
   m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2 (AdamW: v = max over steps);
   w -= lr / bc1 m / (sqrt(v) / sqrt(bc2) + eps), bc = 1 - beta^step
   Lion (the official utils/lion.py): w *= 1 - lr wd; w -= lr sign(b1 m + (1-b1) g);
   then m = b2 m + (1-b2) g. Every value moves by exactly lr (plus decay):
   only the sign of the interpolated momentum matters.
   lr is the value's group's, the decay wd only a conv weight's (0 for the
   others); a value of no trained group is left as it is. The CPU op and
   the CUDA kernel both run this (YOLO_HD), so both do the same arithmetic. */
static inline YOLO_HD void yolo_optim_value(const yolo_update *u, int group, yolo_real *w, const yolo_real *g,
                                            yolo_real *m, yolo_real *v, yolo_real *vmax, size_t i) {
    if (group > YOLO_P_BIAS) return;
    double lr = u->lr[group], wd = group == YOLO_P_WEIGHT ? u->wd : 0;
    double gi = g[i] * u->gs, wi = w[i];
    if (u->kind == YOLO_SGD) {
        gi += wd * wi;
        double buf = u->b1 * m[i] + gi;          /* first step: buf = g, as torch */
        m[i] = (yolo_real)buf;
        w[i] = (yolo_real)(wi - lr * (gi + u->b1 * buf));
        return;
    }
    if (u->kind == YOLO_LION) {
        wi *= 1 - lr * wd;
        double c = u->b1 * m[i] + (1 - u->b1) * gi;
        m[i] = (yolo_real)(u->b2 * m[i] + (1 - u->b2) * gi);
        w[i] = (yolo_real)(wi - lr * ((c > 0) - (c < 0)));   /* torch.sign: 0 at 0 */
        return;
    }
    if (u->kind == YOLO_ADAM) gi += wd * wi;   /* Adam: L2 in the gradient; AdamW: decoupled */
    else wi *= 1 - lr * wd;
    /* (v's terms in this order: nvcc and gcc then fuse the same multiply-adds as they did before this
       was shared, and each backend keeps its bits) */
    double mi = u->b1 * m[i] + (1 - u->b1) * gi, vi = (1 - u->b2) * gi * gi + u->b2 * v[i];
    m[i] = (yolo_real)mi; v[i] = (yolo_real)vi;
    if (vmax) { if (vi < vmax[i]) vi = vmax[i]; vmax[i] = (yolo_real)vi; }
    w[i] = (yolo_real)(wi - lr / u->bc1 * mi / (sqrt(vi) / sqrt(u->bc2) + u->eps));
}

/* The exponential moving average of the weights that the official trainer
   validates and saves: every floating tensor of the state_dict (BatchNorm
   statistics too), ema = d ema + (1 - d) w after each optimizer step, with
   d = 0.9999 (1 - exp(-updates / 2000)) so that early epochs follow the
   weights closely. */
typedef struct {
    yolo_real *values;       /* [nvalues] as yolo_model.values, backend memory */
    long updates;
    double decay, tau;       /* 0.9999, 2000 */
    const struct yolo_backend *be;
} yolo_ema;

/* The hyperparameters of a run, as the official hyp yaml names them
   (data/hyps/hyp.scratch-high.yaml gives the defaults of yolo_hyp_default). */
typedef struct yolo_hyp {
    double lr0, lrf, momentum, weight_decay;                  /* optimizer and schedule */
    double warmup_epochs, warmup_momentum, warmup_bias_lr;
    double box, cls, dfl;                                     /* loss gains: fixed (YOLO_GAIN_*), as the official's */
    double hsv_h, hsv_s, hsv_v;                               /* colour jitter gains */
    double degrees, translate, scale, shear, perspective;     /* random perspective */
    double flipud, fliplr, mosaic, mixup;                     /* probabilities */
} yolo_hyp;

YOLO_C_BEGIN
/* optimizers */
void yolo_optim_init(yolo_optim *o, const yolo_model *m, yolo_optim_kind kind,
                     double lr, double momentum, double weight_decay);
void yolo_optim_step(yolo_optim *o, yolo_model *m);
void yolo_optim_free(yolo_optim *o);
void yolo_ema_init(yolo_ema *e, const yolo_model *m);
/* every value rounded to half precision, as the official fresh run starts */
void yolo_model_round_half(yolo_model *m);
void yolo_ema_update(yolo_ema *e, const yolo_model *m);
void yolo_ema_free(yolo_ema *e);
/* training: the schedule and gradient clipping of train_dual.py, checkpoints */
double yolo_lr_factor(int epoch, int epochs, double lrf, yolo_lr_shape shape);
void yolo_schedule_init(yolo_schedule *s, const yolo_hyp *h, int epochs, int batch, long nb, yolo_lr_shape shape);
void yolo_schedule_start(const yolo_schedule *s, yolo_optim *o, int start_epoch);
int  yolo_schedule_batch(const yolo_schedule *s, yolo_optim *o, int epoch, long ni);
void yolo_schedule_epoch_end(const yolo_schedule *s, yolo_optim *o, int epoch);
/* one step's gradient factor: unscale (a loss scaler's 1 / scale) times clip_grad_norm_'s max_norm /
   (norm + 1e-6) where the unscaled gradient's norm is above max_norm; *norm gets that norm (not finite:
   the gradient overflowed, the step is to be skipped) */
double yolo_grad_clip_scale(const yolo_model *m, double unscale, double max_norm, double *norm);
void yolo_loss_scaler_init(yolo_loss_scaler *s, yolo_precision training);
/* after a step: an overflow (finite 0) halves the scale, the 2000th finite step in a row doubles it */
void yolo_loss_scaler_update(yolo_loss_scaler *s, int finite);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING

void yolo_optim_init(yolo_optim *o, const yolo_model *m, yolo_optim_kind kind, double lr, double momentum,
                     double weight_decay) {
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->lr[0] = o->lr[1] = o->lr[2] = lr;
    o->momentum = momentum; o->beta2 = kind == YOLO_LION ? 0.99 : 0.999; o->eps = 1e-8; o->weight_decay = weight_decay; o->grad_scale = 1;
    o->be = m->be;
    o->m = (yolo_real *)o->be->alloc(m->nvalues * sizeof(yolo_real));
    if (kind == YOLO_ADAM || kind == YOLO_ADAMW) {
        o->v = (yolo_real *)o->be->alloc(m->nvalues * sizeof(yolo_real));
        if (kind == YOLO_ADAMW) o->vmax = (yolo_real *)o->be->alloc(m->nvalues * sizeof(yolo_real));
    }
    /* each value's group: its tensor's kind; a frozen tensor's values (yolo_model_freeze comes first) and
       anything between tensors are not trained */
    unsigned char *group = (unsigned char *)yolo_xmalloc(m->nvalues ? m->nvalues : 1);
    memset(group, YOLO_P_FIXED, m->nvalues);
    for (int k = 0; k < m->nparams; k++) {
        const yolo_param *p = &m->params[k];
        memset(group + p->offset, p->frozen ? YOLO_P_FIXED : p->kind, p->numel);
    }
    o->group = (unsigned char *)o->be->alloc(m->nvalues);
    o->be->upload(o->group, group, m->nvalues);
    free(group);
}

void yolo_optim_free(yolo_optim *o) {
    if (o->be) { o->be->release(o->m); o->be->release(o->v); o->be->release(o->vmax); o->be->release(o->group); }
    memset(o, 0, sizeof *o);
}

/* every trained value in one op: its group's learning rate, decay on the conv weights */
void yolo_optim_step(yolo_optim *o, yolo_model *m) {
    o->step++;
    yolo_update u;
    u.kind = o->kind; u.gs = o->grad_scale; u.b1 = o->momentum; u.b2 = o->beta2; u.eps = o->eps;
    u.bc1 = 1 - pow(u.b1, (double)o->step); u.bc2 = 1 - pow(u.b2, (double)o->step);
    for (int k = 0; k < 3; k++) u.lr[k] = o->lr[k];
    u.wd = o->weight_decay;
    m->be->optim_update(&u, o->group, m->values, m->grads, o->m, o->v, o->vmax, m->nvalues);
}

/* The official train_dual.py starts every fresh run with
   model.half().float() (an old step meant for anchors): every weight and
   BatchNorm statistic rounded to half precision. A run that starts the
   same way follows the official numbers from the first step. */
void yolo_model_round_half(yolo_model *m) {
    yolo_real *h = yolo_fetch(m, m->values, m->nvalues);
    for (size_t i = 0; i < m->nvalues; i++) h[i] = (yolo_real)yolo_round_half((float)h[i]);
    m->be->upload(m->values, h, m->nvalues * sizeof(yolo_real));
    free(h);
}

void yolo_ema_init(yolo_ema *e, const yolo_model *m) {
    memset(e, 0, sizeof *e);
    e->be = m->be; e->decay = 0.9999; e->tau = 2000;
    e->values = (yolo_real *)e->be->alloc(m->nvalues * sizeof(yolo_real));
    e->be->copy(e->values, m->values, m->nvalues * sizeof(yolo_real));
}

void yolo_ema_update(yolo_ema *e, const yolo_model *m) {
    e->updates++;
    double d = e->decay * (1 - exp(-(double)e->updates / e->tau));
    e->be->lerp(e->values, m->values, d, m->nvalues);
}

void yolo_ema_free(yolo_ema *e) {
    if (e->be) e->be->release(e->values);
    memset(e, 0, sizeof *e);
}

/* --- the official training schedule --- */

/* lf(e), as the official lambdas compute it (same operations, same order) */
double yolo_lr_factor(int epoch, int epochs, double lrf, yolo_lr_shape shape) {
    const double pi = 3.14159265358979323846;
    int half = epochs / 2;
    switch (shape) {
    case YOLO_LR_COS: return (1 - cos(epoch * pi / epochs)) / 2 * (lrf - 1) + 1;
    case YOLO_LR_FLAT_COS: return epoch > half ? (1 - cos((epoch - half) * pi / half)) / 2 * (lrf - 1) + 1 : 1;
    case YOLO_LR_FIXED: return 1;
    default: return (1 - (double)epoch / epochs) * (1 - lrf) + lrf;
    }
}

/* warmup's numpy.interp(ni, [0, nw], [a, b]) */
static double yolo_warmup(long ni, long nw, double a, double b) {
    double xp[2] = { 0, (double)nw }, fp[2] = { a, b };
    return yolo_interp((double)ni, xp, fp, 2, a, b);
}

void yolo_schedule_init(yolo_schedule *s, const yolo_hyp *h, int epochs, int batch, long nb, yolo_lr_shape shape) {
    s->hyp = h; s->epochs = epochs; s->batch = batch; s->shape = shape;
    s->nw = (long)fmax(nearbyint(h->warmup_epochs * nb), 100);
}

/* The rates an epoch loop starts from. The official builds LambdaLR (which
   sets lr0 lf(0) at once), and a resumed run loads the optimizer state its
   checkpoint saved after the scheduler's step of epoch start - 1:
   lr0 lf(start - 1). Momentum: the optimizer's own, or the one saved after
   warmup. */
void yolo_schedule_start(const yolo_schedule *s, yolo_optim *o, int start_epoch) {
    const yolo_hyp *h = s->hyp;
    o->lr[0] = o->lr[1] = o->lr[2] = h->lr0 * yolo_lr_factor(start_epoch > 0 ? start_epoch - 1 : 0, s->epochs, h->lrf, s->shape);
    if (o->kind == YOLO_SGD) o->momentum = h->momentum;
}

/* Before batch ni (counted from the start of training) of `epoch`. During
   warmup (ni <= nw) every rate moves linearly towards lr0 lf(epoch): the
   bias rate falls from warmup_bias_lr, the others rise from 0, SGD's
   momentum rises from warmup_momentum, and the accumulation count from 1
   to 64 / batch. After warmup nothing changes within an epoch: the rates
   are those the last warmup batch or the last epoch's end left. Returns
   how many batches to accumulate per optimizer step. */
int yolo_schedule_batch(const yolo_schedule *s, yolo_optim *o, int epoch, long ni) {
    const yolo_hyp *h = s->hyp;
    double nominal = 64.0 / s->batch, acc = nearbyint(nominal);
    if (ni <= s->nw) {
        double target = h->lr0 * yolo_lr_factor(epoch, s->epochs, h->lrf, s->shape);
        acc = nearbyint(yolo_warmup(ni, s->nw, 1, nominal));
        o->lr[YOLO_P_BIAS] = yolo_warmup(ni, s->nw, h->warmup_bias_lr, target);
        o->lr[YOLO_P_WEIGHT] = o->lr[YOLO_P_BN_WEIGHT] = yolo_warmup(ni, s->nw, 0, target);
        if (o->kind == YOLO_SGD) o->momentum = yolo_warmup(ni, s->nw, h->warmup_momentum, h->momentum);
    }
    return acc < 1 ? 1 : (int)acc;
}

/* scheduler.step() after each epoch: every group at lr0 lf(epoch), which
   the next epoch trains at once warmup is over (so epoch e trains at
   lr0 lf(e - 1)) */
void yolo_schedule_epoch_end(const yolo_schedule *s, yolo_optim *o, int epoch) {
    o->lr[0] = o->lr[1] = o->lr[2] = s->hyp->lr0 * yolo_lr_factor(epoch, s->epochs, s->hyp->lrf, s->shape);
}

/* The unscaled gradient's total norm, and the factor that unscales it and
   clips it as clip_grad_norm_ would (max_norm / (norm + 1e-6) when that is
   below 1): the official's scaler.unscale_, then the clip. */
double yolo_grad_clip_scale(const yolo_model *m, double unscale, double max_norm, double *norm) {
    double n = sqrt(m->be->sumsq(m->grads, m->nvalues)) * unscale;
    if (norm) *norm = n;
    double c = max_norm / (n + 1e-6);
    return unscale * (c < 1 ? c : 1);
}

void yolo_loss_scaler_init(yolo_loss_scaler *s, yolo_precision training) {
    s->on = training == YOLO_FP16;
    s->scale = s->on ? 65536 : 1;
    s->good = 0;
}

void yolo_loss_scaler_update(yolo_loss_scaler *s, int finite) {
    if (!s->on) return;
    if (!finite) { s->scale *= 0.5; s->good = 0; }
    else if (++s->good == YOLO_SCALER_GROWTH) { if (isfinite((float)(s->scale * 2))) s->scale *= 2; s->good = 0; }
}
#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 7. the training step: forward and backward over the layers, --ckpt       */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
YOLO_C_BEGIN
/* forward over the graph on m->input. train = 1: batch statistics (the
   running ones updated), every branch. train = 0: running statistics, and
   a dual model skips its auxiliary branch (only the main one predicts).
   yolo_set_input takes the pointer to data [B, 3, H, W]: the forward
   uploads it, and a training step drops the image on the device between
   its readers and uploads it again, so data must stay valid until the
   forward returns (training: until yolo_backward returns). */
void yolo_set_input(yolo_model *m, int B, int H, int W, const yolo_real *data);
/* the same from pixels [B, 3, H, W] uint8 (what the loader builds): they
   are uploaded as bytes, a quarter of the floats, and divided by 255 by
   the backend (be->pixels_to_input) */
void yolo_set_input_pixels(yolo_model *m, int B, int H, int W, const unsigned char *pixels);
void yolo_forward(yolo_model *m, int train);
/* inference over every layer (a dual model's auxiliary branch too) that
   keeps every layer's output, to be inspected; yolo_forward(m, 0) keeps
   only the head's maps */
void yolo_forward_all(yolo_model *m);
/* backward from the detect maps' grads (written by yolo_loss_compute) to
   every parameter; parameter gradients add up until yolo_zero_grads */
void yolo_zero_grads(yolo_model *m);
void yolo_backward(yolo_model *m);
/* --freeze as the official: n = 1 freezes layers 0 .. layers[0]-1, a list
   of several the layers it names; their trained tensors get no gradient
   and the optimizer leaves them (BatchNorm statistics still follow the
   data, as in PyTorch's train mode; freeze before yolo_optim_init, which
   reads which values it trains). Returns how many tensors froze. */
int  yolo_model_freeze(yolo_model *m, const int *layers, int n);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* --- forward and backward over the graph --- */

static yolo_tensor *yolo_layer_input(yolo_model *m, const yolo_layer *L, int j) {
    return L->from[j] < 0 ? &m->input : m->layers[L->from[j]].out;
}

/* channel offset of chunk `idx` of a CBLinear layer */
static int yolo_chunk_offset(const yolo_layer *cbl, int idx) {
    int off = 0;
    for (int j = 0; j < idx; j++) off += cbl->args[j];
    return off;
}

/* The input [B, 3, H, W] held by the caller, as floats in [0, 1] or as
   uint8 pixels: the forward makes it on the backend (yolo_image_make). */
static void yolo_input_from_host(yolo_model *m, int B, int H, int W, const yolo_real *data, const unsigned char *pixels) {
    m->input_host = data;
    m->input_pixels = pixels;
    yolo_tensor_drop(m->be, &m->input);
    m->input.n = B; m->input.c = 3; m->input.h = H; m->input.w = W;
}
void yolo_set_input(yolo_model *m, int B, int H, int W, const yolo_real *data) {
    if (data) { yolo_input_from_host(m, B, H, W, data, NULL); return; }
    m->input_host = NULL;
    m->input_pixels = NULL;
    yolo_tensor_resize(m->be, &m->input, B, 3, H, W, 0);   /* the caller writes it */
}
void yolo_set_input_pixels(yolo_model *m, int B, int H, int W, const unsigned char *pixels) {
    yolo_input_from_host(m, B, H, W, NULL, pixels);
}

/* The image is the cheapest tensor to make again: the caller still holds
   it. In training it is dropped once its last reader has run forward and
   uploaded again for the first backward that reads it (the first conv's
   weight gradient, or with --ckpt the first conv run again); from then on
   it stays until the backward ends, as every later backward op may read
   it again. */
static void yolo_image_make(yolo_model *m) {
    if ((!m->input_host && !m->input_pixels) || m->input.data) return;
    yolo_tensor_take(m->be, &m->input);
    if (m->input_pixels)
        m->be->pixels_to_input(m->input.data, m->input_bytes ? m->input_bytes : m->input_pixels, yolo_numel(&m->input));
    else m->be->upload(m->input.data, m->input_host, yolo_numel(&m->input) * sizeof(yolo_real));
}
static void yolo_image_drop(yolo_model *m) {
    if (m->input_host || m->input_pixels) yolo_tensor_drop(m->be, &m->input);   /* else the caller's, written in place */
}

/* Upsample and Concat only copy their inputs into L->own */
static void yolo_copy_layer_run(yolo_model *m, yolo_layer *L) {
    if (L->type == YOLO_UPSAMPLE) {
        yolo_op_resize(m, yolo_layer_input(m, L, 0), 0, 0, &L->own);
        return;
    }
    for (int j = 0, off = 0; j < L->nfrom; j++) {
        yolo_tensor *t = yolo_layer_input(m, L, j);
        yolo_op_concat(m, t, 0, &L->own, off, t->c);
        off += t->c;
    }
}

/* Layer outputs, like a block's inside, are dropped in training. One that can be made
   again cheaply is dropped once its last reader has run forward, and made
   again only for a reader whose backward reads it (a block's convs need
   their input for the weight gradient; Upsample, Concat and CBFuse read
   only gradients). Cheap to make again: a copy layer's output (from its
   inputs, made again first if they were dropped); without --ckpt a
   block's (SiLU(BN(z)) of its last conv or convs, whose z it keeps); with
   --ckpt a Conv layer's, by running it again on its input (one conv, and
   the costliest outputs to keep: the first layers' at full resolution). */
static int yolo_output_remakeable(const yolo_model *m, const yolo_layer *L) {
    switch (L->type) {
    case YOLO_UPSAMPLE: case YOLO_CONCAT: case YOLO_CONV: return 1;
    case YOLO_ACONV: case YOLO_ADOWN: case YOLO_ELAN1: case YOLO_REPNCSPELAN4: case YOLO_SPPELAN:
        return !m->ckpt;
    default: return 0;
    }
}

static void yolo_layer_forward(yolo_model *m, yolo_layer *L, int train);
static void yolo_input_make(yolo_model *m, const yolo_layer *L, int j);
static void yolo_input_drop(yolo_model *m, const yolo_layer *L, int j);

/* L's training forward again, the running statistics left alone: the
   same numbers as the first time */
static void yolo_layer_rerun(yolo_model *m, yolo_layer *L) {
    double momentum = m->bn_momentum;
    m->bn_momentum = 0;
    yolo_layer_forward(m, L, 1);
    m->bn_momentum = momentum;
}

/* a conv's output y made again from its z (yolo_conv_again) */
static void yolo_conv_output_make(yolo_model *m, yolo_conv *c) {
    yolo_tensor_take(m->be, &c->y);
    yolo_conv_again(m, c);
}

/* L's output made again, if it was dropped */
static void yolo_output_make(yolo_model *m, yolo_layer *L) {
    if (L->out == &m->input) { yolo_image_make(m); return; }   /* Silence passes the image on */
    if (L->out->data) return;
    switch (L->type) {
    case YOLO_CONV: if (m->ckpt) break; yolo_conv_output_make(m, &L->b.conv); return;
    case YOLO_ACONV: yolo_conv_output_make(m, &L->b.down.cv1); return;
    case YOLO_ELAN1: case YOLO_REPNCSPELAN4: yolo_conv_output_make(m, &L->b.elan.cv4); return;
    case YOLO_SPPELAN: yolo_conv_output_make(m, &L->b.spp.cv5); return;
    case YOLO_ADOWN:
        yolo_conv_output_make(m, &L->b.down.cv1);
        yolo_conv_output_make(m, &L->b.down.cv2);
        yolo_tensor_take(m->be, L->out);
        yolo_down_concat(m, &L->b.down);
        yolo_tensor_drop(m->be, &L->b.down.cv1.y);
        yolo_tensor_drop(m->be, &L->b.down.cv2.y);
        return;
    default: break;
    }
    int made[YOLO_MAX_FROM] = { 0 };   /* from the inputs, made again first */
    for (int j = 0; j < L->nfrom; j++) {
        made[j] = !yolo_layer_input(m, L, j)->data;
        if (made[j]) yolo_input_make(m, L, j);
    }
    if (L->type == YOLO_CONV) {   /* --ckpt: the conv again; its z is not wanted */
        yolo_layer_rerun(m, L);
        yolo_tensor_drop(m->be, &L->b.conv.z);
    } else {
        yolo_tensor_take(m->be, L->out);
        yolo_copy_layer_run(m, L);
    }
    for (int j = 0; j < L->nfrom; j++) if (made[j]) yolo_input_drop(m, L, j);
}
static void yolo_output_drop(yolo_model *m, yolo_layer *L) {
    if (L->out != &m->input) yolo_tensor_drop(m->be, L->out);   /* (the image: the step drops it) */
}

/* L's input j, if remakeable: made again, or dropped */
static void yolo_input_make(yolo_model *m, const yolo_layer *L, int j) {
    if (yolo_reads_image(m, L, j)) { yolo_image_make(m); return; }
    yolo_layer *src = &m->layers[L->from[j]];
    if (yolo_output_remakeable(m, src)) yolo_output_make(m, src);
}
static void yolo_input_drop(yolo_model *m, const yolo_layer *L, int j) {
    if (yolo_reads_image(m, L, j)) return;   /* dropped by the step itself */
    yolo_layer *src = &m->layers[L->from[j]];
    if (yolo_output_remakeable(m, src)) yolo_output_drop(m, src);
}

/* L is the last layer to read its input j */
static int yolo_reads_last(const yolo_model *m, const yolo_layer *L, int j) {
    return L->from[j] >= 0 && m->layers[L->from[j]].last_reader == L - m->layers;
}


/* what L's forward makes (section 9, "shapes"): its block's shapes, or its own output's */
static void yolo_layer_shapes(yolo_model *m, yolo_layer *L, int train) {
    yolo_tensor *x = yolo_layer_input(m, L, 0), *last = yolo_layer_input(m, L, L->nfrom - 1);
    switch (L->type) {
    case YOLO_CONV: case YOLO_CBLINEAR: yolo_conv_shapes(m, &L->b.conv, x->n, x->h, x->w, train); break;
    case YOLO_ACONV: case YOLO_ADOWN: yolo_down_shapes(m, &L->b.down, x, train); break;
    case YOLO_ELAN1: case YOLO_REPNCSPELAN4: yolo_elan_shapes(m, &L->b.elan, x, train); break;
    case YOLO_SPPELAN: yolo_sppelan_shapes(m, &L->b.spp, x, train); break;
    case YOLO_UPSAMPLE: yolo_shape(m, &L->own, &L->own, x->n, x->c, 2 * x->h, 2 * x->w, train); break;
    case YOLO_CONCAT:
        if (L->convs_read) {   /* the convs that read it write its gradient into its inputs' (yolo_concat_grads) */
            yolo_tensor *parts[YOLO_MAX_PARTS];
            for (int j = 0; j < L->nfrom; j++) parts[j] = yolo_layer_input(m, L, j);
            yolo_concat_grads(&L->own, parts, L->nfrom);
        }
        yolo_shape(m, &L->own, &L->own, x->n, L->c_out, x->h, x->w, train);
        break;
    case YOLO_CBFUSE: yolo_shape(m, &L->own, &L->own, last->n, last->c, last->h, last->w, train); break;
    case YOLO_DDETECT: case YOLO_DUALDDETECT: yolo_detect_shapes(m, L, train); break;
    default: break;
    }
}

static void yolo_layer_forward(yolo_model *m, yolo_layer *L, int train) {
    yolo_tensor *x = yolo_layer_input(m, L, 0);
    yolo_life_run outer = yolo_life_begin(m, L, train, 0);   /* in training, its blocks' tables run */
    int shapes = m->nshapes;
    yolo_layer_shapes(m, L, train);
    switch (L->type) {
    case YOLO_SILENCE: L->out = x; break;
    case YOLO_CONV: case YOLO_CBLINEAR: yolo_conv_forward(m, &L->b.conv, x, train); break;
    case YOLO_ACONV: case YOLO_ADOWN: yolo_down_forward(m, &L->b.down, x, train); break;
    case YOLO_ELAN1: case YOLO_REPNCSPELAN4: yolo_elan_forward(m, &L->b.elan, x, train); break;
    case YOLO_SPPELAN: yolo_sppelan_forward(m, &L->b.spp, x, train); break;
    case YOLO_UPSAMPLE: case YOLO_CONCAT: yolo_copy_layer_run(m, L); break;
    case YOLO_CBFUSE: {
        /* sum of the chosen CBLinear chunks, resized to the last input */
        yolo_tensor *last = yolo_layer_input(m, L, L->nfrom - 1);
        yolo_op_concat(m, last, 0, &L->own, 0, last->c);
        for (int j = 0; j < L->nfrom - 1; j++) {
            const yolo_layer *src = &m->layers[L->from[j]];
            yolo_op_resize(m, src->out, yolo_chunk_offset(src, L->args[j]), 1, &L->own);
        }
        break;
    }
    case YOLO_DDETECT: case YOLO_DUALDDETECT: yolo_detect_forward(m, L, train); break;
    default: break;
    }
    yolo_shapes_end(m, shapes);
    yolo_life_end(m, outer);
}

/* --- what a training step keeps, and recompute checkpointing (--ckpt) ---
   Every tensor is dropped as soon as its last reader is done, and made
   again just before a backward op that reads it:
   - a gradient exists from the first backward op that adds into it to
     the op that reads it (yolo_grad_need, yolo_grad_done); the training
     forward takes none, the loss takes the head's maps';
   - inside a block only the convs' outputs z are kept to the backward,
     each given back after its own backward: what each block declares
     in its lifetime table (section 3), run between its ops by
     yolo_life_begin/yolo_life_end around every layer's pass (section 9);
   - a layer's output is dropped once its last reader has run forward,
     and made again for each reader's backward (yolo_output_make).
   With m->ckpt the training forward drops a block's z too as soon as the
   block is done, and yolo_backward runs the block's forward again just
   before its backward, then drops it again: the z of one block instead
   of all of them, for the price of a second forward. The rerun uses
   BatchNorm momentum 0, so the running statistics move once per step,
   and it computes the same numbers, so the gradients are the same. */

/* 1: a training step keeps its blocks' z from the forward to the backward; 0 (--ckpt): each block's
   backward makes them again */
static int yolo_step_keeps_z(const yolo_model *m) { return !m->ckpt; }

static int yolo_layer_has_inside(const yolo_layer *L) {
    return L->type != YOLO_SILENCE && L->type != YOLO_UPSAMPLE && L->type != YOLO_CONCAT && L->type != YOLO_CBFUSE;
}

static int yolo_is_head_map(const yolo_layer *L, const yolo_tensor *t) {
    for (int b = 0; L->det && b < L->det->nbranch; b++)
        for (int l = 0; l < 3; l++) if (t == &L->det->out[b][l]) return 1;
    return 0;
}

static void yolo_layer_drop_inside(yolo_model *m, yolo_layer *L) {
    for (int k = L->act0; k < L->act1; k++)
        if (m->acts[k] != L->out && !yolo_is_head_map(L, m->acts[k])) yolo_tensor_free(m->be, m->acts[k]);
}

/* the gradient of a layer's output, released after the layer's own backward */
static void yolo_grad_drop(yolo_model *m, yolo_layer *L) {
    if (L->out != &m->input && !L->det) yolo_grad_done(m, L->out);
}

/* all: inference over every layer, every output kept (to be inspected);
   else inference keeps only what later layers read: a layer's inside goes
   after its forward, its output after its last reader's */
static void yolo_forward_layers(yolo_model *m, int train, int all) {
    for (int i = 0; i < m->nlayers; i++) {
        yolo_layer *L = &m->layers[i];
        if (!all && !train && !L->infer) continue;
        yolo_layer_forward(m, L, train);
        if (yolo_layer_has_inside(L) && (m->ckpt || (!train && !all))) yolo_layer_drop_inside(m, L);
        if (train) {
            for (int j = 0; j < L->nfrom; j++) if (yolo_reads_last(m, L, j)) yolo_input_drop(m, L, j);
            if (m->input_last_reader == i) yolo_image_drop(m);
        } else if (!all)
            for (int j = 0; j < L->nfrom; j++) {
                yolo_layer *src = L->from[j] >= 0 ? &m->layers[L->from[j]] : NULL;
                if (src && src->last_infer_reader == i && src->out != &m->input) yolo_tensor_drop(m->be, src->out);
            }
    }
}

/* a region of a pass as a CUDA graph, where the backend records them (section 9): the
   forward's layers (pass 0 inference, 1 training), the training backward (2) */
static int yolo_region_begin(yolo_model *m, int pass);
static void yolo_region_end(yolo_model *m, int how);

/* train = 1: BatchNorm on batch statistics (and running statistics
   updated), every branch computed; no gradient is taken (the loss writes
   the head maps', the backward takes the others zeroed). train = 0:
   running statistics, inference layers only. */
void yolo_forward(yolo_model *m, int train) {
    /* Every pass starts from the weights alone, whatever an earlier pass
       left (an inference pass keeps the head's maps), so that its
       allocations are the planned ones: a training step's go where the
       plan placed them, and the next validation batch fits where the
       first did. A training step gives back the folded weights too, as
       the weights are about to move. */
    for (int i = 0; i < m->nacts; i++)
        if (m->acts[i] != &m->input) { yolo_tensor_drop(m->be, m->acts[i]); yolo_grad_done(m, m->acts[i]); }
    yolo_pixels_release(m);
    yolo_model_unstage_train(m);   /* a step without its backward (or under way) gives its staged weights back too */
    if (train) {
        yolo_model_unfold(m);
        m->be->place(m->place[m->place_next], m->nplace[m->place_next]);
        m->place_next = 1;
        if (m->stages_train && m->precision != YOLO_FP32 && !m->ckpt) yolo_model_stage_train(m);
    } else m->be->place(NULL, 0);
    if (!train && m->fused && m->precision != YOLO_FP32 && m->staged != m->precision) yolo_model_stage(m);
    m->store = train || m->fused ? m->precision : YOLO_FP32;
    if (train) yolo_pixels_hold(m);
    yolo_image_make(m);     /* uploaded (again) */
    int graph = yolo_region_begin(m, train ? 1 : 0);
    yolo_forward_layers(m, train, 0);
    yolo_region_end(m, graph);
}

void yolo_forward_all(yolo_model *m) {
    for (int i = 0; i < m->nacts; i++)   /* an earlier folded pass's slots: this pass (unfolded perhaps) makes its own */
        if (m->acts[i]->ctot) yolo_tensor_drop(m->be, m->acts[i]);
    m->be->place(NULL, 0);
    m->store = YOLO_FP32;
    yolo_image_make(m);
    yolo_forward_layers(m, 0, 1);
}

void yolo_zero_grads(yolo_model *m) { m->be->zero(m->grads, m->nvalues * sizeof(yolo_real)); }

/* Walks the layers backwards. Each block adds into the gradient of the
   tensors it read, so a tensor read by several layers (skip connections,
   CBLinear chunks) gets the sum. Parameter gradients accumulate too, so
   several backwards sum up until yolo_zero_grads. */
void yolo_backward(yolo_model *m) {
    int graph = yolo_region_begin(m, 2);
    for (int i = m->nlayers - 1; i >= 0; i--) {
        yolo_layer *L = &m->layers[i];
        yolo_tensor *x = yolo_layer_input(m, L, 0);
        int recompute = m->ckpt && yolo_layer_has_inside(L);
        /* the gradients this backward reads and, for the layers without
           convs, writes (a conv takes its input's when it writes it) */
        yolo_grad_need(m, L->out);
        yolo_grad_zeroed(m, L->out);   /* its readers' backwards wrote it, or none did: then it is 0 */
        if (!yolo_layer_has_inside(L))
            for (int j = 0; j < L->nfrom; j++) yolo_grad_need(m, yolo_layer_input(m, L, j));
        else if (!L->det || recompute)   /* (the head makes its inputs level by level, but run again reads them all) */
            for (int j = 0; j < L->nfrom; j++) yolo_input_make(m, L, j);   /* its convs read them */
        if (recompute) yolo_layer_rerun(m, L);   /* the inside again */
        yolo_life_run outer = yolo_life_begin(m, L, 1, 1);
        switch (L->type) {
        case YOLO_CONV: case YOLO_CBLINEAR: yolo_conv_backward(m, &L->b.conv); break;
        case YOLO_ACONV: case YOLO_ADOWN: yolo_down_backward(m, &L->b.down); break;
        case YOLO_ELAN1: case YOLO_REPNCSPELAN4: yolo_elan_backward(m, &L->b.elan); break;
        case YOLO_SPPELAN: yolo_sppelan_backward(m, &L->b.spp); break;
        case YOLO_UPSAMPLE:
            m->be->resize_backward(&L->own, x, 0, yolo_grad_add(m, x));
            break;
        case YOLO_CONCAT:   /* its readers wrote its inputs' gradients already where only convs read it */
            for (int j = 0, off = 0; !L->own.nparts && j < L->nfrom; j++) {
                yolo_tensor *t = yolo_layer_input(m, L, j);
                yolo_op_concat_backward(m, &L->own, off, t, t->c);
                off += t->c;
            }
            break;
        case YOLO_CBFUSE: {
            yolo_tensor *last = yolo_layer_input(m, L, L->nfrom - 1);
            yolo_op_add_backward(m, &L->own, last);
            for (int j = 0; j < L->nfrom - 1; j++) {
                yolo_layer *src = &m->layers[L->from[j]];
                yolo_grad_zeroed(m, src->out);   /* the resize's backward adds into its chunk */
                m->be->resize_backward(&L->own, src->out, yolo_chunk_offset(src, L->args[j]), 1);
            }
            break;
        }
        case YOLO_DDETECT: case YOLO_DUALDDETECT: yolo_detect_backward(m, L); break;
        default: break;   /* Silence */
        }
        yolo_life_end(m, outer);
        if (recompute) yolo_layer_drop_inside(m, L);
        for (int j = 0; j < L->nfrom; j++) yolo_input_drop(m, L, j);
        yolo_grad_drop(m, L);
        if (L->out != &m->input) yolo_tensor_drop(m->be, L->out);   /* its readers' backwards came first */
        for (int k = L->param0; k < L->param1; k++)   /* a frozen tensor has no gradient (requires_grad=False) */
            if (m->params[k].frozen) m->be->zero(m->grads + m->params[k].offset, m->params[k].numel * sizeof(yolo_real));
        if (m->grads_final) m->grads_final(m->grads_final_ctx, m, i);   /* no later layer adds to them */
    }
    yolo_region_end(m, graph);
    yolo_image_drop(m);
    yolo_pixels_release(m);
    yolo_model_unstage_train(m);
    m->be->place(NULL, 0);   /* the planned step ends */
}

int yolo_model_freeze(yolo_model *m, const int *layers, int n) {
    int frozen = 0;
    for (int k = 0; k < m->nparams; k++) {
        yolo_param *p = &m->params[k];
        int layer = atoi(p->name + 6), hit = 0;   /* model.LAYER.... */
        for (int i = 0; i < (n > 1 ? n : 0) && !hit; i++) hit = layers[i] == layer;
        if (n == 1) hit = layer < layers[0];
        if (hit && p->kind <= YOLO_P_BIAS) { p->frozen = 1; frozen++; }
    }
    return frozen;
}
#endif /* YOLOV9_IMPLEMENTING */


/* ======================================================================== */
/* PART TWO: the machinery                                                  */
/* ======================================================================== */
/* What the model needs around it: where its memory goes, the files it is
   described and stored in, the data it learns from, how it is measured,
   the programs' command line and the plots. */

/* ------------------------------------------------------------------------ */
/* 8. utilities: errors, host memory, files, random numbers, timers         */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
YOLO_C_BEGIN
/* mkdir -p (0 when the folder is there at the end); a run's output folder
   PROJECT/NAME (NAME2, NAME3, ... when taken, unless exist_ok), created,
   or -1 with err naming it */
int  yolo_mkdirs(const char *path);
int  yolo_run_dir(const char *project, const char *name, int exist_ok, char *out, size_t cap, char *err);
/* The one way a number is read, by every flag, checkpoint metadata field,
   yaml and hyp value: text, whole (spaces around it aside), as an integer
   (integer != 0: a sign and digits) or a real number (decimal; nan is in
   no range), inside [lo, hi]. 0 and *out; else -1 and err, one line that
   names the source, the field and the range:
     "WHERE: WHAT 'TEXT' is not an integer in [LO, HI]"
   WHERE is the program or the file (and line), WHAT the flag or key. */
int  yolo_read_number(const char *text, int integer, double lo, double hi, const char *where, const char *what,
                      double *out, char *err);
int  yolo_read_int(const char *text, int lo, int hi, const char *where, const char *what, int *out, char *err);
int  yolo_read_long(const char *text, long lo, long hi, const char *where, const char *what, long *out, char *err);
#define YOLO_ABSENT INT_MIN  /* an int value not given (a flag or argument without a default): in no range */
/* fopen of a file to write, or NULL and a line on stderr naming path; its
   fclose: 0, or -1 and such a line when a write or the close failed */
FILE *yolo_create_file(const char *path, const char *mode);
int  yolo_close_written(FILE *f, const char *path);
int  yolo_count_files(const char *folder, const char *suffix);   /* names in folder ending in suffix */
/* A file a flag names (--data, --cfg, --hyp), found as the official
   check_file finds it: as given when it exists, else a relative name
   looked for at any depth under data/, models/ and utils/ of the current
   folder. 0 with out set (as given when given exists or is ""); 1 when
   not found (out as given); -1 when several match (err lists them). */
int  yolo_find_file(const char *given, char *out, size_t cap, char *err);
/* seconds on a monotonic-enough wall clock; ||a - b|| / ||b|| */
double yolo_now(void);
double yolo_rel_err(const yolo_real *a, const float *b, size_t n);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING

/* Errors are one line that says where and what: "file:line: what". They
   are written into a caller's buffer; programs print it and exit non-zero. */
static int yolo_errorf(char *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, YOLO_ERR, fmt, ap);
        va_end(ap);
        for (char *c = err; *c; c++) if ((unsigned char)*c < ' ') *c = '?';   /* one line, whatever a file held */
    }
    return -1;
}

static void *yolo_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) { fprintf(stderr, "yolov9: out of host memory (%zu bytes)\n", bytes); exit(1); }
    return p;
}
static void *yolo_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) { fprintf(stderr, "yolov9: out of host memory (%zu bytes)\n", n * size); exit(1); }
    return p;
}
static void *yolo_xrealloc(void *p, size_t bytes) {
    p = realloc(p, bytes ? bytes : 1);
    if (!p) { fprintf(stderr, "yolov9: out of host memory (%zu bytes)\n", bytes); exit(1); }
    return p;
}
/* Room for n items of `item` bytes in the array p, which has room for
   *cap: when it has less, *cap doubles (from 16) until n fit and p moves.
   The file's one grow-by-doubling; out of memory exits, as yolo_xmalloc. */
static void *yolo_grow(void *p, size_t item, long n, int *cap) {
    if (n <= *cap) return p;
    long c = *cap > 16 ? *cap : 16;
    while (c < n) c *= 2;
    if (c > INT_MAX) { fprintf(stderr, "yolov9: an array of more than %d items\n", INT_MAX); exit(1); }
    *cap = (int)c;
    return yolo_xrealloc(p, (size_t)c * item);
}

/* Reading what a user names: only a regular file is opened (a FIFO or a
   device would block or never end, a folder is no file), of at most
   max_bytes when max_bytes > 0. NULL with the reason in err. */
static FILE *yolo_open_file(const char *path, const char *what, long max_bytes, long *size, char *err) {
    struct stat st;
    if (stat(path, &st)) { yolo_errorf(err, "%s: cannot open %s", path, what); return NULL; }
    if (!S_ISREG(st.st_mode)) { yolo_errorf(err, "%s: %s is not a regular file", path, what); return NULL; }
    if (max_bytes > 0 && st.st_size > max_bytes) { yolo_errorf(err, "%s: %s of %lld bytes, more than the %ld allowed", path, what, (long long)st.st_size, max_bytes); return NULL; }
    FILE *f = fopen(path, "rb");
    if (!f) { yolo_errorf(err, "%s: cannot open %s", path, what); return NULL; }
    if (size) *size = (long)st.st_size;
    return f;
}

/* The whole of a small text file, NUL-terminated; a NUL inside is an error. */
static char *yolo_read_text(const char *path, const char *what, long max_bytes, char *err) {
    long size;
    FILE *f = yolo_open_file(path, what, max_bytes, &size, err);
    if (!f) return NULL;
    char *text = (char *)yolo_xmalloc((size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = 0;
    if (strlen(text) != got) { free(text); yolo_errorf(err, "%s: %s holds a NUL byte", path, what); return NULL; }
    return text;
}

/* One line of a text file into line[cap] without its newline: 1, 0 at the
   end, -1 (err says where) for a line too long or a NUL byte. */
static int yolo_read_line(FILE *f, char *line, int cap, const char *path, int lineno, char *err) {
    if (!fgets(line, cap, f)) return 0;
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    else if (!feof(f)) return yolo_errorf(err, "%s:%d: line longer than %d characters (or holding a NUL byte)", path, lineno, cap - 2);
    return 1;
}

/* splitmix64: a small, good, reproducible generator for initialisation
   and tests */
typedef struct { uint64_t s; } yolo_rng;
static uint64_t yolo_rng_u64(yolo_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double yolo_rng_uniform(yolo_rng *r) { return (yolo_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

/* mkdir -p: 0 when path is a folder at the end */
int yolo_mkdirs(const char *path) {
    char p[2048];
    struct stat st;
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') { *s = 0; mkdir(p, 0755); *s = '/'; }
    int rc = mkdir(p, 0755), why = errno;
    if (rc && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    errno = why;
    return rc;
}

FILE *yolo_create_file(const char *path, const char *mode) {
    FILE *f = fopen(path, mode);
    if (!f) fprintf(stderr, "%s: cannot write (%s)\n", path, strerror(errno));
    return f;
}

/* fclose of a file written with stdio: 0, or -1 and a line naming it when
   any of its writes failed (a full disk shows only here) */
int yolo_close_written(FILE *f, const char *path) {
    int bad = ferror(f), why = errno;
    if (fclose(f) && !bad) { bad = 1; why = errno; }
    if (bad) fprintf(stderr, "%s: cannot write (%s)\n", path, strerror(why));
    return bad ? -1 : 0;
}

/* files in folder whose names end in suffix */
int yolo_count_files(const char *folder, const char *suffix) {
    DIR *d = opendir(folder);
    int n = 0;
    size_t k = strlen(suffix);
    for (struct dirent *e; d && (e = readdir(d));) n += strlen(e->d_name) > k && !strcmp(e->d_name + strlen(e->d_name) - k, suffix);
    if (d) closedir(d);
    return n;
}

/* The output folder of a run, as the official increment_path:
   PROJECT/NAME, or NAME2, NAME3, ... when it exists (unless exist_ok).
   Created, or -1 with err naming the folder that could not be (or too
   long a path for out[cap]). */
int yolo_run_dir(const char *project, const char *name, int exist_ok, char *out, size_t cap, char *err) {
    struct stat st;
    size_t n = (size_t)snprintf(out, cap, "%s/%s", project, name);
    for (int k = 2; n < cap && !exist_ok && !stat(out, &st); k++) n = (size_t)snprintf(out, cap, "%s/%s%d", project, name, k);
    if (n >= cap) return yolo_errorf(err, "--project/--name: the folder '%.60s...' is a path longer than %zu characters", out, cap - 1);
    if (yolo_mkdirs(out)) return yolo_errorf(err, "%s: cannot create the run's folder (%s)", out, strerror(errno));
    return 0;
}

int yolo_read_number(const char *text, int integer, double lo, double hi, const char *where, const char *what,
                     double *out, char *err) {
    const char *s = text, *digits;
    while (isspace((unsigned char)*s)) s++;
    digits = s + (*s == '+' || *s == '-');
    char *end = NULL;
    double x = NAN;
    errno = 0;
    if (integer && isdigit((unsigned char)*digits)) {
        long long v = strtoll(s, &end, 10);
        if (errno != ERANGE) x = (double)v;
    } else if (!integer && *digits && !(digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')))
        x = strtod(s, &end);
    while (end && isspace((unsigned char)*end)) end++;
    if (end && end > s && !*end && x >= lo && x <= hi) { *out = x; return 0; }
    return yolo_errorf(err, "%s%s%s '%.40s' is not %s in [%.16g, %.16g]", where ? where : "", where ? ": " : "", what, text,
                       integer ? "an integer" : "a number", lo, hi);
}
int yolo_read_int(const char *text, int lo, int hi, const char *where, const char *what, int *out, char *err) {
    double x;
    if (yolo_read_number(text, 1, lo, hi, where, what, &x, err)) return -1;
    *out = (int)x;
    return 0;
}
int yolo_read_long(const char *text, long lo, long hi, const char *where, const char *what, long *out, char *err) {
    double x;
    const long exact = 1L << 53;   /* every integer of a double's range */
    if (yolo_read_number(text, 1, (double)(lo > -exact ? lo : -exact), (double)(hi < exact ? hi : exact), where, what, &x, err)) return -1;
    *out = (long)x;
    return 0;
}

/* --- the files the flags name, looked up as the official check_file --- */

/* every file folder/.../name, at any depth (hidden folders skipped, as
   Python's recursive glob): counted in *n, the first cap kept in found */
static void yolo_find_under(const char *folder, const char *name, int depth, char found[][1024], int cap, int *n) {
    DIR *d = opendir(folder);
    if (!d) return;
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", folder, name);
    if (!stat(p, &st) && S_ISREG(st.st_mode)) { if (*n < cap) snprintf(found[*n], 1024, "%s", p); (*n)++; }
    for (struct dirent *e; depth < 16 && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", folder, e->d_name);
        if (!stat(p, &st) && S_ISDIR(st.st_mode)) yolo_find_under(p, name, depth + 1, found, cap, n);
    }
    closedir(d);
}

int yolo_find_file(const char *given, char *out, size_t cap, char *err) {
    struct stat st;
    snprintf(out, cap, "%s", given);
    if (!*given || !stat(given, &st)) return 0;
    if (given[0] == '/') return 1;
    char found[4][1024];
    int n = 0;
    static const char *folders[] = { "data", "models", "utils" };
    for (int k = 0; k < 3; k++) yolo_find_under(folders[k], given, 0, found, 4, &n);
    if (n == 1) { snprintf(out, cap, "%s", found[0]); return 0; }
    if (!n) return 1;
    char list[3 * 1024 + 64] = "";
    for (int k = 0, o = 0; k < n && k < 4; k++) o += snprintf(list + o, sizeof list - o, "%s%s", k ? ", " : "", found[k]);
    return yolo_errorf(err, "%s: %d files match under data/, models/ and utils/, give one: %s%s", given, n, list, n > 4 ? ", ..." : "");
}

double yolo_now(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* numpy.interp for increasing xp, with numpy's own arithmetic (the slope
   first), so that a value rounded afterwards falls the same way */
static double yolo_interp(double x, const double *xp, const double *fp, long n, double left, double right) {
    if (n == 0) return left;
    if (x < xp[0]) return left;
    if (x > xp[n - 1]) return right;
    long lo = 0, hi = n - 1;
    while (hi - lo > 1) { long mid = (lo + hi) / 2; if (xp[mid] <= x) lo = mid; else hi = mid; }
    if (x == xp[hi]) return fp[hi];
    if (x == xp[lo] || xp[hi] == xp[lo]) return fp[lo];
    return (fp[hi] - fp[lo]) / (xp[hi] - xp[lo]) * (x - xp[lo]) + fp[lo];
}

/* relative L2 error ||a - b|| / ||b||, the measure of every golden test */
double yolo_rel_err(const yolo_real *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 9. memory: tensors, gradients, lifetimes, staging, the arena and the planner */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
YOLO_C_BEGIN
/* move a freshly built model's weights to a backend (before any forward) */
void yolo_model_use_backend(yolo_model *m, const yolo_backend *be);
/* A best-fit arena of byte offsets. The CUDA backend carves its device
   memory out of one reservation with it, and the planner runs the very
   same placement over the same requests, so the plan is what the arena
   will span, holes between ranges included, not only the bytes in use.
   A request takes the smallest free hole that holds it (the lowest one of
   equal size); the free tail at the end only when no hole does, so that
   an arena of exactly the planned size makes the choices the unbounded
   planning arena made. Sizes round up to 256 bytes.
   Best fit cannot know how long a buffer will live, so a long-lived one
   may land between short-lived ones and leave holes when they go. A
   training step's requests are known in advance, so the planner places
   them offline (yolo_plan_run_bytes) and the arena follows that script
   during a step: request k goes to base + script[k].off when it asks for
   no more than script[k].size and that range is free, else to the best
   fit. The base is where the highest range in use ends when the arena
   is first given a script: what was allocated before the first step
   (weights, optimizer state) lies below it. */
typedef struct { size_t off, size; int used; } yolo_arena_range;
typedef struct {
    size_t size;                  /* bytes it manages */
    size_t in_use, peak, extent;  /* bytes used now, at most, and the highest end of a range so far */
    yolo_arena_range *r;          /* [n] sorted by offset, covering [0, size) */
    int n, cap;
    const yolo_place *script;     /* [nscript] where the next requests go; next: the one to come */
    int nscript, next, based;
    size_t base;                  /* where script offsets count from (set by the first script) */
    long missed;                  /* script entries that could not be followed (best fit took them) */
} yolo_arena;
#define YOLO_ARENA_FULL ((size_t)-1)
size_t yolo_arena_bytes(size_t bytes);   /* what a request takes: bytes rounded up to 256, at least 256 */
void   yolo_arena_init(yolo_arena *a, size_t size);
void   yolo_arena_free(yolo_arena *a);
size_t yolo_arena_alloc(yolo_arena *a, size_t bytes);     /* the offset, or YOLO_ARENA_FULL */
size_t yolo_arena_release(yolo_arena *a, size_t off);     /* the bytes given back; 0: no range starts there */
void   yolo_arena_follow(yolo_arena *a, const yolo_place *script, int n);   /* NULL: best fit */

/* The memory plan: the bytes of activations, their gradients, scratch and
   loss buffers (for images of up to max_boxes_per_image boxes) that a
   training step (train = 1) or an inference pass at this input size will
   allocate, found before anything is allocated by running the step on a
   backend that computes nothing and places every buffer in a yolo_arena:
   the plan is that arena's extent. The training steps are recorded and
   placed offline first; the model keeps that placement (m->place) and
   its later training steps follow it. An inference pass includes what
   validation adds: the folded weights and the decoded predictions. The
   weights (yolo_model_weights_bytes) and, for training, the EMA and
   optimizer state (yolo_model_state_bytes) come on top. */
size_t yolo_plan_bytes(yolo_model *m, int B, int H, int W, int train, int max_boxes_per_image);
/* the same for a training run: training steps at B x H x W (B 0: none) with
   a validation pass at vB x vH x vW (vB 0: none) between them; the run
   follows the placement of the last plan made */
size_t yolo_plan_run_bytes(yolo_model *m, int B, int H, int W, int max_boxes, int vB, int vH, int vW);
/* what yolo_model_use_backend takes: weights, their gradients, BatchNorm batch statistics */
size_t yolo_model_weights_bytes(const yolo_model *m);
/* that, the EMA and the optimizer's state */
size_t yolo_model_state_bytes(const yolo_model *m, yolo_optim_kind opt);
/* what a backend keeps for itself on top of the plan: the CUDA backend's
   BatchNorm partial sums (8 MB), the workspace of the weight gradients'
   k-slices (32 MB), the staging buffer of the tensor-core convs' bf16
   or half copies (128 MB) and small buffers (BatchNorm gradient sums, the
   gradient norm's per-block partials) */
#define YOLO_BACKEND_SCRATCH_BYTES ((size_t)176 << 20)
/* what an inference program (val, detect) reserves: the plan of a batch of
   B at H x W, the weights and the backend's scratch; *act the plan's part */
size_t yolo_infer_bytes(yolo_model *m, int B, int H, int W, size_t *act);
/* The inference form: every BatchNorm folded into its conv (w gamma /
   sqrt(var + eps), bias beta - mean gamma / sqrt(var + eps)) and every
   RepConvN into one 3x3 conv (the 1x1 kernel added at the centre). Eval
   forwards then run plain convs, in bf16 or half from weights staged once
   for them (the first eval forward in a precision stages them, in memory
   the model owns and the plan counts); a training forward drops the
   folding, since the weights move. Fold again after the weights change. */
void yolo_model_fuse(yolo_model *m);
/* --half: from now on the convs round their operands to half precision
   and multiply them on the backend's tensor cores, summing in float
   (m->precision = YOLO_FP16); a folded pass stores its activations in half too.
   Returns 0 where the backend has no tensor cores for half (the CPU, the
   GPU's portable core): the model computes in float32 then, as the
   official code does on the CPU. For inference only. */
int yolo_model_half(yolo_model *m);
/* --precision NAME: "fp32", "bf16" or "half" (-1 for anything else), and back */
int yolo_precision_parse(const char *name);
const char *yolo_precision_name(yolo_precision p);
/* --precision's default: bf16 for training where the backend has tensor
   cores (the official trains with AMP), float32 otherwise */
yolo_precision yolo_precision_default(const yolo_backend *be, int train);
/* the programs' --precision NAME (NULL: that default) and --half: half
   precision when the backend be (the one the model is to run on) has it,
   else one line from prog and float32. Before the memory plan: a tensor's
   store, and so its size, follows the precision, and a training step's
   staged weights follow be (stage_train_weights). */
void yolo_model_precision_flags(yolo_model *m, const yolo_backend *be, const char *precision, int train, int half,
                                const char *prog);
/* a host copy of n values of the model's memory (caller frees) */
yolo_real *yolo_fetch(const yolo_model *m, const yolo_real *p, size_t n);
/* a host copy of activation t's values as floats [B, C, H, W], whatever its store (caller frees) */
yolo_real *yolo_fetch_tensor(const yolo_model *m, const yolo_tensor *t);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* --- tensors' memory --- */

/* Give t the shape [n,c,h,w], reusing its memory when it is big enough.
   Shapes only change when the input size does, so after the first batch
   nothing is allocated. */
static void yolo_slot_forget(yolo_tensor *t);   /* below */
static void yolo_tensor_resize(const yolo_backend *be, yolo_tensor *t, int n, int c, int h, int w, int with_grad) {
    if (t->ctot && (n != t->n || c != t->c || h != t->h || w != t->w)) yolo_slot_forget(t);   /* then one of its own */
    size_t need = (size_t)n * c * h * w;
    if (need > t->cap) {
        int same = need == yolo_numel(t);   /* values dropped (yolo_tensor_drop), same shape: the gradient stays */
        be->release(t->data);
        if (!same) { be->release(t->grad); t->grad = NULL; }
        t->data = (yolo_real *)be->alloc_values(need, t->store);
        t->cap = need;
    }
    if (with_grad && !t->grad) t->grad = (yolo_real *)be->alloc(t->cap * sizeof(yolo_real));
    t->n = n; t->c = c; t->h = h; t->w = w;
}

static void yolo_tensor_free(const yolo_backend *be, yolo_tensor *t) {
    if (!t->ctot) be->release(t->data);   /* a slot's memory is its buffer's */
    be->release(t->grad);
    memset(t, 0, sizeof *t);
}

/* A tensor that is dropped after the forward and made again before a
   backward reads it: dropped, it keeps its shape (and wants_grad) but no
   values; yolo_tensor_take takes the memory again at that shape (if it
   has none). Its gradient, if it has one, is left alone. */
static void yolo_tensor_drop(const yolo_backend *be, yolo_tensor *t) {
    if (t->ctot) yolo_slot_forget(t);   /* its memory is its buffer's */
    else { be->release(t->data); t->data = NULL; t->cap = 0; }
}
static void yolo_tensor_take(const yolo_backend *be, yolo_tensor *t) {
    if (t->data) return;
    t->cap = yolo_numel(t);
    t->data = (yolo_real *)be->alloc_values(t->cap, t->store);
}

/* --- slots: a concatenation's parts where it holds them ---
   In folded inference a block takes its concatenation first and lets the
   convs that make its parts write them straight into their channels (and
   the convs that read a part read it there): t becomes channels [c0, c0 + c)
   of buf, a view of buf's memory (yolo_tensor.ctot). The same products as
   with copies, only the addresses move. A slot owns nothing: dropped, freed
   or asked for another shape, it only forgets where it was. */
static void yolo_slot_forget(yolo_tensor *t) { t->data = NULL; t->cap = 0; t->c0 = t->ctot = 0; }
static void yolo_tensor_slot(const yolo_backend *be, yolo_tensor *t, const yolo_tensor *buf, int c0, int c) {
    yolo_tensor_drop(be, t);
    t->data = buf->data; t->store = buf->store;
    t->n = buf->n; t->c = c; t->h = buf->h; t->w = buf->w;
    t->c0 = buf->c0 + c0; t->ctot = yolo_buffer_channels(buf);   /* a slot of a slot: of the same buffer */
    t->cap = yolo_numel(t);
    t->wants_grad = 0;
}

/* t at that shape, its values held in store (memory of another store goes first: a value takes
   the store's size) */
static void yolo_tensor_store(const yolo_backend *be, yolo_tensor *t, int store, int n, int c, int h, int w) {
    if (t->store != store) { yolo_tensor_drop(be, t); t->store = store; }
    yolo_tensor_resize(be, t, n, c, h, w, 0);
}

/* --- shapes: what a forward makes, and where ---
   A block's forward makes its tensors without saying where they live.
   Before a layer's forward the graph (yolo_layer_forward) runs its
   block's shapes function (yolo_down_shapes and its like, each beside the
   block's lifetime table), which declares as rows every tensor the
   forward will make: its shape [B, C, H, W] or, in a folded pass, the
   channels of a concatenation it is a slot of; and the op before which
   its memory is taken (yolo_memory_before). Each tensor's memory so comes
   just before the op that writes it (a conv unit's z and y together, the
   longer-lived first), a folded block's concatenation before the block's
   first op: the order of requests the memory plan is made for. A
   training forward marks what it makes as wanting a gradient, which the
   backward takes when it needs it. */
static void yolo_shape_add(yolo_model *m, yolo_shape_row row) {
    m->shapes = (yolo_shape_row *)yolo_grow(m->shapes, sizeof *m->shapes, m->nshapes + 1, &m->cap_shapes);
    m->shapes[m->nshapes++] = row;
}
static void yolo_shape(yolo_model *m, const yolo_tensor *op, yolo_tensor *t, int n, int c, int h, int w, int wants_grad) {
    yolo_shape_row row = { op, t, NULL, n, c, h, w, 0, wants_grad, -1 };
    yolo_shape_add(m, row);
}
static void yolo_shape_slot(yolo_model *m, const yolo_tensor *op, yolo_tensor *t, yolo_tensor *buf, int c0, int c) {
    yolo_shape_row row = { op, t, buf, 0, c, 0, 0, c0, 0, -1 };
    yolo_shape_add(m, row);
}
/* the tensors of the rows from `from` on held in store, whatever the pass's */
static void yolo_shapes_store(yolo_model *m, int from, yolo_precision store) {
    for (int k = from; k < m->nshapes; k++) m->shapes[k].store = store;
}

/* the memory of the tensors declared for op, in the order declared */
static void yolo_shapes_take(yolo_model *m, const yolo_tensor *op) {
    for (int k = 0; k < m->nshapes; k++) {
        yolo_shape_row *r = &m->shapes[k];
        if (r->op != op) continue;
        r->op = NULL;   /* taken */
        if (r->buf) { yolo_tensor_slot(m->be, r->t, r->buf, r->c0, r->c); continue; }
        yolo_tensor_store(m->be, r->t, r->store >= 0 ? r->store : (int)m->store, r->n, r->c, r->h, r->w);
        if (r->wants_grad >= 0) r->t->wants_grad = r->wants_grad;
    }
}

/* the end of the forward the rows from `from` on were declared for: every one was taken */
static void yolo_shapes_end(yolo_model *m, int from) {
    for (int k = from; k < m->nshapes; k++)
        if (m->shapes[k].op) {
            fprintf(stderr, "yolov9: a tensor [%d, %d, %d, %d] declared by a block's shapes was never made by its forward\n",
                    m->shapes[k].n, m->shapes[k].c, m->shapes[k].h, m->shapes[k].w);
            exit(1);
        }
    m->nshapes = from;
}

/* Gradients are short-lived: a tensor's gradient is taken just before the
   first backward op that writes it, and given back as soon as the op that
   reads it (its producer's backward) is done.

   A gradient is a sum over the tensor's readers, and the sum's first term
   needs no zero under it: the gradient is taken fresh (its memory not
   zeroed, grad_fresh), and the first op that writes all of it assigns
   0 + its term (yolo_grads_add says which), so that neither a memset nor
   the first writer's read of the old values is paid, and the sums come
   out the same bits. An op that adds into part of a fresh gradient, or
   one that has no assigning form, or the op that reads it (nothing wrote
   it: the sum of no terms), takes it zeroed first (yolo_grad_zeroed). */
static void yolo_grad_need(yolo_model *m, yolo_tensor *t) {
    size_t n = t->cap ? t->cap : yolo_numel(t);   /* the values may be dropped (yolo_tensor_drop) */
    for (int i = 0; i < t->nparts; i++) yolo_grad_need(m, t->part[i]);   /* a concatenation's is its parts' */
    if (t == &m->input || t->grad || t->nparts || !n) return;
    t->grad = (yolo_real *)(m->grads_zeroed ? m->be->alloc(n * sizeof(yolo_real)) : m->be->alloc_values(n, YOLO_FP32));
    t->grad_fresh = !m->grads_zeroed;
}
static void yolo_grad_done(yolo_model *m, yolo_tensor *t) { m->be->release(t->grad); t->grad = NULL; t->grad_fresh = 0; }

/* t's gradient, zeroed if it is still fresh: for an op that adds into (a
   part of) it, or reads it */
static void yolo_grad_zeroed(yolo_model *m, yolo_tensor *t) {
    if (t->grad && t->grad_fresh) m->be->zero(t->grad, yolo_numel(t) * sizeof(yolo_real));
    t->grad_fresh = 0;
}

/* The mode of an op about to write all of the gradients of t[n] (those
   that exist): 0, assign, when every one is fresh (then none is any more);
   else 1, add, the fresh ones zeroed first. */
static int yolo_grads_add(yolo_model *m, yolo_tensor *const *t, int n) {
    int fresh = 1;
    for (int i = 0; i < n; i++) if (t[i]->grad && !t[i]->grad_fresh) fresh = 0;
    for (int i = 0; i < n; i++) {
        if (!fresh) yolo_grad_zeroed(m, t[i]);
        t[i]->grad_fresh = 0;
    }
    return !fresh;
}
static int yolo_grad_add(yolo_model *m, yolo_tensor *t) { return yolo_grads_add(m, &t, 1); }

/* cat [B, c_0 + ... + c_n-1, H, W], read by convs alone, has no gradient
   of its own: each conv's backward writes its share of dL/dcat into the
   parts' gradients [B, c_i, H, W] (yolo_conv_dx), where a copy a part
   would split dL/dcat. Declared with
   the forward that makes cat, as its parts are (the same tensors every
   pass). */
static void yolo_concat_grads(yolo_tensor *cat, yolo_tensor *const *parts, int n) {
    for (int i = 0; i < n; i++) { cat->part[i] = parts[i]; cat->part_c0[i] = 0; }
    cat->nparts = n;
}
/* the same for half [B, c, H, W], channels [c0, c0 + c) of whole (RepNCSPELAN4's half_b, the second
   half of cv1's output), read by convs alone: their backwards add into whole's gradient where a copy would */
static void yolo_split_grad(yolo_tensor *half, yolo_tensor *whole, int c0) {
    half->part[0] = whole; half->part_c0[0] = c0;
    half->nparts = 1;
}

/* dL/dx in one run: all of g [B, c, H, W] (add 0: assigned, as a fresh gradient's first writer) */
static yolo_dx yolo_dx_whole(yolo_real *g, int c, int add) {
    yolo_dx dx;
    memset(&dx, 0, sizeof dx);
    dx.n = 1; dx.g[0] = g; dx.c[0] = dx.cd[0] = c; dx.add[0] = add;
    return dx;
}

/* Whether a writer of C of t's channels adds into t's gradient (1) or
   assigns them (0): the first writer of all of it assigns (a fresh
   gradient is never zeroed); a writer of a window adds, the gradient
   zeroed first, as the rest is another writer's. */
static int yolo_grad_window_add(yolo_model *m, yolo_tensor *t, int C) {
    if (C == t->c) return yolo_grad_add(m, t);
    yolo_grad_zeroed(m, t);
    return 1;
}

/* where a conv's backward writes dL/dx [B, c1, H, W]: x's gradient, or the
   gradients of x's parts (each assigned by its first writer, else added
   to); 0: x wants none (the picture) */
static int yolo_conv_dx(yolo_model *m, yolo_tensor *x, yolo_dx *dx) {
    if (!x->nparts) {   /* x's own gradient, if it has one (the picture has none) */
        *dx = yolo_dx_whole(x->grad, x->c, yolo_grad_add(m, x));
        return x->grad != NULL;
    }
    dx->n = x->nparts;
    for (int i = 0; i < dx->n; i++)
        if (!x->part[i]->grad) {   /* the lifetimes took the parts' gradients for this conv: never here */
            fprintf(stderr, "yolov9: a conv's input of %d channels: part %d of its gradient was not taken\n", x->c, i);
            exit(1);
        }
    for (int i = 0; i < dx->n; i++) {
        /* a split's half (its one part): its own channels, from c0; a concatenation's part: all of it */
        yolo_tensor *t = x->part[i];
        dx->g[i] = t->grad; dx->cd[i] = t->c; dx->c0[i] = x->part_c0[i];
        dx->c[i] = dx->n == 1 ? x->c : t->c;
        dx->add[i] = yolo_grad_window_add(m, t, dx->c[i]);
    }
    return 1;
}

/* --- lifetimes: what a training step keeps ---
   The blocks of section 3 are written as if every intermediate tensor
   lived through the step; each declares in a table (yolo_life_row) what
   happens to its intermediates between its ops. This runs those tables.
   Each op names itself before it runs (yolo_op_conv2d and the others,
   below): yolo_memory_before(m, t), t the tensor it makes in the forward,
   or whose gradient it hands on in the backward; ops in a row that name
   the same tensor (a concatenation's copies) are one op. When the op
   changes, the rows of the op just done (after) run, then those of the
   next one (before), in the order they were declared (a Conv unit's
   before its block's), each once a pass; so an op is not named again
   once another has run. A row's maker runs ops too: those are not the
   block's, and run no rows. Then the memory its shapes declared for the op is
   taken, so what dies after one op goes before the next allocates: the
   allocations and releases come in the order the memory plan (below)
   was made for, which is all it sees.

   yolo_forward and yolo_backward run every layer's pass inside
   yolo_life_begin/yolo_life_end, its rows being its blocks'. A layer made
   again inside another layer's backward (--ckpt) runs in its own, and the
   interrupted one goes on after it. */
static void yolo_life_table(yolo_model *m, const yolo_life_row *rows, int n) {
    if (!yolo_binding(m)) return;
    m->life = (yolo_life_row *)yolo_grow(m->life, sizeof *m->life, m->nlife + n, &m->cap_life);
    memcpy(m->life + m->nlife, rows, (size_t)n * sizeof *rows);
    m->nlife += n;
}

/* the rows of the pass under way that run `when` op `op` */
static void yolo_life_rows(yolo_model *m, yolo_life_when when, const yolo_tensor *op) {
    if (!op) return;
    m->life_run.busy = 1;
    for (int k = m->life_run.r0; when == YOLO_BWD_BEFORE && k < m->life_run.r1; k++) {
        yolo_life_row *r = &m->life[k];   /* a gradient op reads (its DONE row) that nothing wrote: the sum of no terms */
        if (r->what == YOLO_DONE && r->op == op && !r->done) yolo_grad_zeroed(m, r->t);
    }
    for (int k = m->life_run.r0; k < m->life_run.r1; k++) {
        yolo_life_row *r = &m->life[k];
        if (r->done || r->when != when || r->op != op) continue;
        r->done = 1;
        switch (r->what) {
        case YOLO_DROP: yolo_tensor_drop(m->be, r->t); break;
        case YOLO_MAKE: yolo_tensor_take(m->be, r->t); if (r->make) r->make(m, r->blk); break;
        case YOLO_NEED: if (r->t || r->in) yolo_grad_need(m, r->t ? r->t : *r->in); break;
        case YOLO_DONE: yolo_grad_done(m, r->t); break;
        case YOLO_RUN: r->make(m, r->blk); break;
        }
    }
    m->life_run.busy = 0;
}

/* Between two ops of a block: the rows of the op just done (after) and
   of the next one, t (before), then t's declared memory (shapes) */
static void yolo_memory_before(yolo_model *m, const yolo_tensor *t) {
    yolo_life_run *run = &m->life_run;
    if (run->on && !run->busy && t != run->at) {
        yolo_life_rows(m, run->backward ? YOLO_BWD_AFTER : YOLO_FWD_AFTER, run->at);
        if (run->backward) yolo_life_rows(m, YOLO_BWD_BEFORE, t);
        run->at = t;
    }
    yolo_shapes_take(m, t);
}

/* L's pass (on 0: no rows, as in inference); returns the pass it interrupts */
static yolo_life_run yolo_life_begin(yolo_model *m, const yolo_layer *L, int on, int backward) {
    yolo_life_run outer = m->life_run, run = { on, backward, 0, L->life0, L->life1, NULL };
    for (int k = run.r0; k < run.r1; k++) m->life[k].done = 0;
    m->life_run = run;
    return outer;
}
static void yolo_life_end(yolo_model *m, yolo_life_run outer) {
    if (m->life_run.on) yolo_life_rows(m, m->life_run.backward ? YOLO_BWD_AFTER : YOLO_FWD_AFTER, m->life_run.at);
    m->life_run = outer;
}

/* --- the primitive ops as the blocks run them ---
   Each names its op, then runs the backend's. A forward op is named by
   the tensor it writes; a backward op by the tensor whose gradient it
   reads, and it finds the gradients it writes only then (the rows before
   it take them), with whether it assigns them (a fresh gradient's first
   writer) or adds into them. */
/* y [B, C2, Ho, Wo] = conv(x [B, C1, H, W], w [C2, C1/g, k, k]) (+ b, SiLU, + r) */
static void yolo_op_conv2d(yolo_model *m, const yolo_tensor *x, const yolo_real *w, const yolo_real *b, const void *ws,
                           int C2, int k, int s, int g, int act, const yolo_tensor *r, yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->flops += 2.0 * x->n * y->h * y->w * C2 * (x->c / g) * k * k;
    m->be->conv2d_forward(x, w, b, ws, C2, k, s, g, act, r, m->precision, y);
}
/* u [B, C, H, W] = BN(z) with the batch's statistics (mean, invstd [C]; the running ones updated), SiLU when act */
static void yolo_op_bn_train(yolo_model *m, const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta,
                             yolo_real *mean, yolo_real *invstd, yolo_real *rmean, yolo_real *rvar, int act, yolo_tensor *u) {
    yolo_memory_before(m, u);
    m->be->bn_train_forward(z, gamma, beta, mean, invstd, rmean, rvar, m->bn_momentum, m->bn_eps, act, m->bn_group, u);
}
/* u [B, C, H, W] = BN(z) with given statistics (mean and invstd, or the running var), SiLU when act */
static void yolo_op_bn_apply(yolo_model *m, const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta,
                             const yolo_real *mean, const yolo_real *invstd, const yolo_real *var, int act, yolo_tensor *u) {
    yolo_memory_before(m, u);
    m->be->bn_apply(z, gamma, beta, mean, invstd, var, m->bn_eps, act, u);
}
/* y = SiLU(a + b), all [B, C, H, W] (RepConvN's two branches) */
static void yolo_op_silu_sum(yolo_model *m, const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->be->silu_forward(a, b, y);
}
/* y = a + b, all [B, C, H, W] (a shortcut) */
static void yolo_op_add(yolo_model *m, const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->be->add(a, b, y);
}
/* y [B, C, H-1, W-1]: the mean of each 2 x 2 window of x [B, C, H, W], stride 1 (ADown's and AConv's first step) */
static void yolo_op_avgpool2(yolo_model *m, const yolo_tensor *x, yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->be->avgpool2_forward(x, y);
}
/* y [B, C, Ho, Wo]: the maximum of each k x k window of x [B, C, H, W], stride s, padding pad */
static void yolo_op_maxpool(yolo_model *m, const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->be->maxpool_forward(x, k, s, pad, y);
}
/* y [B, C, Ho, Wo] = channels [c0, c0 + C) of x [B, Cx, H, W], nearest, at y's size (add: added to y) */
static void yolo_op_resize(yolo_model *m, const yolo_tensor *x, int c0, int add, yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->be->resize_forward(x, c0, add, y);
}
/* channels [dc, dc + C) of dst [B, Cd, H, W] = channels [sc, sc + C) of src [B, Cs, H, W] */
static void yolo_op_concat(yolo_model *m, const yolo_tensor *src, int sc, yolo_tensor *dst, int dc, int C) {
    yolo_memory_before(m, dst);
    m->be->concat(src, sc, dst, dc, C);
}

/* from u's gradient: BatchNorm's (and the SiLU's) parameter gradients, and dL/dz written over z */
static void yolo_op_bn_backward(yolo_model *m, const yolo_tensor *u, yolo_tensor *z, const yolo_real *gamma,
                                const yolo_real *beta, const yolo_real *mean, const yolo_real *invstd, int act,
                                yolo_real *dgamma, yolo_real *dbeta) {
    yolo_memory_before(m, u);
    m->be->bn_act_backward(z, u->grad, gamma, beta, mean, invstd, act, m->bn_group, dgamma, dbeta);
}
/* t's gradient as a tensor of its own (float32 NCHW, t's shape): a conv backward's dy */
static yolo_tensor yolo_grad_view(const yolo_tensor *t) {
    yolo_tensor g = *t;
    g.data = t->grad; g.grad = NULL; g.store = YOLO_FP32;
    return g;
}
/* from dL/dy: dw, db and x's gradient (yolo_conv_dx). dL/dy is y's gradient (float32 NCHW), or for a
   conv's z, which has no gradient of its own, its values, where BatchNorm's backward wrote it */
static void yolo_op_conv2d_backward(yolo_model *m, yolo_tensor *x, const yolo_real *w, const void *wsd, const yolo_tensor *y,
                                    int C2, int k, int s, int g, yolo_real *dw, yolo_real *db) {
    yolo_memory_before(m, y);
    yolo_tensor dy = y->grad ? yolo_grad_view(y) : *y;
    yolo_dx dx;
    int want = yolo_conv_dx(m, x, &dx);
    m->be->conv2d_backward(x, w, wsd, &dy, C2, k, s, g, m->precision, want ? &dx : NULL, dw, db);
}
/* y = SiLU(a + b): a's and b's gradients from y's */
static void yolo_op_silu_sum_backward(yolo_model *m, const yolo_tensor *y, yolo_tensor *a, yolo_tensor *b) {
    yolo_memory_before(m, y);
    yolo_tensor *ab[2] = { a, b };
    int add = yolo_grads_add(m, ab, 2);
    m->be->silu_backward(y->grad, a, b, a->grad, b->grad, add);
}
/* a term a of a sum y: a's gradient += y's (a without one, the picture, wants none) */
static void yolo_op_add_backward(yolo_model *m, const yolo_tensor *y, yolo_tensor *a) {
    yolo_memory_before(m, y);
    if (a->grad) m->be->accumulate(a->grad, y->grad, yolo_numel(a), yolo_grad_add(m, a));
}
static void yolo_op_avgpool2_backward(yolo_model *m, const yolo_tensor *y, yolo_tensor *x) {
    yolo_memory_before(m, y);
    if (x->grad) m->be->avgpool2_backward(y, x->grad, x->h, x->w, yolo_grad_add(m, x));
}
static void yolo_op_maxpool_backward(yolo_model *m, yolo_tensor *x, int k, int s, int pad, const yolo_tensor *y) {
    yolo_memory_before(m, y);
    m->be->maxpool_backward(x, k, s, pad, y, x->grad, yolo_grad_add(m, x));
}
/* x, C channels, was copied into channels [c0, c0 + C) of y (a concatenation): that part of y's gradient
   into x's (x without one, the picture, wants none) */
static void yolo_op_concat_backward(yolo_model *m, const yolo_tensor *y, int c0, yolo_tensor *x, int C) {
    yolo_memory_before(m, y);
    if (!x->grad) return;
    int add = yolo_grad_window_add(m, x, C);
    m->be->copy_channels(y->grad, y->c, c0, x->grad, x->c, 0, x->n, C, x->h * x->w, add);
}
/* parts[i], copies of whole's channels side by side, which between them are all of it (a split): their
   gradients, each its op, into whole's, assigned where it is fresh */
static void yolo_op_split_backward(yolo_model *m, yolo_tensor *const *parts, int n, yolo_tensor *whole) {
    int add = 0;
    for (int i = 0, c0 = 0; i < n; c0 += parts[i]->c, i++) {
        const yolo_tensor *p = parts[i];
        yolo_memory_before(m, p);
        if (!i) add = yolo_grad_add(m, whole);
        m->be->copy_channels(p->grad, p->c, 0, whole->grad, whole->c, c0, whole->n, p->c, whole->h * whole->w, add);
    }
}

/* --- the model's weights on its backend: moved, staged, folded --- */
static void yolo_layers_release(yolo_model *m);   /* section 11 */
static void yolo_model_bind(yolo_model *m);       /* section 11 */
/* The inference form gone (its memory given back): the weights are about to change or move */
static void yolo_model_forget_folded(yolo_model *m) {
    for (int i = 0; i < m->nconvs; i++) m->convs[i]->ws = NULL;
    m->folded = NULL; m->fused = 0; m->staged = YOLO_FP32;
}
static void yolo_model_unfold(yolo_model *m) {
    for (int i = 0; i < m->nconvs; i++) m->be->release(m->convs[i]->ws);
    m->be->release(m->folded);
    yolo_model_forget_folded(m);
}

/* A training step's picture [B, 3, H, W] as uint8 (m->train_pixels): copied
   to the backend once when the step starts (hold) and held until it ends
   (release), so that the forward and the backward's remade image both
   divide the same device bytes by 255 instead of reading the caller's
   pinned host memory twice. */
static void yolo_pixels_release(yolo_model *m) { m->be->release(m->input_bytes); m->input_bytes = NULL; }
static void yolo_pixels_hold(yolo_model *m) {
    if (!m->train_pixels || !m->input_pixels) { yolo_pixels_release(m); return; }
    if (m->input_bytes) return;
    size_t n = yolo_numel(&m->input);
    m->input_bytes = (unsigned char *)m->be->alloc(n);
    m->be->upload(m->input_bytes, m->input_pixels, n);
}

void yolo_model_use_backend(yolo_model *m, const yolo_backend *be) {
    if (be == m->be) return;
    yolo_real *host = yolo_fetch(m, m->values, m->nvalues);
    for (int i = 0; i < m->nacts; i++) yolo_tensor_free(m->be, m->acts[i]);
    yolo_pixels_release(m);
    m->be->release(m->values); m->be->release(m->grads); m->be->release(m->stats);
    yolo_model_unfold(m);
    yolo_model_unstage_train(m);
    m->be = be;
    m->stages_train = be->stage_train_weights != NULL;
    m->values = (yolo_real *)be->alloc(m->nvalues * sizeof(yolo_real));
    m->grads = (yolo_real *)be->alloc(m->nvalues * sizeof(yolo_real));
    m->stats = (yolo_real *)be->alloc(m->nstats * sizeof(yolo_real));
    be->upload(m->values, host, m->nvalues * sizeof(yolo_real));
    free(host);
    yolo_layers_release(m);
    yolo_model_bind(m);   /* every block's pointers into the new arrays */
}

yolo_real *yolo_fetch(const yolo_model *m, const yolo_real *p, size_t n) {
    yolo_real *h = (yolo_real *)yolo_xmalloc(n * sizeof(yolo_real));
    m->be->download(h, p, n * sizeof(yolo_real));
    return h;
}

yolo_real *yolo_fetch_tensor(const yolo_model *m, const yolo_tensor *t) {
    if (t->store == YOLO_FP32) return yolo_fetch(m, t->data, yolo_numel(t));
    yolo_tensor f;   /* a low-precision store, in the backend's own layout: copied into floats there first */
    memset(&f, 0, sizeof f);
    yolo_tensor_resize(m->be, &f, t->n, t->c, t->h, t->w, 0);
    m->be->concat(t, 0, &f, 0, t->c);
    yolo_real *h = yolo_fetch(m, f.data, yolo_numel(&f));
    yolo_tensor_free(m->be, &f);
    return h;
}

int yolo_model_half(yolo_model *m) {
    int fast = m->be->tensor_cores >> YOLO_FP16 & 1;
    if (fast) m->precision = YOLO_FP16;
    return fast;
}

int yolo_precision_parse(const char *name) {
    return !strcmp(name, "fp32") ? YOLO_FP32 : !strcmp(name, "bf16") ? YOLO_BF16 : !strcmp(name, "half") ? YOLO_FP16 : -1;
}
const char *yolo_precision_name(yolo_precision p) { return p == YOLO_BF16 ? "bf16" : p == YOLO_FP16 ? "half" : "fp32"; }
yolo_precision yolo_precision_default(const yolo_backend *be, int train) {
    int tc = train ? be->tensor_cores : 0;
    return tc >> YOLO_BF16 & 1 ? YOLO_BF16 : tc >> YOLO_FP16 & 1 ? YOLO_FP16 : YOLO_FP32;
}

void yolo_model_precision_flags(yolo_model *m, const yolo_backend *be, const char *precision, int train, int half,
                                const char *prog) {
    m->precision = precision ? (yolo_precision)yolo_precision_parse(precision) : yolo_precision_default(be, train);
    m->stages_train = be->stage_train_weights != NULL;   /* the plan, made before the model moves to be, counts them */
    if (half && be->tensor_cores >> YOLO_FP16 & 1) m->precision = YOLO_FP16;
    else if (half) fprintf(stderr, "%s: --half: %s has no half-precision path, computing in float32\n", prog, be->name);
}

/* a conv's weights: c2 (c1/g) k k values */
static size_t yolo_conv_nweights(const yolo_conv *c) { return (size_t)c->c2 * (c->c1 / c->g) * c->k * c->k; }

/* Every folded conv's weights staged once for the products of
   m->precision (stage_weights: on the GPU the two-byte copies its tensor
   cores read, which a training conv makes from its changing weights at
   every call), so that the forwards of a fused model read them as they
   are. Made at the first folded pass in a precision; folding again (new
   weights) or another precision stages again, in the same memory. */
static void yolo_model_stage(yolo_model *m) {
    for (int i = 0; i < m->nconvs; i++) {
        yolo_conv *c = m->convs[i];
        size_t nw = yolo_conv_nweights(c);
        if (!c->ws) c->ws = m->be->alloc_values(nw, m->precision);   /* bf16 and half take the same bytes */
        m->be->stage_weights(c->fw, c->c2, c->c1 / c->g, c->k, m->precision, c->ws);
    }
    m->staged = m->precision;
}

/* A training step's weights staged once for its products, the same way:
   where the backend stages (stage_train_weights: the CUDA backend's
   tensor cores read two-byte copies, in one form for the forward and one
   for backward-data), every conv's two forms in one buffer, made at the
   step's forward in a launch or a few and given back after its backward
   (a buffer of the step: the memory plan places it as any other). Not
   with --ckpt, which trades time for memory: its convs stage their own
   weights at each call, as before. */
static void yolo_model_unstage_train(yolo_model *m) {
    if (!m->wtrain) return;
    m->be->release(m->wtrain);
    m->wtrain = NULL;
    for (int i = 0; i < m->nconvs; i++) m->convs[i]->wt = m->convs[i]->wtd = NULL;
}
static void yolo_model_stage_train(yolo_model *m) {
    size_t total = 0;   /* bytes: each form two bytes a weight, at a 256-byte boundary as the arena's ranges */
    for (int i = 0; i < m->nconvs; i++) total += 2 * yolo_arena_bytes(2 * yolo_conv_nweights(m->convs[i]));
    m->wtrain = m->be->alloc_values(total / 2, m->precision);   /* two bytes a value, in the backends that stage */
    yolo_stage_conv *jobs = (yolo_stage_conv *)yolo_xmalloc((size_t)(m->nconvs ? m->nconvs : 1) * sizeof *jobs);
    size_t at = 0;   /* bytes */
    for (int i = 0; i < m->nconvs; i++) {
        yolo_conv *c = m->convs[i];
        size_t room = yolo_arena_bytes(2 * yolo_conv_nweights(c));
        c->wt = (char *)m->wtrain + at;
        c->wtd = (char *)m->wtrain + at + room;
        at += 2 * room;
        yolo_stage_conv job = { c->w, (void *)c->wt, (void *)c->wtd, c->c2, c->c1 / c->g, c->k, c->s, c->g };
        jobs[i] = job;
    }
    m->be->stage_train_weights(jobs, m->nconvs, m->precision);
    free(jobs);
}

void yolo_model_fuse(yolo_model *m) {
    const yolo_backend *be = m->be;
    size_t total = 0;
    for (int i = 0; i < m->nconvs; i++) total += yolo_conv_nweights(m->convs[i]) + m->convs[i]->c2;
    if (!m->folded) m->folded = (yolo_real *)be->alloc(total * sizeof(yolo_real));   /* once: the size never changes */
    yolo_real *h = (yolo_real *)yolo_xcalloc(total, sizeof(yolo_real)), *vals = yolo_fetch(m, m->values, m->nvalues);
    size_t off = 0;
    #define HOST(p) (vals + ((p) - m->values))   /* a parameter pointer as a host address */
    for (int i = 0; i < m->nconvs; i++) {
        yolo_conv *c = m->convs[i];
        size_t nw = yolo_conv_nweights(c), per = nw / c->c2;
        yolo_real *fw = h + off, *fb = fw + nw;
        for (int o = 0; o < c->c2; o++) {
            double a = c->bn ? HOST(c->gamma)[o] / sqrt(HOST(c->rvar)[o] + m->bn_eps) : 1.0;
            for (size_t j = 0; j < per; j++) fw[o * per + j] = (yolo_real)(HOST(c->w)[o * per + j] * a);
            fb[o] = (yolo_real)(c->bn ? HOST(c->beta)[o] - HOST(c->rmean)[o] * a : (c->b ? HOST(c->b)[o] : 0));
        }
        c->fw = m->folded + off; c->fb = c->fw + nw;
        off += nw + c->c2;
    }
    /* RepConvN: the folded 1x1 kernel joins the folded 3x3 one at its centre */
    for (int r = 0; r < m->nreps; r++) {
        yolo_conv *c3 = &m->reps[r]->conv1, *c1 = &m->reps[r]->conv2;
        yolo_real *w3 = h + (c3->fw - m->folded), *w1 = h + (c1->fw - m->folded);
        int cin = c3->c1 / c3->g;
        for (int o = 0; o < c3->c2; o++) {
            for (int ci = 0; ci < cin; ci++) w3[((size_t)o * cin + ci) * 9 + 4] += w1[(size_t)o * cin + ci];
            w3[(size_t)c3->c2 * cin * 9 + o] += w1[(size_t)c1->c2 * cin + o];
        }
    }
    #undef HOST
    be->upload(m->folded, h, total * sizeof(yolo_real));
    free(h); free(vals);
    m->fused = 1;
    m->staged = YOLO_FP32;   /* the staged copies, if any, are of the old weights */
}

/* --- the arena: a list of ranges, sorted by offset, that covers it --- */
void yolo_arena_init(yolo_arena *a, size_t size) {
    memset(a, 0, sizeof *a);
    a->size = size;
    a->cap = 256;
    a->r = (yolo_arena_range *)yolo_xmalloc(a->cap * sizeof *a->r);
    a->r[0].off = 0; a->r[0].size = size; a->r[0].used = 0;
    a->n = 1;
}
void yolo_arena_free(yolo_arena *a) { free(a->r); memset(a, 0, sizeof *a); }

static void yolo_arena_insert(yolo_arena *a, int at, yolo_arena_range x) {
    a->r = (yolo_arena_range *)yolo_grow(a->r, sizeof *a->r, a->n + 1, &a->cap);
    memmove(a->r + at + 1, a->r + at, (a->n - at) * sizeof *a->r);
    a->r[at] = x;
    a->n++;
}
static void yolo_arena_remove(yolo_arena *a, int at) {
    memmove(a->r + at, a->r + at + 1, (a->n - at - 1) * sizeof *a->r);
    a->n--;
}

void yolo_arena_follow(yolo_arena *a, const yolo_place *script, int n) {
    if (script && n > 0 && !a->based) {   /* the base: where the highest range in use ends */
        int i = a->n - 1;
        while (i >= 0 && !a->r[i].used) i--;
        a->base = i >= 0 ? a->r[i].off + a->r[i].size : 0;
        a->based = 1;
    }
    a->script = script; a->nscript = script ? n : 0; a->next = 0;
}

/* mark [off, off + need) used, if it lies inside one free range: -1 if not */
static int yolo_arena_take(yolo_arena *a, size_t off, size_t need) {
    int lo = 0, hi = a->n - 1;
    while (lo < hi) {   /* the last range that starts at or before off */
        int mid = (lo + hi + 1) / 2;
        if (a->r[mid].off <= off) lo = mid; else hi = mid - 1;
    }
    yolo_arena_range *r = &a->r[lo];
    if (r->used || off < r->off || off + need > r->off + r->size) return -1;
    if (off > r->off) {   /* the free part before it */
        yolo_arena_range before = { r->off, off - r->off, 0 };
        r->off = off; r->size -= before.size;
        yolo_arena_insert(a, lo, before);
        lo++;
    }
    r = &a->r[lo];
    if (r->size > need) {
        yolo_arena_range rest = { off + need, r->size - need, 0 };
        r->size = need;
        yolo_arena_insert(a, lo + 1, rest);
    }
    a->r[lo].used = 1;
    a->in_use += need;
    if (a->in_use > a->peak) a->peak = a->in_use;
    if (off + need > a->extent) a->extent = off + need;
    return 0;
}

size_t yolo_arena_bytes(size_t bytes) { return bytes ? (bytes + 255) / 256 * 256 : 256; }

size_t yolo_arena_alloc(yolo_arena *a, size_t bytes) {
    size_t need = yolo_arena_bytes(bytes);
    if (a->next < a->nscript) {   /* a planned step: where the plan put it, if that still holds */
        const yolo_place *p = &a->script[a->next++];
        if (need <= p->size && yolo_arena_take(a, a->base + p->off, need) == 0)
            return a->base + p->off;
        a->missed++;
    }
    int i = -1;
    for (int j = 0; j < a->n - 1; j++)   /* the holes: every free range but the last */
        if (!a->r[j].used && a->r[j].size >= need && (i < 0 || a->r[j].size < a->r[i].size)) i = j;
    if (i < 0 && !a->r[a->n - 1].used && a->r[a->n - 1].size >= need) i = a->n - 1;   /* the tail */
    if (i < 0) return YOLO_ARENA_FULL;
    if (a->r[i].size > need) {
        yolo_arena_range rest = { a->r[i].off + need, a->r[i].size - need, 0 };
        a->r[i].size = need;
        yolo_arena_insert(a, i + 1, rest);
    }
    a->r[i].used = 1;
    a->in_use += need;
    if (a->in_use > a->peak) a->peak = a->in_use;
    if (a->r[i].off + need > a->extent) a->extent = a->r[i].off + need;
    return a->r[i].off;
}

size_t yolo_arena_release(yolo_arena *a, size_t off) {
    int lo = 0, hi = a->n - 1, i = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (a->r[mid].off == off) { i = mid; break; }
        if (a->r[mid].off < off) lo = mid + 1; else hi = mid - 1;
    }
    if (i < 0 || !a->r[i].used) return 0;
    size_t bytes = a->r[i].size;
    a->r[i].used = 0;
    a->in_use -= bytes;
    if (i + 1 < a->n && !a->r[i + 1].used) { a->r[i].size += a->r[i + 1].size; yolo_arena_remove(a, i + 1); }
    if (i > 0 && !a->r[i - 1].used) { a->r[i - 1].size += a->r[i].size; yolo_arena_remove(a, i); }
    return bytes;
}

static void yolo_cpu_pin(void *host, size_t bytes, int pin);   /* section 10 */
/* --- the planner: a backend that computes nothing and only places its
   buffers in an unbounded arena. The arena is file-static, so planning is
   not re-entrant. Its addresses are offsets + 4096, never dereferenced. --- */
static yolo_arena yolo_plan_arena;
/* One allocation of a recorded training step: its bytes (rounded as the
   arena rounds), its life [t0, t1) counted in allocations and releases,
   the step that asked for it (0 the first, 1 a later one) and its offset:
   in the recording arena, then where the offline placement puts it. */
typedef struct { size_t size, off; int t0, t1, step; } yolo_plan_buf;
static struct {
    int on, step, t;             /* recording; the step under way; events so far */
    yolo_plan_buf *b;            /* [n] in the order of the requests */
    int n, cap;
} yolo_plan_rec;

static void *yolo_plan_alloc(size_t bytes) {
    size_t off = yolo_arena_alloc(&yolo_plan_arena, bytes);
    if (yolo_plan_rec.on) {
        yolo_plan_rec.b = (yolo_plan_buf *)yolo_grow(yolo_plan_rec.b, sizeof(yolo_plan_buf), yolo_plan_rec.n + 1, &yolo_plan_rec.cap);
        yolo_plan_buf x = { yolo_arena_bytes(bytes), off, yolo_plan_rec.t++, INT_MAX, yolo_plan_rec.step };
        yolo_plan_rec.b[yolo_plan_rec.n++] = x;
    }
    return (void *)(uintptr_t)(4096 + off);
}
/* a tensor's values as the device holds them: two bytes a value of a low-precision store */
static void *yolo_plan_alloc_values(size_t n, int store) { return yolo_plan_alloc(n * (store == YOLO_FP32 ? sizeof(yolo_real) : 2)); }
static void yolo_plan_release(void *p) {
    if (!p) return;
    size_t off = (size_t)(uintptr_t)p - 4096;
    for (int j = yolo_plan_rec.on ? yolo_plan_rec.n - 1 : -1; j >= 0; j--)   /* the live buffer at that offset */
        if (yolo_plan_rec.b[j].off == off && yolo_plan_rec.b[j].t1 == INT_MAX) { yolo_plan_rec.b[j].t1 = yolo_plan_rec.t++; break; }
    yolo_arena_release(&yolo_plan_arena, off);
}
static void yolo_plan_place(const yolo_place *script, int n) { yolo_arena_follow(&yolo_plan_arena, script, n); }
static void yolo_plan_memory(size_t *in_use, size_t *peak) { *in_use = yolo_plan_arena.in_use; *peak = yolo_plan_arena.extent; }
/* the one op whose result steers what comes next: the loss's normaliser */
static void yolo_plan_loss(yolo_loss_branch *lb) { lb->as->score_sum = 1; lb->box = lb->cls = lb->dfl = 0; }
static void yolo_plan_download(void *host, const void *src, size_t n) { memset(host, 0, n); }
/* every other op computes nothing (its parameters are unused) */
static void yolo_plan_zero(void *p, size_t n) {}
static void yolo_plan_copy(void *dst, const void *src, size_t n) {}
static void yolo_plan_conv2d_forward(const yolo_tensor *x, const yolo_real *w, const yolo_real *b, const void *ws, int C2,
                                     int k, int s, int g, int act, const yolo_tensor *r, yolo_precision prec,
                                     yolo_tensor *y) {}
static void yolo_plan_stage_weights(const yolo_real *w, int C2, int cin, int k, yolo_precision prec, void *ws) {}
static void yolo_plan_conv2d_backward(const yolo_tensor *x, const yolo_real *w, const void *wsd, const yolo_tensor *dy,
                                      int C2, int k, int s, int g, yolo_precision prec, const yolo_dx *dx,
                                      yolo_real *dw, yolo_real *db) {}
static void yolo_plan_stage_train_weights(const yolo_stage_conv *convs, int n, yolo_precision prec) {}
static void yolo_plan_bn_train_forward(const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta,
                                       yolo_real *mean, yolo_real *invstd, yolo_real *rmean, yolo_real *rvar,
                                       double momentum, double eps, int act, const yolo_bn_group *group, yolo_tensor *u) {}
static void yolo_plan_bn_apply(const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta, const yolo_real *mean,
                               const yolo_real *invstd, const yolo_real *var, double eps, int act, yolo_tensor *u) {}
static void yolo_plan_bn_act_backward(yolo_tensor *z, const yolo_real *dy, const yolo_real *gamma,
                                      const yolo_real *beta, const yolo_real *mean, const yolo_real *invstd, int act,
                                      const yolo_bn_group *group, yolo_real *dgamma, yolo_real *dbeta) {}
static void yolo_plan_silu_forward(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) {}
static void yolo_plan_silu_backward(const yolo_real *dy, const yolo_tensor *a, const yolo_tensor *b, yolo_real *da,
                                    yolo_real *db, int add) {}
static void yolo_plan_accumulate(yolo_real *y, const yolo_real *x, size_t n, int add) {}
static void yolo_plan_avgpool2_forward(const yolo_tensor *x, yolo_tensor *y) {}
static void yolo_plan_avgpool2_backward(const yolo_tensor *y, yolo_real *dx, int H, int W, int add) {}
static void yolo_plan_maxpool_forward(const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y) {}
static void yolo_plan_maxpool_backward(const yolo_tensor *x, int k, int s, int pad, const yolo_tensor *y, yolo_real *dx,
                                       int add) {}
static void yolo_plan_resize_forward(const yolo_tensor *x, int c0, int add, yolo_tensor *y) {}
static void yolo_plan_resize_backward(const yolo_tensor *y, yolo_tensor *x, int c0, int add) {}
static void yolo_plan_copy_channels(const yolo_real *src, int src_c, int sc, yolo_real *dst, int dst_c, int dc, int B,
                                    int C, int HW, int accumulate) {}
static void yolo_plan_concat(const yolo_tensor *src, int sc, yolo_tensor *dst, int dc, int C) {}
static void yolo_plan_add(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) {}
static void yolo_plan_optim_update(const yolo_update *u, const unsigned char *group, yolo_real *w, const yolo_real *g,
                                   yolo_real *m, yolo_real *v, yolo_real *vmax, size_t n) {}
static void yolo_plan_lerp(yolo_real *y, const yolo_real *x, double d, size_t n) {}
static double yolo_plan_sumsq(const yolo_real *x, size_t n) { return 0; }
static void yolo_plan_decode(const yolo_loss_branch *lb, yolo_real *pred) {}
static int yolo_plan_nms(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres, int max_det,
                         int agnostic, const int *classes, int nclasses, yolo_det *out) { return 0; }
static void yolo_plan_sync(void) {}
static int yolo_plan_reserve(size_t bytes) { return 0; }
static void yolo_plan_profile(int on, FILE *report) {}
static void yolo_plan_pixels_to_input(yolo_real *dst, const unsigned char *pixels, size_t n) {}

/* --- placing a recorded step offline ---
   With every buffer's size and life known, each is placed in turn at the
   lowest-waste gap left by the buffers already placed whose lives overlap
   its own, the buffers taken largest first (or longest-lived first: each
   order wins on some networks, so both are tried). The extent comes
   close to the most bytes ever alive at once, closer than best fit as
   the requests come (tests/results/README.md has the figures). */
typedef struct { size_t key; int id; } yolo_plan_key;
static int yolo_plan_key_cmp(const void *a_, const void *b_) {
    const yolo_plan_key *a = (const yolo_plan_key *)a_, *b = (const yolo_plan_key *)b_;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;   /* larger first, then in request order */
    return a->id - b->id;
}
static int yolo_range_cmp(const void *a_, const void *b_) {
    const yolo_arena_range *a = (const yolo_arena_range *)a_, *b = (const yolo_arena_range *)b_;
    return a->off < b->off ? -1 : a->off > b->off;
}
/* places b[n] (writes b[i].off), largest first (by_life 0) or longest-lived first; returns the extent */
static size_t yolo_plan_offline(yolo_plan_buf *b, int n, int by_life) {
    yolo_plan_key *order = (yolo_plan_key *)yolo_xmalloc((size_t)(n ? n : 1) * sizeof *order);
    yolo_arena_range *busy = (yolo_arena_range *)yolo_xmalloc((size_t)(n ? n : 1) * sizeof *busy);
    int *placed = (int *)yolo_xmalloc((size_t)(n ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++) { order[i].key = by_life ? (size_t)(b[i].t1 - b[i].t0) : b[i].size; order[i].id = i; }
    qsort(order, n, sizeof *order, yolo_plan_key_cmp);
    size_t extent = 0;
    for (int k = 0; k < n; k++) {
        yolo_plan_buf *x = &b[order[k].id];
        int nb = 0;
        for (int j = 0; j < k; j++) {   /* placed buffers alive at the same time */
            const yolo_plan_buf *y = &b[placed[j]];
            if (y->t0 < x->t1 && x->t0 < y->t1) { busy[nb].off = y->off; busy[nb].size = y->size; nb++; }
        }
        qsort(busy, nb, sizeof *busy, yolo_range_cmp);
        size_t end = 0, best = YOLO_ARENA_FULL, best_gap = YOLO_ARENA_FULL;
        for (int j = 0; j < nb; j++) {
            if (busy[j].off > end && busy[j].off - end >= x->size && busy[j].off - end < best_gap) {
                best = end; best_gap = busy[j].off - end;
            }
            if (busy[j].off + busy[j].size > end) end = busy[j].off + busy[j].size;
        }
        x->off = best != YOLO_ARENA_FULL ? best : end;
        if (x->off + x->size > extent) extent = x->off + x->size;
        placed[k] = order[k].id;
    }
    free(order); free(busy); free(placed);
    return extent;
}

static const yolo_backend yolo_planner = {
    .name = "plan",
    .alloc = yolo_plan_alloc, .alloc_values = yolo_plan_alloc_values, .release = yolo_plan_release, .zero = yolo_plan_zero,
    .upload = yolo_plan_copy, .download = yolo_plan_download, .copy = yolo_plan_copy,
    .conv2d_forward = yolo_plan_conv2d_forward, .conv2d_backward = yolo_plan_conv2d_backward,
    .stage_weights = yolo_plan_stage_weights, .stage_train_weights = yolo_plan_stage_train_weights,
    .bn_train_forward = yolo_plan_bn_train_forward, .bn_apply = yolo_plan_bn_apply,
    .bn_act_backward = yolo_plan_bn_act_backward,
    .silu_forward = yolo_plan_silu_forward, .silu_backward = yolo_plan_silu_backward,
    .add = yolo_plan_add, .accumulate = yolo_plan_accumulate,
    .avgpool2_forward = yolo_plan_avgpool2_forward, .avgpool2_backward = yolo_plan_avgpool2_backward,
    .maxpool_forward = yolo_plan_maxpool_forward, .maxpool_backward = yolo_plan_maxpool_backward,
    .resize_forward = yolo_plan_resize_forward, .resize_backward = yolo_plan_resize_backward,
    .copy_channels = yolo_plan_copy_channels, .concat = yolo_plan_concat,
    .optim_update = yolo_plan_optim_update, .lerp = yolo_plan_lerp, .sumsq = yolo_plan_sumsq,
    .loss = yolo_plan_loss, .decode = yolo_plan_decode, .nms = yolo_plan_nms,
    .sync = yolo_plan_sync, .memory = yolo_plan_memory, .reserve = yolo_plan_reserve, .free_memory = NULL, .place = yolo_plan_place,
    .profile = yolo_plan_profile,
    .tensor_cores = 0,
    .pixels_to_input = yolo_plan_pixels_to_input, .pin = yolo_cpu_pin,
};

/* --- CUDA graphs: a pass's regions recorded once, replayed ---
   The layers of a forward and of a training backward make the same
   requests, in the same order, at every step of a shape: the same
   allocations (the planned placement, or best fit from the same state)
   and the same launches on them, thousands of launches a step. Where
   the backend records graphs (graph_begin), such a region runs as one:
   recorded the second time it comes, replayed from the third. A replay
   still runs the region's host code for its bookkeeping, every tensor
   taking its memory as before (the backend checks that each lands
   where the recorded one did), but every op goes to a table that
   computes nothing: the planner's ops around the backend's memory.
   Not where a region's work could not repeat: a training image that
   the region makes again from the caller's floats or pixels (an
   upload; the GPU's training steps make it from their device copy,
   m->input_bytes), or the data-parallel hooks (the gradients summed
   layer by layer, --sync-bn's sums). The key names what the region's
   launches depend on besides the memory's state (which the backend
   adds): the pass, the shapes, the precision and store, recompute,
   the folded weights, the model and where its weights live. */
static const yolo_backend *yolo_region_real;   /* the backend a replayed region's host code stands in for */

static const yolo_backend *yolo_region_bookkeeping(const yolo_backend *real) {
    static yolo_backend t;
    t = yolo_planner;
    t.name = real->name;
    t.alloc = real->alloc; t.alloc_values = real->alloc_values; t.release = real->release;
    t.place = real->place; t.memory = real->memory;
    t.tensor_cores = real->tensor_cores;
    return &t;
}

static int yolo_region_begin(yolo_model *m, int pass) {
    const yolo_backend *be = m->be;
    int remakes_image = pass && (m->input_host || m->input_pixels) && !m->input_bytes;
    if (!be->graph_begin || m->no_graphs || m->grads_final || m->bn_group || remakes_image) return YOLO_GRAPH_EAGER;
    const uint64_t v[] = { (uint64_t)pass, (uint64_t)m->input.n, (uint64_t)m->input.h, (uint64_t)m->input.w,
                           (uint64_t)m->precision, (uint64_t)m->store, (uint64_t)m->ckpt, (uint64_t)m->fused,
                           (uint64_t)m->staged, (uint64_t)m->grads_zeroed, (uint64_t)m->nlayers, (uint64_t)m->nvalues,
                           (uint64_t)m->nc, (uint64_t)(uintptr_t)m, (uint64_t)(uintptr_t)m->values,
                           (uint64_t)(uintptr_t)m->grads, (uint64_t)(uintptr_t)m->stats,
                           (uint64_t)(uintptr_t)m->input.data, (uint64_t)(uintptr_t)m->input_bytes };
    uint64_t key = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) key = yolo_key_mix(key, v[i]);
    int how = be->graph_begin(key);
    if (how == YOLO_GRAPH_RECORD) m->graph_records++;
    if (how == YOLO_GRAPH_REPLAY) {
        m->graph_replays++;
        yolo_region_real = be;
        m->be = yolo_region_bookkeeping(be);
    }
    return how;
}

static void yolo_region_end(yolo_model *m, int how) {
    if (how == YOLO_GRAPH_EAGER) return;
    if (how == YOLO_GRAPH_REPLAY) m->be = yolo_region_real;
    m->be->graph_end();
}

/* The sequence a training run repeats, from nothing, on the planner: two
   training steps (the second sees what the first leaves held: the loss's
   assignment) at B x H x W with max_boxes boxes in every image, then a
   validation pass at vB x vH x vW (vB 0: none) as yolo_validate runs it
   (folding, forward, decoding and NMS), then one more training step (B 0:
   none). record: the two steps only, each allocation written down.
   Returns the arena's extent. */
static size_t yolo_plan_sequence(yolo_model *m, int B, int H, int W, int max_boxes, int vB, int vH, int vW, int record) {
    /* never read (the planner's upload copies nothing), but there, as a caller's are; training batches as
       the run hands them (m->train_pixels) */
    static const yolo_real pixels[1] = { 0 };
    static const unsigned char pixel_bytes[1] = { 0 };
    for (int i = 0; i < m->nacts; i++) memset(m->acts[i], 0, sizeof(yolo_tensor));
    yolo_model_forget_folded(m);   /* the planner's from the sequence before, if any */
    m->place_next = 0;
    yolo_arena_init(&yolo_plan_arena, YOLO_ARENA_FULL / 2);
    int nt = B * (max_boxes > 0 ? max_boxes : 1);
    yolo_real *t = (yolo_real *)yolo_xcalloc((size_t)(nt ? nt : 1) * 6, sizeof(yolo_real));
    for (int i = 0; i < nt; i++) { t[6 * i] = (yolo_real)(i % B); t[6 * i + 2] = t[6 * i + 3] = 0.5f; t[6 * i + 4] = t[6 * i + 5] = 0.1f; }
    yolo_loss L;
    memset(&L, 0, sizeof L);
    yolo_det **dets = (yolo_det **)yolo_xcalloc(vB ? vB : 1, sizeof *dets);
    int *counts = (int *)yolo_xcalloc(vB ? vB : 1, sizeof *counts);
    for (int n = 0; n < vB; n++) dets[n] = (yolo_det *)yolo_xmalloc(300 * sizeof(yolo_det));
    for (int step = 0; step < (record ? 2 : 4); step++) {
        if (step == 2 ? !vB : !B) continue;
        if (step == 2) {
            yolo_model_fuse(m);
            yolo_set_input(m, vB, vH, vW, pixels);
            yolo_forward(m, 0);
            yolo_predict(m, 0.001f, 0.7f, 300, 0, NULL, 0, 1, dets, counts);
            continue;
        }
        yolo_plan_rec.step = step;
        if (m->train_pixels) yolo_set_input_pixels(m, B, H, W, pixel_bytes);
        else yolo_set_input(m, B, H, W, pixels);
        yolo_forward(m, 1);
        yolo_loss_compute(m, &L, t, nt, 0);
        yolo_backward(m);
    }
    for (int n = 0; n < vB; n++) free(dets[n]);
    free(dets); free(counts);
    yolo_loss_free(&L);
    free(t);
    size_t bytes = yolo_plan_arena.extent;
    yolo_arena_free(&yolo_plan_arena);
    return bytes;
}

/* The plan: the sequence recorded, its two steps placed offline (the
   model keeps that placement: m->place, which every later training step
   follows), then the sequence again, following it. A real run makes the
   same requests in the same order, so its arena takes the same ranges
   (smaller ones, for a smaller last batch or fewer boxes, fit in them);
   validation batches of other shapes are placed by best fit and may
   place theirs differently. */
size_t yolo_plan_run_bytes(yolo_model *m, int B, int H, int W, int max_boxes, int vB, int vH, int vW) {
    yolo_model_unstage_train(m);   /* a step's staged weights, if one is under way: its convs stage their own */
    const yolo_backend *real = m->be;
    const yolo_real *host = m->input_host;
    const unsigned char *host_pixels = m->input_pixels;
    unsigned char *input_bytes = m->input_bytes;   /* the real backend's, if a step is under way */
    m->input_bytes = NULL;
    yolo_tensor *saved = (yolo_tensor *)yolo_xmalloc((size_t)m->nacts * sizeof(yolo_tensor));
    for (int i = 0; i < m->nacts; i++) saved[i] = *m->acts[i];
    yolo_model_unfold(m);   /* the real inference form goes (the planner stands in for it): folding again makes it */
    m->be = &yolo_planner;
    for (int s = 0; s < 2; s++) { free(m->place[s]); m->place[s] = NULL; m->nplace[s] = 0; }
    if (B) {
        yolo_plan_rec.on = 1; yolo_plan_rec.n = 0; yolo_plan_rec.t = 0;
        yolo_plan_sequence(m, B, H, W, max_boxes, 0, 0, 0, 1);
        yolo_plan_rec.on = 0;
        yolo_plan_buf *b = yolo_plan_rec.b;
        int n = yolo_plan_rec.n;
        size_t *by_size = (size_t *)yolo_xmalloc((size_t)(n ? n : 1) * sizeof(size_t));
        size_t e_size = yolo_plan_offline(b, n, 0);
        for (int i = 0; i < n; i++) by_size[i] = b[i].off;
        if (e_size <= yolo_plan_offline(b, n, 1))
            for (int i = 0; i < n; i++) b[i].off = by_size[i];
        free(by_size);
        for (int s = 0; s < 2; s++) {
            m->place[s] = (yolo_place *)yolo_xmalloc((size_t)(n ? n : 1) * sizeof(yolo_place));
            for (int i = 0; i < n; i++)
                if (b[i].step == s) { m->place[s][m->nplace[s]].off = b[i].off; m->place[s][m->nplace[s]++].size = b[i].size; }
        }
        free(yolo_plan_rec.b);
        memset(&yolo_plan_rec, 0, sizeof yolo_plan_rec);
    }
    size_t bytes = yolo_plan_sequence(m, B, H, W, max_boxes, vB, vH, vW, 0);
    for (int i = 0; i < m->nacts; i++) *m->acts[i] = saved[i];
    free(saved);
    m->be = real;
    m->input_host = host;
    m->input_pixels = host_pixels;
    m->input_bytes = input_bytes;
    m->place_next = 0;
    yolo_model_forget_folded(m);   /* the planner's */
    return bytes;
}

size_t yolo_plan_bytes(yolo_model *m, int B, int H, int W, int train, int max_boxes_per_image) {
    if (train) return yolo_plan_run_bytes(m, B, H, W, max_boxes_per_image, 0, 0, 0);
    return yolo_plan_run_bytes(m, 0, 0, 0, 0, B, H, W);
}

size_t yolo_infer_bytes(yolo_model *m, int B, int H, int W, size_t *act) {
    *act = yolo_plan_bytes(m, B, H, W, 0, 0);
    return *act + yolo_model_weights_bytes(m) + YOLO_BACKEND_SCRATCH_BYTES;
}

/* each allocation as the arena takes it */
size_t yolo_model_weights_bytes(const yolo_model *m) {
    return 2 * yolo_arena_bytes(m->nvalues * sizeof(yolo_real)) + yolo_arena_bytes(m->nstats * sizeof(yolo_real));
}
size_t yolo_model_state_bytes(const yolo_model *m, yolo_optim_kind opt) {
    /* and the EMA; optimizer: SGD and Lion 1, Adam 2, AdamW 3 copies, and a byte a value of groups */
    size_t copies = 1 + (opt == YOLO_SGD || opt == YOLO_LION ? 1 : opt == YOLO_ADAM ? 2 : 3);
    return yolo_model_weights_bytes(m) + copies * yolo_arena_bytes(m->nvalues * sizeof(yolo_real)) +
           yolo_arena_bytes(m->nvalues);
}
#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 10. the CPU backend: the reference of every primitive op                 */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
/* Max pooling's winner: the first maximum in the k x k window of output
   (oy, ox), stride s, padding pad (padding never wins). Shared with the
   CUDA kernels. */
static inline YOLO_HD int yolo_maxpool_argmax(const yolo_real *p, int H, int W, int k, int s, int pad, int oy, int ox) {
    int best = -1;
    yolo_real bv = 0;
    for (int ky = 0; ky < k; ky++) {
        int iy = oy * s - pad + ky;
        if (iy < 0 || iy >= H) continue;
        for (int kx = 0; kx < k; kx++) {
            int ix = ox * s - pad + kx;
            if (ix < 0 || ix >= W) continue;
            if (best < 0 || p[iy * W + ix] > bv) { bv = p[iy * W + ix]; best = iy * W + ix; }
        }
    }
    return best;
}

YOLO_C_BEGIN
/* the backends: "cpu", "cuda" or a GPU index ("0"), NULL/"" for the GPU
   when there is one, else the CPU. The CUDA one exists when the program is
   linked with yolov9_kernels.cu; otherwise asking for it is an error. */
extern const yolo_backend yolo_cpu;
const yolo_backend *yolo_backend_cuda(int device, char *err);
const yolo_backend *yolo_backend_select(const char *device, char *err);
/* The backend a memory plan for --device assumes where that device is not
   at hand (a --dry-run on a machine without it). A plan reads two facts of
   its backend, both through yolo_model_precision_flags: its tensor cores
   (the default precision, and so a stored tensor's bytes) and whether it
   stages a training step's weights (a buffer of the step). "cpu": the CPU;
   anything else: the CUDA backend of a GPU with tensor cores (bf16 and
   half, weights staged), a stand-in that computes on the CPU. */
const yolo_backend *yolo_backend_for_plan(const char *device);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* Each op is a forward and a backward. Forwards write their output;
   backwards ADD into the gradients of their inputs (dx may be NULL when the
   input needs no gradient, e.g. the image). */

/* --- the convolution as matrix products over packed panels ---

   Per image and group, with w_g [c2g, K] (K = c1g k k), P = Ho Wo output
   positions and col [K, P] the patches of x under every output position
   (im2col: row (c, ky, kx), column (oy, ox)), a conv is three products:
     forward          y_g  [c2g, P] = w_g col
     backward-data    dL/dx         = col2im(w_g^T dy_g); of stride 1 it is
                                      the forward conv of dy with w's kernels
                                      turned half a turn (no col2im)
     backward-weight  dw_g [c2g, K] += dy_g col^T   (summed over every image)
   The first two are C[M, N] = sum over r of A[M, r] B[r, N] with A the
   weights, computed near the machine's peak on three ideas (the tiling of
   the BLAS libraries, after GotoBLAS):
   1. The register tile. An MR x NR tile of C is summed in a local array
      (acc) small enough for the compiler to keep in vector registers: each
      step of r loads MR values of A and NR of B and does MR NR multiply-adds,
      so that the arithmetic, not memory, sets the pace. NR is two vectors
      wide (32 floats with AVX-512); MR takes the registers that are left.
      The compiler vectorises the NR loop and unrolls the MR loop: no
      intrinsics, the same C on every machine (-march=native picks the width;
      without it the same code runs on SSE2's narrower vectors).
   2. Packing. The operands are copied into the order in which the register
      tile reads them: A (the weights, once a call) in strips of MR rows, a
      panel of B (KC values of r, NC columns) in strips of NR columns, the MR
      (NR) values of one r side by side. The tile then reads both with unit
      stride, from the cache (the B strip from L1, the panel from L2). Packing
      B is also where the patches are made: col is never stored whole, a
      panel is read from x as it is needed (a 1x1 conv of stride 1 reads x
      itself: it is col; one of stride 1 and odd k reads x's planes padded
      with zeros, where each row of col is a run: yolo_pad_planes).
   3. Threads over tiles. The output is cut into MC x NC tiles, of every image
      and group at once; a thread packs and computes its tiles alone. Each C
      value sums its r in the same order whatever the number of threads (KC
      at a time in the register tile, the blocks added in order), so results
      do not depend on it.
   The weight gradient sums along the positions, the rows of both dy and col:
   a tile of its own (yolo_dot_micro, below) reads both rows as they lie. Its
   sum over every position of every image is cut into chunks of YOLO_RCHUNK
   positions: a partial dw a chunk, the partials then added in order, in
   double. yolo_conv2d_naive_* below are the plain loops the tests hold all
   of this to. */
#if defined(__AVX512F__)
#define YOLO_VECTOR_BYTES 64
#elif defined(__AVX__)
#define YOLO_VECTOR_BYTES 32
#else
#define YOLO_VECTOR_BYTES 16
#endif
#if defined(__AVX512F__) || defined(__aarch64__)
#define YOLO_MR 8    /* 32 vector registers: 16 of them hold the tile */
#else
#define YOLO_MR 6    /* 16 registers: 12 */
#endif
#define YOLO_NR (2 * YOLO_VECTOR_BYTES / (int)sizeof(yolo_real))
#define YOLO_KC 256                 /* values of r a block */
#define YOLO_MC (8 * YOLO_MR)       /* rows of a tile */
#define YOLO_NC (8 * YOLO_NR)       /* columns of a tile */
#define YOLO_RCHUNK 4096            /* positions of a weight gradient's partial */
#define YOLO_VL (YOLO_VECTOR_BYTES / (int)sizeof(yolo_real))   /* lanes of a vector */
#define YOLO_DR (YOLO_MR == 8 ? 4 : 3)   /* the weight gradient's register tile: DR x DR vectors */
#define YOLO_DOT_TAPS 64                 /* its tiles' columns (taps) */
#define YOLO_DOT_KC 1024                 /* and positions a packed block */

/* An operand: a plain matrix, element (i, r) at p[i * rs + r * cs]; or
   (B only, p NULL) col, the patches of one image's group of channels x
   [C, H, W] under a k x k conv of stride s with Ho x Wo outputs; or (B
   only, p NULL, Wp > 0) col read from padded planes (yolo_planes below):
   row r, tap (c, ky, kx), is the run that starts at x + c plane + ky Wp +
   kx + shift. */
typedef struct {
    const yolo_real *p;
    size_t rs, cs;
    const yolo_real *x;
    int C, H, W, k, s, Ho, Wo;
    int Wp;
    size_t plane;
    ptrdiff_t shift;
} yolo_operand;

static yolo_operand yolo_matrix(const yolo_real *p, size_t rs, size_t cs) {
    yolo_operand o;
    memset(&o, 0, sizeof o);
    o.p = p; o.rs = rs; o.cs = cs;
    return o;
}
/* x's patches, col; a 1x1 conv of stride 1's is x itself */
static yolo_operand yolo_patches(const yolo_real *x, int C, int H, int W, int k, int s, int Ho, int Wo) {
    if (k == 1 && s == 1) return yolo_matrix(x, (size_t)H * W, 1);
    yolo_operand o = yolo_matrix(NULL, 0, 0);
    o.x = x; o.C = C; o.H = H; o.W = W; o.k = k; o.s = s; o.Ho = Ho; o.Wo = Wo;
    return o;
}
/* col as runs of padded planes (planes plane values apart, Wp wide), shifted by shift */
static yolo_operand yolo_plane_runs(const yolo_real *planes, size_t plane, int Wp, int k, ptrdiff_t shift) {
    yolo_operand o = yolo_matrix(NULL, 0, 0);
    o.x = planes; o.plane = plane; o.Wp = Wp; o.k = k; o.shift = shift;
    return o;
}
/* whether B's rows run along its columns (a plain matrix's rows, padded planes' runs), and row r's start */
static int yolo_rows_run(const yolo_operand *b) { return b->p ? b->cs == 1 : b->Wp > 0; }
static const yolo_real *yolo_row_start(const yolo_operand *b, int r) {
    if (b->p) return b->p + (size_t)r * b->rs;
    int t = r % (b->k * b->k);
    return b->x + (size_t)(r / (b->k * b->k)) * b->plane + (ptrdiff_t)(t / b->k) * b->Wp + t % b->k + b->shift;
}

/* A[i0 .. i0+mc, r0 .. r0+kc) into strips of MR rows: ap[strip][r][MR], rows past mc zero */
static void yolo_pack_a(const yolo_operand *a, int i0, int mc, int r0, int kc, yolo_real *ap) {
    for (int is = 0; is < mc; is += YOLO_MR, ap += (size_t)kc * YOLO_MR)
        for (int i = 0; i < YOLO_MR; i++) {
            if (is + i >= mc) { for (int r = 0; r < kc; r++) ap[r * YOLO_MR + i] = 0; continue; }
            const yolo_real *row = a->p + (size_t)(i0 + is + i) * a->rs + (size_t)r0 * a->cs;
            for (int r = 0; r < kc; r++) ap[r * YOLO_MR + i] = row[(size_t)r * a->cs];
        }
}

/* the t in [*lo, *hi) of [0, n) whose column ix0 + t s lies in [0, W) */
static void yolo_tap_range(int ix0, int s, int W, int n, int *lo, int *hi) {
    *lo = ix0 >= 0 ? 0 : (-ix0 + s - 1) / s;
    *hi = ix0 >= W ? 0 : (W - 1 - ix0) / s + 1;
    if (*hi > n) *hi = n;
    if (*lo > *hi) *lo = *hi;
}

/* the taps x[iy, ix0 + t s] for t in [0, n) into dst, zero where they fall on the
   padding (iy or ix outside the picture) */
static void yolo_tap_run(const yolo_operand *b, const yolo_real *xc, int iy, int ix0, int n, yolo_real *dst) {
    int t = 0, end = 0;
    if (iy >= 0 && iy < b->H) {
        yolo_tap_range(ix0, b->s, b->W, n, &t, &end);
        for (int u = 0; u < t; u++) dst[u] = 0;                             /* left padding */
        const yolo_real *src = xc + (size_t)iy * b->W + ix0;
        if (b->s == 1) {
            #pragma omp simd
            for (int u = t; u < end; u++) dst[u] = src[u];
            t = end;
        }
        for (; t < end; t++) dst[t] = src[t * b->s];
    }
    for (; t < n; t++) dst[t] = 0;                                          /* right padding, or a row of it */
}
/* row r of col (tap c, ky, kx), output positions q .. q+n, into dst: a run per output row */
static void yolo_patch_row(const yolo_operand *b, int r, int q, int n, yolo_real *dst) {
    int c = r / (b->k * b->k), ky = r / b->k % b->k, kx = r % b->k, pad = b->k / 2;
    const yolo_real *xc = b->x + (size_t)c * b->H * b->W;
    while (n > 0) {
        int oy = q / b->Wo, ox = q % b->Wo, run = b->Wo - ox < n ? b->Wo - ox : n;
        yolo_tap_run(b, xc, oy * b->s - pad + ky, ox * b->s - pad + kx, run, dst);
        dst += run; q += run; n -= run;
    }
}

/* B[r0 .. r0+kc, j0 .. j0+nc) into strips of NR columns: bp[strip][r][NR], columns past nc zero */
static void yolo_pack_b(const yolo_operand *b, int r0, int kc, int j0, int nc, yolo_real *bp) {
    int nstrips = (nc + YOLO_NR - 1) / YOLO_NR;
    if (nc % YOLO_NR)   /* the last strip's columns past nc */
        for (int r = 0; r < kc; r++)
            for (int j = nc % YOLO_NR; j < YOLO_NR; j++) bp[((size_t)(nstrips - 1) * kc + r) * YOLO_NR + j] = 0;
    if (yolo_rows_run(b)) {           /* rows that run along the columns: copies of NR values */
        for (int r = 0; r < kc; r++) {
            const yolo_real *src = yolo_row_start(b, r0 + r) + j0;
            for (int js = 0; js < nc; js += YOLO_NR) {
                int nr = nc - js < YOLO_NR ? nc - js : YOLO_NR;
                yolo_real *dst = bp + (size_t)js * kc + (size_t)r * YOLO_NR;
                #pragma omp simd
                for (int j = 0; j < nr; j++) dst[j] = src[js + j];
            }
        }
        return;
    }
    for (int js = 0; js < nc; js += YOLO_NR) {
        int nr = nc - js < YOLO_NR ? nc - js : YOLO_NR;
        yolo_real *strip = bp + (size_t)js * kc;
        if (b->p)                     /* a transposed matrix: each column read along r */
            for (int j = 0; j < nr; j++) {
                const yolo_real *col = b->p + (size_t)(j0 + js + j) * b->cs + (size_t)r0 * b->rs;
                for (int r = 0; r < kc; r++) strip[r * YOLO_NR + j] = col[(size_t)r * b->rs];
            }
        else                          /* col: row r is tap (c, ky, kx), its columns the positions */
            for (int r = 0; r < kc; r++) yolo_patch_row(b, r0 + r, j0 + js, nr, strip + r * YOLO_NR);
    }
}

/* the register tile: C[0 .. mr, 0 .. nr) = (add ? C : 0) + a b over kc values of r,
   a an MR strip of A, b an NR strip of B */
static void yolo_gemm_micro(int kc, const yolo_real *a, const yolo_real *b, yolo_real *C, size_t ldc, int mr, int nr,
                            int add) {
    yolo_real acc[YOLO_MR][YOLO_NR];
    #pragma GCC unroll 16
    for (int i = 0; i < YOLO_MR; i++)
        for (int j = 0; j < YOLO_NR; j++) acc[i][j] = 0;
    for (int r = 0; r < kc; r++, a += YOLO_MR, b += YOLO_NR) {
        #pragma GCC unroll 16
        for (int i = 0; i < YOLO_MR; i++) {
            #pragma omp simd
            for (int j = 0; j < YOLO_NR; j++) acc[i][j] += a[i] * b[j];
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) C[i * ldc + j] = (add ? C[i * ldc + j] : 0) + acc[i][j];
}

/* one product A B over R values of r. A is the weights (w or w^T), small and read by every
   tile: packed once, whole (yolo_pack_weights), into strips [M/MR][R][MR]. */
typedef struct {
    const yolo_real *ap;
    yolo_operand b;
    int R;
} yolo_product;

/* A [M, R] of each of g groups (group gi's at a + gi * gs) packed whole, for yolo_product.ap:
   group gi's strips at the result + gi * yolo_packed_size(M, R) (caller frees) */
static size_t yolo_packed_size(int M, int R) { return (size_t)(M + YOLO_MR - 1) / YOLO_MR * YOLO_MR * R; }
static yolo_real *yolo_pack_weights(const yolo_real *a, size_t gs, size_t rs, size_t cs, int g, int M, int R) {
    yolo_real *ap = (yolo_real *)yolo_xmalloc(g * yolo_packed_size(M, R) * sizeof(yolo_real));
    for (int gi = 0; gi < g; gi++) {
        yolo_operand ag = yolo_matrix(a + gi * gs, rs, cs);
        yolo_pack_a(&ag, 0, M, 0, R, ap + gi * yolo_packed_size(M, R));
    }
    return ap;
}

/* the tile [i0 .. i0+mc, j0 .. j0+nc) of a product into c (rows ldc apart), KC values of r at
   a time; bp holds a packed panel of B */
static void yolo_gemm_tile(const yolo_product *pr, int i0, int mc, int j0, int nc, yolo_real *c, size_t ldc,
                           yolo_real *bp) {
    for (int r0 = 0; r0 < pr->R; r0 += YOLO_KC) {
        int kc = pr->R - r0 < YOLO_KC ? pr->R - r0 : YOLO_KC;
        yolo_pack_b(&pr->b, r0, kc, j0, nc, bp);
        for (int j = 0; j < nc; j += YOLO_NR)
            for (int i = 0; i < mc; i += YOLO_MR)
                yolo_gemm_micro(kc, pr->ap + ((size_t)(i0 + i) * pr->R + (size_t)r0 * YOLO_MR), bp + (size_t)j * kc,
                                c + (size_t)i * ldc + j, ldc, mc - i < YOLO_MR ? mc - i : YOLO_MR,
                                nc - j < YOLO_NR ? nc - j : YOLO_NR, r0 > 0);
    }
}

/* Runs task(ctx, t, ap, bp) for t in [0, n) over the threads, each thread with
   its own packing buffers; on one thread where the products' multiply-adds
   (madds) are too few to pay for waking the others (2e6: some 40 us of work). A task computes tiles of
   M x N products: mt x nt tiles a product, tile t % (mt nt) of product t / (mt nt). */
typedef void (*yolo_tile_task)(void *ctx, int t, yolo_real *ap, yolo_real *bp);
static void yolo_gemm_tasks(int n, double madds, yolo_tile_task task, void *ctx) {
    size_t na = (size_t)YOLO_MC * (YOLO_KC > YOLO_DOT_KC ? YOLO_KC : YOLO_DOT_KC);
    size_t nb = (size_t)YOLO_KC * YOLO_NC > (size_t)YOLO_DOT_TAPS * YOLO_DOT_KC ? (size_t)YOLO_KC * YOLO_NC
                                                                               : (size_t)YOLO_DOT_TAPS * YOLO_DOT_KC;
    #pragma omp parallel if (n > 1 && madds > 2e6)
    {
        yolo_real *ap = (yolo_real *)yolo_xmalloc(na * sizeof(yolo_real));
        yolo_real *bp = (yolo_real *)yolo_xmalloc(nb * sizeof(yolo_real));
        #pragma omp for schedule(dynamic)
        for (int t = 0; t < n; t++) task(ctx, t, ap, bp);
        free(ap); free(bp);
    }
}
/* tile t of M x N products cut into tiles of MB x NB: rows [*i0, *i0 + *mc), columns [*j0, *j0 + *nc);
   returns the product's index */
static int yolo_tile_of(int t, int M, int N, int MB, int NB, int *i0, int *mc, int *j0, int *nc) {
    int mt = (M + MB - 1) / MB, nt = (N + NB - 1) / NB, in = t % (mt * nt);
    *i0 = in % mt * MB; *mc = M - *i0 < MB ? M - *i0 : MB;
    *j0 = in / mt * NB; *nc = N - *j0 < NB ? N - *j0 : NB;
    return t / (mt * nt);
}
static int yolo_tiles(int M, int N, int MB, int NB) { return ((M + MB - 1) / MB) * ((N + NB - 1) / NB); }
/* The columns of the tiles of a call of `products` M x N products: NB, halved (not below min)
   until the call has YOLO_MIN_TILES tiles, so that small products (of one picture, of the small
   scales) still keep the threads busy. Which thread sums a value, and in how many tiles, never
   changes the sum. */
#define YOLO_MIN_TILES 16
static int yolo_tile_columns(int products, int M, int N, int MB, int NB, int min) {
    while (NB / 2 >= min && products * yolo_tiles(M, N, MB, NB) < YOLO_MIN_TILES) NB /= 2;
    return NB;
}

/* The weight gradient's products run along the positions, the rows of both dy and col: the
   register tile above would need both transposed into strips. Its own tile instead takes DR
   rows a_i of dy and DR rows b_j of col and sums a_i b_j over kc positions (a multiple of
   YOLO_VL), a vector of positions at a time: DR x DR accumulators of YOLO_VL lanes, the lanes
   added at the end. The rows are packed a block of YOLO_DOT_KC positions at a time (of one
   image, or running on over the next images where they are small), zeros past the end. */
static void yolo_dot_micro(int kc, const yolo_real *const *a, const yolo_real *const *b, yolo_real *C, size_t ldc,
                           int mr, int nr, int add) {
    yolo_real acc[YOLO_DR][YOLO_DR][YOLO_VL];
    #pragma GCC unroll 4
    for (int i = 0; i < YOLO_DR; i++)
        #pragma GCC unroll 4
        for (int j = 0; j < YOLO_DR; j++)
            for (int v = 0; v < YOLO_VL; v++) acc[i][j][v] = 0;
    for (int r = 0; r < kc; r += YOLO_VL)
        #pragma GCC unroll 4
        for (int i = 0; i < YOLO_DR; i++)
            #pragma GCC unroll 4
            for (int j = 0; j < YOLO_DR; j++) {
                #pragma omp simd
                for (int v = 0; v < YOLO_VL; v++) acc[i][j][v] += a[i][r + v] * b[j][r + v];
            }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            yolo_real s = 0;
            for (int v = 0; v < YOLO_VL; v++) s += acc[i][j][v];
            C[i * ldc + j] = (add ? C[i * ldc + j] : 0) + s;
        }
}

/* --- conv2d: zero padding k/2, stride s, groups g --- */

/* col2im: the adjoint of im2col, adds every patch gradient back to dx */
static void yolo_col2im(const yolo_real *col, int cg, int H, int W, int k, int s,
                        int Ho, int Wo, yolo_real *dx) {
    int p = k / 2;
    #pragma omp parallel for schedule(static) if ((size_t)cg * k * k * Ho * Wo > YOLO_CPU_THREADS_FROM)
    for (int c = 0; c < cg; c++) {
        yolo_real *d = dx + (size_t)c * H * W;
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                const yolo_real *src = col + ((size_t)(c * k + ky) * k + kx) * Ho * Wo;
                int lo, hi;   /* the ox whose column lies in the picture */
                yolo_tap_range(kx - p, s, W, Wo, &lo, &hi);
                for (int oy = 0; oy < Ho; oy++) {
                    int iy = oy * s - p + ky;
                    if (iy < 0 || iy >= H) continue;
                    yolo_real *row = d + (size_t)iy * W + kx - p;
                    const yolo_real *v = src + (size_t)oy * Wo;
                    #pragma omp simd
                    for (int ox = lo; ox < hi; ox++) row[ox * s] += v[ox];
                }
            }
    }
}

static yolo_real *yolo_rounded_copy(yolo_precision prec, const yolo_real *src, size_t n);   /* below */
static void yolo_round_into(yolo_precision prec, const yolo_real *src, size_t n, yolo_real *r);  /* below */
static void yolo_store_round_n(int store, yolo_real *v, size_t n);                           /* below */
static yolo_real yolo_silu(yolo_real x);                                                     /* below */
static void yolo_silu_n(yolo_real *v, size_t n);                                             /* below */

/* image n's first channel in the CPU's NCHW: a slot's images are ctot HW
   values apart, its channels at c0 of each */
static yolo_real *yolo_cpu_image(const yolo_tensor *t, int n) {
    return t->data + ((size_t)n * yolo_buffer_channels(t) + t->c0) * t->h * t->w;
}

/* The products' scratch: buffers kept from call to call (a set for each thread that calls the
   convs), grown as needed, so that a step's convs do not map fresh memory at every call (and
   fault its pages in). What yolo_scratch(slot, n) returns holds n values until its next call
   for the same slot. */
#if defined(_MSC_VER)
#define YOLO_THREAD_LOCAL __declspec(thread)
#else
#define YOLO_THREAD_LOCAL __thread
#endif
enum { YOLO_SCRATCH_X, YOLO_SCRATCH_DY, YOLO_SCRATCH_PARTIALS, YOLO_SCRATCH_DCOL, YOLO_SCRATCH_DX, YOLO_SCRATCH_SLOTS };
static yolo_real *yolo_scratch(int slot, size_t n) {
    static YOLO_THREAD_LOCAL yolo_real *buf[YOLO_SCRATCH_SLOTS];
    static YOLO_THREAD_LOCAL size_t size[YOLO_SCRATCH_SLOTS];
    if (size[slot] < n) {
        free(buf[slot]);
        buf[slot] = (yolo_real *)yolo_xmalloc(n * sizeof(yolo_real));
        size[slot] = n;
    }
    return buf[slot];
}

/* Padded planes: every H x W plane of a tensor with p zeros around it, Hp x Wp (Hp = H + 2p,
   Wp = W + 2p), then a vector of zeros, one after the other (plane = Hp Wp + YOLO_VL values
   apart), with guard zeros before the first and after the last. From them a stride-1 conv of
   odd k (p = k/2) needs no im2col: taken over a grid of Ho x Wp outputs (the last k - 1 columns
   of each row fall past Wo and are dropped), output q = oy Wp + ox reads tap (c, ky, kx) at
   plane c, q + ky Wp + kx, so that every row of col is a run of one plane (yolo_plane_runs),
   copied into the packed panels as it lies, or read there by the weight gradient's tile (whose
   rows of dy, runs of dy's padded planes, end in zeros to the next whole vector). */
typedef struct { yolo_real *p; size_t plane; int Wp; } yolo_planes;
static int yolo_pads_planes(int k, int s) { return s == 1 && k > 1 && k % 2 == 1; }
static yolo_planes yolo_pad_planes(const yolo_tensor *t, int p, int guard, int slot) {
    yolo_planes pl;
    int H = t->h, W = t->w, n = t->n * t->c;
    pl.Wp = W + 2 * p; pl.plane = (size_t)(H + 2 * p) * pl.Wp + YOLO_VL;
    pl.p = yolo_scratch(slot, (size_t)n * pl.plane + 2 * guard) + guard;
    memset(pl.p - guard, 0, guard * sizeof(yolo_real));
    memset(pl.p + (size_t)n * pl.plane, 0, guard * sizeof(yolo_real));
    #pragma omp parallel for schedule(static) if ((size_t)n * pl.plane > YOLO_CPU_THREADS_FROM)
    for (int q = 0; q < n; q++) {
        const yolo_real *src = yolo_cpu_image(t, q / t->c) + (size_t)(q % t->c) * H * W;
        yolo_real *d = pl.p + (size_t)q * pl.plane;
        memset(d, 0, ((size_t)p * pl.Wp + p) * sizeof(yolo_real));   /* the top rows, the first row's left */
        for (int y = 0; y < H; y++) {
            yolo_real *row = d + (size_t)(y + p) * pl.Wp + p;
            memcpy(row, src + (size_t)y * W, W * sizeof(yolo_real));
            memset(row + W, 0, 2 * p * sizeof(yolo_real));            /* its right, the next row's left */
        }
        memset(d + (size_t)(H + p) * pl.Wp + p, 0, ((size_t)p * pl.Wp - p + YOLO_VL) * sizeof(yolo_real));   /* the bottom */
    }
    return pl;
}

/* A conv's forward as its tile tasks see it, for y = conv(x, w) and for the forward conv that
   gives dL/dx of stride 1 (below): per image n and group gi the product w_g col over a grid of
   Q positions, wq wide, of which the first wo of each row are outputs (without padded planes
   the grid is the P outputs, one row). A tile is summed in place in y where its outputs run on
   along y's rows (no padded planes, no dx), else into the task's scratch (the buffer of A,
   which these tiles leave unused: A is packed whole); it is then finished, a run of outputs
   at a time: into y (bias, SiLU, rounded to y's store, and with a shortcut r added and rounded
   again) or, with dx, into dL/dx's runs (old + value, or 0 + value). */
typedef struct {
    const yolo_tensor *x, *r;
    yolo_tensor *y;            /* with dx: the shape of dL/dx */
    const yolo_dx *dx;
    const yolo_real *wp, *b;   /* wp: the weights packed (yolo_pack_weights) */
    yolo_planes pad;           /* x's padded planes (pad.p NULL: none) */
    int k, s, g, act, c1g, c2g, K, P, Q, wq, wo, nb;   /* nb: a tile's columns */
} yolo_conv_job;

/* channel c of image n's dL/dx (HW values) in dx's runs, and whether it is added to */
static yolo_real *yolo_dx_channel(const yolo_dx *dx, int n, int c, int HW, int *add) {
    int r = 0;
    while (c >= dx->c[r]) c -= dx->c[r++];
    *add = dx->add[r];
    return dx->g[r] + ((size_t)n * dx->cd[r] + dx->c0[r] + c) * HW;
}

/* the outputs [pos, pos + len) of channel o of image n, summed in v, finished where they lie */
static void yolo_conv_finish(const yolo_conv_job *f, int n, int o, int pos, int len, const yolo_real *v) {
    if (f->dx) {
        int add;
        yolo_real *d = yolo_dx_channel(f->dx, n, o, f->P, &add) + pos;
        for (int j = 0; j < len; j++) d[j] = (add ? d[j] : 0) + v[j];
        return;
    }
    yolo_real *d = yolo_cpu_image(f->y, n) + (size_t)o * f->P + pos;
    if (f->b) for (int j = 0; j < len; j++) d[j] = v[j] + f->b[o];
    else if (d != v) memcpy(d, v, len * sizeof(yolo_real));
    if (f->act) yolo_silu_n(d, len);
    yolo_store_round_n(f->y->store, d, len);
    if (!f->r) return;
    const yolo_real *rv = f->r->data + ((size_t)n * f->y->c + o) * f->P + pos;
    for (int j = 0; j < len; j++) d[j] += rv[j];
    yolo_store_round_n(f->y->store, d, len);
}

/* one tile of w_g col for image n, group gi, then finished row by row, a run of outputs at a time */
static void yolo_conv_forward_tile(void *ctx, int t, yolo_real *ap, yolo_real *bp) {
    const yolo_conv_job *f = (const yolo_conv_job *)ctx;
    const yolo_tensor *x = f->x;
    int i0, mc, j0, nc, q = yolo_tile_of(t, f->c2g, f->Q, YOLO_MC, f->nb, &i0, &mc, &j0, &nc), n = q / f->g, gi = q % f->g;
    const yolo_real *xg = f->pad.p ? f->pad.p + ((size_t)n * x->c + gi * f->c1g) * f->pad.plane
                                   : yolo_cpu_image(x, n) + (size_t)gi * f->c1g * x->h * x->w;
    yolo_product pr;
    pr.ap = f->wp + gi * yolo_packed_size(f->c2g, f->K);
    pr.b = f->pad.p ? yolo_plane_runs(xg, f->pad.plane, f->pad.Wp, f->k, 0)
                    : yolo_patches(xg, f->c1g, x->h, x->w, f->k, f->s, f->y->h, f->y->w);
    pr.R = f->K;
    int in_place = !f->dx && !f->pad.p;
    yolo_real *c = in_place ? yolo_cpu_image(f->y, n) + ((size_t)gi * f->c2g + i0) * f->P + j0 : ap;
    size_t ldc = in_place ? (size_t)f->P : YOLO_NC;
    yolo_gemm_tile(&pr, i0, mc, j0, nc, c, ldc, bp);
    for (int i = 0; i < mc; i++)
        for (int j = 0; j < nc;) {
            int oy = (j0 + j) / f->wq, ox = (j0 + j) % f->wq, run = f->wq - ox < nc - j ? f->wq - ox : nc - j;
            if (ox < f->wo)
                yolo_conv_finish(f, n, gi * f->c2g + i0 + i, oy * f->wo + ox, f->wo - ox < run ? f->wo - ox : run,
                                 c + i * ldc + j);
            j += run;
        }
}

/* runs a conv job on the weights w [y's C, x's C / g, k, k] (planes: x's padded planes, made
   here where none are given and the conv reads them) */
static void yolo_conv_job_run(yolo_conv_job *f, const yolo_real *w, const yolo_planes *planes) {
    const yolo_tensor *x = f->x;
    int C2 = f->y->c;
    f->c1g = x->c / f->g; f->c2g = C2 / f->g; f->K = f->c1g * f->k * f->k;
    f->P = f->y->h * f->y->w; f->Q = f->wq = f->wo = f->P;
    memset(&f->pad, 0, sizeof f->pad);
    if (yolo_pads_planes(f->k, f->s)) {
        f->pad = planes ? *planes : yolo_pad_planes(x, f->k / 2, f->k, YOLO_SCRATCH_X);
        f->wq = f->pad.Wp; f->wo = f->y->w; f->Q = f->y->h * f->wq;
    }
    yolo_real *wp = yolo_pack_weights(w, (size_t)f->c2g * f->K, f->K, 1, f->g, f->c2g, f->K);
    f->wp = wp;
    f->nb = yolo_tile_columns(x->n * f->g, f->c2g, f->Q, YOLO_MC, YOLO_NC, YOLO_NR);
    yolo_gemm_tasks(x->n * f->g * yolo_tiles(f->c2g, f->Q, YOLO_MC, f->nb), (double)x->n * C2 * f->K * f->P,
                    yolo_conv_forward_tile, f);
    free(wp);
}

/* y[B,C2,Ho,Wo] = conv(x[B,C1,H,W], w[C2,C1/g,k,k]) + b[C2].
   Per image and group: y_g[C2/g, Ho*Wo] = w_g[C2/g, (C1/g)k^2] col[(C1/g)k^2, Ho*Wo],
   in tiles (above). In bf16 or half (the CPU twin of the GPU's tensor cores)
   the same on copies of x and w rounded to that precision: im2col only moves
   values and adds zeros, so col is then rounded too. Each tile is finished
   where it lies (in a slot too): bias, SiLU, rounded to y's store, and with
   a shortcut r added and rounded again. */
static void yolo_conv2d_forward(const yolo_tensor *x, const yolo_real *w, const yolo_real *b, const void *ws,
                                int C2, int k, int s, int g, int act, const yolo_tensor *r, yolo_precision prec,
                                yolo_tensor *y) {
    if (r) yolo_dense(r, "conv2d_forward's shortcut");
    if (prec != YOLO_FP32) {   /* ws: the weights rounded already (yolo_stage_weights) */
        yolo_tensor xr = *x;   /* dense: a slot's channels alone */
        size_t img = (size_t)x->c * x->h * x->w;
        xr.data = (yolo_real *)yolo_xmalloc(yolo_numel(x) * sizeof(yolo_real));
        xr.c0 = xr.ctot = 0;
        for (int n = 0; n < x->n; n++) yolo_round_into(prec, yolo_cpu_image(x, n), img, xr.data + n * img);
        yolo_real *wr = ws ? NULL : yolo_rounded_copy(prec, w, (size_t)C2 * (x->c / g) * k * k);
        yolo_conv2d_forward(&xr, ws ? (const yolo_real *)ws : wr, b, NULL, C2, k, s, g, act, r, YOLO_FP32, y);
        free(xr.data); free(wr);
        return;
    }
    yolo_conv_job f;
    memset(&f, 0, sizeof f);
    f.x = x; f.r = r; f.y = y; f.b = b; f.k = k; f.s = s; f.g = g; f.act = act;
    yolo_conv_job_run(&f, w, NULL);
}

/* A float rounded to the nearest IEEE half-precision value (ties to even),
   kept as a float. */
static float yolo_round_half(float f) {
    float a = fabsf(f);
    if (!(a == a) || a == INFINITY) return f;
    if (a >= 65520.0f) return copysignf(INFINITY, f);
    if (a < 6.103515625e-05f) return copysignf(nearbyintf(a * 16777216.0f) / 16777216.0f, f);   /* subnormal: steps of 2^-24 */
    int e;
    frexpf(a, &e);
    float ulp = ldexpf(1.0f, e - 11);   /* 11 significant bits */
    return copysignf(nearbyintf(a / ulp) * ulp, f);
}

/* A float rounded to the nearest bfloat16 (ties to even), kept as a
   float: the top 16 bits of float32, rounded at the 17th. */
static float yolo_round_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return f;   /* NaN */
    u = (u + 0x7fffu + ((u >> 16) & 1)) & 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

/* n values rounded to prec's operand precision into r */
static void yolo_round_into(yolo_precision prec, const yolo_real *src, size_t n, yolo_real *r) {
    for (size_t i = 0; i < n; i++) {
        float f = (float)src[i];
        r[i] = (yolo_real)(prec == YOLO_BF16 ? yolo_round_bf16(f) : prec == YOLO_FP16 ? yolo_round_half(f) : f);
    }
}
/* the same into a copy (caller frees) */
static yolo_real *yolo_rounded_copy(yolo_precision prec, const yolo_real *src, size_t n) {
    yolo_real *r = (yolo_real *)yolo_xmalloc(n * sizeof(yolo_real));
    yolo_round_into(prec, src, n, r);
    return r;
}
/* the twin's staged weights: w rounded once, as its forward would round it at every call */
static void yolo_stage_weights(const yolo_real *w, int C2, int cin, int k, yolo_precision prec, void *ws) {
    yolo_round_into(prec, w, (size_t)C2 * cin * k * k, (yolo_real *)ws);
}

/* The CPU twin of a low-precision store (yolo_tensor.store): the op that
   writes t computes in float as always, then rounds every value to the
   store's precision, where the GPU rounds it on its way to memory. */
static void yolo_store_round_n(int store, yolo_real *v, size_t n) {
    if (store != YOLO_FP32) yolo_round_into((yolo_precision)store, v, n, v);
}
static void yolo_store_round(yolo_tensor *t) { yolo_store_round_n(t->store, t->data, yolo_numel(t)); }

/* image n's dL/dx, v [C][HW], into dx's runs: old + v, or 0 + v */
static void yolo_dx_put(const yolo_dx *dx, int n, int C, int HW, const yolo_real *v) {
    #pragma omp parallel for schedule(static) if ((size_t)C * HW > YOLO_CPU_THREADS_FROM)
    for (int c = 0; c < C; c++) {
        int add;
        yolo_real *d = yolo_dx_channel(dx, n, c, HW, &add);
        const yolo_real *vc = v + (size_t)c * HW;
        if (add) {
            #pragma omp simd
            for (int i = 0; i < HW; i++) d[i] += vc[i];
        } else {
            #pragma omp simd
            for (int i = 0; i < HW; i++) d[i] = (yolo_real)0 + vc[i];   /* 0 + v (a -0 comes out +0) */
        }
    }
}

/* a conv's backward, as its tile tasks see it: dy [B, C2, P], the patches' gradient dcol
   [C1/g k k, P] of each group (one image's), the weight gradient's partials [chunks][C2][K].
   The weight gradient sums over Q positions an image: the P outputs, or with padded planes of
   x and dy (a stride-1 conv of odd k) the grid Ho x Wp, whose columns past Wo hold dy's zeros. */
typedef struct {
    const yolo_tensor *x;
    const yolo_real *dy, *wtp;   /* wtp: w^T packed (yolo_pack_weights) */
    yolo_real *dcol, *part;
    yolo_planes xpad, dypad;     /* xpad.p NULL: none */
    int C2, Ho, Wo, k, s, g, c1g, c2g, K, P, Q, n, chunk_images, chunk_positions, chunks_per_image;
    int nb;                      /* the columns of a tile (of dcol's product, or taps of dw's) */
} yolo_conv_grad_job;

/* one tile of dcol_g = w_g^T dy_g for image n */
static void yolo_conv_dcol_tile(void *ctx, int t, yolo_real *ap, yolo_real *bp) {
    const yolo_conv_grad_job *f = (const yolo_conv_grad_job *)ctx;
    int i0, mc, j0, nc, gi = yolo_tile_of(t, f->K, f->P, YOLO_MC, f->nb, &i0, &mc, &j0, &nc);
    yolo_product pr;
    pr.ap = f->wtp + gi * yolo_packed_size(f->K, f->c2g);
    pr.b = yolo_matrix(f->dy + ((size_t)f->n * f->C2 + gi * f->c2g) * f->P, f->P, 1);
    pr.R = f->c2g;
    (void)ap;
    yolo_gemm_tile(&pr, i0, mc, j0, nc, f->dcol + ((size_t)gi * f->K + i0) * f->P + j0, f->P, bp);
}

/* the dot products of a dw tile over one block of kc positions: the mc rows of dy at ar, the nc
   rows of col at br, each readable up to whole vectors, dy's zero past kc */
static void yolo_dw_block(int kc, int mc, int nc, const yolo_real *const *ar, const yolo_real *const *br, yolo_real *dw,
                          size_t ldw, int add) {
    int kv = (kc + YOLO_VL - 1) / YOLO_VL * YOLO_VL;
    const yolo_real *a[YOLO_DR], *b[YOLO_DR];
    for (int j = 0; j < nc; j += YOLO_DR)
        for (int i = 0; i < mc; i += YOLO_DR) {
            for (int d = 0; d < YOLO_DR; d++) {   /* past the edge: the last row again, not stored */
                a[d] = ar[i + d < mc ? i + d : mc - 1];
                b[d] = br[j + d < nc ? j + d : nc - 1];
            }
            yolo_dot_micro(kv, a, b, dw + (size_t)i * ldw + j, ldw, mc - i < YOLO_DR ? mc - i : YOLO_DR,
                           nc - j < YOLO_DR ? nc - j : YOLO_DR, add);
        }
}

/* the same over a packed block: the rows YOLO_DOT_KC apart in ap and bp, padded here with zeros */
static void yolo_dw_packed(int kc, int mc, int nc, yolo_real *ap, yolo_real *bp, yolo_real *dw, size_t ldw, int add) {
    int kv = (kc + YOLO_VL - 1) / YOLO_VL * YOLO_VL;
    const yolo_real *ar[YOLO_MC], *br[YOLO_DOT_TAPS];
    for (int i = 0; i < mc; i++) {
        memset(ap + (size_t)i * YOLO_DOT_KC + kc, 0, (kv - kc) * sizeof(yolo_real));
        ar[i] = ap + (size_t)i * YOLO_DOT_KC;
    }
    for (int j = 0; j < nc; j++) {
        memset(bp + (size_t)j * YOLO_DOT_KC + kc, 0, (kv - kc) * sizeof(yolo_real));
        br[j] = bp + (size_t)j * YOLO_DOT_KC;
    }
    yolo_dw_block(kc, mc, nc, ar, br, dw, ldw, add);
}

/* one tile of a chunk's partial dw_g = sum of dy_g col^T over the chunk's images and positions:
   rows i0 .. i0+mc of dy and taps j0 .. j0+nc of col packed a block of positions at a time */
static void yolo_conv_dw_tile(void *ctx, int t, yolo_real *ap, yolo_real *bp) {
    const yolo_conv_grad_job *f = (const yolo_conv_grad_job *)ctx;
    const yolo_tensor *x = f->x;
    int i0, mc, j0, nc, q = yolo_tile_of(t, f->c2g, f->K, YOLO_MC, f->nb, &i0, &mc, &j0, &nc);
    int chunk = q / f->g, gi = q % f->g;
    int n0 = chunk / f->chunks_per_image * f->chunk_images, n1 = n0 + f->chunk_images;
    int p0 = chunk % f->chunks_per_image * f->chunk_positions, p1 = p0 + f->chunk_positions;
    if (n1 > x->n) n1 = x->n;
    if (p1 > f->Q) p1 = f->Q;
    yolo_real *dw = f->part + ((size_t)chunk * f->g + gi) * f->c2g * f->K + (size_t)i0 * f->K + j0;
    int fill = 0, blocks = 0, pad = f->k / 2;
    for (int n = n0; n < n1; n++) {
        yolo_operand dyg, xg;   /* the rows of dy and of col along the positions */
        if (f->xpad.p) {
            dyg = yolo_plane_runs(f->dypad.p + ((size_t)n * f->C2 + gi * f->c2g + i0) * f->dypad.plane, f->dypad.plane,
                                  f->dypad.Wp, 1, (ptrdiff_t)pad * f->dypad.Wp);
            xg = yolo_plane_runs(f->xpad.p + ((size_t)n * x->c + gi * f->c1g) * f->xpad.plane, f->xpad.plane, f->xpad.Wp,
                                 f->k, -pad);
        } else {
            dyg = yolo_matrix(f->dy + ((size_t)n * f->C2 + gi * f->c2g + i0) * f->P, f->P, 1);
            xg = yolo_patches(x->data + ((size_t)n * x->c + gi * f->c1g) * x->h * x->w, f->c1g, x->h, x->w, f->k, f->s,
                              f->Ho, f->Wo);
        }
        if (f->xpad.p && f->Q >= YOLO_DOT_KC) {   /* large planes: rows read where they lie, an image's blocks */
            const yolo_real *ar[YOLO_MC], *br[YOLO_DOT_TAPS];
            for (int p = p0; p < p1; p += YOLO_DOT_KC) {
                for (int i = 0; i < mc; i++) ar[i] = yolo_row_start(&dyg, i) + p;
                for (int j = 0; j < nc; j++) br[j] = yolo_row_start(&xg, j0 + j) + p;
                yolo_dw_block(p1 - p < YOLO_DOT_KC ? p1 - p : YOLO_DOT_KC, mc, nc, ar, br, dw, f->K, blocks++ > 0);
            }
            continue;
        }
        for (int p = p0; p < p1;) {
            int take = p1 - p < YOLO_DOT_KC - fill ? p1 - p : YOLO_DOT_KC - fill;
            for (int i = 0; i < mc; i++)
                memcpy(ap + (size_t)i * YOLO_DOT_KC + fill, yolo_row_start(&dyg, i) + p, take * sizeof(yolo_real));
            for (int j = 0; j < nc; j++) {
                yolo_real *dst = bp + (size_t)j * YOLO_DOT_KC + fill;
                if (yolo_rows_run(&xg)) memcpy(dst, yolo_row_start(&xg, j0 + j) + p, take * sizeof(yolo_real));
                else yolo_patch_row(&xg, j0 + j, p, take, dst);
            }
            fill += take; p += take;
            if (fill == YOLO_DOT_KC) { yolo_dw_packed(fill, mc, nc, ap, bp, dw, f->K, blocks++ > 0); fill = 0; }
        }
    }
    if (fill) yolo_dw_packed(fill, mc, nc, ap, bp, dw, f->K, blocks > 0);
}

/* The conv as its definition, a loop per index, summed in double: the
   reference that tests/test_conv holds the products above to (x [B, C1, H,
   W], w [C2, C1/g, k, k], y and dy [B, C2, Ho, Wo]; b may be NULL).
   y = conv(x, w) + b; dx and dw get the gradients of dy added. */
__attribute__((unused)) static void yolo_conv2d_naive_forward(const yolo_real *x, int B, int C1, int H, int W,
                                                              const yolo_real *w, const yolo_real *b, int C2, int k,
                                                              int s, int g, int Ho, int Wo, yolo_real *y) {
    int c1g = C1 / g, c2g = C2 / g, pad = k / 2;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < C2; o++)
            for (int oy = 0; oy < Ho; oy++)
                for (int ox = 0; ox < Wo; ox++) {
                    double acc = b ? b[o] : 0;
                    for (int c = 0; c < c1g; c++)
                        for (int ky = 0; ky < k; ky++)
                            for (int kx = 0; kx < k; kx++) {
                                int iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                acc += (double)w[((size_t)(o * c1g + c) * k + ky) * k + kx] *
                                       x[(((size_t)n * C1 + o / c2g * c1g + c) * H + iy) * W + ix];
                            }
                    y[(((size_t)n * C2 + o) * Ho + oy) * Wo + ox] = (yolo_real)acc;
                }
}
__attribute__((unused)) static void yolo_conv2d_naive_backward(const yolo_real *x, int B, int C1, int H, int W,
                                                               const yolo_real *w, const yolo_real *dy, int C2, int k,
                                                               int s, int g, int Ho, int Wo, yolo_real *dx,
                                                               yolo_real *dw) {
    int c1g = C1 / g, c2g = C2 / g, pad = k / 2;
    for (int o = 0; o < C2; o++)   /* dL/dw[o, c, ky, kx] = sum over n, oy, ox of dy x */
        for (int c = 0; c < c1g; c++)
            for (int ky = 0; ky < k; ky++)
                for (int kx = 0; kx < k; kx++) {
                    double acc = 0;
                    for (int n = 0; n < B; n++)
                        for (int oy = 0; oy < Ho; oy++)
                            for (int ox = 0; ox < Wo; ox++) {
                                int iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                acc += (double)dy[(((size_t)n * C2 + o) * Ho + oy) * Wo + ox] *
                                       x[(((size_t)n * C1 + o / c2g * c1g + c) * H + iy) * W + ix];
                            }
                    dw[((size_t)(o * c1g + c) * k + ky) * k + kx] += (yolo_real)acc;
                }
    for (int n = 0; n < B; n++)    /* dL/dx[n, ci, iy, ix] = sum over the outputs that read it of dy w */
        for (int ci = 0; ci < C1; ci++)
            for (int iy = 0; iy < H; iy++)
                for (int ix = 0; ix < W; ix++) {
                    double acc = 0;
                    for (int o = ci / c1g * c2g; o < (ci / c1g + 1) * c2g; o++)
                        for (int ky = 0; ky < k; ky++)
                            for (int kx = 0; kx < k; kx++) {
                                int ty = iy + pad - ky, tx = ix + pad - kx;
                                if (ty < 0 || tx < 0 || ty % s || tx % s || ty / s >= Ho || tx / s >= Wo) continue;
                                acc += (double)dy[(((size_t)n * C2 + o) * Ho + ty / s) * Wo + tx / s] *
                                       w[((size_t)(o * c1g + ci % c1g) * k + ky) * k + kx];
                            }
                    dx[(((size_t)n * C1 + ci) * H + iy) * W + ix] += (yolo_real)acc;
                }
}

/* db += dy summed over the positions of each image, an image at a time, in double */
static void yolo_bias_grad(const yolo_real *dy, int B, int C2, int P, yolo_real *db) {
    #pragma omp parallel for schedule(static) if ((size_t)C2 * P * B > YOLO_CPU_THREADS_FROM)
    for (int o = 0; o < C2; o++)
        for (int n = 0; n < B; n++) {
            double acc = 0;
            for (int i = 0; i < P; i++) acc += dy[((size_t)n * C2 + o) * P + i];
            db[o] += (yolo_real)acc;
        }
}

/* Given dy = dL/dy: dw += dy col^T, db += sum dy, and dL/dx (above) into
   dx's runs. In bf16 or half: the two products of rounded copies of
   x, w and dy (a stored dy, a BatchNorm's dL/dz, is rounded already: where
   the GPU wrote it); the bias gradient, a plain sum, of dy itself. An
   image's dL/dx is summed whole before it meets the old values, old +
   dL/dx or 0 + dL/dx for a fresh gradient, as the GPU writes it. */
static void yolo_conv2d_backward(const yolo_tensor *x, const yolo_real *w, const void *wsd, const yolo_tensor *dyt,
                                 int C2, int k, int s, int g, yolo_precision prec, const yolo_dx *dx, yolo_real *dw,
                                 yolo_real *db) {
    yolo_dense(x, "conv2d_backward");
    int Ho = dyt->h, Wo = dyt->w;
    const yolo_real *dy = dyt->data;
    if (prec != YOLO_FP32) {
        yolo_tensor xr = *x, dyr = *dyt;
        xr.data = yolo_rounded_copy(prec, x->data, yolo_numel(x));
        yolo_real *wr = yolo_rounded_copy(prec, w, (size_t)C2 * (x->c / g) * k * k);
        if (dyt->store == YOLO_FP32) dyr.data = yolo_rounded_copy(prec, dy, yolo_numel(dyt));
        dyr.store = YOLO_FP32;
        yolo_conv2d_backward(&xr, wr, NULL, &dyr, C2, k, s, g, YOLO_FP32, dx, dw, NULL);
        if (db) yolo_bias_grad(dy, x->n, C2, Ho * Wo, db);
        free(xr.data); free(wr);
        if (dyr.data != dy) free(dyr.data);
        return;
    }
    int C1 = x->c, H = x->h, W = x->w, c1g = C1 / g, c2g = C2 / g, K = c1g * k * k, P = Ho * Wo;
    yolo_conv_grad_job f;
    memset(&f, 0, sizeof f);
    f.x = x; f.dy = dy; f.C2 = C2; f.Ho = Ho; f.Wo = Wo; f.k = k; f.s = s; f.g = g;
    f.c1g = c1g; f.c2g = c2g; f.K = K; f.P = f.Q = P;
    yolo_tensor dyd = *dyt;   /* dy as the source of dL/dx's forward conv */
    dyd.data = (yolo_real *)dy; dyd.c0 = dyd.ctot = 0; dyd.store = YOLO_FP32;
    if (yolo_pads_planes(k, s)) {
        f.xpad = yolo_pad_planes(x, k / 2, k, YOLO_SCRATCH_X);
        f.dypad = yolo_pad_planes(&dyd, k / 2, k, YOLO_SCRATCH_DY);
        f.Q = Ho * f.xpad.Wp;
    }
    /* dw: a partial a chunk of positions (of one image, or of whole images where they are small) */
    f.chunk_images = 1; f.chunk_positions = f.Q; f.chunks_per_image = 1;
    if (f.Q >= YOLO_RCHUNK) { f.chunk_positions = YOLO_RCHUNK; f.chunks_per_image = (f.Q + YOLO_RCHUNK - 1) / YOLO_RCHUNK; }
    else f.chunk_images = YOLO_RCHUNK / f.Q;
    int chunks = (x->n + f.chunk_images - 1) / f.chunk_images * f.chunks_per_image;
    size_t nw = (size_t)C2 * K;
    f.part = yolo_scratch(YOLO_SCRATCH_PARTIALS, chunks * nw);
    f.nb = yolo_tile_columns(chunks * g, c2g, K, YOLO_MC, YOLO_DOT_TAPS, 16);
    yolo_gemm_tasks(chunks * g * yolo_tiles(c2g, K, YOLO_MC, f.nb), (double)x->n * C2 * K * P, yolo_conv_dw_tile,
                    &f);
    #pragma omp parallel for schedule(static) if (nw * chunks > YOLO_CPU_THREADS_FROM)
    for (size_t e = 0; e < nw; e++) {
        double acc = 0;
        for (int c = 0; c < chunks; c++) acc += f.part[c * nw + e];
        dw[e] += (yolo_real)acc;
    }
    if (db) yolo_bias_grad(dy, x->n, C2, P, db);
    if (dx && s == 1) {
        /* dL/dx[c, iy, ix] = sum of w[o, c, ky, kx] dy[o, iy + k/2 - ky, ix + k/2 - kx]: the forward
           conv of dy with w's kernels turned half a turn and its channels swapped (wt [C1, C2/g, k,
           k]), over every image at once, finished into dx's runs */
        yolo_real *wt = (yolo_real *)yolo_xmalloc((size_t)C2 * K * sizeof(yolo_real));
        for (int o = 0; o < C2; o++)
            for (int c = 0; c < c1g; c++)
                for (int t = 0; t < k * k; t++)
                    wt[(((size_t)(o / c2g * c1g + c) * c2g + o % c2g) * k * k) + k * k - 1 - t] = w[((size_t)o * c1g + c) * k * k + t];
        yolo_tensor dxs = *x;   /* dL/dx's shape */
        dxs.data = NULL; dxs.c0 = dxs.ctot = 0;
        yolo_conv_job fx;
        memset(&fx, 0, sizeof fx);
        fx.x = &dyd; fx.y = &dxs; fx.dx = dx; fx.k = k; fx.s = 1; fx.g = g;
        yolo_conv_job_run(&fx, wt, f.dypad.p ? &f.dypad : NULL);
        free(wt);
    } else if (dx) {
        /* of stride 2, an image at a time: every group's dcol = w^T dy, then added back onto the
           pixels it came from (col2im) */
        yolo_real *dxi = yolo_scratch(YOLO_SCRATCH_DX, (size_t)C1 * H * W);
        f.dcol = yolo_scratch(YOLO_SCRATCH_DCOL, (size_t)g * K * P);
        f.wtp = yolo_pack_weights(w, (size_t)c2g * K, 1, K, g, K, c2g);
        f.nb = yolo_tile_columns(g, K, P, YOLO_MC, YOLO_NC, YOLO_NR);
        for (int n = 0; n < x->n; n++) {
            f.n = n;
            yolo_gemm_tasks(g * yolo_tiles(K, P, YOLO_MC, f.nb), (double)C2 * K * P, yolo_conv_dcol_tile, &f);
            memset(dxi, 0, (size_t)C1 * H * W * sizeof(yolo_real));
            yolo_col2im(f.dcol, C1, H, W, k, s, Ho, Wo, dxi);
            yolo_dx_put(dx, n, C1, H * W, dxi);
        }
        free((void *)f.wtp);
    }
}

/* --- SiLU: y = x sigmoid(x); dy/dx = s (1 + x (1 - s)) ---
   The activation's sigmoid, 1 / (1 + e^-x), in float32 as the GPU's: e^x as
   2^n e^r, n = x / ln 2 rounded, r = x - n ln 2 (ln 2 in two parts, so that
   r is exact) in [-ln2/2, ln2/2], e^r by a polynomial of degree 7 (Cephes'
   expf: within 1 ulp; the sigmoid within 2 of the double's, rounded), 2^n
   written into the exponent bits. Unlike libm's exp (and floorf), it is
   plain arithmetic, and so every loop of SiLUs vectorises. With
   YOLO_REAL double (the gradient test's finite differences) exp itself. */
static inline float yolo_expf(float x) {
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;   /* e^x a normal float */
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;   /* rounded by adding 1.5 2^23 */
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f; p = p * r + 8.3334519073e-3f; p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f; p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { int32_t i; float f; } scale;   /* 2^n */
    scale.i = ((int32_t)n + 127) << 23;
    return p * scale.f;
}
static inline yolo_real yolo_act_sigmoid(yolo_real x) {
    if (sizeof(yolo_real) == sizeof(float)) return (yolo_real)(1.0f / (1.0f + yolo_expf(-(float)x)));
    return (yolo_real)(1.0 / (1.0 + exp(-(double)x)));
}
static yolo_real yolo_sigmoid(yolo_real x) { return (yolo_real)(1.0 / (1.0 + exp(-(double)x))); }   /* the head's */
static inline yolo_real yolo_silu(yolo_real x) { return x * yolo_act_sigmoid(x); }
static void yolo_silu_n(yolo_real *v, size_t n) {
    #pragma omp simd
    for (size_t i = 0; i < n; i++) v[i] = yolo_silu(v[i]);
}
static inline yolo_real yolo_silu_grad(yolo_real x) {
    yolo_real s = yolo_act_sigmoid(x);
    return s * (1 + x * (1 - s));
}

/* --- BatchNorm2d ---
   Training: per channel c over the B*H*W values, mean m and biased variance
   v normalise: xhat = (z - m) / sqrt(v + eps), u = gamma xhat + beta; the
   running statistics move by momentum 0.03 toward m and the *unbiased*
   variance v N/(N-1). Eval uses the running statistics instead.
   With a group (--sync-bn) m and v are those of every process's share
   together, N values a process: the sums added up over them.
   On the CPU a channel is one thread's: its statistics and its apply (or
   the backward's two sums and its dL/dz) follow each other while its B
   planes are still in the cache, where a group has to sum between them. */

/* u = a z + b (+ SiLU) over plane nc, a = gamma invstd, b = beta - mean a (in double) */
static void yolo_bn_apply_plane(const yolo_tensor *z, int nc, double a, double b, int act, yolo_tensor *u) {
    size_t HW = (size_t)z->h * z->w;
    const yolo_real *p = z->data + nc * HW;
    yolo_real *q = u->data + nc * HW;
    #pragma omp simd
    for (size_t i = 0; i < HW; i++) q[i] = (yolo_real)(a * p[i] + b);
    if (act) yolo_silu_n(q, HW);
    yolo_store_round_n(u->store, q, HW);
}
/* u from z and per-channel statistics (the backend's bn_apply) */
static void yolo_bn_apply(const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta, const yolo_real *mean,
                          const yolo_real *invstd, const yolo_real *var, double eps, int act, yolo_tensor *u) {
    yolo_dense(z, "bn_apply"); yolo_dense(u, "bn_apply");
    int C = z->c;
    #pragma omp parallel for schedule(static) if (yolo_numel(z) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < z->n * C; nc++) {   /* a plane (image, channel) at a time */
        int c = nc % C;
        double a = invstd ? gamma[c] * invstd[c] : gamma[c] / sqrt(var[c] + eps);
        yolo_bn_apply_plane(z, nc, a, beta[c] - mean[c] * a, act, u);
    }
}

/* channel c's sum and sum of squares, in double, as the GPU's: s[0], s[1] */
static void yolo_bn_channel_sums(const yolo_tensor *z, int c, double *s) {
    size_t HW = (size_t)z->h * z->w;
    double sz = 0, szz = 0;
    for (int n = 0; n < z->n; n++) {
        const yolo_real *p = z->data + ((size_t)n * z->c + c) * HW;
        #pragma omp simd reduction(+ : sz, szz)
        for (size_t i = 0; i < HW; i++) { double v = p[i]; sz += v; szz += v * v; }
    }
    s[0] = sz; s[1] = szz;
}
/* channel c's statistics from its sums over N values: v = E[z^2] - m^2, the
   running ones moved toward them */
static void yolo_bn_channel_stats(const double *s, int c, double N, double momentum, double eps,
                                  yolo_real *mean, yolo_real *invstd, yolo_real *rmean, yolo_real *rvar) {
    double m = s[0] / N, var = fmax(s[1] / N - m * m, 0.0);
    mean[c] = (yolo_real)m; invstd[c] = (yolo_real)(1.0 / sqrt(var + eps));
    rmean[c] = (yolo_real)((1 - momentum) * rmean[c] + momentum * m);
    rvar[c] = (yolo_real)((1 - momentum) * rvar[c] + momentum * (N > 1 ? var * N / (N - 1) : var));
}
/* the statistics in one pass, then u, normalised by the statistics as kept
   (so that the backward's remade u is the same bits) */
static void yolo_bn_train_forward(const yolo_tensor *z, const yolo_real *gamma, const yolo_real *beta,
                                  yolo_real *mean, yolo_real *invstd, yolo_real *rmean, yolo_real *rvar,
                                  double momentum, double eps, int act, const yolo_bn_group *group, yolo_tensor *u) {
    yolo_dense(z, "bn_train_forward"); yolo_dense(u, "bn_train_forward");
    int C = z->c;
    double N = (double)z->n * z->h * z->w * (group ? group->world : 1);
    if (!group) {
        #pragma omp parallel for schedule(static) if (yolo_numel(z) > YOLO_CPU_THREADS_FROM)
        for (int c = 0; c < C; c++) {
            double s[2];
            yolo_bn_channel_sums(z, c, s);
            yolo_bn_channel_stats(s, c, N, momentum, eps, mean, invstd, rmean, rvar);
            double a = gamma[c] * invstd[c];
            for (int n = 0; n < z->n; n++) yolo_bn_apply_plane(z, n * C + c, a, beta[c] - mean[c] * a, act, u);
        }
        return;
    }
    double *sum = (double *)yolo_xmalloc(2 * (size_t)C * sizeof(double));   /* [C] of (sum z, sum z^2) */
    #pragma omp parallel for schedule(static) if (yolo_numel(z) > YOLO_CPU_THREADS_FROM)
    for (int c = 0; c < C; c++) yolo_bn_channel_sums(z, c, sum + 2 * c);
    group->sum(sum, 2 * (size_t)C);   /* --sync-bn: over every process's share */
    for (int c = 0; c < C; c++) yolo_bn_channel_stats(sum + 2 * c, c, N, momentum, eps, mean, invstd, rmean, rvar);
    free(sum);
    yolo_bn_apply(z, gamma, beta, mean, invstd, NULL, eps, act, u);
}

/* the SiLU's share of dL/du over a run of channel c's z: silu'(u), u = gamma xhat + beta, as
   the forward made it (1 where the conv has no SiLU) */
static void yolo_bn_silu_factor(const yolo_real *z, int n, int c, const yolo_real *gamma, const yolo_real *beta,
                                const yolo_real *mean, const yolo_real *invstd, int act, yolo_real *f) {
    double m = mean[c], is = invstd[c], ga = gamma[c], be = beta[c];
    if (!act) { for (int i = 0; i < n; i++) f[i] = 1; return; }
    #pragma omp simd
    for (int i = 0; i < n; i++) f[i] = yolo_silu_grad((yolo_real)(ga * ((z[i] - m) * is) + be));
}
/* BatchNorm (+ SiLU) backward, recomputing u = gamma xhat + beta from the
   kept conv output z: keeping z alone is enough for both. With g = dL/du,
   dL/dz = gamma invstd / N (N g - sum g - xhat sum(g xhat)), written over
   z (each value read before it is written), rounded to z's store.
   With a group (--sync-bn) the two sums and N run over every process's
   share, as the statistics did; dgamma and dbeta stay the share's own (the
   parameter gradients are summed over the processes afterwards). */
typedef struct {   /* one BatchNorm backward's arguments, the same for every channel */
    yolo_tensor *z;
    const yolo_real *dy, *gamma, *beta, *mean, *invstd;
    int act;
    double N;
} yolo_bn_backward;
/* Runs of YOLO_BN_RUN values keep the SiLU factors in L1 where they are
   made again for the second pass (f [YOLO_BN_RUN]); with f [B*H*W] they
   are kept (f + the plane's offset) for channel c's second pass. */
#define YOLO_BN_RUN 512
/* channel c's sum g and sum g xhat: s[0], s[1] */
static void yolo_bn_grad_sums(const yolo_bn_backward *a, int c, yolo_real *f, int keep, double *s) {
    size_t HW = (size_t)a->z->h * a->z->w;
    double sg = 0, sgx = 0, m = a->mean[c], is = a->invstd[c];
    for (int n = 0; n < a->z->n; n++)
        for (size_t i0 = 0; i0 < HW; i0 += YOLO_BN_RUN) {
            size_t at = ((size_t)n * a->z->c + c) * HW + i0;
            const yolo_real *zp = a->z->data + at, *dp = a->dy + at;
            yolo_real *fp = keep ? f + n * HW + i0 : f;
            int run = HW - i0 < YOLO_BN_RUN ? (int)(HW - i0) : YOLO_BN_RUN;
            yolo_bn_silu_factor(zp, run, c, a->gamma, a->beta, a->mean, a->invstd, a->act, fp);
            #pragma omp simd reduction(+ : sg, sgx)
            for (int i = 0; i < run; i++) {
                double xh = (zp[i] - m) * is, gi = (double)dp[i] * fp[i];
                sg += gi; sgx += gi * xh;
            }
        }
    s[0] = sg; s[1] = sgx;
}
/* dL/dz over plane nc (image n, channel c) from its channel's sums s; f as for yolo_bn_grad_sums */
static void yolo_bn_grad_plane(const yolo_bn_backward *a, int nc, const double *s, yolo_real *f, int keep) {
    int c = nc % a->z->c, n = nc / a->z->c;
    size_t HW = (size_t)a->z->h * a->z->w;
    double sg = s[0], sgx = s[1], k = a->gamma[c] * a->invstd[c] / (yolo_real)a->N;   /* N as the GPU's float */
    double m = a->mean[c], is = a->invstd[c], N = a->N;
    for (size_t i0 = 0; i0 < HW; i0 += YOLO_BN_RUN) {
        yolo_real *zp = a->z->data + nc * HW + i0, *fp = keep ? f + n * HW + i0 : f;
        const yolo_real *dp = a->dy + nc * HW + i0;
        int run = HW - i0 < YOLO_BN_RUN ? (int)(HW - i0) : YOLO_BN_RUN;
        if (!keep) yolo_bn_silu_factor(zp, run, c, a->gamma, a->beta, a->mean, a->invstd, a->act, fp);
        #pragma omp simd
        for (int i = 0; i < run; i++) {
            double xh = (zp[i] - m) * is, gi = (double)dp[i] * fp[i];
            zp[i] = (yolo_real)(k * (N * gi - sg - xh * sgx));
        }
    }
    yolo_store_round_n(a->z->store, a->z->data + nc * HW, HW);
}
static void yolo_bn_act_backward(yolo_tensor *z, const yolo_real *dy, const yolo_real *gamma,
                                 const yolo_real *beta, const yolo_real *mean, const yolo_real *invstd,
                                 int act, const yolo_bn_group *group, yolo_real *dgamma, yolo_real *dbeta) {
    int C = z->c;
    yolo_bn_backward a = { z, dy, gamma, beta, mean, invstd, act, (double)z->n * z->h * z->w * (group ? group->world : 1) };
    if (!group) {
        #pragma omp parallel if (yolo_numel(z) > YOLO_CPU_THREADS_FROM)
        {
        yolo_real *f = (yolo_real *)yolo_xmalloc((size_t)z->n * z->h * z->w * sizeof(yolo_real));   /* a channel's factors */
        #pragma omp for schedule(static)
        for (int c = 0; c < C; c++) {
            double s[2];
            yolo_bn_grad_sums(&a, c, f, 1, s);
            dgamma[c] += (yolo_real)s[1]; dbeta[c] += (yolo_real)s[0];
            for (int n = 0; n < z->n; n++) yolo_bn_grad_plane(&a, n * C + c, s, f, 1);
        }
        free(f);
        }
        return;
    }
    double *sum = (double *)yolo_xmalloc(2 * (size_t)C * sizeof(double));   /* [C] of (sum g, sum g xhat) */
    #pragma omp parallel for schedule(static) if (yolo_numel(z) > YOLO_CPU_THREADS_FROM)
    for (int c = 0; c < C; c++) {
        yolo_real f[YOLO_BN_RUN];
        yolo_bn_grad_sums(&a, c, f, 0, sum + 2 * c);
        dgamma[c] += (yolo_real)sum[2 * c + 1]; dbeta[c] += (yolo_real)sum[2 * c];
    }
    group->sum(sum, 2 * (size_t)C);   /* --sync-bn: over every process's share */
    #pragma omp parallel for schedule(static) if (yolo_numel(z) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < z->n * C; nc++) {   /* a plane (image, channel) at a time */
        yolo_real f[YOLO_BN_RUN];
        yolo_bn_grad_plane(&a, nc, sum + 2 * (nc % C), f, 0);
    }
    free(sum);
}

/* --- average pool 2x2, stride 1, no padding (AConv, ADown): H-1 x W-1 --- */
static void yolo_avgpool2_forward(const yolo_tensor *x, yolo_tensor *y) {
    yolo_dense(x, "avgpool2"); yolo_dense(y, "avgpool2");
    int H = x->h, W = x->w, Ho = H - 1, Wo = W - 1;
    #pragma omp parallel for schedule(static) if (yolo_numel(x) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < x->n * x->c; nc++) {
        const yolo_real *p = x->data + (size_t)nc * H * W;
        yolo_real *q = y->data + (size_t)nc * Ho * Wo;
        for (int i = 0; i < Ho; i++)
            for (int j = 0; j < Wo; j++)
                q[i * Wo + j] = (p[i * W + j] + p[i * W + j + 1] + p[(i + 1) * W + j] + p[(i + 1) * W + j + 1]) * (yolo_real)0.25;
    }
    yolo_store_round(y);
}
static void yolo_avgpool2_backward(const yolo_tensor *y, yolo_real *dx, int H, int W, int add) {
    int Ho = y->h, Wo = y->w;
    #pragma omp parallel for schedule(static) if (yolo_numel(y) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < y->n * y->c; nc++) {
        const yolo_real *q = y->grad + (size_t)nc * Ho * Wo;
        yolo_real *d = dx + (size_t)nc * H * W;
        if (!add) memset(d, 0, (size_t)H * W * sizeof *d);   /* the same 0 + sums as the GPU's */
        for (int i = 0; i < Ho; i++)
            for (int j = 0; j < Wo; j++) {
                yolo_real g = q[i * Wo + j] * (yolo_real)0.25;
                d[i * W + j] += g; d[i * W + j + 1] += g;
                d[(i + 1) * W + j] += g; d[(i + 1) * W + j + 1] += g;
            }
    }
}

/* --- max pool k x k, stride s, padding p: yolo_maxpool_argmax (shared, top of the file) picks
   the winner; the backward recomputes it instead of keeping indices. The forward reads and
   writes slots (SPPELAN's and ADown's in a folded pass). --- */
/* the largest of n values p[0], p[step], ..., the first of them where several are */
static inline yolo_real yolo_max_run(const yolo_real *p, int n, size_t step) {
    yolo_real m = p[0];
    for (int i = 1; i < n; i++) if (p[i * step] > m) m = p[i * step];
    return m;
}
/* The forward takes the window's maximum in two steps, along each row (into
   rows [H, Wo]) and then down the columns: k + k comparisons a value, not
   k k. The value is the one yolo_maxpool_argmax picks (the first in the
   window where several are equal). */
static void yolo_maxpool_plane(const yolo_real *p, int H, int W, int k, int s, int pad, yolo_real *rows, yolo_real *q,
                               int Ho, int Wo) {
    for (int iy = 0; iy < H; iy++)
        for (int ox = 0; ox < Wo; ox++) {
            int x0 = ox * s - pad, a = x0 < 0 ? 0 : x0, b = x0 + k < W ? x0 + k : W;
            rows[iy * Wo + ox] = yolo_max_run(p + (size_t)iy * W + a, b - a, 1);
        }
    for (int oy = 0; oy < Ho; oy++) {
        int y0 = oy * s - pad, a = y0 < 0 ? 0 : y0, b = y0 + k < H ? y0 + k : H;
        for (int ox = 0; ox < Wo; ox++) q[oy * Wo + ox] = yolo_max_run(rows + (size_t)a * Wo + ox, b - a, Wo);
    }
}
static void yolo_maxpool_forward(const yolo_tensor *x, int k, int s, int pad, yolo_tensor *y) {
    #pragma omp parallel if (yolo_numel(x) > YOLO_CPU_THREADS_FROM)
    {
    yolo_real *rows = (yolo_real *)yolo_xmalloc((size_t)x->h * y->w * sizeof(yolo_real));
    #pragma omp for schedule(static)
    for (int nc = 0; nc < x->n * x->c; nc++) {
        const yolo_real *p = yolo_cpu_image(x, nc / x->c) + (size_t)(nc % x->c) * x->h * x->w;
        yolo_real *q = yolo_cpu_image(y, nc / x->c) + (size_t)(nc % x->c) * y->h * y->w;
        yolo_maxpool_plane(p, x->h, x->w, k, s, pad, rows, q, y->h, y->w);
        yolo_store_round_n(y->store, q, (size_t)y->h * y->w);
    }
    free(rows);
    }
}
static void yolo_maxpool_backward(const yolo_tensor *x, int k, int s, int pad, const yolo_tensor *y, yolo_real *dx,
                                  int add) {
    yolo_dense(x, "maxpool_backward"); yolo_dense(y, "maxpool_backward");
    #pragma omp parallel for schedule(static) if (yolo_numel(x) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < x->n * x->c; nc++) {
        const yolo_real *p = x->data + (size_t)nc * x->h * x->w;
        const yolo_real *q = y->grad + (size_t)nc * y->h * y->w;
        yolo_real *d = dx + (size_t)nc * x->h * x->w;
        if (!add) memset(d, 0, (size_t)x->h * x->w * sizeof *d);
        for (int i = 0; i < y->h; i++)
            for (int j = 0; j < y->w; j++) d[yolo_maxpool_argmax(p, x->h, x->w, k, s, pad, i, j)] += q[i * y->w + j];
    }
}

/* --- nearest-neighbour resize of channels [c0, c0+C) of x to y's size,
   into y (Upsample x2) or added to it (CBFuse). The source index is
   floor(dst * in/out) computed in float, as PyTorch does. --- */
static int yolo_nearest_src(int d, int in, int out) {
    int s = (int)floorf((float)d * ((float)in / (float)out));
    return s < in - 1 ? s : in - 1;
}
static void yolo_resize_forward(const yolo_tensor *x, int c0, int add, yolo_tensor *y) {
    yolo_dense(x, "resize"); yolo_dense(y, "resize");
    int C = y->c, Ho = y->h, Wo = y->w;
    #pragma omp parallel for schedule(static) if (yolo_numel(y) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < y->n * C; nc++) {
        int n = nc / C, c = nc % C;
        const yolo_real *p = x->data + ((size_t)n * x->c + c0 + c) * x->h * x->w;
        yolo_real *q = y->data + (size_t)nc * Ho * Wo;
        for (int i = 0; i < Ho; i++) {
            int si = yolo_nearest_src(i, x->h, Ho);
            for (int j = 0; j < Wo; j++) q[i * Wo + j] = (add ? q[i * Wo + j] : 0) + p[si * x->w + yolo_nearest_src(j, x->w, Wo)];
        }
    }
    yolo_store_round(y);
}
static void yolo_resize_backward(const yolo_tensor *y, yolo_tensor *x, int c0, int add) {
    int C = y->c, Ho = y->h, Wo = y->w;
    #pragma omp parallel for schedule(static) if (yolo_numel(y) > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < y->n * C; nc++) {
        int n = nc / C, c = nc % C;
        yolo_real *d = x->grad + ((size_t)n * x->c + c0 + c) * x->h * x->w;
        if (!add) memset(d, 0, (size_t)x->h * x->w * sizeof *d);
        const yolo_real *q = y->grad + (size_t)nc * Ho * Wo;
        for (int i = 0; i < Ho; i++) {
            int si = yolo_nearest_src(i, x->h, Ho);
            for (int j = 0; j < Wo; j++) d[si * x->w + yolo_nearest_src(j, x->w, Wo)] += q[i * Wo + j];
        }
    }
}

/* --- channel copies: concat and split are the same copy, its backward is
   the same copy of gradients the other way. Copies channels [sc, sc+C) of
   src into [dc, dc+C) of dst (both [B, *, H, W]). --- */
static void yolo_copy_channels(const yolo_real *src, int src_c, int sc, yolo_real *dst, int dst_c, int dc,
                               int B, int C, int HW, int accumulate) {
    #pragma omp parallel for schedule(static) if ((size_t)B * C * HW > YOLO_CPU_THREADS_FROM)
    for (int nc = 0; nc < B * C; nc++) {   /* a plane (image, channel) at a time */
        const yolo_real *p = src + ((size_t)(nc / C) * src_c + sc + nc % C) * HW;
        yolo_real *q = dst + ((size_t)(nc / C) * dst_c + dc + nc % C) * HW;
        if (accumulate) {
            #pragma omp simd
            for (int i = 0; i < HW; i++) q[i] += p[i];
        } else memcpy(q, p, (size_t)HW * sizeof(yolo_real));
    }
}
static void yolo_cpu_concat(const yolo_tensor *src, int sc, yolo_tensor *dst, int dc, int C) {
    yolo_dense(src, "concat"); yolo_dense(dst, "concat");
    yolo_copy_channels(src->data, src->c, sc, dst->data, dst->c, dc, src->n, C, src->h * src->w, 0);
    if (src->store != dst->store) yolo_store_round(dst);   /* the other channels are rounded already */
}

/* --- elementwise ops of the blocks --- */
static void yolo_cpu_silu_forward(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) {
    yolo_dense(a, "silu"); yolo_dense(b, "silu"); yolo_dense(y, "silu");
    size_t n = yolo_numel(y);
    #pragma omp parallel for simd schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) y->data[i] = yolo_silu(a->data[i] + b->data[i]);
    yolo_store_round(y);
}
static void yolo_cpu_silu_backward(const yolo_real *dy, const yolo_tensor *a, const yolo_tensor *b, yolo_real *da,
                                   yolo_real *db, int add) {
    size_t n = yolo_numel(a);
    #pragma omp parallel for simd schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) {
        yolo_real g = dy[i] * yolo_silu_grad(a->data[i] + b->data[i]);
        da[i] = (add ? da[i] : 0) + g;
        db[i] = (add ? db[i] : 0) + g;
    }
}
static void yolo_cpu_add(const yolo_tensor *a, const yolo_tensor *b, yolo_tensor *y) {
    yolo_dense(a, "add"); yolo_dense(b, "add"); yolo_dense(y, "add");
    size_t n = yolo_numel(y);
    #pragma omp parallel for simd schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) y->data[i] = a->data[i] + b->data[i];
    yolo_store_round(y);
}
static void yolo_cpu_accumulate(yolo_real *y, const yolo_real *x, size_t n, int add) {
    #pragma omp parallel for simd schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) y[i] = (add ? y[i] : 0) + x[i];
}

/* one optimizer step on all n values, each as its group says (section 6) */
static void yolo_cpu_optim_update(const yolo_update *u, const unsigned char *group, yolo_real *w, const yolo_real *g,
                                  yolo_real *m, yolo_real *v, yolo_real *vmax, size_t n) {
    #pragma omp parallel for schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) yolo_optim_value(u, group[i], w, g, m, v, vmax, i);
}

/* the loss op's scratch: predicted boxes [B*A*4], per box x anchor
   overlaps, alignments and metrics [3*ngt*A], per box maxima [2*ngt] and
   sums [4], all double; positives [ngt*A] bytes */
static size_t yolo_loss_work_bytes(int B, int A, int ngt) {
    return sizeof(double) * ((size_t)B * A * 4 + 3 * (size_t)ngt * A + 2 * (size_t)ngt + 4) + (size_t)ngt * A + 256;
}

static void yolo_cpu_lerp(yolo_real *y, const yolo_real *x, double d, size_t n) {
    #pragma omp parallel for simd schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) y[i] = (yolo_real)(d * y[i] + (1 - d) * x[i]);
}
/* in double, over parts of YOLO_CPU_THREADS_FROM values (each summed in
   order), the parts' sums then added in order */
static double yolo_cpu_sumsq(const yolo_real *x, size_t n) {
    size_t part = YOLO_CPU_THREADS_FROM, parts = (n + part - 1) / part;
    double *sum = (double *)yolo_xmalloc(parts * sizeof(double)), s = 0;
    #pragma omp parallel for schedule(static) if (parts > 1)
    for (size_t k = 0; k < parts; k++) {
        double sk = 0;
        for (size_t i = k * part; i < n && i < (k + 1) * part; i++) sk += (double)x[i] * x[i];
        sum[k] = sk;
    }
    for (size_t k = 0; k < parts; k++) s += sum[k];
    free(sum);
    return s;
}

/* A training step frees the tensors it drops and takes them again in the
   next step. glibc would hand a freed block at the heap's top back to the
   kernel, and every large block (mmap), so that each step paid the
   kernel's page faults (and its zeroing) for memory it had a moment ago:
   the CPU backend asks it to keep what it frees. */
static void yolo_cpu_heap_keep(void) {
#ifdef __GLIBC__
    static int kept;
    if (__atomic_exchange_n(&kept, 1, __ATOMIC_RELAXED)) return;
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);   /* glibc's most */
#endif
}
/* n bytes of p set to byte v, on threads when they are many */
static void yolo_cpu_fill(void *p, int v, size_t bytes) {
    size_t part = 16 * YOLO_CPU_THREADS_FROM * sizeof(float), parts = (bytes + part - 1) / part;
    #pragma omp parallel for schedule(static) if (parts > 1)
    for (size_t i = 0; i < parts; i++) memset((char *)p + i * part, v, i + 1 < parts ? part : bytes - i * part);
}
static void *yolo_cpu_alloc(size_t bytes) { yolo_cpu_heap_keep(); return yolo_xcalloc(1, bytes); }
/* Values are left as malloc gives them: the op that makes them writes every
   one. With YOLO_CPU_NAN=1 in the environment (make test sets it) they
   are filled with all bits set, NaN in float and in double, so that a
   value read before it is written shows in the tests. */
static void *yolo_cpu_alloc_values(size_t n, int store) {
    static int nan_fill = -1;
    if (nan_fill < 0) nan_fill = getenv("YOLO_CPU_NAN") && !strcmp(getenv("YOLO_CPU_NAN"), "1");
    yolo_cpu_heap_keep();
    void *p = yolo_xmalloc(n * sizeof(yolo_real));   /* the twin keeps every store as floats */
    if (nan_fill) yolo_cpu_fill(p, 0xff, n * sizeof(yolo_real));
    return p;
}
static void yolo_cpu_release(void *p) { free(p); }
static void yolo_cpu_zero(void *p, size_t bytes) { yolo_cpu_fill(p, 0, bytes); }
static void yolo_cpu_copy(void *dst, const void *src, size_t bytes) { if (bytes) memcpy(dst, src, bytes); }
static void yolo_cpu_sync(void) {}
static void yolo_cpu_memory(size_t *in_use, size_t *peak) { *in_use = *peak = 0; }   /* not tracked on the host */
static int yolo_cpu_reserve(size_t bytes) { return 0; }
static void yolo_cpu_place(const yolo_place *script, int n) {}   /* malloc places */
static void yolo_cpu_profile(int on, FILE *report) {}
static void yolo_cpu_pin(void *host, size_t bytes, int pin) {}
/* pixels [n] uint8 -> dst [n] in [0, 1]: v / 255 (tabled; a float's
   v / 255.0f is the same number for every byte) */
static void yolo_pixels_to_input(yolo_real *dst, const unsigned char *pixels, size_t n) {
    yolo_real unit[256];
    for (int v = 0; v < 256; v++) unit[v] = (yolo_real)(v / 255.0);
    #pragma omp parallel for schedule(static) if (n > YOLO_CPU_THREADS_FROM)
    for (size_t i = 0; i < n; i++) dst[i] = unit[pixels[i]];
}

YOLO_C_BEGIN
int  yolo_nms(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres,
              int max_det, int agnostic, const int *classes, int nclasses,
              yolo_det *out);   /* section 14 */
YOLO_C_END

const yolo_backend yolo_cpu = {
    .name = "cpu",
    .alloc = yolo_cpu_alloc, .alloc_values = yolo_cpu_alloc_values, .release = yolo_cpu_release, .zero = yolo_cpu_zero,
    .upload = yolo_cpu_copy, .download = yolo_cpu_copy, .copy = yolo_cpu_copy,
    .conv2d_forward = yolo_conv2d_forward, .conv2d_backward = yolo_conv2d_backward, .stage_weights = yolo_stage_weights,
    .bn_train_forward = yolo_bn_train_forward, .bn_apply = yolo_bn_apply,
    .bn_act_backward = yolo_bn_act_backward,
    .silu_forward = yolo_cpu_silu_forward, .silu_backward = yolo_cpu_silu_backward,
    .add = yolo_cpu_add, .accumulate = yolo_cpu_accumulate,
    .avgpool2_forward = yolo_avgpool2_forward, .avgpool2_backward = yolo_avgpool2_backward,
    .maxpool_forward = yolo_maxpool_forward, .maxpool_backward = yolo_maxpool_backward,
    .resize_forward = yolo_resize_forward, .resize_backward = yolo_resize_backward,
    .copy_channels = yolo_copy_channels, .concat = yolo_cpu_concat,
    .optim_update = yolo_cpu_optim_update, .lerp = yolo_cpu_lerp, .sumsq = yolo_cpu_sumsq,
    .loss = yolo_cpu_loss, .decode = yolo_cpu_decode, .nms = yolo_nms,
    .sync = yolo_cpu_sync, .memory = yolo_cpu_memory, .reserve = yolo_cpu_reserve, .free_memory = NULL, .place = yolo_cpu_place,
    .profile = yolo_cpu_profile,
    .tensor_cores = 0,
    .pixels_to_input = yolo_pixels_to_input, .pin = yolo_cpu_pin,
};

/* Without yolov9_kernels.cu linked in, this weak default answers. */
__attribute__((weak)) const yolo_backend *yolo_backend_cuda(int device, char *err) {
    (void)device;
    yolo_errorf(err, "this build has no CUDA backend (build with nvcc to get one)");
    return NULL;
}

const yolo_backend *yolo_backend_select(const char *device, char *err) {
    if (device && !strcmp(device, "cpu")) return &yolo_cpu;
    if (!device || !*device) {               /* the GPU when there is one */
        const yolo_backend *be = yolo_backend_cuda(0, NULL);
        return be ? be : &yolo_cpu;
    }
    if (!strcmp(device, "cuda")) return yolo_backend_cuda(0, err);
    int idx;
    if (yolo_read_int(device, 0, 1023, NULL, NULL, &idx, NULL)) { yolo_errorf(err, "--device %.40s: expected cpu, cuda or a GPU index in [0, 1023]", device); return NULL; }
    return yolo_backend_cuda(idx, err);
}

const yolo_backend *yolo_backend_for_plan(const char *device) {
    static yolo_backend gpu;
    if (device && !strcmp(device, "cpu")) return &yolo_cpu;
    gpu = yolo_cpu;
    gpu.name = "cuda (planned without a GPU)";
    gpu.tensor_cores = 1 << YOLO_BF16 | 1 << YOLO_FP16;
    gpu.stage_train_weights = yolo_plan_stage_train_weights;
    return &gpu;
}
#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 11. model files: the built-in variants, the official yaml, --cfg         */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING

/* One row of a model description, as in the official model files:
   [from, n, module, args]. */
typedef struct {
    int nfrom, from[YOLO_MAX_FROM];
    yolo_module module;
    int nargs, args[YOLO_MAX_ARGS];
} yolo_row;

YOLO_C_BEGIN
/* building a model: by built-in name (yolov9-t/s/m/c/e, gelan-t/s/m/c/e) or
   from an official-format model yaml; nc <= 0 keeps the file's nc. Return
   0, or -1 with a message in err[YOLO_ERR]. */
int  yolo_model_from_name(yolo_model *m, const char *name, int nc, char *err);
int  yolo_model_from_yaml(yolo_model *m, const char *path, int nc, char *err);
int  yolo_model_from_cfg(yolo_model *m, const char *cfg, int nc, char *err);
/* the same from a model yaml's text; source names it in messages */
int  yolo_model_from_yaml_text(yolo_model *m, const char *text, const char *source, int nc, char *err);
/* the model as an official-format model yaml (width and depth 1: the
   layers' own widths), which yolo_model_from_yaml_text builds back; the
   caller frees it */
char *yolo_model_yaml(const yolo_model *m);
/* a copy of names [m->nc] (NULL: none) becomes m->names */
void yolo_model_set_names(yolo_model *m, char *const *names);
int  yolo_model_build(yolo_model *m, const yolo_row *rows, int nrows, int nc,
                      double depth_multiple, double width_multiple, char *err);
void yolo_model_free(yolo_model *m);
void yolo_model_init_weights(yolo_model *m, uint64_t seed);
long yolo_model_count_params(const yolo_model *m);
double yolo_model_gflops(yolo_model *m);  /* at 640x640, batch 1 */
void yolo_model_summary(const yolo_model *m, const char *title, FILE *f);
yolo_param *yolo_model_param(yolo_model *m, const char *name);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* --- building: every block's init registers its tensors under the
   official names. Building runs twice: the first pass only records names
   and sizes (so all weights go in one array whose size is known before it
   is allocated), the second binds the pointers. --- */

static int yolo_binding(const yolo_model *m) { return m->values != NULL; }

static yolo_real *yolo_param_new(yolo_model *m, const char *prefix, const char *suffix, yolo_pkind kind,
                                 int ndim, int d0, int d1, int d2, int d3, yolo_real **grad) {
    char name[96];
    snprintf(name, sizeof name, "%s.%s", prefix, suffix);
    if (!yolo_binding(m)) {          /* pass 1: record */
        m->params = (yolo_param *)yolo_xrealloc(m->params, (m->nparams + 1) * sizeof(yolo_param));
        yolo_param *p = &m->params[m->nparams++];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s", name);
        p->kind = kind; p->ndim = ndim;
        p->shape[0] = d0; p->shape[1] = d1; p->shape[2] = d2; p->shape[3] = d3;
        p->numel = (size_t)d0 * (ndim > 1 ? d1 : 1) * (ndim > 2 ? d2 : 1) * (ndim > 3 ? d3 : 1);
        p->offset = m->nvalues;
        m->nvalues += p->numel;
        if (grad) *grad = NULL;
        return NULL;
    }
    yolo_param *p = &m->params[m->building++];  /* pass 2: bind, same order */
    if (strcmp(p->name, name) != 0) { fprintf(stderr, "yolov9: build passes disagree at %s\n", name); exit(1); }
    if (grad) *grad = m->grads + p->offset;
    return m->values + p->offset;
}

static void yolo_act_new(yolo_model *m, yolo_tensor *t) {
    if (!yolo_binding(m)) return;
    m->acts = (yolo_tensor **)yolo_grow(m->acts, sizeof *m->acts, m->nacts + 1, &m->cap_acts);
    memset(t, 0, sizeof *t);
    m->acts[m->nacts++] = t;
}

static yolo_real *yolo_stats_new(yolo_model *m, int n) {
    yolo_real *p = yolo_binding(m) ? m->stats + m->nstats : NULL;
    m->nstats += n;
    return p;
}

/* A model is a list of layers; each reads the outputs of earlier layers
   ("from", -1 = the previous one) and the detect layer reads three (or six)
   feature maps of strides 8, 16, 32. The built-in variants below are the
   official ones, layer for layer, so that weights keep their names. */

#define F1(a) 1, {a}
#define F2(a, b) 2, {a, b}
#define F3(a, b, c) 3, {a, b, c}
#define F4(a, b, c, d) 4, {a, b, c, d}
#define F5(a, b, c, d, e) 5, {a, b, c, d, e}
#define F6(a, b, c, d, e, f) 6, {a, b, c, d, e, f}
#define A0() 0, {0}
#define A1(a) 1, {a}
#define A2(a, b) 2, {a, b}
#define A3(a, b, c) 3, {a, b, c}
#define A4(a, b, c, d) 4, {a, b, c, d}
#define A5(a, b, c, d, e) 5, {a, b, c, d, e}

/* Arguments per module (channels before width scaling):
     Conv [c2, k, s]        AConv/ADown [c2]      ELAN1 [c2, c3, c4]
     RepNCSPELAN4 [c2, c3, c4, n]                 SPPELAN [c2, c3]
     Upsample [scale]       CBLinear [c2 per chunk...]
     CBFuse [chunk index per input but the last]  Concat, Detect: none
   GELAN-T/S use ELAN1 and AConv, GELAN-M AConv, GELAN-C/E ADown. A YOLOv9
   model is its GELAN plus a PGI auxiliary branch used only in training:
   for T/S/M/C a second neck (or a second backbone fed through CBLinear and
   CBFuse) whose detect outputs come first in the DualDDetect's inputs. */
static const yolo_row yolo_gelan_t[] = {
    { F1(-1),                YOLO_CONV,              A3(16, 3, 2)           },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(32, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_ELAN1,             A3(32, 32, 16)         },  /* 2 */
    { F1(-1),                YOLO_ACONV,             A1(64)                 },  /* 3 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(64, 64, 32, 3)      },  /* 4 */
    { F1(-1),                YOLO_ACONV,             A1(96)                 },  /* 5 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 6 */
    { F1(-1),                YOLO_ACONV,             A1(128)                },  /* 7 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 8 */
    { F1(-1),                YOLO_SPPELAN,           A2(128, 64)            },  /* 9 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 10 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 11 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 12 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 13 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 14 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(64, 64, 32, 3)      },  /* 15 */
    { F1(-1),                YOLO_ACONV,             A1(48)                 },  /* 16 */
    { F2(-1, 12),            YOLO_CONCAT,            A0()                   },  /* 17 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 18 */
    { F1(-1),                YOLO_ACONV,             A1(64)                 },  /* 19 */
    { F2(-1, 9),             YOLO_CONCAT,            A0()                   },  /* 20 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 21 */
    { F3(15, 18, 21),        YOLO_DDETECT,           A0()                   },  /* 22 */
};
static const yolo_row yolo_gelan_s[] = {
    { F1(-1),                YOLO_CONV,              A3(32, 3, 2)           },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_ELAN1,             A3(64, 64, 32)         },  /* 2 */
    { F1(-1),                YOLO_ACONV,             A1(128)                },  /* 3 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 4 */
    { F1(-1),                YOLO_ACONV,             A1(192)                },  /* 5 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 6 */
    { F1(-1),                YOLO_ACONV,             A1(256)                },  /* 7 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 3)   },  /* 8 */
    { F1(-1),                YOLO_SPPELAN,           A2(256, 128)           },  /* 9 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 10 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 11 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 12 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 13 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 14 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 15 */
    { F1(-1),                YOLO_ACONV,             A1(96)                 },  /* 16 */
    { F2(-1, 12),            YOLO_CONCAT,            A0()                   },  /* 17 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 18 */
    { F1(-1),                YOLO_ACONV,             A1(128)                },  /* 19 */
    { F2(-1, 9),             YOLO_CONCAT,            A0()                   },  /* 20 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 3)   },  /* 21 */
    { F3(15, 18, 21),        YOLO_DDETECT,           A0()                   },  /* 22 */
};
static const yolo_row yolo_gelan_m[] = {
    { F1(-1),                YOLO_CONV,              A3(32, 3, 2)           },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 1)    },  /* 2 */
    { F1(-1),                YOLO_ACONV,             A1(240)                },  /* 3 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(240, 240, 120, 1)   },  /* 4 */
    { F1(-1),                YOLO_ACONV,             A1(360)                },  /* 5 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 6 */
    { F1(-1),                YOLO_ACONV,             A1(480)                },  /* 7 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(480, 480, 240, 1)   },  /* 8 */
    { F1(-1),                YOLO_SPPELAN,           A2(480, 240)           },  /* 9 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 10 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 11 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 12 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 13 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 14 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(240, 240, 120, 1)   },  /* 15 */
    { F1(-1),                YOLO_ACONV,             A1(180)                },  /* 16 */
    { F2(-1, 12),            YOLO_CONCAT,            A0()                   },  /* 17 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 18 */
    { F1(-1),                YOLO_ACONV,             A1(240)                },  /* 19 */
    { F2(-1, 9),             YOLO_CONCAT,            A0()                   },  /* 20 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(480, 480, 240, 1)   },  /* 21 */
    { F3(15, 18, 21),        YOLO_DDETECT,           A0()                   },  /* 22 */
};
static const yolo_row yolo_gelan_c[] = {
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 1 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 1)    },  /* 2 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 3 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 1)   },  /* 4 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 5 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 6 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 7 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 8 */
    { F1(-1),                YOLO_SPPELAN,           A2(512, 256)           },  /* 9 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 10 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 11 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 12 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 13 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 14 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 1)   },  /* 15 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 16 */
    { F2(-1, 12),            YOLO_CONCAT,            A0()                   },  /* 17 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 18 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 19 */
    { F2(-1, 9),             YOLO_CONCAT,            A0()                   },  /* 20 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 21 */
    { F3(15, 18, 21),        YOLO_DDETECT,           A0()                   },  /* 22 */
};
static const yolo_row yolo_gelan_e[] = {
    { F1(-1),                YOLO_SILENCE,           A0()                   },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 2 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 2)    },  /* 3 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 4 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 2)   },  /* 5 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 6 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 7 */
    { F1(-1),                YOLO_ADOWN,             A1(1024)               },  /* 8 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 9 */
    { F1(1),                 YOLO_CBLINEAR,          A1(64)                 },  /* 10 */
    { F1(3),                 YOLO_CBLINEAR,          A2(64, 128)            },  /* 11 */
    { F1(5),                 YOLO_CBLINEAR,          A3(64, 128, 256)       },  /* 12 */
    { F1(7),                 YOLO_CBLINEAR,          A4(64, 128, 256, 512)  },  /* 13 */
    { F1(9),                 YOLO_CBLINEAR,          A5(64, 128, 256, 512, 1024) },  /* 14 */
    { F1(0),                 YOLO_CONV,              A3(64, 3, 2)           },  /* 15 */
    { F6(10, 11, 12, 13, 14, -1), YOLO_CBFUSE,            A5(0, 0, 0, 0, 0)      },  /* 16 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 17 */
    { F5(11, 12, 13, 14, -1), YOLO_CBFUSE,            A4(1, 1, 1, 1)         },  /* 18 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 2)    },  /* 19 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 20 */
    { F4(12, 13, 14, -1),    YOLO_CBFUSE,            A3(2, 2, 2)            },  /* 21 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 2)   },  /* 22 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 23 */
    { F3(13, 14, -1),        YOLO_CBFUSE,            A2(3, 3)               },  /* 24 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 25 */
    { F1(-1),                YOLO_ADOWN,             A1(1024)               },  /* 26 */
    { F2(14, -1),            YOLO_CBFUSE,            A1(4)                  },  /* 27 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 28 */
    { F1(28),                YOLO_SPPELAN,           A2(512, 256)           },  /* 29 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 30 */
    { F2(-1, 25),            YOLO_CONCAT,            A0()                   },  /* 31 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 2)   },  /* 32 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 33 */
    { F2(-1, 22),            YOLO_CONCAT,            A0()                   },  /* 34 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 2)   },  /* 35 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 36 */
    { F2(-1, 32),            YOLO_CONCAT,            A0()                   },  /* 37 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 2)   },  /* 38 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 39 */
    { F2(-1, 29),            YOLO_CONCAT,            A0()                   },  /* 40 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 1024, 512, 2)  },  /* 41 */
    { F3(35, 38, 41),        YOLO_DDETECT,           A0()                   },  /* 42 */
};
static const yolo_row yolo_yolov9_t[] = {
    { F1(-1),                YOLO_CONV,              A3(16, 3, 2)           },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(32, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_ELAN1,             A3(32, 32, 16)         },  /* 2 */
    { F1(-1),                YOLO_ACONV,             A1(64)                 },  /* 3 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(64, 64, 32, 3)      },  /* 4 */
    { F1(-1),                YOLO_ACONV,             A1(96)                 },  /* 5 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 6 */
    { F1(-1),                YOLO_ACONV,             A1(128)                },  /* 7 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 8 */
    { F1(-1),                YOLO_SPPELAN,           A2(128, 64)            },  /* 9 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 10 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 11 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 12 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 13 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 14 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(64, 64, 32, 3)      },  /* 15 */
    { F1(-1),                YOLO_ACONV,             A1(48)                 },  /* 16 */
    { F2(-1, 12),            YOLO_CONCAT,            A0()                   },  /* 17 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 18 */
    { F1(-1),                YOLO_ACONV,             A1(64)                 },  /* 19 */
    { F2(-1, 9),             YOLO_CONCAT,            A0()                   },  /* 20 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 21 */
    { F1(8),                 YOLO_SPPELAN,           A2(128, 64)            },  /* 22 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 23 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 24 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(96, 96, 48, 3)      },  /* 25 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 26 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 27 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(64, 64, 32, 3)      },  /* 28 */
    { F6(28, 25, 22, 15, 18, 21), YOLO_DUALDDETECT,       A0()                   },  /* 29 */
};
static const yolo_row yolo_yolov9_s[] = {
    { F1(-1),                YOLO_CONV,              A3(32, 3, 2)           },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_ELAN1,             A3(64, 64, 32)         },  /* 2 */
    { F1(-1),                YOLO_ACONV,             A1(128)                },  /* 3 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 4 */
    { F1(-1),                YOLO_ACONV,             A1(192)                },  /* 5 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 6 */
    { F1(-1),                YOLO_ACONV,             A1(256)                },  /* 7 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 3)   },  /* 8 */
    { F1(-1),                YOLO_SPPELAN,           A2(256, 128)           },  /* 9 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 10 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 11 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 12 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 13 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 14 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 15 */
    { F1(-1),                YOLO_ACONV,             A1(96)                 },  /* 16 */
    { F2(-1, 12),            YOLO_CONCAT,            A0()                   },  /* 17 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 18 */
    { F1(-1),                YOLO_ACONV,             A1(128)                },  /* 19 */
    { F2(-1, 9),             YOLO_CONCAT,            A0()                   },  /* 20 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 3)   },  /* 21 */
    { F1(8),                 YOLO_SPPELAN,           A2(256, 128)           },  /* 22 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 23 */
    { F2(-1, 6),             YOLO_CONCAT,            A0()                   },  /* 24 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(192, 192, 96, 3)    },  /* 25 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 26 */
    { F2(-1, 4),             YOLO_CONCAT,            A0()                   },  /* 27 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 3)    },  /* 28 */
    { F6(28, 25, 22, 15, 18, 21), YOLO_DUALDDETECT,       A0()                   },  /* 29 */
};
static const yolo_row yolo_yolov9_m[] = {
    { F1(-1),                YOLO_SILENCE,           A0()                   },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(32, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 2 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 1)    },  /* 3 */
    { F1(-1),                YOLO_ACONV,             A1(240)                },  /* 4 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(240, 240, 120, 1)   },  /* 5 */
    { F1(-1),                YOLO_ACONV,             A1(360)                },  /* 6 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 7 */
    { F1(-1),                YOLO_ACONV,             A1(480)                },  /* 8 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(480, 480, 240, 1)   },  /* 9 */
    { F1(-1),                YOLO_SPPELAN,           A2(480, 240)           },  /* 10 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 11 */
    { F2(-1, 7),             YOLO_CONCAT,            A0()                   },  /* 12 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 13 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 14 */
    { F2(-1, 5),             YOLO_CONCAT,            A0()                   },  /* 15 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(240, 240, 120, 1)   },  /* 16 */
    { F1(-1),                YOLO_ACONV,             A1(180)                },  /* 17 */
    { F2(-1, 13),            YOLO_CONCAT,            A0()                   },  /* 18 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 19 */
    { F1(-1),                YOLO_ACONV,             A1(240)                },  /* 20 */
    { F2(-1, 10),            YOLO_CONCAT,            A0()                   },  /* 21 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(480, 480, 240, 1)   },  /* 22 */
    { F1(5),                 YOLO_CBLINEAR,          A1(240)                },  /* 23 */
    { F1(7),                 YOLO_CBLINEAR,          A2(240, 360)           },  /* 24 */
    { F1(9),                 YOLO_CBLINEAR,          A3(240, 360, 480)      },  /* 25 */
    { F1(0),                 YOLO_CONV,              A3(32, 3, 2)           },  /* 26 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 27 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(128, 128, 64, 1)    },  /* 28 */
    { F1(-1),                YOLO_ACONV,             A1(240)                },  /* 29 */
    { F4(23, 24, 25, -1),    YOLO_CBFUSE,            A3(0, 0, 0)            },  /* 30 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(240, 240, 120, 1)   },  /* 31 */
    { F1(-1),                YOLO_ACONV,             A1(360)                },  /* 32 */
    { F3(24, 25, -1),        YOLO_CBFUSE,            A2(1, 1)               },  /* 33 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(360, 360, 180, 1)   },  /* 34 */
    { F1(-1),                YOLO_ACONV,             A1(480)                },  /* 35 */
    { F2(25, -1),            YOLO_CBFUSE,            A1(2)                  },  /* 36 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(480, 480, 240, 1)   },  /* 37 */
    { F6(31, 34, 37, 16, 19, 22), YOLO_DUALDDETECT,       A0()                   },  /* 38 */
};
static const yolo_row yolo_yolov9_c[] = {
    { F1(-1),                YOLO_SILENCE,           A0()                   },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 2 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 1)    },  /* 3 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 4 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 1)   },  /* 5 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 6 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 7 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 8 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 9 */
    { F1(-1),                YOLO_SPPELAN,           A2(512, 256)           },  /* 10 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 11 */
    { F2(-1, 7),             YOLO_CONCAT,            A0()                   },  /* 12 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 13 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 14 */
    { F2(-1, 5),             YOLO_CONCAT,            A0()                   },  /* 15 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 1)   },  /* 16 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 17 */
    { F2(-1, 13),            YOLO_CONCAT,            A0()                   },  /* 18 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 19 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 20 */
    { F2(-1, 10),            YOLO_CONCAT,            A0()                   },  /* 21 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 22 */
    { F1(5),                 YOLO_CBLINEAR,          A1(256)                },  /* 23 */
    { F1(7),                 YOLO_CBLINEAR,          A2(256, 512)           },  /* 24 */
    { F1(9),                 YOLO_CBLINEAR,          A3(256, 512, 512)      },  /* 25 */
    { F1(0),                 YOLO_CONV,              A3(64, 3, 2)           },  /* 26 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 27 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 1)    },  /* 28 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 29 */
    { F4(23, 24, 25, -1),    YOLO_CBFUSE,            A3(0, 0, 0)            },  /* 30 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 1)   },  /* 31 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 32 */
    { F3(24, 25, -1),        YOLO_CBFUSE,            A2(1, 1)               },  /* 33 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 34 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 35 */
    { F2(25, -1),            YOLO_CBFUSE,            A1(2)                  },  /* 36 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 1)   },  /* 37 */
    { F6(31, 34, 37, 16, 19, 22), YOLO_DUALDDETECT,       A0()                   },  /* 38 */
};
static const yolo_row yolo_yolov9_e[] = {
    { F1(-1),                YOLO_SILENCE,           A0()                   },  /* 0 */
    { F1(-1),                YOLO_CONV,              A3(64, 3, 2)           },  /* 1 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 2 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 2)    },  /* 3 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 4 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 2)   },  /* 5 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 6 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 7 */
    { F1(-1),                YOLO_ADOWN,             A1(1024)               },  /* 8 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 9 */
    { F1(1),                 YOLO_CBLINEAR,          A1(64)                 },  /* 10 */
    { F1(3),                 YOLO_CBLINEAR,          A2(64, 128)            },  /* 11 */
    { F1(5),                 YOLO_CBLINEAR,          A3(64, 128, 256)       },  /* 12 */
    { F1(7),                 YOLO_CBLINEAR,          A4(64, 128, 256, 512)  },  /* 13 */
    { F1(9),                 YOLO_CBLINEAR,          A5(64, 128, 256, 512, 1024) },  /* 14 */
    { F1(0),                 YOLO_CONV,              A3(64, 3, 2)           },  /* 15 */
    { F6(10, 11, 12, 13, 14, -1), YOLO_CBFUSE,            A5(0, 0, 0, 0, 0)      },  /* 16 */
    { F1(-1),                YOLO_CONV,              A3(128, 3, 2)          },  /* 17 */
    { F5(11, 12, 13, 14, -1), YOLO_CBFUSE,            A4(1, 1, 1, 1)         },  /* 18 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 128, 64, 2)    },  /* 19 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 20 */
    { F4(12, 13, 14, -1),    YOLO_CBFUSE,            A3(2, 2, 2)            },  /* 21 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 256, 128, 2)   },  /* 22 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 23 */
    { F3(13, 14, -1),        YOLO_CBFUSE,            A2(3, 3)               },  /* 24 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 25 */
    { F1(-1),                YOLO_ADOWN,             A1(1024)               },  /* 26 */
    { F2(14, -1),            YOLO_CBFUSE,            A1(4)                  },  /* 27 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(1024, 512, 256, 2)  },  /* 28 */
    { F1(9),                 YOLO_SPPELAN,           A2(512, 256)           },  /* 29 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 30 */
    { F2(-1, 7),             YOLO_CONCAT,            A0()                   },  /* 31 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 2)   },  /* 32 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 33 */
    { F2(-1, 5),             YOLO_CONCAT,            A0()                   },  /* 34 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 2)   },  /* 35 */
    { F1(28),                YOLO_SPPELAN,           A2(512, 256)           },  /* 36 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 37 */
    { F2(-1, 25),            YOLO_CONCAT,            A0()                   },  /* 38 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 2)   },  /* 39 */
    { F1(-1),                YOLO_UPSAMPLE,          A1(2)                  },  /* 40 */
    { F2(-1, 22),            YOLO_CONCAT,            A0()                   },  /* 41 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(256, 256, 128, 2)   },  /* 42 */
    { F1(-1),                YOLO_ADOWN,             A1(256)                },  /* 43 */
    { F2(-1, 39),            YOLO_CONCAT,            A0()                   },  /* 44 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 512, 256, 2)   },  /* 45 */
    { F1(-1),                YOLO_ADOWN,             A1(512)                },  /* 46 */
    { F2(-1, 36),            YOLO_CONCAT,            A0()                   },  /* 47 */
    { F1(-1),                YOLO_REPNCSPELAN4,      A4(512, 1024, 512, 2)  },  /* 48 */
    { F6(35, 32, 29, 42, 45, 48), YOLO_DUALDDETECT,       A0()                   },  /* 49 */
};

#undef F1
#undef F2
#undef F3
#undef F4
#undef F5
#undef F6
#undef A0
#undef A1
#undef A2
#undef A3
#undef A4
#undef A5

typedef struct { const char *name; const yolo_row *rows; int nrows; } yolo_variant;
#define YOLO_VARIANT(n, t) { n, t, (int)(sizeof(t) / sizeof(t[0])) }
static const yolo_variant yolo_variants[] = {
    YOLO_VARIANT("yolov9-t", yolo_yolov9_t), YOLO_VARIANT("yolov9-s", yolo_yolov9_s),
    YOLO_VARIANT("yolov9-m", yolo_yolov9_m), YOLO_VARIANT("yolov9-c", yolo_yolov9_c),
    YOLO_VARIANT("yolov9-e", yolo_yolov9_e), YOLO_VARIANT("gelan-t", yolo_gelan_t),
    YOLO_VARIANT("gelan-s", yolo_gelan_s), YOLO_VARIANT("gelan-m", yolo_gelan_m),
    YOLO_VARIANT("gelan-c", yolo_gelan_c), YOLO_VARIANT("gelan-e", yolo_gelan_e),
};
#undef YOLO_VARIANT

static const char *yolo_module_names[YOLO_NMODULES] = {
    "Silence", "Conv", "AConv", "ADown", "ELAN1", "RepNCSPELAN4", "SPPELAN", "nn.Upsample",
    "Concat", "CBLinear", "CBFuse", "DDetect", "DualDDetect"
};

static int yolo_make_divisible(double x, int d) { return (int)ceil(x / d) * d; }

static int yolo_is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* Checks a row list and works out each layer's inputs, output channels and
   stride. Runs before anything is built, so a bad model file fails here
   with the row it is about: every width, kernel and stride in range, every
   layer fed maps it can read (a Concat's inputs of one size, a head's three
   levels at growing strides), and every map at least one pixel for any
   --img that is a multiple of YOLO_MAX_STRIDE. */
static int yolo_layers_from_rows(yolo_model *m, const yolo_row *rows, int nrows, double gw, char *err) {
    int *ch = (int *)yolo_xcalloc(nrows, sizeof(int)), *st = (int *)yolo_xcalloc(nrows, sizeof(int));
    int rc = 0;
    m->detect = -1;
    for (int i = 0; i < nrows && rc == 0; i++) {
        const yolo_row *r = &rows[i];
        yolo_layer *L = &m->layers[i];
        const char *name = (unsigned)r->module < YOLO_NMODULES ? yolo_module_names[r->module] : "?";
        L->type = r->module; L->nfrom = r->nfrom; L->nargs = r->nargs;
        memcpy(L->args, r->args, sizeof L->args);
        if (r->nfrom < 1 || r->nfrom > YOLO_MAX_FROM) { rc = yolo_errorf(err, "layer %d: bad 'from'", i); break; }
        if (r->nargs < 0 || r->nargs > YOLO_MAX_ARGS) { rc = yolo_errorf(err, "layer %d: bad argument count", i); break; }
        int multi = r->module == YOLO_CONCAT || r->module == YOLO_CBFUSE || r->module == YOLO_DDETECT || r->module == YOLO_DUALDDETECT;
        if (!multi && r->nfrom != 1) { rc = yolo_errorf(err, "layer %d: %s takes one input, not %d", i, name, r->nfrom); break; }
        int cin[YOLO_MAX_FROM], sin[YOLO_MAX_FROM];
        for (int j = 0; j < r->nfrom; j++) {
            int f = r->from[j] < 0 ? i + r->from[j] : r->from[j];
            if (i == 0 && r->from[j] == -1) f = -1;       /* the image */
            else if (f < 0 || f >= i) { rc = yolo_errorf(err, "layer %d: 'from' %d is not an earlier layer", i, r->from[j]); break; }
            L->from[j] = f;
            L->from_row[j] = r->from[j];
            cin[j] = f < 0 ? 3 : ch[f];
            sin[j] = f < 0 ? 1 : st[f];
        }
        if (rc) break;
        for (int j = 0; j < r->nargs; j++)   /* widths, kernels, strides, chunk indices: small non-negative numbers */
            if (r->args[j] < 0 || r->args[j] > YOLO_MAX_WIDTH) { rc = yolo_errorf(err, "layer %d: %s argument %d is %d, not in 0..%d", i, name, j, r->args[j], YOLO_MAX_WIDTH); break; }
        if (rc) break;
        int c2 = r->nargs > 0 ? yolo_make_divisible(r->args[0] * gw, 8) : 0, s = sin[0];
        switch (r->module) {
        case YOLO_SILENCE:
            if (L->from[0] >= 0) { rc = yolo_errorf(err, "layer %d: Silence only passes the image on (from -1 in layer 0)", i); break; }
            c2 = cin[0];
            break;
        case YOLO_CONV:
            if (r->nargs < 1 || r->nargs > 3) { rc = yolo_errorf(err, "layer %d: Conv needs [c2, k, s] (padding, groups and dilation are not supported)", i); break; }
            L->args[0] = c2;
            if (r->nargs < 2) L->args[1] = 1;
            if (r->nargs < 3) L->args[2] = 1;
            L->nargs = 3;
            if (L->args[1] < 1 || L->args[1] > 15 || L->args[1] % 2 == 0) { rc = yolo_errorf(err, "layer %d: Conv kernel %d is not odd in 1..15", i, L->args[1]); break; }
            if (!yolo_is_pow2(L->args[2])) { rc = yolo_errorf(err, "layer %d: Conv stride %d is not a power of two", i, L->args[2]); break; }
            s *= L->args[2];
            break;
        case YOLO_ACONV: case YOLO_ADOWN:
            if (r->nargs != 1) { rc = yolo_errorf(err, "layer %d: %s needs [c2]", i, name); break; }
            if (r->module == YOLO_ADOWN && cin[0] % 2) { rc = yolo_errorf(err, "layer %d: ADown splits its input in halves, but it has %d channels", i, cin[0]); break; }
            L->args[0] = c2; s *= 2;
            break;
        case YOLO_ELAN1: case YOLO_REPNCSPELAN4: case YOLO_SPPELAN: {
            int want = r->module == YOLO_ELAN1 ? 3 : r->module == YOLO_SPPELAN ? 2 : 4;
            if (r->module == YOLO_REPNCSPELAN4 && r->nargs == 3) { L->args[3] = 1; L->nargs = 4; }
            else if (r->nargs != want) { rc = yolo_errorf(err, "layer %d: %s needs %d arguments", i, name, want); break; }
            L->args[0] = c2;
            if (L->args[1] < 1 || (r->module != YOLO_SPPELAN && L->args[1] % 2)) { rc = yolo_errorf(err, "layer %d: %s hidden width %d is not %s", i, name, L->args[1], r->module == YOLO_SPPELAN ? "positive" : "even and positive"); break; }
            int c4_min = r->module == YOLO_REPNCSPELAN4 ? 2 : 1;   /* RepNCSP halves its width */
            if (r->module != YOLO_SPPELAN && L->args[2] < c4_min) { rc = yolo_errorf(err, "layer %d: %s block width %d is below %d", i, name, L->args[2], c4_min); break; }
            if (r->module == YOLO_REPNCSPELAN4 && (L->args[3] < 1 || L->args[3] > 16)) { rc = yolo_errorf(err, "layer %d: RepNCSPELAN4 depth %d is not in 1..16", i, L->args[3]); break; }
            break;
        }
        case YOLO_UPSAMPLE:
            if (r->nargs != 1 || r->args[0] != 2) { rc = yolo_errorf(err, "layer %d: only Upsample by 2 is supported", i); break; }
            if (s < 2) { rc = yolo_errorf(err, "layer %d: Upsample of a full-resolution map (stride %d)", i, s); break; }
            c2 = cin[0]; s /= 2;
            break;
        case YOLO_CONCAT:
            c2 = 0;
            for (int j = 0; j < r->nfrom; j++) {
                if (sin[j] != s) { rc = yolo_errorf(err, "layer %d: Concat of maps of different sizes (input %d has stride %d, input 0 stride %d)", i, j, sin[j], s); break; }
                c2 += cin[j];
            }
            break;
        case YOLO_CBLINEAR:
            if (r->nargs < 1) { rc = yolo_errorf(err, "layer %d: CBLinear needs a list of widths", i); break; }
            c2 = 0;
            for (int j = 0; j < r->nargs; j++) {
                if (r->args[j] < 1) { rc = yolo_errorf(err, "layer %d: CBLinear width %d is not positive", i, r->args[j]); break; }
                c2 += r->args[j];
            }
            break;
        case YOLO_CBFUSE:
            if (r->nargs != r->nfrom - 1) { rc = yolo_errorf(err, "layer %d: CBFuse needs one chunk index per input but the last", i); break; }
            for (int j = 0; j < r->nargs; j++) {
                int f = L->from[j];
                if (f < 0 || rows[f].module != YOLO_CBLINEAR || r->args[j] < 0 || r->args[j] >= m->layers[f].nargs) {
                    rc = yolo_errorf(err, "layer %d: CBFuse input %d is not a CBLinear chunk", i, j); break;
                }
                if (m->layers[f].args[r->args[j]] != cin[r->nfrom - 1]) {
                    rc = yolo_errorf(err, "layer %d: CBFuse chunk %d has %d channels, the last input %d", i, j, m->layers[f].args[r->args[j]], cin[r->nfrom - 1]); break;
                }
            }
            c2 = cin[r->nfrom - 1]; s = sin[r->nfrom - 1];
            break;
        case YOLO_DDETECT: case YOLO_DUALDDETECT: {
            int want = r->module == YOLO_DDETECT ? 3 : 6;
            if (r->nfrom != want) { rc = yolo_errorf(err, "layer %d: %s needs %d inputs", i, name, want); break; }
            if (i != nrows - 1) { rc = yolo_errorf(err, "layer %d: the detect layer must be the last", i); break; }
            for (int j = 0; j < want && !rc; j++) {   /* per branch: three levels, each coarser than the one before */
                if (L->from[j] < 0) rc = yolo_errorf(err, "layer %d: %s input %d is the image, not a feature map", i, name, j);
                else if (j % 3 && sin[j] <= sin[j - 1]) rc = yolo_errorf(err, "layer %d: %s input %d has stride %d, not above the previous level's %d", i, name, j, sin[j], sin[j - 1]);
                else if (j >= 3 && sin[j] != sin[j - 3]) rc = yolo_errorf(err, "layer %d: %s: the two branches' level %d have strides %d and %d", i, name, j - 3, sin[j - 3], sin[j]);
            }
            m->detect = i; c2 = 0;
            break;
        }
        default: rc = yolo_errorf(err, "layer %d: unknown module", i);
        }
        if (rc) break;
        if (r->module != YOLO_DDETECT && r->module != YOLO_DUALDDETECT && (c2 < 1 || c2 > YOLO_MAX_WIDTH)) { rc = yolo_errorf(err, "layer %d: %s would have %d channels, not in 1..%d", i, name, c2, YOLO_MAX_WIDTH); break; }
        if (s > YOLO_MAX_STRIDE) { rc = yolo_errorf(err, "layer %d: %s output at stride %d, above the largest supported %d", i, name, s, YOLO_MAX_STRIDE); break; }
        ch[i] = c2; st[i] = s;
        L->c_out = c2; L->stride = s;
    }
    if (rc == 0 && m->detect < 0) rc = yolo_errorf(err, "the model has no DDetect or DualDDetect layer");
    free(ch); free(st);
    return rc;
}

/* Inference of a dual model uses only the main branch (the last three
   detect inputs): mark what it needs, walking back from there. */
static void yolo_mark_inference(yolo_model *m) {
    yolo_layer *D = &m->layers[m->detect];
    int first = D->type == YOLO_DUALDDETECT ? 3 : 0;
    for (int i = 0; i < m->nlayers; i++) m->layers[i].infer = 0;
    D->infer = 1;
    for (int j = first; j < D->nfrom; j++) if (D->from[j] >= 0) m->layers[D->from[j]].infer = 1;
    for (int i = m->detect - 1; i >= 0; i--)
        if (m->layers[i].infer)
            for (int j = 0; j < m->layers[i].nfrom; j++)
                if (m->layers[i].from[j] >= 0) m->layers[m->layers[i].from[j]].infer = 1;
}

/* input j of L is the image (directly or through Silence) */
static int yolo_reads_image(const yolo_model *m, const yolo_layer *L, int j) {
    if (L->from[j] < 0) return 1;
    const yolo_layer *src = &m->layers[L->from[j]];
    return src->type == YOLO_SILENCE && yolo_reads_image(m, src, 0);
}

/* a layer whose backward hands its input's gradient on through a conv alone (its first op reads it) */
static int yolo_conv_reads_input(const yolo_layer *L) {
    switch (L->type) {
    case YOLO_CONV: case YOLO_CBLINEAR: case YOLO_ELAN1: case YOLO_REPNCSPELAN4: case YOLO_SPPELAN: return 1;
    default: return 0;
    }
}

static void yolo_mark_readers(yolo_model *m) {
    m->input_last_reader = -1;
    for (int i = 0; i < m->nlayers; i++) {
        yolo_layer *L = &m->layers[i];
        L->last_reader = L->last_infer_reader = -1;
        L->convs_read = L->type == YOLO_CONCAT && L->nfrom <= YOLO_MAX_PARTS;
        for (int j = 0; j < L->nfrom; j++) L->convs_read &= !yolo_reads_image(m, L, j);   /* the image has no gradient */
    }
    for (int i = 0; i < m->nlayers; i++)
        for (int j = 0; j < m->layers[i].nfrom; j++) {
            yolo_layer *src = m->layers[i].from[j] >= 0 ? &m->layers[m->layers[i].from[j]] : NULL;
            if (src) src->last_reader = i;
            if (src && m->layers[i].infer) src->last_infer_reader = i;
            if (src && !yolo_conv_reads_input(&m->layers[i])) src->convs_read = 0;
            if (m->layers[i].type != YOLO_SILENCE && yolo_reads_image(m, &m->layers[i], j)) m->input_last_reader = i;
        }
    for (int i = 0; i < m->nlayers; i++) m->layers[i].convs_read &= m->layers[i].last_reader >= 0;
}

static void yolo_layer_init(yolo_model *m, int i) {
    yolo_layer *L = &m->layers[i];
    char p[32];
    int c1 = L->from[0] < 0 ? 3 : m->layers[L->from[0]].c_out, *a = L->args;
    size_t before = m->nvalues;
    int act0 = m->nacts, life0 = m->nlife, param0 = m->nparams;
    snprintf(p, sizeof p, "model.%d", i);
    L->out = &L->own;
    yolo_act_new(m, &L->own);
    switch (L->type) {
    case YOLO_SILENCE: break;
    case YOLO_CONV:
        yolo_conv_init(m, &L->b.conv, p, c1, a[0], a[1], a[2], 1, 1, 1);
        L->out = &L->b.conv.y;
        break;
    case YOLO_ACONV: case YOLO_ADOWN:
        yolo_down_init(m, &L->b.down, p, L->type == YOLO_ADOWN, c1, a[0]);
        L->out = yolo_down_out(&L->b.down);
        break;
    case YOLO_ELAN1: case YOLO_REPNCSPELAN4:
        yolo_elan_init(m, &L->b.elan, p, L->type == YOLO_ELAN1, c1, a[0], a[1], a[2], L->type == YOLO_ELAN1 ? 0 : a[3]);
        L->out = &L->b.elan.cv4.y;
        break;
    case YOLO_SPPELAN:
        yolo_sppelan_init(m, &L->b.spp, p, c1, a[0], a[1]);
        L->out = &L->b.spp.cv5.y;
        break;
    case YOLO_CBLINEAR: {
        char q[40];
        snprintf(q, sizeof q, "%s.conv", p);
        yolo_conv_init(m, &L->b.conv, q, c1, L->c_out, 1, 1, 1, 0, 0);
        L->out = &L->b.conv.y;
        break;
    }
    case YOLO_DDETECT: case YOLO_DUALDDETECT: {
        int ch[6], st[6], nb = L->type == YOLO_DUALDDETECT ? 2 : 1;
        for (int j = 0; j < L->nfrom; j++) { ch[j] = m->layers[L->from[j]].c_out; st[j] = m->layers[L->from[j]].stride; }
        L->det = (yolo_detect *)yolo_xcalloc(1, sizeof(yolo_detect));
        yolo_detect_init(m, L, p, m->nc, nb, ch, st);
        break;
    }
    default: break;  /* Upsample, Concat, CBFuse: no parameters */
    }
    L->act0 = act0; L->act1 = m->nacts;
    L->life0 = life0; L->life1 = m->nlife;
    if (!yolo_binding(m)) { L->param0 = param0; L->param1 = m->nparams; }
    if (!yolo_binding(m))   /* counted in the first pass; running statistics are buffers, not parameters */
        for (int k = 0; k < m->nparams; k++)
            if (m->params[k].offset >= before && m->params[k].kind != YOLO_P_RUNNING_MEAN && m->params[k].kind != YOLO_P_RUNNING_VAR)
                L->nparams += (long)m->params[k].numel;
}

static void yolo_layers_release(yolo_model *m) {
    for (int i = 0; i < m->nlayers; i++) {
        yolo_layer *L = &m->layers[i];
        if (yolo_binding(m) && (L->type == YOLO_ELAN1 || L->type == YOLO_REPNCSPELAN4)) {
            yolo_repncsp_free(&L->b.elan.csp2);
            yolo_repncsp_free(&L->b.elan.csp3);
        }
        free(L->det);
        L->det = NULL;
    }
}

/* pass 2 of the build: every block's pointers into values, grads, stats */
static void yolo_model_bind(yolo_model *m) {
    m->building = 0; m->nstats = 0; m->nacts = 0; m->nconvs = 0; m->nreps = 0; m->nlife = 0;
    for (int i = 0; i < m->nlayers; i++) yolo_layer_init(m, i);
    yolo_act_new(m, &m->input);
}

int yolo_model_build(yolo_model *m, const yolo_row *rows, int nrows, int nc, double gd, double gw, char *err) {
    (void)gd;  /* depth only scales n > 1, and every official row has n = 1 */
    memset(m, 0, sizeof *m);
    m->nc = nc; m->bn_momentum = 0.03; m->bn_eps = 1e-3; m->be = &yolo_cpu;
    if (nc < 1 || nc > YOLO_MAX_NC) return yolo_errorf(err, "nc %d is not in 1..%d", nc, YOLO_MAX_NC);
    m->nlayers = nrows;
    m->layers = (yolo_layer *)yolo_xcalloc(nrows, sizeof(yolo_layer));
    if (yolo_layers_from_rows(m, rows, nrows, gw, err)) { free(m->layers); memset(m, 0, sizeof *m); return -1; }
    /* pass 1: names and sizes only */
    for (int i = 0; i < nrows; i++) yolo_layer_init(m, i);
    yolo_layers_release(m);
    if (m->nvalues > (size_t)YOLO_MAX_PARAMS) {
        int rc = yolo_errorf(err, "the model would have %zu parameters, more than the %ld supported", m->nvalues, YOLO_MAX_PARAMS);
        yolo_model_free(m);
        return rc;
    }
    /* one allocation for every weight and one for every gradient */
    m->values = (yolo_real *)m->be->alloc(m->nvalues * sizeof(yolo_real));
    m->grads = (yolo_real *)m->be->alloc(m->nvalues * sizeof(yolo_real));
    m->stats = (yolo_real *)m->be->alloc(m->nstats * sizeof(yolo_real));
    yolo_model_bind(m);
    yolo_mark_inference(m);
    yolo_mark_readers(m);
    yolo_model_init_weights(m, 0);
    return 0;
}

void yolo_model_free(yolo_model *m) {
    if (!m->layers) return;
    for (int i = 0; i < m->nacts; i++) yolo_tensor_free(m->be, m->acts[i]);
    yolo_pixels_release(m);
    yolo_model_unfold(m);
    yolo_model_unstage_train(m);
    yolo_layers_release(m);
    m->be->release(m->values); m->be->release(m->grads); m->be->release(m->stats);
    free(m->layers); free(m->params); free(m->acts); free(m->convs); free(m->reps); free(m->life); free(m->shapes);
    free(m->place[0]); free(m->place[1]);
    yolo_model_set_names(m, NULL);
    memset(m, 0, sizeof *m);
}

/* PyTorch's default initialisation (uniform within 1/sqrt(fan_in)), BN at
   identity, and the detect biases of the official bias_init: box logits
   1.0, class logits log(5 / nc / (640 / stride)^2), i.e. a prior of about
   5 objects per 640 image. The running variances start at 0.9, not 1: the
   official Model finds its strides with one training-mode forward of a
   black 256 x 256 picture before initialize_weights sets BatchNorm's
   momentum to 0.03, so every BatchNorm (PyTorch's momentum 0.1) has seen
   one batch of zeros (no conv before the head has a bias): running mean
   0.9 * 0 + 0.1 * 0, running variance 0.9 * 1 + 0.1 * 0. */
void yolo_model_init_weights(yolo_model *m, uint64_t seed) {
    yolo_rng rng = { seed * 2654435761ull + 1 };
    yolo_real *h = (yolo_real *)yolo_xcalloc(m->nvalues, sizeof(yolo_real));   /* host staging */
    for (int k = 0; k < m->nparams; k++) {
        yolo_param *p = &m->params[k];
        yolo_real *v = h + p->offset;
        size_t len = strlen(p->name);
        int is_bn_bias = len > 8 && strcmp(p->name + len - 8, ".bn.bias") == 0;
        double fan_in = 1;
        if (p->kind == YOLO_P_WEIGHT) fan_in = (double)p->shape[1] * p->shape[2] * p->shape[3];
        if (p->kind == YOLO_P_BIAS && !is_bn_bias) fan_in = (double)m->params[k - 1].shape[1] * m->params[k - 1].shape[2] * m->params[k - 1].shape[3];
        double bound = 1.0 / sqrt(fan_in);
        for (size_t i = 0; i < p->numel; i++) {
            switch (p->kind) {
            case YOLO_P_WEIGHT: v[i] = (yolo_real)((2 * yolo_rng_uniform(&rng) - 1) * bound); break;
            case YOLO_P_BIAS: v[i] = is_bn_bias ? 0 : (yolo_real)((2 * yolo_rng_uniform(&rng) - 1) * bound); break;
            case YOLO_P_BN_WEIGHT: v[i] = 1; break;
            case YOLO_P_RUNNING_VAR: v[i] = 0.9f; break;
            case YOLO_P_RUNNING_MEAN: v[i] = 0; break;
            case YOLO_P_FIXED: v[i] = (yolo_real)i; break;   /* DFL bins 0..15 */
            }
        }
    }
    yolo_detect *d = m->layers[m->detect].det;
    for (int b = 0; b < d->nbranch; b++)
        for (int l = 0; l < d->nl; l++) {
            yolo_real *box = h + (d->box[b][l][2].b - m->values), *cls = h + (d->cls[b][l][2].b - m->values);
            for (int i = 0; i < 4 * YOLO_REG_MAX; i++) box[i] = 1;
            for (int i = 0; i < d->nc; i++) cls[i] = (yolo_real)log(5.0 / d->nc / pow(640.0 / d->strides[l], 2));
        }
    m->be->upload(m->values, h, m->nvalues * sizeof(yolo_real));
    free(h);
}

long yolo_model_count_params(const yolo_model *m) {
    long n = 0;
    for (int k = 0; k < m->nparams; k++)
        if (m->params[k].kind != YOLO_P_RUNNING_MEAN && m->params[k].kind != YOLO_P_RUNNING_VAR) n += (long)m->params[k].numel;
    return n;
}

yolo_param *yolo_model_param(yolo_model *m, const char *name) {
    for (int k = 0; k < m->nparams; k++)
        if (strcmp(m->params[k].name, name) == 0) return &m->params[k];
    return NULL;
}

/* GFLOPs at 640x640 for one image: run every layer once at 64x64 counting
   the convolutions' multiply-adds, then scale by the area, as the official
   summary does. */
double yolo_model_gflops(yolo_model *m) {
    yolo_set_input(m, 1, 64, 64, NULL);
    m->be->zero(m->input.data, yolo_numel(&m->input) * sizeof(yolo_real));
    m->flops = 0;
    yolo_forward_all(m);
    return m->flops / 1e9 * (640.0 * 640.0) / (64.0 * 64.0);
}

void yolo_model_summary(const yolo_model *m, const char *title, FILE *f) {
    fprintf(f, "\n%3s%18s%3s%10s  %-40s%-30s\n", "", "from", "n", "params", "module", "arguments");
    for (int i = 0; i < m->nlayers; i++) {
        const yolo_layer *L = &m->layers[i];
        char from[64] = "", args[128] = "";
        int o = 0;
        if (L->nfrom == 1) snprintf(from, sizeof from, "%d", L->from_row[0]);
        else {
            o += snprintf(from + o, sizeof from - o, "[");
            for (int j = 0; j < L->nfrom; j++)
                o += snprintf(from + o, sizeof from - o, "%s%d", j ? ", " : "", L->from_row[j]);
            snprintf(from + o, sizeof from - o, "]");
        }
        o = snprintf(args, sizeof args, "[");
        int c1 = L->from[0] < 0 ? 3 : m->layers[L->from[0]].c_out;
        int withc1 = L->type != YOLO_SILENCE && L->type != YOLO_UPSAMPLE && L->type != YOLO_CONCAT &&
                     L->type != YOLO_CBFUSE && L->type != YOLO_DDETECT && L->type != YOLO_DUALDDETECT;
        if (withc1) o += snprintf(args + o, sizeof args - o, "%d, ", c1);
        if (L->type == YOLO_DDETECT || L->type == YOLO_DUALDDETECT) o += snprintf(args + o, sizeof args - o, "%d, ", m->nc);
        for (int j = 0; j < L->nargs; j++) o += snprintf(args + o, sizeof args - o, "%d, ", L->args[j]);
        if (o > 1) o -= 2;
        snprintf(args + o, sizeof args - o, "]");
        fprintf(f, "%3d%18s%3d%10ld  %-40s%-30s\n", i, from, 1, L->nparams, yolo_module_names[L->type], args);
    }
    fprintf(f, "%s summary: %d layers, %ld parameters\n", title, m->nlayers, yolo_model_count_params(m));
}

/* --- the official model-file (yaml) reader ---
   Reads the subset the official model files use: scalar keys (nc,
   depth_multiple, width_multiple, anchors, activation) and the two lists
   backbone and head of rows [from, n, module, args]. */

typedef struct { const char *s, *path; int line; char *err; } yolo_yaml;

static void yolo_yaml_ws(yolo_yaml *y) {
    for (;;) {
        while (*y->s == ' ' || *y->s == '\t' || *y->s == '\r' || *y->s == '\n') { if (*y->s == '\n') y->line++; y->s++; }
        if (*y->s != '#') return;
        while (*y->s && *y->s != '\n') y->s++;
    }
}
static int yolo_yaml_eat(yolo_yaml *y, char c) { yolo_yaml_ws(y); if (*y->s == c) { y->s++; return 1; } return 0; }
static int yolo_yaml_word(yolo_yaml *y, char *out, size_t cap) {   /* identifier, number or quoted string */
    yolo_yaml_ws(y);
    size_t n = 0;
    if (*y->s == '\'' || *y->s == '"') {
        char q = *y->s++;
        while (*y->s && *y->s != q && *y->s != '\n') { if (n + 1 < cap) out[n++] = *y->s; y->s++; }
        if (*y->s != q) return -1;
        y->s++;
    } else {
        while (*y->s && (isalnum((unsigned char)*y->s) || strchr("_.-+()", *y->s))) { if (n + 1 < cap) out[n++] = *y->s; y->s++; }
    }
    out[n] = 0;
    return n ? 0 : -1;
}
static int yolo_yaml_fail(yolo_yaml *y, const char *what) { return yolo_errorf(y->err, "%s:%d: %s", y->path, y->line, what); }

/* an integer of a row (from, n, a width, ...), written as one or as a whole number (8.0): small enough for any
   check; the caller says what is wrong */
static int yolo_yaml_number(const char *w, int *v) {
    double d;
    if (yolo_read_number(w, 0, -(1 << 24), 1 << 24, NULL, NULL, &d, NULL) || d != floor(d)) return -1;
    *v = (int)d;
    return 0;
}
/* a multiple (depth_multiple, width_multiple): a number in (0, 16] */
static int yolo_yaml_multiple(const char *w, double *v) {
    return yolo_read_number(w, 0, nextafter(0, 1), 16, NULL, NULL, v, NULL);
}

/* one row; module names as in the official files */
static int yolo_yaml_row(yolo_yaml *y, int nc, double gd, yolo_row *r) {
    static const struct { const char *name; yolo_module m; } names[] = {
        { "Silence", YOLO_SILENCE }, { "Conv", YOLO_CONV }, { "AConv", YOLO_ACONV }, { "ADown", YOLO_ADOWN },
        { "ELAN1", YOLO_ELAN1 }, { "RepNCSPELAN4", YOLO_REPNCSPELAN4 }, { "SPPELAN", YOLO_SPPELAN },
        { "nn.Upsample", YOLO_UPSAMPLE }, { "Upsample", YOLO_UPSAMPLE }, { "Concat", YOLO_CONCAT },
        { "CBLinear", YOLO_CBLINEAR }, { "CBFuse", YOLO_CBFUSE }, { "DDetect", YOLO_DDETECT },
        { "DualDDetect", YOLO_DUALDDETECT },
    };
    char w[64];
    int n;
    memset(r, 0, sizeof *r);
    if (!yolo_yaml_eat(y, '[')) return yolo_yaml_fail(y, "expected a row [from, n, module, args]");
    if (yolo_yaml_eat(y, '[')) {
        do {
            if (r->nfrom == YOLO_MAX_FROM || yolo_yaml_word(y, w, sizeof w) || yolo_yaml_number(w, &r->from[r->nfrom++]))
                return yolo_yaml_fail(y, "bad 'from' list");
        } while (yolo_yaml_eat(y, ','));
        if (!yolo_yaml_eat(y, ']')) return yolo_yaml_fail(y, "bad 'from' list");
    } else {
        if (yolo_yaml_word(y, w, sizeof w) || yolo_yaml_number(w, &r->from[0])) return yolo_yaml_fail(y, "bad 'from'");
        r->nfrom = 1;
    }
    if (!yolo_yaml_eat(y, ',') || yolo_yaml_word(y, w, sizeof w) || yolo_yaml_number(w, &n) || !yolo_yaml_eat(y, ','))
        return yolo_yaml_fail(y, "bad repeat count n");
    if (n > 1) n = (int)fmax(floor(n * gd + 0.5), 1);
    if (n != 1) return yolo_yaml_fail(y, "repeat counts n > 1 are not supported (the official models use 1)");
    if (yolo_yaml_word(y, w, sizeof w)) return yolo_yaml_fail(y, "missing module name");
    int found = -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) if (!strcmp(w, names[i].name)) found = (int)i;
    if (found < 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "unknown module '%s'", w);
        return yolo_yaml_fail(y, msg);
    }
    r->module = names[found].m;
    if (!yolo_yaml_eat(y, ',') || !yolo_yaml_eat(y, '[')) return yolo_yaml_fail(y, "expected the argument list");
    if (!yolo_yaml_eat(y, ']')) {
        do {
            int nested = yolo_yaml_eat(y, '[');
            do {
                int v;
                if (yolo_yaml_word(y, w, sizeof w)) return yolo_yaml_fail(y, "bad argument");
                if (!strcmp(w, "nc")) v = nc;
                else if (!strcmp(w, "None") || !strcmp(w, "nearest")) continue;
                else if (yolo_yaml_number(w, &v)) { char msg[128]; snprintf(msg, sizeof msg, "unsupported argument '%s'", w); return yolo_yaml_fail(y, msg); }
                if (r->nargs == YOLO_MAX_ARGS) return yolo_yaml_fail(y, "too many arguments");
                r->args[r->nargs++] = v;
            } while (nested && yolo_yaml_eat(y, ','));
            if (nested && !yolo_yaml_eat(y, ']')) return yolo_yaml_fail(y, "bad nested argument list");
        } while (yolo_yaml_eat(y, ','));
        if (!yolo_yaml_eat(y, ']')) return yolo_yaml_fail(y, "bad argument list");
    }
    if (!yolo_yaml_eat(y, ']')) return yolo_yaml_fail(y, "row not closed");
    /* Concat's dimension and the detect layer's nc are implied */
    if (r->module == YOLO_CONCAT) {
        if (r->nargs && r->args[0] != 1) return yolo_yaml_fail(y, "Concat only along channels (dimension 1)");
        r->nargs = 0;
    }
    if (r->module == YOLO_DDETECT || r->module == YOLO_DUALDDETECT) r->nargs = 0;
    return 0;
}

int yolo_model_from_yaml(yolo_model *m, const char *path, int nc, char *err) {
    char *text = yolo_read_text(path, "model file", 1 << 20, err);
    if (!text) return -1;
    int rc = yolo_model_from_yaml_text(m, text, path, nc, err);
    free(text);
    return rc;
}

int yolo_model_from_yaml_text(yolo_model *m, const char *text, const char *path, int nc, char *err) {
    yolo_yaml y = { text, path, 1, err };
    int file_nc = -1, nrows = 0, rc = 0;
    double gd = 1, gw = 1;
    yolo_row *rows = (yolo_row *)yolo_xcalloc(1024, sizeof(yolo_row));
    for (;;) {
        char key[64], val[64];
        yolo_yaml_ws(&y);
        if (!*y.s) break;
        if (yolo_yaml_word(&y, key, sizeof key) || !yolo_yaml_eat(&y, ':')) { rc = yolo_yaml_fail(&y, "expected 'key:'"); break; }
        if (!strcmp(key, "backbone") || !strcmp(key, "head")) {
            if (!yolo_yaml_eat(&y, '[')) { rc = yolo_yaml_fail(&y, "expected a list of rows"); break; }
            if (nc <= 0 && file_nc <= 0) { rc = yolo_yaml_fail(&y, "nc must come before the layers"); break; }
            if (!yolo_yaml_eat(&y, ']')) {
                do {
                    if (nrows == 1024) { rc = yolo_yaml_fail(&y, "too many layers"); break; }
                    if ((rc = yolo_yaml_row(&y, nc > 0 ? nc : file_nc, gd, &rows[nrows++]))) break;
                } while (yolo_yaml_eat(&y, ',') && (yolo_yaml_ws(&y), *y.s == '['));
                if (rc) break;
                if (!yolo_yaml_eat(&y, ']')) { rc = yolo_yaml_fail(&y, "list of rows not closed"); break; }
            }
            continue;
        }
        if (yolo_yaml_word(&y, val, sizeof val)) { rc = yolo_yaml_fail(&y, "missing value"); break; }
        if (!strcmp(key, "nc") && (yolo_yaml_number(val, &file_nc) || file_nc < 1 || file_nc > YOLO_MAX_NC)) {
            char msg[64];
            snprintf(msg, sizeof msg, "nc is not an integer in 1..%d", YOLO_MAX_NC);
            rc = yolo_yaml_fail(&y, msg); break;
        }
        if (!strcmp(key, "depth_multiple")) { if (yolo_yaml_multiple(val, &gd)) { rc = yolo_yaml_fail(&y, "depth_multiple is not a number in (0, 16]"); break; } }
        else if (!strcmp(key, "width_multiple")) { if (yolo_yaml_multiple(val, &gw)) { rc = yolo_yaml_fail(&y, "width_multiple is not a number in (0, 16]"); break; } }
        else if (!strcmp(key, "activation") && strcmp(val, "nn.SiLU()")) { rc = yolo_yaml_fail(&y, "only the SiLU activation is supported"); break; }
        /* anchors and anything else: not used by anchor-free heads */
    }
    if (rc == 0 && nrows == 0) rc = yolo_errorf(err, "%s: no layers (backbone/head) found", path);
    if (rc == 0) {
        rc = yolo_model_build(m, rows, nrows, nc > 0 ? nc : file_nc, gd, gw, err);
        if (rc) {  /* say which file the layer error is about */
            char inner[YOLO_ERR];
            snprintf(inner, sizeof inner, "%s", err);
            yolo_errorf(err, "%s: %s", path, inner);
        }
    }
    free(rows);
    return rc;
}

static const yolo_variant *yolo_variant_named(const char *name) {
    for (size_t i = 0; i < sizeof yolo_variants / sizeof yolo_variants[0]; i++)
        if (!strcmp(name, yolo_variants[i].name)) return &yolo_variants[i];
    return NULL;
}

int yolo_model_from_name(yolo_model *m, const char *name, int nc, char *err) {
    const yolo_variant *v = yolo_variant_named(name);
    if (v) return yolo_model_build(m, v->rows, v->nrows, nc > 0 ? nc : 80, 1, 1, err);
    return yolo_errorf(err, "unknown model '%s' (built in: yolov9-t/s/m/c/e, gelan-t/s/m/c/e, or a .yaml file)", name);
}

/* A built-in name (yolov9-c), or a model yaml found as the official
   check_yaml finds it (yolo_find_file). A yaml found nowhere but named
   as an official one (yolov9-c.yaml, models/detect/yolov9-c.yaml) is the
   built-in model of that name, which has the official file's layers. */
int yolo_model_from_cfg(yolo_model *m, const char *cfg, int nc, char *err) {
    size_t n = strlen(cfg);
    if (!(n > 5 && !strcmp(cfg + n - 5, ".yaml")) && !(n > 4 && !strcmp(cfg + n - 4, ".yml"))) return yolo_model_from_name(m, cfg, nc, err);
    char path[1024], base[64];
    int found = yolo_find_file(cfg, path, sizeof path, err);
    if (found < 0) return -1;
    if (found == 0) return yolo_model_from_yaml(m, path, nc, err);
    const char *slash = strrchr(cfg, '/'), *name = slash ? slash + 1 : cfg;
    snprintf(base, sizeof base, "%.*s", (int)(strrchr(name, '.') - name), name);
    if (!yolo_variant_named(base))
        return yolo_errorf(err, "%s: model file not found (nor under data/, models/ or utils/), and %s is not a built-in model "
                                "(yolov9-t/s/m/c/e, gelan-t/s/m/c/e)", cfg, base);
    if (slash) fprintf(stderr, "%s: no such file here; the built-in %s, the official file's layers\n", cfg, base);
    return yolo_model_from_name(m, base, nc, err);
}

void yolo_model_set_names(yolo_model *m, char *const *names) {
    for (int c = 0; m->names && c < m->nc; c++) free(m->names[c]);
    free(m->names);
    m->names = NULL;
    if (!names) return;
    m->names = (char **)yolo_xcalloc(m->nc, sizeof(char *));
    for (int c = 0; c < m->nc; c++) m->names[c] = strdup(names[c]);
}

/* The layers as rows [from, n, module, args] in the official spelling;
   the widths are the built ones, so width_multiple is 1. */
char *yolo_model_yaml(const yolo_model *m) {
    size_t cap = 256 + (size_t)m->nlayers * 160, o = 0;
    char *y = (char *)yolo_xmalloc(cap);
    o += snprintf(y + o, cap - o, "# the model of a yolov9.c weights file (widths as built)\nnc: %d\ndepth_multiple: 1.0\n"
                                  "width_multiple: 1.0\nbackbone:\n  [\n", m->nc);
    for (int i = 0; i < m->nlayers; i++) {
        const yolo_layer *L = &m->layers[i];
        char from[128] = "", args[160] = "";
        for (int j = 0, n = 0; j < L->nfrom; j++) n += snprintf(from + n, sizeof from - n, "%s%d", j ? ", " : "", L->from_row[j]);
        int nested = L->type == YOLO_CBLINEAR || L->type == YOLO_CBFUSE;
        if (L->type == YOLO_UPSAMPLE) snprintf(args, sizeof args, "None, 2, 'nearest'");
        else if (L->type == YOLO_CONCAT) snprintf(args, sizeof args, "1");
        else if (L->type == YOLO_DDETECT || L->type == YOLO_DUALDDETECT) snprintf(args, sizeof args, "nc");
        else for (int k = 0, n = 0; k < L->nargs; k++) n += snprintf(args + n, sizeof args - n, "%s%d", k ? ", " : "", L->args[k]);
        o += snprintf(y + o, cap - o, "   [%s%s%s, 1, %s, [%s%s%s]],  # %d\n", L->nfrom > 1 ? "[" : "", from, L->nfrom > 1 ? "]" : "",
                      yolo_module_names[L->type], nested ? "[" : "", args, nested ? "]" : "", i);
    }
    snprintf(y + o, cap - o, "  ]\nhead: []\n");
    return y;
}

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 12. weights: safetensors, training checkpoints                           */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING

typedef struct {
    char name[128];
    char dtype[8];           /* F32, F16, BF16, F64, I64 ... */
    int ndim;
    int64_t shape[8];
    size_t begin, end;       /* byte range inside data */
} yolo_st_entry;

typedef struct {
    int n;
    yolo_st_entry *e;
    unsigned char *data;     /* the raw tensor bytes */
    size_t data_size;
    char *meta;              /* the __metadata__ object's JSON text, or NULL */
} yolo_safetensors;

/* A tensor to write: its name, shape and float values (host memory),
   stored as F32, or as F16 (rounded to nearest, ties to even) when half. */
typedef struct { const char *name; int ndim; int64_t shape[4]; const yolo_real *data; size_t numel; int half; } yolo_st_tensor;

YOLO_C_BEGIN
/* safetensors */
int  yolo_st_read(yolo_safetensors *st, const char *path, char *err);
/* the file to read for a --weights flag: as given, but X.pt (PyTorch's, which
   weights/convert.py converts) is X.safetensors when that exists and is not
   older than X.pt (said on stderr); out holds it */
const char *yolo_weights_path(const char *given, char *out, size_t cap);
void yolo_st_free(yolo_safetensors *st);
const yolo_st_entry *yolo_st_find(const yolo_safetensors *st, const char *name);
int64_t yolo_st_numel(const yolo_st_entry *e);
/* converts one tensor to yolo_real; returns 0 or -1 on unsupported dtype */
int  yolo_st_get(const yolo_safetensors *st, const yolo_st_entry *e, yolo_real *out);
int  yolo_load_weights(yolo_model *m, const char *path, char *err);   /* every tensor, exactly */
/* fine-tuning: every tensor whose name and shape match (the official
   intersect_dicts); the rest keep their values. *transferred: how many */
int  yolo_transfer_weights(yolo_model *m, const char *path, int *transferred, char *err);
/* the weights under the official names, with the model's description
   (yolo_model_meta: yaml, nc, names) and the pairs of meta (NULL: none);
   values: the model's own (NULL) or another copy of them (the EMA);
   half: in F16, as the official strip_optimizer keeps a finished run */
int  yolo_save_weights(const yolo_model *m, const char *path, const yolo_real *values, const char *const *meta, int half,
                       char *err);
/* The model of a weights file, self-described: built from cfg when given,
   else from the model yaml the file carries in its metadata ("yaml", as
   every file we write and every .pt converted by weights/convert.py).
   Classes: nc > 0, else the file's "nc", else nc_default > 0, else the
   cfg's own. The file's class names ("names") become m->names. */
int  yolo_model_for_weights(yolo_model *m, const char *cfg, const char *weights, int nc, int nc_default, char *err);
int  yolo_st_write(const char *path, const yolo_st_tensor *t, int n, const char *const *meta, char *err);
int  yolo_st_meta(const yolo_safetensors *st, const char *key, char *out, size_t cap);
/* a number of the metadata (path: the file, for the message), read by yolo_read_number: 0 and *out, 1 when the
   key is absent (*out keeps its default), -1 and err when it is no number in [lo, hi] */
int  yolo_st_meta_number(const yolo_safetensors *st, const char *path, const char *key, int integer, double lo, double hi,
                         double *out, char *err);
int  yolo_checkpoint_save(const char *path, const yolo_model *m, const yolo_ema *e, const yolo_optim *o,
                          const char *const *meta, char *err);
int  yolo_checkpoint_load(const char *path, yolo_model *m, yolo_ema *e, yolo_optim *o, yolo_safetensors *st, char *err);
/* 0 when every one of the model's values at p (its weights, the EMA's: the backend's memory) is finite; else -1
   and err, "WHAT hold nan in TENSOR (element i)". A run checks its weights so before it saves them. */
int  yolo_check_finite(const yolo_model *m, const yolo_real *p, const char *what, char *err);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* 8 bytes little-endian header length N, N bytes of JSON
   {"name": {"dtype": "F32", "shape": [...], "data_offsets": [b, e]}, ...},
   then the raw little-endian data. Names are the official state_dict()
   names, so files move both ways between this project and PyTorch. */

typedef struct { const char *s, *end; } yolo_json;

static void yolo_json_ws(yolo_json *j) { while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\r' || *j->s == '\t')) j->s++; }
static int yolo_json_eat(yolo_json *j, char c) { yolo_json_ws(j); if (j->s < j->end && *j->s == c) { j->s++; return 1; } return 0; }
/* the 4 hex digits of a \uXXXX at s, or -1 */
static long yolo_json_hex4(const char *s, const char *end) {
    long c = 0;
    for (int i = 0; i < 4; i++) {
        if (s + i >= end || !isxdigit((unsigned char)s[i])) return -1;
        c = c * 16 + (isdigit((unsigned char)s[i]) ? s[i] - '0' : (s[i] | 32) - 'a' + 10);
    }
    return c;
}
static int yolo_json_string(yolo_json *j, char *out, size_t cap) {
    if (!yolo_json_eat(j, '"')) return -1;
    size_t n = 0;
    while (j->s < j->end && *j->s != '"') {
        long c = (unsigned char)*j->s++;
        if (c == '\\' && j->s < j->end) {
            static const char esc[] = "n\nt\tr\rb\bf\f";
            const char *e = strchr(esc, *j->s);
            c = (unsigned char)*j->s++;
            if (c && e && (e - esc) % 2 == 0) c = (unsigned char)e[1];
            else if (c == 'u') {   /* \uXXXX (a surrogate pair for one beyond 0xFFFF) as UTF-8 */
                c = yolo_json_hex4(j->s, j->end);
                j->s += 4;
                if (c >= 0xD800 && c < 0xDC00 && j->end - j->s >= 6 && j->s[0] == '\\' && j->s[1] == 'u') {
                    long lo = yolo_json_hex4(j->s + 2, j->end);
                    if (lo >= 0xDC00 && lo < 0xE000) { c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00); j->s += 6; }
                }
                if (c <= 0 || (c >= 0xD800 && c < 0xE000)) return -1;   /* malformed, a NUL or a lone surrogate */
                unsigned char u[4];
                int k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
                static const unsigned char lead[5] = { 0, 0, 0xC0, 0xE0, 0xF0 };
                for (int i = k - 1; i > 0; i--, c >>= 6) u[i] = (unsigned char)(0x80 | (c & 63));
                u[0] = (unsigned char)(lead[k] | c);
                for (int i = 0; i < k - 1; i++) if (n + 1 < cap) out[n++] = (char)u[i];
                c = u[k - 1];
            } else if (c != '"' && c != '\\' && c != '/') return -1;
        }
        if (n + 1 < cap) out[n++] = (char)c;
    }
    if (out) out[n < cap ? n : cap - 1] = 0;
    return yolo_json_eat(j, '"') ? 0 : -1;
}
/* s as a JSON string's inside at h + *o: quotes and backslashes escaped, every control character as \uXXXX;
   h has room for 6 bytes of each of s's */
static void yolo_json_put(char *h, size_t *o, const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c == '"' || *c == '\\') { h[(*o)++] = '\\'; h[(*o)++] = (char)*c; }
        else if (*c < 0x20 || *c == 0x7f) *o += (size_t)sprintf(h + *o, "\\u%04x", *c);
        else h[(*o)++] = (char)*c;
}
static int yolo_json_int(yolo_json *j, int64_t *v) {
    yolo_json_ws(j);
    char *e;
    long long x = strtoll(j->s, &e, 10);
    if (e == j->s) return -1;
    j->s = e; *v = x;
    return 0;
}
/* any value, nested at most `depth` deep (a header is flat: deeper is hostile) */
static int yolo_json_skip(yolo_json *j, int depth) {
    yolo_json_ws(j);
    if (j->s >= j->end || depth < 0) return -1;
    if (*j->s == '"') { char tmp[2]; return yolo_json_string(j, tmp, sizeof tmp); }
    if (*j->s == '{' || *j->s == '[') {
        char close = *j->s == '{' ? '}' : ']';
        j->s++;
        if (yolo_json_eat(j, close)) return 0;
        do {
            if (close == '}') { char k[2]; if (yolo_json_string(j, k, sizeof k) || !yolo_json_eat(j, ':')) return -1; }
            if (yolo_json_skip(j, depth - 1)) return -1;
        } while (yolo_json_eat(j, ','));
        return yolo_json_eat(j, close) ? 0 : -1;
    }
    const char *s0 = j->s;
    while (j->s < j->end && *j->s != ',' && *j->s != '}' && *j->s != ']') j->s++;
    return j->s > s0 ? 0 : -1;
}
#define YOLO_JSON_DEPTH 16

static int yolo_dtype_size(const char *dt) {
    if (!strcmp(dt, "F32") || !strcmp(dt, "I32")) return 4;
    if (!strcmp(dt, "F16") || !strcmp(dt, "BF16") || !strcmp(dt, "I16")) return 2;
    if (!strcmp(dt, "F64") || !strcmp(dt, "I64")) return 8;
    if (!strcmp(dt, "U8") || !strcmp(dt, "I8") || !strcmp(dt, "BOOL")) return 1;
    return 0;
}

int64_t yolo_st_numel(const yolo_st_entry *e) {
    int64_t n = 1;
    for (int i = 0; i < e->ndim; i++) n *= e->shape[i];
    return n;
}

void yolo_st_free(yolo_safetensors *st) { free(st->e); free(st->data); free(st->meta); memset(st, 0, sizeof *st); }

/* a string of the __metadata__ object; 0, or -1 when it is not there */
int yolo_st_meta(const yolo_safetensors *st, const char *key, char *out, size_t cap) {
    if (!st->meta) return -1;
    yolo_json j = { st->meta, st->meta + strlen(st->meta) };
    if (!yolo_json_eat(&j, '{')) return -1;
    do {
        char k[128];
        if (yolo_json_string(&j, k, sizeof k) || !yolo_json_eat(&j, ':')) return -1;
        if (!strcmp(k, key)) return yolo_json_string(&j, out, cap);
        if (yolo_json_skip(&j, YOLO_JSON_DEPTH)) return -1;
    } while (yolo_json_eat(&j, ','));
    return -1;
}

static int yolo_st_by_name(const void *a, const void *b) { return strcmp(((const yolo_st_entry *)a)->name, ((const yolo_st_entry *)b)->name); }
static int yolo_st_by_begin(const void *a, const void *b) {
    const yolo_st_entry *x = (const yolo_st_entry *)a, *y = (const yolo_st_entry *)b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1) : x->end != y->end ? (x->end < y->end ? -1 : 1) : 0;
}

/* The file's layout must be exactly what the format says: each tensor's
   bytes its shape times its dtype, the tensors tiling the data from byte 0
   to the last byte with no gap, overlap or trailing bytes, every name once. */
static int yolo_st_check_layout(yolo_safetensors *st, const char *path, char *err) {
    yolo_st_entry *e = (yolo_st_entry *)yolo_xmalloc(((size_t)st->n + 1) * sizeof *e);
    memcpy(e, st->e, (size_t)st->n * sizeof *e);
    int rc = 0;
    qsort(e, st->n, sizeof *e, yolo_st_by_name);
    for (int i = 1; i < st->n && !rc; i++)
        if (!strcmp(e[i].name, e[i - 1].name)) rc = yolo_errorf(err, "%s: tensor %s appears twice", path, e[i].name);
    qsort(e, st->n, sizeof *e, yolo_st_by_begin);
    size_t at = 0;
    for (int i = 0; i < st->n && !rc; i++) {
        if (e[i].begin < at) rc = yolo_errorf(err, "%s: %s (bytes %zu..%zu) overlaps the tensor before it", path, e[i].name, e[i].begin, e[i].end);
        else if (e[i].begin > at) rc = yolo_errorf(err, "%s: %s starts at byte %zu, leaving bytes %zu..%zu unused", path, e[i].name, e[i].begin, at, e[i].begin);
        at = e[i].end;
    }
    if (!rc && at != st->data_size) rc = yolo_errorf(err, "%s: %zu bytes after the last tensor", path, st->data_size - at);
    free(e);
    return rc;
}

/* weights/convert.py of the source tree this program was built in (beside
   it, or one folder up), as a path that works from the current folder:
   relative when below it, else absolute; its name in the tree when the
   program stands elsewhere */
static void yolo_converter_path(char *out, size_t cap) {
    char exe[1024], cwd[1024], p[1100], real[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(out, cap, "<yolov9.c>/weights/convert.py");
    if (n <= 0) return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    for (int up = 0; up < 2; up++) {
        snprintf(p, sizeof p, "%s/%sweights/convert.py", exe, up ? "../" : "");
        if (!realpath(p, real)) continue;
        size_t k = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
        if (k > 1 && !strncmp(real, cwd, k) && real[k] == '/') snprintf(out, cap, "%s", real + k + 1);
        else snprintf(out, cap, "%s", real);
        return;
    }
}

const char *yolo_weights_path(const char *given, char *out, size_t cap) {
    size_t n = strlen(given);
    struct stat pt, st;
    snprintf(out, cap, "%s", given);
    if (n < 3 || strcmp(given + n - 3, ".pt")) return out;
    snprintf(out, cap, "%.*s.safetensors", (int)(n - 3), given);
    int have_pt = !stat(given, &pt);
    if (stat(out, &st) || (have_pt && st.st_mtime < pt.st_mtime)) { snprintf(out, cap, "%s", given); return out; }
    fprintf(stderr, "%s: %s, its conversion, read instead\n", given, out);
    return out;
}

int yolo_st_read(yolo_safetensors *st, const char *path, char *err) {
    memset(st, 0, sizeof *st);
    long size;
    FILE *f = yolo_open_file(path, "weights file", 0, &size, err);
    if (!f) return -1;
    unsigned char h8[8];
    if (size < 8 || fread(h8, 1, 8, f) != 8) { fclose(f); return yolo_errorf(err, "%s: not a safetensors file (too short)", path); }
    if (!memcmp(h8, "PK\3\4", 4)) {   /* a zip archive: PyTorch's .pt */
        fclose(f);
        char tool[1200];
        yolo_converter_path(tool, sizeof tool);
        return yolo_errorf(err, "%s: a PyTorch checkpoint; convert it first: python3 %s %s %.*s.safetensors", path, tool, path,
                           (int)(strlen(path) > 3 && !strcmp(path + strlen(path) - 3, ".pt") ? strlen(path) - 3 : strlen(path)), path);
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | h8[i];
    if (hlen > (uint64_t)size - 8) { fclose(f); return yolo_errorf(err, "%s: truncated: header of %llu bytes, file has %ld", path, (unsigned long long)hlen, size); }
    if (hlen > 100000000) { fclose(f); return yolo_errorf(err, "%s: header of %llu bytes, more than the format's 100 MB", path, (unsigned long long)hlen); }
    char *hdr = (char *)yolo_xmalloc(hlen + 1);
    st->data_size = (size_t)(size - 8 - (long)hlen);
    st->data = (unsigned char *)yolo_xmalloc(st->data_size);
    if (fread(hdr, 1, hlen, f) != hlen || fread(st->data, 1, st->data_size, f) != st->data_size) {
        fclose(f); free(hdr); yolo_st_free(st);
        return yolo_errorf(err, "%s: read error", path);
    }
    fclose(f);
    hdr[hlen] = 0;
    yolo_json j = { hdr, hdr + hlen };
    int cap = 0, rc = 0;
    if (memchr(hdr, 0, hlen)) rc = yolo_errorf(err, "%s: malformed header (a NUL byte)", path);
    else if (!yolo_json_eat(&j, '{')) rc = yolo_errorf(err, "%s: malformed header (not a JSON object)", path);
    else if (!yolo_json_eat(&j, '}')) { do {
        char key[256];
        if (yolo_json_string(&j, key, sizeof key) || !yolo_json_eat(&j, ':')) { rc = yolo_errorf(err, "%s: malformed header", path); break; }
        if (!strcmp(key, "__metadata__")) {
            yolo_json_ws(&j);
            const char *m0 = j.s;
            if (st->meta || yolo_json_skip(&j, YOLO_JSON_DEPTH)) { rc = yolo_errorf(err, "%s: malformed metadata", path); break; }
            st->meta = (char *)yolo_xmalloc((size_t)(j.s - m0) + 1);
            memcpy(st->meta, m0, (size_t)(j.s - m0)); st->meta[j.s - m0] = 0;
            continue;
        }
        if (strlen(key) >= sizeof st->e[0].name) { rc = yolo_errorf(err, "%s: a tensor name longer than %zu characters", path, sizeof st->e[0].name - 1); break; }
        st->e = (yolo_st_entry *)yolo_grow(st->e, sizeof(yolo_st_entry), st->n + 1, &cap);
        yolo_st_entry *e = &st->e[st->n++];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", key);
        int have = 0;
        if (!yolo_json_eat(&j, '{')) { rc = yolo_errorf(err, "%s: malformed entry for %s", path, key); break; }
        do {
            char field[32];
            if (yolo_json_string(&j, field, sizeof field) || !yolo_json_eat(&j, ':')) { rc = -1; break; }
            if (!strcmp(field, "dtype")) { if (yolo_json_string(&j, e->dtype, sizeof e->dtype)) rc = -1; have |= 1; }
            else if (!strcmp(field, "shape") || !strcmp(field, "data_offsets")) {
                int64_t v[8]; int nv = 0;
                if (!yolo_json_eat(&j, '[')) { rc = -1; break; }
                if (!yolo_json_eat(&j, ']')) {
                    do { if (nv >= 8 || yolo_json_int(&j, &v[nv++])) { rc = -1; break; } } while (yolo_json_eat(&j, ','));
                    if (rc || !yolo_json_eat(&j, ']')) { rc = -1; break; }
                }
                if (field[0] == 's') { e->ndim = nv; for (int i = 0; i < nv; i++) e->shape[i] = v[i]; have |= 2; }
                else { if (nv != 2 || v[0] < 0 || v[1] < v[0]) { rc = -1; break; } e->begin = (size_t)v[0]; e->end = (size_t)v[1]; have |= 4; }
            } else if (yolo_json_skip(&j, YOLO_JSON_DEPTH)) rc = -1;
            if (rc) break;
        } while (yolo_json_eat(&j, ','));
        if (rc || !yolo_json_eat(&j, '}') || have != 7) { rc = yolo_errorf(err, "%s: malformed entry for %s", path, key); break; }
        int ds = yolo_dtype_size(e->dtype);
        if (!ds) { rc = yolo_errorf(err, "%s: %s has unsupported dtype %s", path, key, e->dtype); break; }
        /* the shape's bytes, multiplied without overflow: no more than the data holds */
        uint64_t bytes = (uint64_t)ds;
        for (int i = 0; i < e->ndim && !rc; i++) {
            if (e->shape[i] < 0) rc = yolo_errorf(err, "%s: %s has a negative dimension %lld", path, key, (long long)e->shape[i]);
            else if (e->shape[i] && bytes > st->data_size / (uint64_t)e->shape[i]) rc = yolo_errorf(err, "%s: %s: shape larger than the file's %zu data bytes", path, key, st->data_size);
            else bytes *= (uint64_t)e->shape[i];
        }
        if (rc) break;
        if (e->end - e->begin != bytes) { rc = yolo_errorf(err, "%s: %s: %zu bytes do not fit its shape", path, key, e->end - e->begin); break; }
        if (e->end > st->data_size) { rc = yolo_errorf(err, "%s: truncated: %s needs bytes up to %zu, the data has %zu", path, key, e->end, st->data_size); break; }
    } while (yolo_json_eat(&j, ','));
        if (!rc && !yolo_json_eat(&j, '}')) rc = yolo_errorf(err, "%s: malformed header (not closed by '}' at byte %ld)", path, (long)(j.s - hdr) + 8);
    }
    if (!rc && (yolo_json_ws(&j), j.s != j.end))
        rc = yolo_errorf(err, "%s: malformed header (text after its closing '}' at byte %ld)", path, (long)(j.s - hdr) + 8);
    free(hdr);
    if (!rc) rc = yolo_st_check_layout(st, path, err);
    if (rc) { yolo_st_free(st); return -1; }
    return 0;
}

const yolo_st_entry *yolo_st_find(const yolo_safetensors *st, const char *name) {
    for (int i = 0; i < st->n; i++) if (!strcmp(st->e[i].name, name)) return &st->e[i];
    return NULL;
}

static float yolo_half_to_float(uint16_t h) {
    uint32_t s = (h >> 15) & 1, e = (h >> 10) & 31, f = h & 1023;
    float v = e == 0 ? ldexpf((float)f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexpf((float)(f | 1024), (int)e - 25);
    return s ? -v : v;
}
/* and back: the F16 bits of f rounded to nearest (ties to even) */
static uint16_t yolo_half_bits(float f) {
    float r = yolo_round_half(f), a = fabsf(r);
    uint16_t s = signbit(r) ? 0x8000 : 0;
    if (a != a) return 0x7e00;
    if (a == INFINITY) return s | 0x7c00;
    if (a < 6.103515625e-05f) return s | (uint16_t)(a * 16777216.0f);   /* subnormal (or 0): a multiple of 2^-24 */
    int e;
    float m = frexpf(a, &e);   /* a = m 2^e, m in [0.5, 1): exponent e - 1, 10 bits of 2m - 1 */
    return s | (uint16_t)((e + 14) << 10) | (uint16_t)((2 * m - 1) * 1024);
}

int yolo_st_get(const yolo_safetensors *st, const yolo_st_entry *e, yolo_real *out) {
    const unsigned char *p = st->data + e->begin;
    int64_t n = yolo_st_numel(e);
    for (int64_t i = 0; i < n; i++) {
        if (!strcmp(e->dtype, "F32")) { float v; memcpy(&v, p + 4 * i, 4); out[i] = (yolo_real)v; }
        else if (!strcmp(e->dtype, "F64")) { double v; memcpy(&v, p + 8 * i, 8); out[i] = (yolo_real)v; }
        else if (!strcmp(e->dtype, "F16")) { uint16_t v; memcpy(&v, p + 2 * i, 2); out[i] = (yolo_real)yolo_half_to_float(v); }
        else if (!strcmp(e->dtype, "BF16")) { uint16_t v; memcpy(&v, p + 2 * i, 2); uint32_t u = (uint32_t)v << 16; float x; memcpy(&x, &u, 4); out[i] = (yolo_real)x; }
        else return -1;
    }
    return 0;
}

/* A tensor's values as yolo_real; a NaN or an infinity is refused with the
   tensor's name (one NaN bias already fills a picture with boxes). */
static int yolo_st_get_finite(const yolo_safetensors *st, const yolo_st_entry *e, yolo_real *out, const char *path, char *err) {
    if (yolo_st_get(st, e, out)) return yolo_errorf(err, "%s: %s has unsupported dtype %s", path, e->name, e->dtype);
    int64_t n = yolo_st_numel(e);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite((double)out[i])) return yolo_errorf(err, "%s: %s holds %g at element %lld", path, e->name, (double)out[i], (long long)i);
    return 0;
}

/* strict: every tensor the model has must be in the file with its shape,
   and the file must hold nothing else (num_batches_tracked aside). Else
   (fine-tuning, the official intersect_dicts) every tensor whose name and
   shape match is loaded, the others keep their values; *loaded counts
   the loaded ones. */
static int yolo_read_weights(yolo_model *m, const char *path, int strict, int *loaded, char *err) {
    yolo_safetensors st;
    if (yolo_st_read(&st, path, err)) return -1;
    int rc = 0, n = 0;
    yolo_real *h = yolo_fetch(m, m->values, m->nvalues);   /* host staging, starting from the model's values */
    for (int k = 0; k < m->nparams && !rc; k++) {
        const yolo_param *p = &m->params[k];
        const yolo_st_entry *e = yolo_st_find(&st, p->name);
        if (!e && !strict) continue;
        if (!e) { rc = yolo_errorf(err, "%s: missing tensor %s", path, p->name); break; }
        int same = e->ndim == p->ndim;
        for (int i = 0; same && i < p->ndim; i++) same = e->shape[i] == p->shape[i];
        if (!same && !strict) continue;
        if (!same) {
            char a[64] = "", b[64] = "";
            for (int i = 0, o = 0; i < e->ndim; i++) o += snprintf(a + o, sizeof a - o, "%s%lld", i ? "," : "", (long long)e->shape[i]);
            for (int i = 0, o = 0; i < p->ndim; i++) o += snprintf(b + o, sizeof b - o, "%s%d", i ? "," : "", p->shape[i]);
            rc = yolo_errorf(err, "%s: %s has shape [%s], the model wants [%s]", path, p->name, a, b);
            break;
        }
        rc = yolo_st_get_finite(&st, e, h + p->offset, path, err);
        n++;
    }
    for (int i = 0; i < st.n && !rc && strict; i++) {
        const char *nm = st.e[i].name;
        size_t len = strlen(nm);
        if (len > 20 && !strcmp(nm + len - 20, ".num_batches_tracked")) continue;
        if (!strncmp(nm, "train.", 6)) continue;   /* a training checkpoint's own state */
        if (!yolo_model_param(m, nm)) rc = yolo_errorf(err, "%s: tensor %s does not belong to this model", path, nm);
    }
    if (!rc) m->be->upload(m->values, h, m->nvalues * sizeof(yolo_real));
    if (loaded) *loaded = n;
    free(h);
    yolo_st_free(&st);
    return rc;
}

int yolo_load_weights(yolo_model *m, const char *path, char *err) { return yolo_read_weights(m, path, 1, NULL, err); }
int yolo_transfer_weights(yolo_model *m, const char *path, int *transferred, char *err) {
    return yolo_read_weights(m, path, 0, transferred, err);
}

/* The temporaries a killed save left in path's folder (*.safetensors.tmp
   untouched for a minute: a save under way writes to its own all along):
   nothing reads them, and no later save of that name may come. */
static void yolo_remove_stale_tmps(const char *path) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n <= 16 || strcmp(e->d_name + n - 16, ".safetensors.tmp")) continue;
        char p[2100];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!lstat(p, &st) && S_ISREG(st.st_mode) && st.st_mtime < time(NULL) - 60 && !remove(p)) fprintf(stderr, "%s: removed, left by a save that did not finish\n", p);
    }
    closedir(d);
}

/* a value that cannot be stored: not finite, or beyond half's range in a half tensor; -1 and err name it */
static int yolo_st_unstorable(const char *path, const yolo_st_tensor *t, int n, char *err) {
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < t[k].numel; i++) {
            double v = (double)t[k].data[i];
            if (!isfinite(v) || (t[k].half && fabs(v) > 65504))
                return yolo_errorf(err, "%s: not written: %s holds %g at element %zu%s", path, t[k].name, v, i, isfinite(v) ? ", beyond half's range" : "");
        }
    return 0;
}

/* Written to PATH.tmp, then renamed: a crash never leaves half a file, and
   the next save removes what a killed one left. A tensor holding a value
   that is not finite (or beyond half's range, in half) is not written: the
   file that was there stays.
   meta: NULL, or key/value string pairs ending with NULL, for __metadata__. */
int yolo_st_write(const char *path, const yolo_st_tensor *t, int n, const char *const *meta, char *err) {
    if (yolo_st_unstorable(path, t, n, err)) return -1;
    size_t cap = 1024 + (size_t)n * 200, o = 0, off = 0;
    for (int k = 0; meta && meta[k]; k++) cap += 6 * strlen(meta[k]) + 8;
    char *h = (char *)yolo_xmalloc(cap);
    o += snprintf(h + o, cap - o, "{");
    if (meta && meta[0]) {
        o += snprintf(h + o, cap - o, "\"__metadata__\":{");
        for (int k = 0; meta[k] && meta[k + 1]; k += 2) {
            o += snprintf(h + o, cap - o, "%s\"", k ? "," : "");
            yolo_json_put(h, &o, meta[k]);
            o += snprintf(h + o, cap - o, "\":\"");
            yolo_json_put(h, &o, meta[k + 1]);
            o += snprintf(h + o, cap - o, "\"");
        }
        o += snprintf(h + o, cap - o, "}%s", n ? "," : "");
    }
    for (int k = 0; k < n; k++) {
        size_t bytes = t[k].numel * (t[k].half ? 2 : 4);
        o += snprintf(h + o, cap - o, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", k ? "," : "", t[k].name, t[k].half ? "F16" : "F32");
        for (int i = 0; i < t[k].ndim; i++) o += snprintf(h + o, cap - o, "%s%lld", i ? "," : "", (long long)t[k].shape[i]);
        o += snprintf(h + o, cap - o, "],\"data_offsets\":[%zu,%zu]}", off, off + bytes);
        off += bytes;
    }
    o += snprintf(h + o, cap - o, "}");
    while (o % 8) h[o++] = ' ';
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    yolo_remove_stale_tmps(path);
    FILE *f = fopen(tmp, "wb");
    if (!f) { free(h); return yolo_errorf(err, "%s: cannot write", tmp); }
    unsigned char h8[8];
    for (int i = 0; i < 8; i++) h8[i] = (unsigned char)((uint64_t)o >> (8 * i));
    int ok = fwrite(h8, 1, 8, f) == 8 && fwrite(h, 1, o, f) == o;
    float buf[4096];
    uint16_t hbuf[4096];
    for (int k = 0; k < n && ok; k++)
        for (size_t i = 0; i < t[k].numel && ok; i += 4096) {
            size_t c = t[k].numel - i < 4096 ? t[k].numel - i : 4096;
            if (t[k].half) {
                for (size_t q = 0; q < c; q++) hbuf[q] = yolo_half_bits((float)t[k].data[i + q]);
                ok = fwrite(hbuf, 2, c, f) == c;
            } else {
                for (size_t q = 0; q < c; q++) buf[q] = (float)t[k].data[i + q];
                ok = fwrite(buf, 4, c, f) == c;
            }
        }
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;   /* on the disk before it replaces the file there */
    ok = (fclose(f) == 0) && ok;
    free(h);
    if (!ok || rename(tmp, path) != 0) { remove(tmp); return yolo_errorf(err, "%s: write failed", path); }
    return 0;
}

/* the state_dict tensors of m with the values vals (host) */
static yolo_st_tensor *yolo_model_tensors(const yolo_model *m, const yolo_real *vals) {
    yolo_st_tensor *t = (yolo_st_tensor *)yolo_xcalloc(m->nparams, sizeof(yolo_st_tensor));
    for (int k = 0; k < m->nparams; k++) {
        const yolo_param *p = &m->params[k];
        t[k].name = p->name; t[k].ndim = p->ndim; t[k].data = vals + p->offset; t[k].numel = p->numel;
        for (int i = 0; i < p->ndim; i++) t[k].shape[i] = p->shape[i];
    }
    return t;
}

/* What makes a weights file describe itself: its model yaml, nc and class
   names (one a line), then the pairs of extra (NULL: none). The caller
   frees the array and its first, third and fifth values (made here). */
static const char **yolo_model_meta(const yolo_model *m, const char *const *extra) {
    int n = 0;
    while (extra && extra[n]) n++;
    const char **kv = (const char **)yolo_xcalloc(n + 7, sizeof(char *));
    char *nc = (char *)yolo_xmalloc(16), *names;
    snprintf(nc, 16, "%d", m->nc);
    size_t len = 1;
    for (int c = 0; m->names && c < m->nc; c++) len += strlen(m->names[c]) + 1;
    names = (char *)yolo_xcalloc(len, 1);
    for (int c = 0, o = 0; m->names && c < m->nc; c++) o += sprintf(names + o, "%s%s", c ? "\n" : "", m->names[c]);
    kv[0] = "yaml"; kv[1] = yolo_model_yaml(m); kv[2] = "nc"; kv[3] = nc; kv[4] = "names"; kv[5] = names;
    for (int k = 0; k < n; k++) kv[6 + k] = extra[k];
    return kv;
}
static void yolo_model_meta_free(const char **kv) { free((void *)kv[1]); free((void *)kv[3]); free((void *)kv[5]); free(kv); }

int yolo_save_weights(const yolo_model *m, const char *path, const yolo_real *values, const char *const *meta, int half,
                      char *err) {
    yolo_real *vals = yolo_fetch(m, values ? values : m->values, m->nvalues);
    yolo_st_tensor *t = yolo_model_tensors(m, vals);
    for (int k = 0; k < m->nparams; k++) t[k].half = half;
    const char **kv = yolo_model_meta(m, meta);
    int rc = yolo_st_write(path, t, m->nparams, kv, err);
    yolo_model_meta_free(kv);
    free(t); free(vals);
    return rc;
}

int yolo_check_finite(const yolo_model *m, const yolo_real *p, const char *what, char *err) {
    yolo_real *h = yolo_fetch(m, p, m->nvalues);
    int rc = 0;
    for (int k = 0; k < m->nparams && !rc; k++)
        for (size_t i = 0; i < m->params[k].numel && !rc; i++)
            if (!isfinite((double)h[m->params[k].offset + i]))
                rc = yolo_errorf(err, "%s hold %g in %s (element %zu)", what, (double)h[m->params[k].offset + i], m->params[k].name, i);
    free(h);
    return rc;
}

/* A training checkpoint: the EMA weights under the official names (what
   val and detect load, as the official checkpoints' 'ema'), and under
   train.* the raw weights and the optimizer state as flat [nvalues]
   arrays; the run's progress and arguments in the metadata. */
int yolo_checkpoint_save(const char *path, const yolo_model *m, const yolo_ema *e, const yolo_optim *o,
                         const char *const *meta, char *err) {
    yolo_real *ema = yolo_fetch(m, e->values, m->nvalues), *w = yolo_fetch(m, m->values, m->nvalues);
    yolo_real *st[3] = { o->m ? yolo_fetch(m, o->m, m->nvalues) : NULL, o->v ? yolo_fetch(m, o->v, m->nvalues) : NULL,
                         o->vmax ? yolo_fetch(m, o->vmax, m->nvalues) : NULL };
    yolo_st_tensor *t = (yolo_st_tensor *)yolo_xcalloc(m->nparams + 4, sizeof(yolo_st_tensor)), *mt = yolo_model_tensors(m, ema);
    memcpy(t, mt, m->nparams * sizeof *t);
    int n = m->nparams;
    static const char *names[4] = { "train.model", "train.optim.m", "train.optim.v", "train.optim.vmax" };
    const yolo_real *arrays[4] = { w, st[0], st[1], st[2] };
    for (int k = 0; k < 4; k++) {
        if (!arrays[k]) continue;
        t[n].name = names[k]; t[n].ndim = 1; t[n].shape[0] = (int64_t)m->nvalues; t[n].data = arrays[k]; t[n].numel = m->nvalues;
        n++;
    }
    const char **kv = yolo_model_meta(m, meta);
    int rc = yolo_st_write(path, t, n, kv, err);
    yolo_model_meta_free(kv);
    free(t); free(mt); free(ema); free(w); free(st[0]); free(st[1]); free(st[2]);
    return rc;
}

/* Back from a checkpoint: weights, EMA and optimizer state (o already
   initialised with the same kind); st keeps the metadata for the caller. */
int yolo_checkpoint_load(const char *path, yolo_model *m, yolo_ema *e, yolo_optim *o, yolo_safetensors *st, char *err) {
    if (yolo_load_weights(m, path, err)) return -1;            /* the EMA, checked name by name */
    e->be->copy(e->values, m->values, m->nvalues * sizeof(yolo_real));
    if (yolo_st_read(st, path, err)) return -1;
    static const char *names[4] = { "train.model", "train.optim.m", "train.optim.v", "train.optim.vmax" };
    yolo_real *dst[4] = { m->values, o->m, o->v, o->vmax };
    yolo_real *h = (yolo_real *)yolo_xmalloc(m->nvalues * sizeof(yolo_real));
    int rc = 0;
    for (int k = 0; k < 4 && !rc; k++) {
        if (!dst[k]) continue;
        const yolo_st_entry *en = yolo_st_find(st, names[k]);
        if (!en || yolo_st_numel(en) != (int64_t)m->nvalues) { rc = yolo_errorf(err, "%s: not a training checkpoint of this model and optimizer (%s)", path, names[k]); break; }
        if ((rc = yolo_st_get_finite(st, en, h, path, err))) break;
        m->be->upload(dst[k], h, m->nvalues * sizeof(yolo_real));
    }
    free(h);
    if (rc) yolo_st_free(st);
    return rc;
}

/* --- a weights file's model --- */
/* a metadata string of any length (caller frees), or NULL */
static char *yolo_st_meta_dup(const yolo_safetensors *st, const char *key) {
    if (!st->meta) return NULL;
    size_t cap = strlen(st->meta) + 1;
    char *v = (char *)yolo_xmalloc(cap);
    if (yolo_st_meta(st, key, v, cap)) { free(v); return NULL; }
    return v;
}

int yolo_st_meta_number(const yolo_safetensors *st, const char *path, const char *key, int integer, double lo, double hi,
                        double *out, char *err) {
    char *v = yolo_st_meta_dup(st, key), what[160];
    if (!v) return 1;
    snprintf(what, sizeof what, "metadata '%s'", key);
    int rc = yolo_read_number(v, integer, lo, hi, path, what, out, err);
    free(v);
    return rc;
}

int yolo_model_for_weights(yolo_model *m, const char *cfg, const char *weights, int nc, int nc_default, char *err) {
    yolo_safetensors st;
    memset(&st, 0, sizeof st);
    if (weights && yolo_st_read(&st, weights, err)) return -1;
    char *yaml = yolo_st_meta_dup(&st, "yaml"), *names = yolo_st_meta_dup(&st, "names");
    double file_nc = 0;
    int rc = weights ? yolo_st_meta_number(&st, weights, "nc", 1, 1, YOLO_MAX_NC, &file_nc, err) : 1;
    if (rc < 0) { free(yaml); free(names); yolo_st_free(&st); return -1; }
    if (nc <= 0) nc = file_nc > 0 ? (int)file_nc : nc_default;
    if (cfg) rc = yolo_model_from_cfg(m, cfg, nc, err);
    else if (!yaml) rc = yolo_errorf(err, "%s: the file carries no model: give --cfg (yolov9-c, gelan-s, ... or the model yaml)", weights);
    else {
        char source[1100];
        snprintf(source, sizeof source, "%s (its model yaml)", weights);
        rc = yolo_model_from_yaml_text(m, yaml, source, nc, err);
    }
    if (!rc && names) {   /* one name a line; kept when there is one per class */
        char **list = (char **)yolo_xcalloc(m->nc + 1, sizeof(char *));
        int n = 0;
        for (char *t = names; n <= m->nc; t++) {
            list[n++] = t;
            t += strcspn(t, "\n");
            if (!*t) break;
            *t = 0;
        }
        if (n == m->nc) yolo_model_set_names(m, list);
        free(list);
    }
    free(yaml); free(names);
    yolo_st_free(&st);
    return rc;
}

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 13. data                                                                 */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
#ifndef YOLO_NO_DATA
/* A dataset yaml: path, train, val and test (each a folder, a list file,
   or a list of either), nc, names. */
typedef struct {
    char root[1024];         /* path, resolved against the yaml's folder */
    char train[4096], val[4096], test[4096];   /* source specs, ';'-separated when several; test "" when absent */
    int nc;
    char **names;            /* [nc] */
} yolo_data_cfg;

/* An RGB8 picture [h, w, 3] */
typedef struct { int w, h; unsigned char *rgb; } yolo_image;

/* The images of one split and their labels, scanned once (and cached
   beside the labels folder). */
typedef struct {
    int n;                   /* images */
    char **files;            /* [n] image paths */
    int *w0, *h0;            /* [n] image sizes */
    int *nlab;               /* [n] boxes per image */
    float **lab;             /* [n][nlab * 5] class, cx, cy, w, h (normalised) */
    long nboxes;
    int max_boxes;           /* the densest image (the memory plan sizes the loss for it) */
    yolo_image *cache;       /* [n] decoded, resized once (--cache ram), or NULL */
    char **npy;              /* [n] the same pictures in .npy files (--cache disk), or NULL */
} yolo_dataset;

/* --cache: none, every picture decoded and resized once and kept in memory,
   or kept in a .npy file beside it (uint8 [h, w, 3] RGB, read back on each use) */
typedef enum { YOLO_CACHE_NONE, YOLO_CACHE_RAM, YOLO_CACHE_DISK } yolo_cache_kind;

/* A batch ready for the model: its pictures [B, 3, H, W] RGB as uint8
   pixels and, unless the loader hands them over as pixels
   (YOLO_LOADER_UINT8), as images in [0,1]; the targets [nt, 6] (image,
   class, cx, cy, w, h normalised); for validation also what maps a box
   back onto each original picture. */
typedef struct {
    int index, B, H, W, nt, tcap;
    unsigned char *pixels;   /* [B*3*H*W] host, what the augmentation makes */
    yolo_real *images;       /* [B*3*H*W] host: pixels / 255, then --quad's and --multi-scale's resizes */
    int has_images;          /* images hold this batch (0: pixels alone, yolo_batch_images makes them) */
    yolo_real *targets;      /* [nt*6] of room for tcap, what yolo_loss_compute takes */
    int *ids;                /* [B] dataset indices */
    double *gain, *padx, *pady;  /* [B] original -> letterboxed: x' = x gain + padx */
} yolo_batch;

/* yolo_loader_init's mode: validation (0), or training, with the official
   --rect, --multi-scale and --quad as flags */
enum { YOLO_LOADER_VAL = 0, YOLO_LOADER_TRAIN = 1, YOLO_LOADER_RECT = 2, YOLO_LOADER_MULTI_SCALE = 4, YOLO_LOADER_QUAD = 8,
       YOLO_LOADER_UINT8 = 16 };   /* batches handed over as pixels (not with --quad, --multi-scale: they resize floats) */

/* The order of an epoch and the shape of every batch. Training: shuffled
   (seeded by seed and epoch, so a resumed run sees the same order), S x S.
   Rectangles (validation, and --rect training): sorted by aspect ratio,
   each batch the smallest stride-multiple rectangle around its pictures
   (validation: + half a stride), as the official rect loader. */
typedef struct yolo_loader {
    const yolo_dataset *ds;
    const yolo_hyp *hyp;
    int B, S;                /* batch size, training picture size */
    int train, mosaic;       /* augmented (mosaic on or off), or validation */
    int rect;                /* rectangular batches (validation, --rect training): bw, bh */
    int multi_scale;         /* --multi-scale: each training batch resized (yolo_multi_scale) */
    int quad;                /* --quad: every four pictures collated into one of twice the size (yolo_quad) */
    int pixels_only;         /* YOLO_LOADER_UINT8: batches left as pixels, made into the input by the model's backend */
    const yolo_backend *pinned_by;  /* the backend its slots' pixels are pinned for (yolo_loader_pin), or NULL */
    const double *image_weights;  /* --image-weights: [ds->n] (yolo_image_weights), or NULL; set before each epoch */
    int nbatch, nworkers, depth;  /* batches an epoch, threads, slots: one a thread builds into, the one the
                                     consumer holds, and one ready ahead */
    uint64_t seed;           /* of this epoch: the order and every picture's draws */
    int *order;              /* [ds->n] the epoch's order, the same in every process */
    int rank, world;         /* yolo_loader_shard: this process takes places rank, rank + world, ... of it (0, 1: all) */
    int n;                   /* pictures an epoch: ds->n, or this process's share ceil(ds->n / world) */
    int *bw, *bh;            /* [nbatch] rectangular batch shapes */
    yolo_batch *slots;       /* [depth], their buffers made once for the largest batch */
    size_t cap;              /* values a slot's pixels and images hold (yolo_loader_share may grow them) */
    int shares;              /* its slots' pixels and images belong to another loader (yolo_loader_share) */
    int *state;              /* [depth] 0 free, 1 being built, 2 ready */
    int *taken, *made;       /* [depth] samples of the slot's batch taken by a thread, and made */
    struct yolo_boxes *boxes;  /* [depth * B] each sample's boxes until its batch is collated */
    long fail_at;            /* the epoch position of the bad picture named in err */
    int next_make, next_take, released;  /* batches started by the threads, handed out, given back */
    int failed, stop;
    char err[YOLO_ERR];
    double wait;             /* seconds the consumer waited for data */
    double busy;             /* seconds the threads spent building batches, summed over them */
    long built;              /* samples built: with busy, the loader's own pace (yolo_loader_rate) */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} yolo_loader;
#endif /* YOLO_NO_DATA */

YOLO_C_BEGIN
extern const char *yolo_coco_names[80];
/* data: hyperparameters, dataset yaml, images and labels, the loader */
void yolo_hyp_default(yolo_hyp *h);
int  yolo_hyp_read(yolo_hyp *h, const char *path, char *err);
void yolo_hyp_format(const yolo_hyp *h, char *out, size_t cap);
/* and back, each value checked as from a file; where names the text's source for err */
int  yolo_hyp_parse(yolo_hyp *h, const char *s, const char *where, char *err);
#ifndef YOLO_NO_DATA
int  yolo_data_read(yolo_data_cfg *d, const char *path, char *err);
void yolo_data_free(yolo_data_cfg *d);
int  yolo_dataset_open(yolo_dataset *ds, const char *root, const char *spec, int nc, int min_items, char *err);
/* the pictures of ds that have a label file (images/ -> labels/, .txt; empty
   or not); folder gets the first picture's labels folder */
int  yolo_dataset_label_files(const yolo_dataset *ds, char *folder, size_t cap);
int  yolo_dataset_cache(yolo_dataset *ds, yolo_cache_kind kind, int S, int augment, char *err);
void yolo_dataset_free(yolo_dataset *ds);
/* --single-cls: every label becomes class 0 */
void yolo_dataset_single_class(yolo_dataset *ds);
int  yolo_image_load(yolo_image *im, const char *path, char *err);
void yolo_letterbox(yolo_image *im, int out_w, int out_h, int scaleup, double *ratio, double *dw, double *dh);
void yolo_image_to_input(const yolo_image *im, yolo_real *dst);
void yolo_draw_detection(yolo_image *im, const yolo_det *d, int lw, const char *label);
/* --image-weights: each training picture's weight iw [ds->n] from the
   per-class mAP50-95 of the last validation, maps [nc] */
void yolo_image_weights(const yolo_dataset *ds, int nc, const double *maps, double *iw);
void yolo_loader_init(yolo_loader *ld, const yolo_dataset *ds, const yolo_hyp *hyp, int B, int S, int mode, int workers);
/* --workers as the official takes it: at most the CPUs (os.cpu_count()), with a line from prog when the
   value given is more; YOLO_ABSENT (not given): the default, at most the CPUs, silently */
int  yolo_loader_workers(int workers, int def, const char *prog);
void yolo_loader_max_shape(const yolo_loader *ld, int *H, int *W);
/* ld's batches in owner's memory (two loaders never running at once), before owner is pinned */
void yolo_loader_share(yolo_loader *ld, yolo_loader *owner);
/* data parallel: this process's share of every epoch, as torch's
   DistributedSampler (0; -1 for rectangles with world > 1: not sharded) */
int  yolo_loader_shard(yolo_loader *ld, int rank, int world);
/* the slots' pixels pinned for be, which then reads them in place */
void yolo_loader_pin(yolo_loader *ld, const yolo_backend *be);
/* YOLO_LOADER_UINT8 where the backend makes the input from the pixels itself (the GPU, reading pinned
   memory in place), 0 on the CPU, whose loader threads make the floats */
int  yolo_loader_pixels(const yolo_backend *be);
double yolo_loader_rate(const yolo_loader *ld);
void yolo_loader_start(yolo_loader *ld, int epoch, uint64_t seed);
yolo_batch *yolo_loader_next(yolo_loader *ld);
/* a batch handed over as pixels (YOLO_LOADER_UINT8): its images made on
   demand (plots), or the pixels given to the model as they are */
const yolo_real *yolo_batch_images(yolo_batch *bt);
/* pictures b0 .. b0 + n of a batch as the model's input [n, 3, H, W] */
void yolo_set_input_batch(yolo_model *m, const yolo_batch *bt, int b0, int n);
const char *yolo_loader_error(const yolo_loader *ld);
void yolo_loader_stop(yolo_loader *ld);
void yolo_loader_free(yolo_loader *ld);
#endif /* YOLO_NO_DATA */
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* What the official dataloaders do, in the same order: find the images
   and their label files, check every label row once, then per training
   sample a mosaic of four pictures, a random perspective, sometimes a
   mixup with a second mosaic, HSV jitter and flips. Validation letterboxes
   each picture into a stride-multiple rectangle shared by its batch.
   Loader threads build the next batches while the model computes. */


const char *yolo_coco_names[80] = {
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
    "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
    "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
    "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard",
    "tennis racket", "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
    "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
    "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard",
    "cell phone", "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase",
    "scissors", "teddy bear", "hair drier", "toothbrush"
};


/* --- the hyperparameter yaml --- */

/* each key with its default and the range that means something: a NaN, an
   infinity or a value outside is refused where the file is read */
static const struct { const char *key; size_t off; double def, lo, hi; } yolo_hyp_keys[] = {
#define YOLO_HYP(k, d, lo, hi) { #k, offsetof(yolo_hyp, k), d, lo, hi }
    YOLO_HYP(lr0, 0.01, 0, 10), YOLO_HYP(lrf, 0.01, 0, 1), YOLO_HYP(momentum, 0.937, 0, 0.999),
    YOLO_HYP(weight_decay, 0.0005, 0, 1), YOLO_HYP(warmup_epochs, 3.0, 0, 1000),
    YOLO_HYP(warmup_momentum, 0.8, 0, 0.999), YOLO_HYP(warmup_bias_lr, 0.1, 0, 10),
    /* the loss gains: the official loss fixes them (and never reads these
       keys), so a file may leave them out but not set them otherwise */
    YOLO_HYP(box, YOLO_GAIN_BOX, YOLO_GAIN_BOX, YOLO_GAIN_BOX), YOLO_HYP(cls, YOLO_GAIN_CLS, YOLO_GAIN_CLS, YOLO_GAIN_CLS),
    YOLO_HYP(dfl, YOLO_GAIN_DFL, YOLO_GAIN_DFL, YOLO_GAIN_DFL),
    YOLO_HYP(hsv_h, 0.015, 0, 1), YOLO_HYP(hsv_s, 0.7, 0, 1), YOLO_HYP(hsv_v, 0.4, 0, 1),
    YOLO_HYP(degrees, 0.0, 0, 180), YOLO_HYP(translate, 0.1, 0, 1), YOLO_HYP(scale, 0.9, 0, 0.99),
    YOLO_HYP(shear, 0.0, 0, 45), YOLO_HYP(perspective, 0.0, 0, 0.01), YOLO_HYP(flipud, 0.0, 0, 1),
    YOLO_HYP(fliplr, 0.5, 0, 1), YOLO_HYP(mosaic, 1.0, 0, 1), YOLO_HYP(mixup, 0.15, 0, 1),
#undef YOLO_HYP
};
#define YOLO_NHYP ((int)(sizeof yolo_hyp_keys / sizeof yolo_hyp_keys[0]))

void yolo_hyp_default(yolo_hyp *h) {
    for (int i = 0; i < YOLO_NHYP; i++) *(double *)((char *)h + yolo_hyp_keys[i].off) = yolo_hyp_keys[i].def;
}

static char *yolo_trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}
/* a yaml line's text without its comment (a '#' after a space, outside quotes), trimmed */
static char *yolo_yaml_uncomment(char *v) {
    char q = 0;
    for (char *p = v; *p; p++) {
        if (q) { if (q == '"' && *p == '\\' && p[1]) p++; else if (*p == q) q = 0; }
        else if (*p == '\'' || *p == '"') q = *p;
        else if (*p == '#' && (p == v || isspace((unsigned char)p[-1]))) { *p = 0; break; }
    }
    return yolo_trim(v);
}
/* A quoted yaml scalar at p (its opening quote) unquoted in place: '' in
   single quotes is one ', \" and \\ in double quotes one character. *end
   gets what follows the closing quote; the text ends at the returned
   pointer's NUL. */
static char *yolo_yaml_unquote(char *p, char **end) {
    char q = *p++, *item = p - 1, *o = item;
    for (; *p; p++) {
        if (*p == q && !(q == '\'' && p[1] == '\'')) break;
        if (q == '\'' && *p == '\'') p++;                                  /* '' */
        else if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;   /* \" \\ */
        *o++ = *p;
    }
    *end = *p ? p + 1 : p;
    *o = 0;
    return item;
}

/* a yaml scalar: comment cut, quotes dropped (yolo_yaml_unquote) */
static char *yolo_yaml_value(char *v) {
    v = yolo_yaml_uncomment(v);
    size_t n = strlen(v);
    char *end;
    if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) v = yolo_yaml_unquote(v, &end);
    return v;
}

/* Every key of the official file must be there: a missing one is an error,
   not a silent default. Keys we do not use (obj, anchor_t, ...) are read
   past. */
static int yolo_hyp_fixed(int i) { return yolo_hyp_keys[i].lo == yolo_hyp_keys[i].hi; }   /* box, cls, dfl */

/* key i's value from text, read from where (the file and line, or a checkpoint) */
static int yolo_hyp_set(yolo_hyp *h, int i, const char *text, const char *where, char *err) {
    const char *key = yolo_hyp_keys[i].key;
    double v, def = yolo_hyp_keys[i].def;
    if (yolo_read_number(text, 0, yolo_hyp_fixed(i) ? -HUGE_VAL : yolo_hyp_keys[i].lo, yolo_hyp_fixed(i) ? HUGE_VAL : yolo_hyp_keys[i].hi,
                         where, key, &v, err)) return -1;
    if (yolo_hyp_fixed(i) && v != def)
        return yolo_errorf(err, "%s: %s %g: the loss gain is fixed at %g, as in the official loss (which ignores this key)", where, key, v, def);
    *(double *)((char *)h + yolo_hyp_keys[i].off) = v;
    return 0;
}
/* the keys not seen: a fixed gain takes its value, any other is missing */
static int yolo_hyp_complete(yolo_hyp *h, const int *seen, const char *where, char *err) {
    for (int i = 0; i < YOLO_NHYP; i++)
        if (!seen[i] && yolo_hyp_fixed(i)) *(double *)((char *)h + yolo_hyp_keys[i].off) = yolo_hyp_keys[i].def;
        else if (!seen[i]) return yolo_errorf(err, "%s: missing key '%s'", where, yolo_hyp_keys[i].key);
    return 0;
}

int yolo_hyp_read(yolo_hyp *h, const char *path, char *err) {
    FILE *f = yolo_open_file(path, "hyperparameter file", 1 << 20, NULL, err);
    if (!f) return -1;
    int seen[64] = { 0 }, lineno = 0, rc = 0;
    char line[1024];
    while (!rc && (rc = yolo_read_line(f, line, sizeof line, path, ++lineno, err)) == 1) {
        rc = 0;
        char *s = yolo_trim(line), *colon = strchr(s, ':');
        if (!*s || *s == '#') continue;
        if (!colon) { rc = yolo_errorf(err, "%s:%d: expected 'key: value'", path, lineno); break; }
        *colon = 0;
        char *key = yolo_trim(s), *val = yolo_yaml_value(colon + 1), where[1100];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        for (int i = 0; i < YOLO_NHYP && !rc; i++)
            if (!strcmp(key, yolo_hyp_keys[i].key)) { rc = yolo_hyp_set(h, i, val, where, err); seen[i] = 1; }
    }
    fclose(f);
    return rc ? -1 : yolo_hyp_complete(h, seen, path, err);
}

/* the hyperparameters as "key value ..." (a checkpoint's metadata), and back */
void yolo_hyp_format(const yolo_hyp *h, char *out, size_t cap) {
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < YOLO_NHYP && o < cap; i++)
        o += snprintf(out + o, cap - o, "%s%s %.17g", i ? " " : "", yolo_hyp_keys[i].key, *(const double *)((const char *)h + yolo_hyp_keys[i].off));
}
int yolo_hyp_parse(yolo_hyp *h, const char *s, const char *where, char *err) {
    int seen[64] = { 0 };
    for (;;) {   /* "key value" pairs, split at spaces */
        char word[2][64];
        for (int k = 0; k < 2; k++) {
            s += strspn(s, " \t\n");
            size_t n = strcspn(s, " \t\n");
            if (!n && !k) return yolo_hyp_complete(h, seen, where, err);
            if (!n) return yolo_errorf(err, "%s: '%s' has no value", where, word[0]);
            if (n >= sizeof word[k]) return yolo_errorf(err, "%s: '%.40s...' is no key or value of the hyperparameters", where, s);
            snprintf(word[k], sizeof word[k], "%.*s", (int)n, s);
            s += n;
        }
        for (int i = 0; i < YOLO_NHYP; i++)
            if (!strcmp(word[0], yolo_hyp_keys[i].key)) {
                if (yolo_hyp_set(h, i, word[1], where, err)) return -1;
                seen[i] = 1;
            }
    }
}

#ifndef YOLO_NO_DATA   /* the rest of this section: datasets, pictures, augmentation, the loader */
/* --- the dataset yaml --- */

typedef struct { int n, cap; char **s; } yolo_strings;
static void yolo_strings_add(yolo_strings *l, const char *s) {
    l->s = (char **)yolo_grow(l->s, sizeof(char *), l->n + 1, &l->cap);
    l->s[l->n++] = strdup(s);
}

static void yolo_join(char *out, size_t cap, const char *dir, const char *p) {
    if (p[0] == '/' || !dir[0]) snprintf(out, cap, "%s", p);
    else snprintf(out, cap, "%s/%s", dir, p);
}

/* one more source of a ';' spec[cap], from where (file:line); -1 and err when it holds ';' or the spec is full */
static int yolo_spec_add(char *spec, size_t cap, const char *item, const char *where, char *err) {
    size_t n = strlen(spec);
    if (strchr(item, ';')) return yolo_errorf(err, "%s: source '%.100s' holds ';', which separates sources here", where, item);
    if (n + strlen(item) + 2 > cap) return yolo_errorf(err, "%s: the sources are longer than %zu characters", where, cap - 1);
    snprintf(spec + n, cap - n, "%s%s", n ? ";" : "", item);
    return 0;
}

/* The next item of a flow list [a, 'b, c', "d"] at *s (past its '['),
   unquoted in place (yolo_yaml_unquote), so a comma or ']' inside quotes
   stays; NULL at the closing ']' or the end. */
static char *yolo_yaml_next_item(char **s) {
    char *p = *s;
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == ']') return NULL;
    char *item = p, *o = p;
    if (*p == '\'' || *p == '"') {
        char *end;
        item = yolo_yaml_unquote(p, &end);
        o = item + strlen(item);
        for (p = end; *p && *p != ',' && *p != ']';) p++;   /* (what follows the quotes, to the comma, is dropped) */
    } else {
        while (*p && *p != ',' && *p != ']') *o++ = *p++;
        while (o > item && isspace((unsigned char)o[-1])) o--;
    }
    *s = *p == ',' ? p + 1 : o;   /* past the comma, or at the item's end: NULL next */
    *o = 0;
    return item;
}
/* whether a flow list's text (a line of it) closes it: a ']' outside quotes; *q carries the open quote across lines */
static int yolo_yaml_flow_closed(const char *s, char *q) {
    for (; *s; s++) {
        if (*q) { if (*q == '"' && *s == '\\' && s[1]) s++; else if (*s == *q) *q = 0; }
        else if (*s == '\'' || *s == '"') *q = *s;
        else if (*s == ']') return 1;
    }
    return 0;
}

/* a key's sources, one or a flow list of them, into its ';' spec */
static int yolo_yaml_sources(char *v, char *spec, size_t cap, const char *where, char *err) {
    if (*v != '[') return yolo_spec_add(spec, cap, v, where, err);
    char *p = v + 1;
    for (char *item; (item = yolo_yaml_next_item(&p));)
        if (yolo_spec_add(spec, cap, item, where, err)) return -1;
    return 0;
}

void yolo_data_free(yolo_data_cfg *d) {
    for (int i = 0; d->names && i < d->nc; i++) free(d->names[i]);
    free(d->names);
    memset(d, 0, sizeof *d);
}

/* s is UTF-8 text (what a yaml file must hold, and a weights file's JSON header) */
static int yolo_utf8(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 && *p >= 0xC2 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 && *p <= 0xF4 ? 3 : -1;
        if (k < 0) return 0;
        for (p++; k > 0; k--, p++) if ((*p & 0xC0) != 0x80) return 0;
    }
    return 1;
}

static int yolo_names_add(yolo_strings *names, const char *name, const char *path, int lineno, char *err) {
    if (names->n == YOLO_MAX_NC) return yolo_errorf(err, "%s:%d: more than %d names", path, lineno, YOLO_MAX_NC);
    if (!*name || strlen(name) > 255) return yolo_errorf(err, "%s:%d: a class name must have 1..255 characters", path, lineno);
    if (!yolo_utf8(name)) return yolo_errorf(err, "%s:%d: class name '%.60s' is not UTF-8 text", path, lineno, name);
    yolo_strings_add(names, name);
    return 0;
}

/* the first source of a ';' spec exists under root */
static int yolo_spec_exists(const char *root, const char *spec) {
    char first[1024], p[2048];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(spec, ";"), spec);
    yolo_join(p, sizeof p, root, first);
    struct stat st;
    return stat(p, &st) == 0;
}

/* The official data files as they are: `key: value` lines; block lists of
   names (`  0: person` or `- person`) and sources; flow lists [a, b] over
   one line or several; blocks we do not use (`download: |` scripts, other
   lists) read past. The dataset root is the official's: `path` taken from
   the directory the program runs in (the official takes it from its own
   folder, where its programs run); when the val source is not there but
   is beside the yaml, the yaml's folder instead, so a dataset folder with
   its yaml can move as a whole. */
int yolo_data_read(yolo_data_cfg *d, const char *path, char *err) {
    memset(d, 0, sizeof *d);
    char *text = yolo_read_text(path, "dataset file", 1 << 22, err);
    if (!text) return -1;
    char dir[1024], block[32] = "", path_v[1024] = "", *flow = NULL, where[1100];
    if (strlen(path) >= sizeof dir) { free(text); return yolo_errorf(err, "%.100s...: a path longer than %zu characters", path, sizeof dir - 1); }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    int lineno = 0, rc = 0, nc = 0, have_nc = 0;
    yolo_strings names = { 0, 0, NULL };
    for (char *line = text, *next; line && !rc; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        int indented = isspace((unsigned char)line[0]);
        char *s = yolo_trim(line);
        if (!*s || *s == '#') continue;
        if (indented || *s == '-') {   /* an item of the block above */
            if (!block[0]) { rc = yolo_errorf(err, "%s:%d: an indented line outside any key", path, lineno); break; }
            if (strcmp(block, "names") && strcmp(block, "train") && strcmp(block, "val") && strcmp(block, "test")) continue;
            char *item = NULL;
            if (*s == '-') item = yolo_yaml_value(s + 1);
            else {
                char *c = strchr(s, ':');
                if (!c) { rc = yolo_errorf(err, "%s:%d: cannot read '%.60s'", path, lineno, s); break; }
                *c = 0;
                char *k = yolo_trim(s), *e;
                long idx = strtol(k, &e, 10);
                if (!strcmp(block, "names") && (*e || e == k || idx != names.n)) { rc = yolo_errorf(err, "%s:%d: names: key '%.20s' where %d was expected", path, lineno, k, names.n); break; }
                item = yolo_yaml_value(c + 1);
            }
            snprintf(where, sizeof where, "%s:%d", path, lineno);
            if (!strcmp(block, "names")) rc = yolo_names_add(&names, item, path, lineno, err);
            else rc = yolo_spec_add(!strcmp(block, "train") ? d->train : !strcmp(block, "val") ? d->val : d->test, sizeof d->train, item, where, err);
            continue;
        }
        char *c = strchr(s, ':');
        if (!c) { rc = yolo_errorf(err, "%s:%d: expected 'key: value'", path, lineno); break; }
        *c = 0;
        char *key = yolo_trim(s), *v = yolo_yaml_value(c + 1), quote = 0;
        snprintf(block, sizeof block, "%s", key);
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (*v == '[') {   /* a flow list, maybe over several lines: gathered into one */
            int open_line = lineno;
            size_t n = strlen(v);
            int cap = 0;
            flow = (char *)yolo_grow(NULL, 1, (long)n + 2, &cap);
            memcpy(flow, v, n + 1);
            for (int closed = yolo_yaml_flow_closed(v, &quote); !closed;) {   /* only the new line is searched: linear in the file */
                if (!next) { rc = yolo_errorf(err, "%s:%d: the list of '%s' is not closed by ']'", path, open_line, key); break; }
                line = next; next = strchr(line, '\n');
                if (next) *next++ = 0;
                lineno++;
                char *more = quote ? line + strspn(line, " \t") : yolo_yaml_uncomment(line);   /* (inside quotes a line is text) */
                size_t m = strlen(more);
                closed = yolo_yaml_flow_closed(more, &quote);
                flow = (char *)yolo_grow(flow, 1, (long)(n + m + 2), &cap);
                flow[n++] = ' ';
                memcpy(flow + n, more, m + 1); n += m;
            }
            v = flow;
        }
        if (rc) break;
        if (!strcmp(key, "path") && strlen(v) >= sizeof path_v) rc = yolo_errorf(err, "%s: path longer than %zu characters", where, sizeof path_v - 1);
        else if (!strcmp(key, "path")) snprintf(path_v, sizeof path_v, "%s", v);
        else if (!strcmp(key, "train") && *v) rc = yolo_yaml_sources(v, d->train, sizeof d->train, where, err);
        else if (!strcmp(key, "val") && *v) rc = yolo_yaml_sources(v, d->val, sizeof d->val, where, err);
        else if (!strcmp(key, "test") && *v) rc = yolo_yaml_sources(v, d->test, sizeof d->test, where, err);
        else if (!strcmp(key, "nc")) {
            if ((rc = yolo_read_int(v, 1, YOLO_MAX_NC, where, "nc", &nc, err))) break;
            have_nc = 1;
        } else if (!strcmp(key, "names") && *v == '[') {
            char *p = v + 1;
            for (char *item; !rc && (item = yolo_yaml_next_item(&p));) rc = yolo_names_add(&names, item, path, lineno, err);
        } else if (!strcmp(key, "names") && *v) rc = yolo_errorf(err, "%s:%d: names must be a list", path, lineno);
        free(flow); flow = NULL;
    }
    free(flow);
    free(text);
    if (!rc && !have_nc) nc = names.n;
    if (!rc && !d->train[0]) rc = yolo_errorf(err, "%s: no 'train' key", path);
    if (!rc && !d->val[0]) rc = yolo_errorf(err, "%s: no 'val' key", path);
    if (!rc && nc <= 0) rc = yolo_errorf(err, "%s: no 'nc' and no 'names'", path);
    if (!rc && names.n && names.n != nc) rc = yolo_errorf(err, "%s: nc is %d but %d names are given", path, nc, names.n);
    if (rc) { for (int i = 0; i < names.n; i++) free(names.s[i]); free(names.s); return rc; }
    d->nc = nc;
    d->names = (char **)yolo_xcalloc(nc, sizeof(char *));
    for (int i = 0; i < nc; i++) {
        if (i < names.n) d->names[i] = names.s[i];
        else { char b[16]; snprintf(b, sizeof b, "class%d", i); d->names[i] = strdup(b); }
    }
    free(names.s);
    if (path_v[0] == '/') snprintf(d->root, sizeof d->root, "%s", path_v);
    else {
        snprintf(d->root, sizeof d->root, "%s", path_v[0] ? path_v : ".");
        char beside[2100];
        yolo_join(beside, sizeof beside, dir, path_v[0] ? path_v : ".");
        if (!yolo_spec_exists(d->root, d->val) && yolo_spec_exists(beside, d->val)) {
            if (strlen(beside) >= sizeof d->root) { yolo_data_free(d); return yolo_errorf(err, "%s: the dataset's folder is a path longer than %zu characters", path, sizeof d->root - 1); }
            snprintf(d->root, sizeof d->root, "%s", beside);
        }
    }
    return 0;
}

/* --- JPEG, decoded as the official decodes it --- */

/* the largest picture read: 8192 x 8192 */
#define YOLO_MAX_PIXELS (1L << 26)
static uint32_t yolo_le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The official reads every picture with cv2.imread, which decodes a JPEG
   with libjpeg-turbo at the library's defaults (the accurate integer IDCT,
   JDCT_ISLOW; "fancy" smooth upsampling of subsampled chroma; its own
   YCbCr -> RGB tables), a 4-channel (CMYK or YCCK) picture asked for as
   CMYK and turned to RGB by OpenCV's own formula, and then turns the
   picture upright by its EXIF orientation. Set up the same way, the same
   library gives the same pixels, bit for bit (tests/test_decode.sh checks
   against cv2.imread). */

/* libjpeg reports a fatal error by calling error_exit, which must not
   return: it jumps back into yolo_jpeg_read. A warning (corrupt data that
   still decodes, a truncated file whose end is filled in) is kept: a
   picture that decodes all the same says it in one line, as cv2.imread
   does, with the picture's path; one that does not says its error. */
typedef struct { struct jpeg_error_mgr mgr; jmp_buf back; char first[JMSG_LENGTH_MAX]; int nwarn; } yolo_jpeg_errors;
static void yolo_jpeg_fatal(j_common_ptr c) { longjmp(((yolo_jpeg_errors *)c->err)->back, 1); }
static void yolo_jpeg_warning(j_common_ptr c) {
    yolo_jpeg_errors *e = (yolo_jpeg_errors *)c->err;
    if (!e->nwarn++) c->err->format_message(c, e->first);
}
static void yolo_jpeg_warned(const yolo_jpeg_errors *e, const char *path) {
    if (e->nwarn == 1) fprintf(stderr, "warning: %s: %s\n", path, e->first);
    else if (e->nwarn > 1) fprintf(stderr, "warning: %s: %s (and %d more warnings)\n", path, e->first, e->nwarn - 1);
}

/* The EXIF orientation 1..8 (1 when absent or unreadable), found where
   OpenCV looks: the first APP1 segment, past its 6 bytes "Exif\0\0", is
   a TIFF header (byte order II or MM, 42, the offset of the first
   directory), and tag 0x0112 of that directory holds it. */
static int yolo_exif_orientation(const struct jpeg_decompress_struct *c) {
    jpeg_saved_marker_ptr m = c->marker_list;
    while (m && m->marker != JPEG_APP0 + 1) m = m->next;
    if (!m || m->data_length < 6) return 1;
    const unsigned char *t = m->data + 6;
    size_t n = m->data_length - 6;
    if (n < 8 || t[0] != t[1] || (t[0] != 'I' && t[0] != 'M')) return 1;
    int le = t[0] == 'I';
#define YOLO_U16(o) (le ? t[o] | t[(o) + 1] << 8 : t[o] << 8 | t[(o) + 1])
    if (YOLO_U16(2) != 42) return 1;
    size_t dir = le ? yolo_le32(t + 4) : (size_t)t[4] << 24 | (size_t)t[5] << 16 | (size_t)t[6] << 8 | t[7];
    if (dir + 2 > n) return 1;
    for (size_t k = 0, entries = YOLO_U16(dir); k < entries && dir + 2 + 12 * k + 10 <= n; k++) {
        size_t e = dir + 2 + 12 * k;   /* tag, type, count, value: 12 bytes */
        if (YOLO_U16(e) == 0x0112) { int o = YOLO_U16(e + 8); return o >= 1 && o <= 8 ? o : 1; }
    }
#undef YOLO_U16
    return 1;
}

/* The picture turned upright by EXIF orientation o, as OpenCV's
   ApplyExifOrientation: 5..8 transpose it (rows become columns), then
   2, 3, 6, 7 mirror it left-right and 3, 4, 7, 8 flip it upside down. */
static void yolo_orient(yolo_image *im, int o) {
    if (o == 1) return;
    int transpose = o >= 5, lr = o == 2 || o == 3 || o == 6 || o == 7, ud = o == 3 || o == 4 || o == 7 || o == 8;
    int w = transpose ? im->h : im->w, h = transpose ? im->w : im->h;
    unsigned char *out = (unsigned char *)yolo_xmalloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int u = lr ? w - 1 - x : x, v = ud ? h - 1 - y : y;   /* in the transposed picture */
            const unsigned char *p = im->rgb + ((size_t)(transpose ? u : v) * im->w + (transpose ? v : u)) * 3;
            unsigned char *q = out + ((size_t)y * w + x) * 3;
            q[0] = p[0]; q[1] = p[1]; q[2] = p[2];
        }
    free(im->rgb);
    im->rgb = out; im->w = w; im->h = h;
}

/* A JPEG from f: its upright size (*w, *h) from the header alone when im
   is NULL, else also its pixels, upright, into im. rows > 0: only its
   first rows are wanted (the rest of im is left unwritten), and when the
   picture needs no turning the decoder stops there. */
static int yolo_jpeg_read(FILE *f, const char *path, int *w, int *h, yolo_image *im, int rows, char *err) {
    struct jpeg_decompress_struct c;
    yolo_jpeg_errors e;
    unsigned char *volatile rgb = NULL, *volatile cmyk = NULL;   /* still freed after a jump */
    c.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = yolo_jpeg_fatal;
    e.mgr.output_message = yolo_jpeg_warning;
    e.nwarn = 0;
    if (setjmp(e.back)) {
        char msg[JMSG_LENGTH_MAX];
        c.err->format_message((j_common_ptr)&c, msg);
        jpeg_destroy_decompress(&c);
        free(rgb); free(cmyk);
        return yolo_errorf(err, "%s: cannot decode JPEG (%s)", path, msg);
    }
    jpeg_create_decompress(&c);
    jpeg_stdio_src(&c, f);
    jpeg_save_markers(&c, JPEG_APP0 + 1, 0xffff);   /* keep APP1: the EXIF */
    jpeg_read_header(&c, TRUE);
    int o = yolo_exif_orientation(&c), W = (int)c.image_width, H = (int)c.image_height;
    *w = o >= 5 ? H : W; *h = o >= 5 ? W : H;
    if (!im) { jpeg_destroy_decompress(&c); yolo_jpeg_warned(&e, path); return 0; }
    int four = c.num_components == 4;   /* CMYK or YCCK: libjpeg gives CMYK */
    c.out_color_space = four ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&c);
    rgb = (unsigned char *)yolo_xmalloc((size_t)W * H * 3);
    if (four) cmyk = (unsigned char *)yolo_xmalloc((size_t)W * 4);
    unsigned stop = o == 1 && rows > 0 && rows < H ? (unsigned)rows : c.output_height;
    while (c.output_scanline < stop) {
        unsigned char *row = rgb + (size_t)c.output_scanline * W * 3;
        JSAMPROW into = four ? cmyk : row;
        jpeg_read_scanlines(&c, &into, 1);
        for (int x = 0; four && x < W; x++) {   /* OpenCV's CMYK -> RGB: each of c, m, y becomes k - (255 - v) k / 256 */
            const unsigned char *p = cmyk + 4 * x;
            int k = p[3];
            for (int ch = 0; ch < 3; ch++) row[3 * x + ch] = (unsigned char)(k - ((255 - p[ch]) * k >> 8));
        }
    }
    if (c.output_scanline == c.output_height) jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    yolo_jpeg_warned(&e, path);
    free(cmyk);
    im->rgb = rgb; im->w = W; im->h = H;
    yolo_orient(im, o);
    return 0;
}

/* --- finding images and labels --- */

/* A picture's upright size from its header, checked before anything is
   decoded: a regular file, a known format, at most YOLO_MAX_PIXELS pixels,
   and an uncompressed BMP as long as its pixels. f is left at its start;
   *jpeg says which decoder reads it: libjpeg for a JPEG (told by its first
   bytes, as OpenCV tells it), stb_image for the rest. */
/* A PNG read to its end, as PIL's verify reads it (the official's
   verify_image_label): every chunk whole, its CRC-32 right, up to IEND.
   0, or -1 and err: a corrupt picture. f is at the start of the file. */
static uint32_t yolo_crc32(uint32_t crc, const unsigned char *p, size_t n) {
    static const uint32_t nibble[16] = { 0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
                                         0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                         0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c };
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = nibble[crc & 15] ^ (crc >> 4);
        crc = nibble[crc & 15] ^ (crc >> 4);
    }
    return crc;
}
static int yolo_png_verify(FILE *f, const char *path, char *err) {
    unsigned char b[65536];
    if (fseek(f, 8, SEEK_SET)) return yolo_errorf(err, "%s: cannot read image", path);
    for (;;) {
        unsigned char head[8], tail[4];
        if (fread(head, 1, 8, f) != 8) return yolo_errorf(err, "%s: corrupt PNG: it ends before its IEND chunk", path);
        uint32_t len = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
        uint32_t crc = yolo_crc32(0xffffffffu, head + 4, 4);
        for (uint32_t left = len; left > 0;) {
            size_t n = left < sizeof b ? left : sizeof b;
            if (fread(b, 1, n, f) != n) return yolo_errorf(err, "%s: corrupt PNG: chunk %.4s is cut short", path, (const char *)head + 4);
            crc = yolo_crc32(crc, b, n);
            left -= (uint32_t)n;
        }
        if (fread(tail, 1, 4, f) != 4) return yolo_errorf(err, "%s: corrupt PNG: chunk %.4s is cut short", path, (const char *)head + 4);
        uint32_t want = (uint32_t)tail[0] << 24 | (uint32_t)tail[1] << 16 | (uint32_t)tail[2] << 8 | tail[3];
        if ((crc ^ 0xffffffffu) != want) return yolo_errorf(err, "%s: corrupt PNG: chunk %.4s fails its CRC check", path, (const char *)head + 4);
        if (!memcmp(head + 4, "IEND", 4)) return 0;
    }
}

static int yolo_image_header(FILE *f, long size, const char *path, int *w, int *h, int *jpeg, char *err) {
    unsigned char hd[34];
    size_t got = fread(hd, 1, sizeof hd, f);
    int comp, ok;
    *jpeg = got >= 3 && hd[0] == 0xff && hd[1] == 0xd8 && hd[2] == 0xff;
    int png = got >= 8 && !memcmp(hd, "\x89PNG\r\n\x1a\n", 8), bmp = got >= 2 && hd[0] == 'B' && hd[1] == 'M';
    /* by its first bytes, as the official asks PIL for the format: stb_image would read others (PNM, TGA, GIF ...) */
    if (!*jpeg && !png && !bmp) return yolo_errorf(err, "%s: not a JPEG, PNG or BMP picture (by its first bytes)", path);
    if (fseek(f, 0, SEEK_SET)) return yolo_errorf(err, "%s: cannot read image", path);
    if (*jpeg) {
        if (yolo_jpeg_read(f, path, w, h, NULL, 0, err)) return -1;
        ok = 1;
    } else ok = stbi_info_from_file(f, w, h, &comp);
    if (fseek(f, 0, SEEK_SET)) return yolo_errorf(err, "%s: cannot read image", path);
    if (ok && bmp && *h < 0 && *h != INT_MIN) *h = -*h;   /* a negative height: rows stored top-down (stb_image turns them) */
    if (!ok && got >= 24 && !memcmp(hd, "\x89PNG\r\n\x1a\n", 8) && !memcmp(hd + 12, "IHDR", 4)) {
        /* stb refuses a huge PNG as "unknown image type": its header says the size */
        uint32_t pw = yolo_le32(hd + 16), ph = yolo_le32(hd + 20);
        pw = pw >> 24 | (pw >> 8 & 0xff00) | (pw << 8 & 0xff0000) | pw << 24;   /* big-endian */
        ph = ph >> 24 | (ph >> 8 & 0xff00) | (ph << 8 & 0xff0000) | ph << 24;
        *w = pw > INT_MAX ? INT_MAX : (int)pw; *h = ph > INT_MAX ? INT_MAX : (int)ph;
        ok = *w > 0 && *h > 0 && (long)*w * *h > YOLO_MAX_PIXELS;
    }
    if (!ok) return yolo_errorf(err, "%s: cannot read image (%s)", path, stbi_failure_reason());
    if (*w < 1 || *h < 1 || (long)*w * *h > YOLO_MAX_PIXELS) return yolo_errorf(err, "%s: image of %dx%d pixels, more than the %ld supported", path, *w, *h, YOLO_MAX_PIXELS);
    if (got >= 34 && hd[0] == 'B' && hd[1] == 'M' && yolo_le32(hd + 30) == 0) {   /* BI_RGB: every row in the file */
        long bpp = hd[28] | hd[29] << 8, row = ((bpp * *w + 31) / 32) * 4;
        if ((long)yolo_le32(hd + 10) + row * *h > size) return yolo_errorf(err, "%s: truncated BMP (%dx%d pixels in %ld bytes)", path, *w, *h, size);
    }
    if (png && yolo_png_verify(f, path, err)) return -1;
    return fseek(f, 0, SEEK_SET) ? yolo_errorf(err, "%s: cannot read image", path) : 0;
}
static int yolo_image_info(const char *path, int *w, int *h, char *err) {
    long size;
    int jpeg;
    FILE *f = yolo_open_file(path, "image", 0, &size, err);
    if (!f) return -1;
    int rc = yolo_image_header(f, size, path, w, h, &jpeg, err);
    fclose(f);
    return rc;
}


static int yolo_is_image(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png") ||
                   !strcasecmp(dot, ".bmp"));
}

static int yolo_strcmp_p(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A folder's pictures, recursively. Links are followed, but every folder
   is entered once (by device and inode), so a link back up the tree is no
   loop and a second link to a folder no duplicate; what is neither a
   folder nor a regular file (a FIFO, a dangling link) is skipped with a
   warning. */
typedef struct { int n, cap; dev_t *dev; ino_t *ino; } yolo_seen_dirs;
static int yolo_seen_dir(yolo_seen_dirs *v, const struct stat *st) {
    for (int i = 0; i < v->n; i++) if (v->dev[i] == st->st_dev && v->ino[i] == st->st_ino) return 1;
    int cap = v->cap;   /* two arrays of one capacity */
    v->dev = (dev_t *)yolo_grow(v->dev, sizeof(dev_t), v->n + 1, &cap);
    v->ino = (ino_t *)yolo_grow(v->ino, sizeof(ino_t), v->n + 1, &v->cap);
    v->dev[v->n] = st->st_dev; v->ino[v->n++] = st->st_ino;
    return 0;
}
static void yolo_walk_dir(const char *dir, yolo_strings *out, yolo_seen_dirs *seen) {
    DIR *d = opendir(dir);
    if (!d) { fprintf(stderr, "warning: %s: cannot open the folder, skipped\n", dir); return; }
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st)) { if (yolo_is_image(p)) fprintf(stderr, "warning: %s: a dangling link, skipped\n", p); continue; }
        if (S_ISDIR(st.st_mode)) { if (!yolo_seen_dir(seen, &st)) yolo_walk_dir(p, out, seen); }
        else if (!yolo_is_image(p)) continue;
        else if (!S_ISREG(st.st_mode)) fprintf(stderr, "warning: %s: not a regular file, skipped\n", p);
        else yolo_strings_add(out, p);
    }
    closedir(d);
}
static void yolo_walk(const char *dir, yolo_strings *out) {
    yolo_seen_dirs seen = { 0, 0, NULL, NULL };
    struct stat st;
    if (!stat(dir, &st)) yolo_seen_dir(&seen, &st);
    yolo_walk_dir(dir, out, &seen);
    free(seen.dev); free(seen.ino);
}

/* One source: a folder (searched recursively), a list file of image paths
   (relative ones against the list's folder), or one image. */
static int yolo_add_source(const char *root, const char *src, yolo_strings *out, char *err) {
    char p[2048];
    yolo_join(p, sizeof p, root, src);
    struct stat st;
    if (stat(p, &st) && !strncmp(src, "../", 3)) {   /* the official's fallback: ../x tried as x */
        char q[2048];
        yolo_join(q, sizeof q, root, src + 3);
        if (!stat(q, &st)) snprintf(p, sizeof p, "%s", q);
    }
    if (stat(p, &st)) return yolo_errorf(err, "%s: no such file or folder", p);
    if (S_ISDIR(st.st_mode)) { yolo_walk(p, out); return 0; }
    if (yolo_is_image(p)) { yolo_strings_add(out, p); return 0; }
    FILE *f = yolo_open_file(p, "image list", 0, NULL, err);
    if (!f) return -1;
    char dir[2048], line[2048], q[4096];
    snprintf(dir, sizeof dir, "%s", p);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    int rc, lineno = 0;
    while ((rc = yolo_read_line(f, line, sizeof line, p, ++lineno, err)) == 1) {
        char *s = yolo_trim(line);
        if (!*s) continue;
        if (!strncmp(s, "./", 2)) s += 2;
        yolo_join(q, sizeof q, dir, s);
        yolo_strings_add(out, q);
    }
    fclose(f);
    return rc;
}

/* images/.../x.jpg -> labels/.../x.txt (the last /images/ of the path) */
static void yolo_label_path(const char *img, char *out, size_t cap) {
    const char *k = NULL;
    for (const char *p = strstr(img, "/images/"); p; p = strstr(p + 1, "/images/")) k = p;
    if (!k && !strncmp(img, "images/", 7)) k = img - 1;
    if (k) snprintf(out, cap, "%.*s/labels/%s", (int)(k - img), img, k + 8);
    else snprintf(out, cap, "%s", img);
    char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (dot && (!slash || dot > slash)) *dot = 0;
    snprintf(out + strlen(out), cap - strlen(out), ".txt");
}

int yolo_dataset_label_files(const yolo_dataset *ds, char *folder, size_t cap) {
    char lp[4096];
    struct stat st;
    int n = 0;
    for (int i = 0; i < ds->n; i++) {
        yolo_label_path(ds->files[i], lp, sizeof lp);
        n += !stat(lp, &st);
        if (i == 0) {
            char *slash = strrchr(lp, '/');
            snprintf(folder, cap, "%.*s", slash ? (int)(slash - lp) : 1, slash ? lp : ".");
        }
    }
    return n;
}

/* One label file: rows "class cx cy w h", normalised, or polygons "class
   x1 y1 x2 y2 ..." (segments): as the official, a file with any row of
   more than 6 numbers is read as polygons throughout (a row of 5 numbers
   then being a polygon of two points) and each polygon becomes its
   bounding box (segments2boxes). Returns 0, 1 when the image is to be
   skipped (the warning in err), -1 on a fatal error. */
#define YOLO_MAX_BOXES 10000   /* per image; the loss is planned for the densest one */
#define YOLO_MAX_ROW 65536     /* characters of a label row: a polygon's points */
static int yolo_read_labels(const char *path, int nc, float **lab, int *nlab, char *err) {
    *lab = NULL; *nlab = 0;
    struct stat st;
    if (stat(path, &st)) return 0;                 /* no label file: a background image */
    FILE *f = yolo_open_file(path, "label file", 0, NULL, err);
    if (!f) return -1;
    char *line = (char *)yolo_xmalloc(YOLO_MAX_ROW);
    double *num = NULL;                            /* every row's numbers, one after another */
    int *row = NULL, nrows = 0, ncap = 0, rcap = 0, total = 0, lineno = 0, got, segments = 0, rc = 0;
    while (!rc && (got = yolo_read_line(f, line, YOLO_MAX_ROW, path, ++lineno, err))) {
        if (got < 0 || nrows == YOLO_MAX_BOXES) {
            if (got > 0) yolo_errorf(err, "%s:%d: more than %d boxes", path, lineno, YOLO_MAX_BOXES);
            rc = 1; break;
        }
        char *s = yolo_trim(line), *end;
        if (!*s) continue;
        int k = 0;
        for (double v; *s; k++, s = end) {
            v = strtod(s, &end);
            if (end == s) { rc = (yolo_errorf(err, "%s:%d: expected numbers (class cx cy w h, or class x1 y1 x2 y2 ...), got text", path, lineno), 1); break; }
            num = (double *)yolo_grow(num, sizeof(double), total + 1, &ncap);
            num[total++] = v;
            while (isspace((unsigned char)*end)) end++;
        }
        row = (int *)yolo_grow(row, sizeof(int), 2 * nrows + 2, &rcap);
        row[2 * nrows] = k; row[2 * nrows + 1] = lineno; nrows++;
        segments |= k > 6;
    }
    fclose(f); free(line);
    int cap = 0;
    for (int r = 0, at = 0; r < nrows && !rc; at += row[2 * r], r++) {
        const double *v = num + at;
        int k = row[2 * r], ln = row[2 * r + 1];
        double b[5] = { v[0], 0, 0, 0, 0 };
        if (segments) {   /* segments2boxes: the polygon's extent, as cx cy w h */
            if (k < 3 || (k - 1) % 2) { rc = (yolo_errorf(err, "%s:%d: a polygon row needs a class and x y pairs, got %d numbers", path, ln, k), 1); break; }
            double x1 = INFINITY, y1 = INFINITY, x2 = -INFINITY, y2 = -INFINITY;
            for (int p = 1; p < k; p += 2) { x1 = fmin(x1, v[p]); x2 = fmax(x2, v[p]); y1 = fmin(y1, v[p + 1]); y2 = fmax(y2, v[p + 1]); }
            b[1] = (x1 + x2) / 2; b[2] = (y1 + y2) / 2; b[3] = x2 - x1; b[4] = y2 - y1;
        } else if (k != 5) { rc = (yolo_errorf(err, "%s:%d: expected 5 numbers (class cx cy w h), got %s", path, ln, k < 5 ? "fewer" : "more"), 1); break; }
        else memcpy(b + 1, v + 1, 4 * sizeof(double));
        if (b[0] != floor(b[0]) || b[0] < 0) { rc = (yolo_errorf(err, "%s:%d: class %g is not a non-negative integer", path, ln, b[0]), 1); break; }
        if (b[0] >= nc) { rc = yolo_errorf(err, "%s:%d: class %.0f is not below nc %d", path, ln, b[0], nc); break; }
        for (int i = 1; i < 5 && !rc; i++)
            if (!(b[i] >= 0 && b[i] <= 1)) rc = (yolo_errorf(err, "%s:%d: coordinate %g is not normalised (0..1)", path, ln, b[i]), 1);
        int dup = 0;   /* duplicate rows are dropped, as the official */
        for (int j = 0; j < *nlab && !dup && !rc; j++) {
            dup = 1;
            for (int i = 0; i < 5; i++) dup &= (*lab)[j * 5 + i] == (float)b[i];
        }
        if (dup || rc) continue;
        *lab = (float *)yolo_grow(*lab, 5 * sizeof(float), *nlab + 1, &cap);
        for (int i = 0; i < 5; i++) (*lab)[*nlab * 5 + i] = (float)b[i];
        (*nlab)++;
    }
    free(num); free(row);
    if (rc) { free(*lab); *lab = NULL; *nlab = 0; }
    return rc;
}

void yolo_dataset_single_class(yolo_dataset *ds) {
    for (int i = 0; i < ds->n; i++)
        for (int k = 0; k < ds->nlab[i]; k++) ds->lab[i][k * 5] = 0;
}

void yolo_dataset_free(yolo_dataset *ds) {
    for (int i = 0; i < ds->n; i++) {
        free(ds->files[i]); free(ds->lab[i]);
        if (ds->cache) free(ds->cache[i].rgb);
        if (ds->npy) free(ds->npy[i]);
    }
    free(ds->files); free(ds->lab); free(ds->nlab); free(ds->w0); free(ds->h0); free(ds->cache); free(ds->npy);
    memset(ds, 0, sizeof *ds);
}

/* The cache: one text file beside the labels folder, valid while the list
   of files, their sizes and times, and nc are those it was made from.
   Its first line names its format, "labels 4", the hash of those, the
   number of pictures scanned and the hash of the rest of the file; then
   every picture once, in the order of the scan: one kept ("w h boxes
   |file", upright by its EXIF orientation, and a line of its boxes), or
   one left out ("- |file", and the warning that left it out, said again
   whenever the cache is read, as the official's cache does). Polygon
   rows are kept as their boxes. A cache of an older format is read again. */
static uint64_t yolo_fnv1a(uint64_t h, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}
static uint64_t yolo_files_hash(const yolo_strings *imgs, int nc) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)nc;
    char lp[4096];
    for (int i = 0; i < imgs->n; i++) {
        struct stat st;
        yolo_label_path(imgs->s[i], lp, sizeof lp);
        uint64_t v[4] = { 0, 0, 0, 0 };
        if (!stat(imgs->s[i], &st)) { v[0] = (uint64_t)st.st_size; v[1] = (uint64_t)st.st_mtime; }
        if (!stat(lp, &st)) { v[2] = (uint64_t)st.st_size; v[3] = (uint64_t)st.st_mtime; }
        h = yolo_fnv1a(yolo_fnv1a(h, imgs->s[i], strlen(imgs->s[i])), (const char *)v, sizeof v);
    }
    return h;
}

/* 0 with ds filled, -1 when there is no cache or it is stale. A cache
   whose hash matches but whose content is wrong (edited, damaged) is
   read again from the labels, with a warning saying where: its text must
   hash as its first line says, list every picture scanned exactly once,
   in order, and every number is checked as the label reader checks it
   (yolo_read_number): sizes and box counts in range, classes below nc,
   coordinates in 0..1. */
static int yolo_cache_entry(yolo_dataset *ds, FILE *f, const char *path, int *lineno, char *line, int nc, const yolo_strings *imgs,
                            unsigned char *listed, yolo_strings *notes, char *err) {
    char where[4300], *bar = strchr(line, '|'), *name, *num[3], *save = NULL;
    snprintf(where, sizeof where, "%s:%d", path, *lineno);
    if (!bar) return yolo_errorf(err, "%s: expected 'w h boxes |file' or '- |file'", where);
    *bar = 0;
    name = bar + 1;
    char **found = (char **)bsearch(&name, imgs->s, imgs->n, sizeof(char *), yolo_strcmp_p);
    if (!found) return yolo_errorf(err, "%s: '%.200s' is not one of the images", where, name);
    if (listed[found - imgs->s]++) return yolo_errorf(err, "%s: '%.200s' is listed twice", where, name);
    for (long k = found - imgs->s + 1; k < imgs->n; k++)
        if (listed[k]) return yolo_errorf(err, "%s: '%.200s' comes after a picture the scan finds after it", where, name);
    if (!strcmp(yolo_trim(line), "-")) {   /* left out: the warning that said so follows */
        char note[YOLO_ERR + 64];
        if (yolo_read_line(f, note, sizeof note, path, ++*lineno, err) != 1) return yolo_errorf(err, "%s: no warning after '- |file'", where);
        yolo_strings_add(notes, note);
        return 0;
    }
    int w, h, nl, at = ds->n;
    for (int k = 0; k < 3; k++) num[k] = strtok_r(k ? NULL : line, " ", &save);
    if (!num[2] || strtok_r(NULL, " ", &save)) return yolo_errorf(err, "%s: expected 'w h boxes |file'", where);
    if (yolo_read_int(num[0], 1, YOLO_MAX_PIXELS, where, "width", &w, err) || yolo_read_int(num[1], 1, YOLO_MAX_PIXELS, where, "height", &h, err) ||
        yolo_read_int(num[2], 0, YOLO_MAX_BOXES, where, "boxes", &nl, err)) return -1;
    if ((long)w * h > YOLO_MAX_PIXELS) return yolo_errorf(err, "%s: %dx%d pixels, more than %ld", where, w, h, YOLO_MAX_PIXELS);
    ds->files[at] = strdup(name); ds->w0[at] = w; ds->h0[at] = h; ds->nlab[at] = nl;
    ds->lab[at] = nl ? (float *)yolo_xmalloc((size_t)nl * 5 * sizeof(float)) : NULL;
    ds->n++;
    if (!nl) return 0;
    char *boxes = NULL;
    size_t cap = 0;
    ssize_t got = getline(&boxes, &cap, f);
    snprintf(where, sizeof where, "%s:%d", path, ++*lineno);
    int k = 0, rc = got > 0 ? 0 : yolo_errorf(err, "%s: the boxes' line is missing", where);
    save = NULL;
    for (char *t = rc ? NULL : strtok_r(boxes, " \n", &save); t && !rc; t = strtok_r(NULL, " \n", &save), k++) {
        double v;
        if (k == nl * 5) rc = yolo_errorf(err, "%s: more numbers than %d boxes", where, nl);
        else if (!(rc = yolo_read_number(t, k % 5 == 0, 0, k % 5 ? 1 : nc - 1, where, k % 5 ? "a coordinate" : "a class", &v, err)))
            ds->lab[at][k] = (float)v;
    }
    if (!rc && k < nl * 5) rc = yolo_errorf(err, "%s: fewer numbers than %d boxes", where, nl);
    free(boxes);
    return rc;
}
static int yolo_cache_load(yolo_dataset *ds, const char *path, uint64_t hash, const yolo_strings *imgs, int nc) {
    struct stat st;
    if (stat(path, &st)) return -1;
    char err[YOLO_ERR] = "", line[4200];
    char *text = yolo_read_text(path, "label cache", 1L << 30, err);
    if (!text) { fprintf(stderr, "warning: %s (labels read again)\n", err); return -1; }
    unsigned long long h = 0, body_hash = 0;
    int cn = 0, lineno = 1, at = 0;
    if (sscanf(text, "yolov9.c labels 4 %llx %d %llx\n%n", &h, &cn, &body_hash, &at) != 3 || !at || h != hash) { free(text); return -1; }   /* another list of files: stale, not damaged */
    size_t body = (size_t)at, size = strlen(text);
    FILE *f = size > body ? fmemopen(text + body, size - body, "r") : NULL;
    int ok = f != NULL;
    if (!ok) yolo_errorf(err, "%s: lists no picture", path);
    else if (yolo_fnv1a(1469598103934665603ull, text + body, size - body) != body_hash) { ok = 0; yolo_errorf(err, "%s: its text does not hash as its first line says (edited?)", path); }
    else if (cn != imgs->n) { ok = 0; yolo_errorf(err, "%s:1: %d images, but %d were scanned", path, cn, imgs->n); }
    unsigned char *listed = (unsigned char *)yolo_xcalloc(imgs->n, 1);
    yolo_strings notes = { 0, 0, NULL };
    for (int i = 0; ok && i < cn; i++) {
        if (yolo_read_line(f, line, sizeof line, path, ++lineno, err) != 1) { if (!err[0]) yolo_errorf(err, "%s:%d: the list ends early", path, lineno); ok = 0; }
        else ok = !yolo_cache_entry(ds, f, path, &lineno, line, nc, imgs, listed, &notes, err);
    }
    if (ok && yolo_read_line(f, line, sizeof line, path, ++lineno, err)) { ok = 0; yolo_errorf(err, "%s:%d: more than the %d images", path, lineno, cn); }
    if (f) fclose(f);
    free(listed); free(text);
    for (int i = 0; i < notes.n; i++) { if (ok) fprintf(stderr, "warning: %s\n", notes.s[i]); free(notes.s[i]); }
    free(notes.s);
    if (!ok) {
        fprintf(stderr, "warning: %s (labels read again)\n", err);
        for (int i = 0; i < ds->n; i++) { free(ds->files[i]); free(ds->lab[i]); ds->files[i] = NULL; ds->lab[i] = NULL; }
        ds->n = 0;
    }
    return ok ? 0 : -1;
}

/* written by the scan: the pictures kept (ds) and those left out (out: name, warning, name, warning ...), both in
   the scan's order */
static void yolo_cache_save(const yolo_dataset *ds, const yolo_strings *out, const char *path, uint64_t hash) {
    char tmp[4200], *body = NULL;
    size_t len = 0;
    struct stat st;
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (slash) *slash = 0;
    if (slash && stat(tmp, &st)) return;   /* no labels folder to keep it beside */
    FILE *m = open_memstream(&body, &len);
    for (int i = 0, o = 0; m && (i < ds->n || o + 1 < out->n);)
        if (o + 1 < out->n && (i == ds->n || strcmp(out->s[o], ds->files[i]) < 0)) { fprintf(m, "- |%s\n%s\n", out->s[o], out->s[o + 1]); o += 2; }
        else {
            fprintf(m, "%d %d %d |%s\n", ds->w0[i], ds->h0[i], ds->nlab[i], ds->files[i]);
            for (int k = 0; k < ds->nlab[i] * 5; k++) fprintf(m, "%.9g%c", ds->lab[i][k], k % 5 == 4 ? (k + 1 == ds->nlab[i] * 5 ? '\n' : ' ') : ' ');
            i++;
        }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = m && !fclose(m) ? fopen(tmp, "w") : NULL;
    if (f) fprintf(f, "yolov9.c labels 4 %llx %d %llx\n%s", (unsigned long long)hash, ds->n + out->n / 2,
                   (unsigned long long)yolo_fnv1a(1469598103934665603ull, body, len), body);
    if (!f || fclose(f) || rename(tmp, path)) { remove(tmp); fprintf(stderr, "warning: %s: cannot write the label cache\n", path); }
    free(body);
}

/* a picture left out of the scan, with the line that says why (kept for the cache) */
static void yolo_left_out(yolo_strings *out, const char *file, const char *why, const char *what) {
    char note[YOLO_ERR + 64];
    snprintf(note, sizeof note, "%s (%s)", why, what);
    fprintf(stderr, "warning: %s\n", note);
    yolo_strings_add(out, file);
    yolo_strings_add(out, note);
}

/* Open the images of `spec` (';'-separated sources, relative to root), read
   and check their labels, drop images with fewer than min_items boxes.
   Classes >= nc are errors; a picture that cannot be read (corrupt, not
   a picture) and one with a malformed label row are left out with a
   warning, as the official leaves them out. */
int yolo_dataset_open(yolo_dataset *ds, const char *root, const char *spec, int nc, int min_items, char *err) {
    memset(ds, 0, sizeof *ds);
    yolo_strings imgs = { 0, 0, NULL };
    char buf[4096], where[2048];
    if (strlen(spec) >= sizeof buf) return yolo_errorf(err, "%s: sources longer than %zu characters", root, sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", spec);
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok && !rc; tok = strtok_r(NULL, ";", &save))
        rc = yolo_add_source(root, tok, &imgs, err);
    yolo_join(where, sizeof where, root, spec);
    if (!rc && !imgs.n) rc = yolo_errorf(err, "%s: no images found", where);
    if (rc) { for (int i = 0; i < imgs.n; i++) free(imgs.s[i]); free(imgs.s); return rc; }
    qsort(imgs.s, imgs.n, sizeof(char *), yolo_strcmp_p);
    ds->files = (char **)yolo_xcalloc(imgs.n, sizeof(char *));
    ds->lab = (float **)yolo_xcalloc(imgs.n, sizeof(float *));
    ds->nlab = (int *)yolo_xcalloc(imgs.n, sizeof(int));
    ds->w0 = (int *)yolo_xcalloc(imgs.n, sizeof(int));
    ds->h0 = (int *)yolo_xcalloc(imgs.n, sizeof(int));
    char cache[4200], lp[4096];
    yolo_label_path(imgs.s[0], lp, sizeof lp);
    char *slash = strrchr(lp, '/');
    if (slash) *slash = 0;
    snprintf(cache, sizeof cache, "%s.cache", lp);
    uint64_t hash = yolo_files_hash(&imgs, nc);
    if (yolo_cache_load(ds, cache, hash, &imgs, nc)) {
        yolo_strings out = { 0, 0, NULL };
        for (int i = 0; i < imgs.n && !rc; i++) {
            int w, h;
            /* as the official's verify_image_label: a picture that cannot be read is left out, with a line */
            if (yolo_image_info(imgs.s[i], &w, &h, err)) { yolo_left_out(&out, imgs.s[i], err, "the picture is left out"); continue; }
            yolo_label_path(imgs.s[i], lp, sizeof lp);
            int at = ds->n, r = yolo_read_labels(lp, nc, &ds->lab[at], &ds->nlab[at], err);
            if (r < 0) { rc = -1; break; }
            if (r > 0) { yolo_left_out(&out, imgs.s[i], err, "image skipped"); continue; }
            ds->files[at] = strdup(imgs.s[i]); ds->w0[at] = w; ds->h0[at] = h;
            ds->n++;
        }
        if (!rc) yolo_cache_save(ds, &out, cache, hash);
        for (int i = 0; i < out.n; i++) free(out.s[i]);
        free(out.s);
    }
    for (int i = 0; i < imgs.n; i++) free(imgs.s[i]);
    free(imgs.s);
    if (rc) { yolo_dataset_free(ds); return rc; }
    int kept = 0;   /* --min-items */
    for (int i = 0; i < ds->n; i++) {
        if (ds->nlab[i] < min_items) { free(ds->files[i]); free(ds->lab[i]); continue; }
        ds->files[kept] = ds->files[i]; ds->lab[kept] = ds->lab[i]; ds->nlab[kept] = ds->nlab[i];
        ds->w0[kept] = ds->w0[i]; ds->h0[kept] = ds->h0[i];
        ds->nboxes += ds->nlab[i];
        if (ds->nlab[i] > ds->max_boxes) ds->max_boxes = ds->nlab[i];
        kept++;
    }
    ds->n = kept;
    if (!ds->n) { yolo_dataset_free(ds); return yolo_errorf(err, "%s: no usable images", where); }
    return 0;
}

/* --- pictures: decode, resize, warp, colour --- */

static void yolo_image_free(yolo_image *im) { free(im->rgb); im->rgb = NULL; }

/* a picture as RGB8, upright: a JPEG as cv2.imread decodes it, any other
   format with stb_image (PNG and BMP are lossless: the same pixels);
   rows > 0: only the first rows are wanted (yolo_jpeg_read) */
static int yolo_image_load_rows(yolo_image *im, const char *path, int rows, char *err) {
    int ch, w, h, jpeg;
    long size;
    im->rgb = NULL;
    FILE *f = yolo_open_file(path, "image", 0, &size, err);
    if (!f) return -1;
    int rc = yolo_image_header(f, size, path, &w, &h, &jpeg, err);
    if (!rc && jpeg) rc = yolo_jpeg_read(f, path, &w, &h, im, rows, err);
    else if (!rc && !(im->rgb = stbi_load_from_file(f, &im->w, &im->h, &ch, 3)))
        rc = yolo_errorf(err, "%s: cannot decode image (%s)", path, stbi_failure_reason());
    fclose(f);
    return rc;
}
int yolo_image_load(yolo_image *im, const char *path, char *err) { return yolo_image_load_rows(im, path, 0, err); }

/* Bilinear, pixel centres aligned, as cv2.resize's INTER_LINEAR computes
   it for 8-bit pictures, bit for bit: each output column's source column
   sx and fraction fx (float) become two 11-bit weights rounded on their
   own, a0 = round((1 - fx) 2048) and a1 = round(fx 2048) (a column left of
   the picture takes its first, right of it its last); each row passes
   once along the columns into h = a0 p(sx) + a1 p(sx + 1); then each
   output row weighs its two source rows' h by b0, b1 alike, in 16-bit
   SIMD products: (((b0 (h0 >> 4)) >> 16) + ((b1 (h1 >> 4)) >> 16) + 2)
   >> 2 (checked against cv2.resize for every value, row ends included).
   A picture exactly twice as large is halved by the mean of each 2 x 2
   block, (sum + 2) >> 2, as cv2.resize then does. */
static void yolo_resize_linear(const yolo_image *src, yolo_image *dst) {
    int w = src->w, h = src->h, n = 3 * dst->w;
    double scale_x = 1. / ((double)dst->w / w), scale_y = 1. / ((double)dst->h / h);
    if (scale_x == 2 && scale_y == 2) {   /* cv2.resize turns it into INTER_AREA's exact halving */
        for (int y = 0; y < dst->h; y++) {
            const unsigned char *r0 = src->rgb + (size_t)2 * y * w * 3, *r1 = r0 + (size_t)w * 3;
            unsigned char *o = dst->rgb + (size_t)y * n;
            for (int e = 0; e < n; e++) {
                int x = e / 3 * 6 + e % 3;
                o[e] = (unsigned char)((r0[x] + r0[x + 3] + r1[x] + r1[x + 3] + 2) >> 2);
            }
        }
        return;
    }
    int *off = (int *)yolo_xmalloc((size_t)5 * n * sizeof(int)), *a0 = off + n, *a1 = a0 + n, *hrow[2] = { a1 + n, a1 + 2 * n }, tag[2] = { -1, -1 };
    for (int x = 0; x < dst->w; x++) {
        float fx = (float)((x + 0.5) * scale_x - 0.5);
        int sx = (int)floorf(fx);
        fx -= sx;
        if (sx < 0) { fx = 0; sx = 0; }
        if (sx >= w - 1) { fx = 0; sx = w - 1; }
        for (int c = 0; c < 3; c++) {
            off[3 * x + c] = sx * 3 + c;
            a0[3 * x + c] = (int)lrintf((1.f - fx) * 2048); a1[3 * x + c] = (int)lrintf(fx * 2048);
        }
    }
    for (int y = 0; y < dst->h; y++) {
        float fy = (float)((y + 0.5) * scale_y - 0.5);
        int sy = (int)floorf(fy);
        fy -= sy;
        int b0 = (int)lrintf((1.f - fy) * 2048), b1 = (int)lrintf(fy * 2048), rows[2];
        for (int k = 0; k < 2; k++) {   /* source rows sy, sy + 1 inside the picture, passed along once */
            int r = sy + k < 0 ? 0 : sy + k > h - 1 ? h - 1 : sy + k, *hr = hrow[r & 1];
            rows[k] = r & 1;
            if (tag[r & 1] == r) continue;
            tag[r & 1] = r;
            const unsigned char *p = src->rgb + (size_t)r * w * 3;
            for (int e = 0; e < n; e++) hr[e] = a0[e] * p[off[e]] + (a1[e] ? a1[e] * p[off[e] + 3] : 0);
        }
        const int *h0 = hrow[rows[0]], *h1 = hrow[rows[1]];
        unsigned char *o = dst->rgb + (size_t)y * n;
        #pragma omp simd
        for (int e = 0; e < n; e++) {
            int v = (((b0 * (h0[e] >> 4)) >> 16) + ((b1 * (h1[e] >> 4)) >> 16) + 2) >> 2;
            o[e] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    free(off);
}

/* shrinking: every output pixel the area-weighted mean of the source
   pixels it covers (cv2.INTER_AREA) */
static void yolo_resize_area(const yolo_image *src, yolo_image *dst) {
    double sx = (double)src->w / dst->w, sy = (double)src->h / dst->h;
    for (int y = 0; y < dst->h; y++) {
        double y0 = y * sy, y1 = y0 + sy;
        for (int x = 0; x < dst->w; x++) {
            double x0 = x * sx, x1 = x0 + sx, acc[3] = { 0, 0, 0 }, wsum = 0;
            for (int iy = (int)y0; iy < y1 && iy < src->h; iy++) {
                double wy = fmin(iy + 1, y1) - fmax(iy, y0);
                for (int ix = (int)x0; ix < x1 && ix < src->w; ix++) {
                    double wgt = wy * (fmin(ix + 1, x1) - fmax(ix, x0));
                    const unsigned char *p = src->rgb + ((size_t)iy * src->w + ix) * 3;
                    acc[0] += wgt * p[0]; acc[1] += wgt * p[1]; acc[2] += wgt * p[2];
                    wsum += wgt;
                }
            }
            for (int c = 0; c < 3; c++) dst->rgb[((size_t)y * dst->w + x) * 3 + c] = (unsigned char)(acc[c] / wsum + 0.5);
        }
    }
}

static void yolo_resize(const yolo_image *src, yolo_image *dst, int w, int h, int area) {
    dst->w = w; dst->h = h;
    dst->rgb = (unsigned char *)yolo_xmalloc((size_t)w * h * 3);
    if (area && w <= src->w && h <= src->h) yolo_resize_area(src, dst);
    else yolo_resize_linear(src, dst);
}

/* --- the .npy files of --cache disk: a 10-byte preamble (magic, version
   1.0, header length), a Python dict header padded to 64 bytes, then the
   uint8 values [h, w, 3] in row-major order --- */

static int yolo_npy_write(const char *path, const yolo_image *im) {
    char head[128], tmp[4200];
    int n = snprintf(head + 10, sizeof head - 10, "{'descr': '|u1', 'fortran_order': False, 'shape': (%d, %d, 3), }", im->h, im->w);
    while ((10 + n + 1) % 64) head[10 + n++] = ' ';
    head[10 + n++] = '\n';
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)(n & 255); head[9] = (char)(n >> 8);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);   /* written whole, then renamed: another reader never sees half */
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    size_t bytes = (size_t)im->w * im->h * 3;
    int bad = fwrite(head, 1, 10 + n, f) != (size_t)(10 + n) || fwrite(im->rgb, 1, bytes, f) != bytes;
    if (fclose(f) || bad || rename(tmp, path)) { remove(tmp); return -1; }
    return 0;
}

/* a picture of w x h from its .npy file; -1 when the file is not one */
static int yolo_npy_read(const char *path, int w, int h, yolo_image *im, char *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return yolo_errorf(err, "%s: cannot open", path);
    unsigned char pre[10];
    char head[256];
    int hw = 0, hh = 0, len = 0;
    if (fread(pre, 1, 10, f) == 10 && !memcmp(pre, "\x93NUMPY\x01\x00", 8)) len = pre[8] | pre[9] << 8;
    int ok = len > 0 && len < (int)sizeof head && fread(head, 1, len, f) == (size_t)len;
    if (ok) { head[len] = 0; ok = strstr(head, "'|u1'") && strstr(head, "False"); }
    const char *shape = ok ? strstr(head, "'shape': (") : NULL;
    ok = shape && sscanf(shape, "'shape': (%d, %d, 3)", &hh, &hw) == 2 && hw == w && hh == h;
    im->w = w; im->h = h;
    im->rgb = ok ? (unsigned char *)yolo_xmalloc((size_t)w * h * 3) : NULL;
    if (ok) ok = fread(im->rgb, 1, (size_t)w * h * 3, f) == (size_t)w * h * 3;
    fclose(f);
    if (!ok) { free(im->rgb); im->rgb = NULL; return yolo_errorf(err, "%s: not a uint8 [%d, %d, 3] .npy file", path, h, w); }
    return 0;
}

/* the size of a w0 x h0 picture with its long side scaled to S (truncated,
   at least 1); returns the scale */
static double yolo_resized_size(int w0, int h0, int S, int *w, int *h) {
    double r = (double)S / (w0 > h0 ? w0 : h0);
    *w = (int)(w0 * r); *h = (int)(h0 * r);
    if (*w < 1) *w = 1;
    if (*h < 1) *h = 1;
    return r;
}

/* The official load_image: the long side scaled to S (truncated sizes),
   INTER_AREA when shrinking for validation, bilinear otherwise. rows > 0:
   only the first rows of the result are wanted (a picture that needs no
   resizing is decoded that far). */
static int yolo_load_resized(const yolo_dataset *ds, int i, int S, int augment, yolo_image *out, int rows, char *err) {
    if (ds->cache && ds->cache[i].rgb) {
        out->w = ds->cache[i].w; out->h = ds->cache[i].h;
        out->rgb = (unsigned char *)yolo_xmalloc((size_t)out->w * out->h * 3);
        memcpy(out->rgb, ds->cache[i].rgb, (size_t)out->w * out->h * 3);
        return 0;
    }
    int w, h;
    if (ds->npy && ds->npy[i]) { yolo_resized_size(ds->w0[i], ds->h0[i], S, &w, &h); return yolo_npy_read(ds->npy[i], w, h, out, err); }
    yolo_image im;
    if (yolo_image_load_rows(&im, ds->files[i], yolo_resized_size(ds->w0[i], ds->h0[i], S, &w, &h) == 1 ? rows : 0, err)) return -1;
    double r = yolo_resized_size(im.w, im.h, S, &w, &h);
    if (r == 1) { *out = im; return 0; }
    yolo_resize(&im, out, w, h, !augment && r < 1);
    yolo_image_free(&im);
    return 0;
}

/* dst = M src, inverse-mapped and bilinear, grey 114 outside, computed as
   OpenCV computes warpAffine (perspective 0) and warpPerspective with
   their default flags, which the official calls: in fixed point. Each
   output pixel's source position is rounded to 1/32 of a pixel
   (INTER_BITS = 5): an integer column and row sx, sy and fractions fx, fy
   in 0..31. Its value is then sum_k w_k p_k over the four neighbours with
   integer weights w = (32 - fx)(32 - fy), fx (32 - fy), (32 - fx) fy,
   fx fy, which sum to 1024, rounded: (sum + 512) >> 10 (OpenCV's 15-bit
   table holds 32 times these, to the same result). A neighbour outside
   the picture counts as grey.
   The positions, as OpenCV finds them. Affine: M inverted in closed form
   (invertAffineTransform), the column's part cvRound(a x 1024) tabled
   once, the row's cvRound((b y + c) 1024) + 16 once a row, their sum
   shifted right by 5 (1024 / 32). Perspective: M inverted by Cramer's
   rule (cv::invert of a 3x3), each position (X, Y) / Z in double,
   scaled by 32 and rounded, X, Y and Z of a row taken from the start of
   its tile of 64 columns (OpenCV's tiles, whose rounding we follow). */
static long yolo_cv_round(double v) { return lrint(v); }   /* cvRound: to nearest, ties to even */

static void yolo_warp_inverse(const double M[9], int perspective, double iv[9]) {
    if (!perspective) {
        double D = M[0] * M[4] - M[1] * M[3];
        D = D != 0 ? 1. / D : 0;
        iv[0] = M[4] * D; iv[1] = M[1] * -D; iv[3] = M[3] * -D; iv[4] = M[0] * D;
        iv[2] = -iv[0] * M[2] - iv[1] * M[5]; iv[5] = -iv[3] * M[2] - iv[4] * M[5];
        iv[6] = iv[7] = 0; iv[8] = 1;
    } else {
        double d = M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) + M[2] * (M[3] * M[7] - M[4] * M[6]);
        d = d != 0 ? 1. / d : 0;
        iv[0] = (M[4] * M[8] - M[5] * M[7]) * d; iv[1] = (M[2] * M[7] - M[1] * M[8]) * d; iv[2] = (M[1] * M[5] - M[2] * M[4]) * d;
        iv[3] = (M[5] * M[6] - M[3] * M[8]) * d; iv[4] = (M[0] * M[8] - M[2] * M[6]) * d; iv[5] = (M[2] * M[3] - M[0] * M[5]) * d;
        iv[6] = (M[3] * M[7] - M[4] * M[6]) * d; iv[7] = (M[1] * M[6] - M[0] * M[7]) * d; iv[8] = (M[0] * M[4] - M[1] * M[3]) * d;
    }
}
/* an affine warp's source position of output pixel (x, y) in 1/1024 pixel
   (>> 5: in 1/32), in two parts as OpenCV rounds them: the row's
   (yolo_affine_row) and the column's (yolo_affine_col); xy 0: the source
   x, 1: the source y */
static int yolo_affine_row(const double iv[9], int y, int xy) { return (int)yolo_cv_round((iv[3 * xy + 1] * y + iv[3 * xy + 2]) * 1024) + 16; }
static int yolo_affine_col(const double iv[9], int x, int xy) { return (int)yolo_cv_round(iv[3 * xy] * x * 1024); }

/* The warp when it only scales and shifts (no rotation, shear or
   perspective: the recipe's default). A column's source column and
   fraction then do not depend on the row, nor a row's on the column, and
   the sum splits exactly: first down the columns, v = (32 - fy) p0 + fy p1
   from source rows sy and sy + 1, then along the row, (32 - fx) v0 +
   fx v1 + 512 >> 10. The same integers as the four-neighbour sum, but
   the first pass is contiguous (vectorised) and the second reads v by
   tabled offsets. v has two grey pixels (32 x 114) at each end that stand
   in for the columns outside the picture; a row outside is a grey row.
   iv: the inverse affine map, with iv[1] = iv[3] = 0. */
static void yolo_warp_separable(const yolo_image *src, yolo_image *dst, const double iv[9]) {
    int W = src->w, H = src->h, n = 3 * dst->w, wide = 3 * (W + 4);
    int *off = (int *)yolo_xmalloc((size_t)(2 * n + wide) * sizeof(int)), *wx = off + n, *v = wx + n;
    unsigned char *grey = (unsigned char *)yolo_xmalloc((size_t)W * 3);
    memset(grey, 114, (size_t)W * 3);
    for (int e = 0; e < 6; e++) v[e] = v[wide - 1 - e] = 32 * 114;
    int X0 = yolo_affine_row(iv, 0, 0), lo = wide, hi = 0;   /* v's columns in use: [lo, hi) */
    for (int x = 0; x < dst->w; x++) {
        int X = (X0 + yolo_affine_col(iv, x, 0)) >> 5, sx = X >> 5;
        sx = sx < -2 ? -2 : sx > W ? W : sx;   /* wholly outside: both neighbours grey */
        for (int c = 0; c < 3; c++) { off[3 * x + c] = (sx + 2) * 3 + c; wx[3 * x + c] = X & 31; }
        lo = off[3 * x] < lo ? off[3 * x] : lo;
        hi = off[3 * x] + 6 > hi ? off[3 * x] + 6 : hi;
    }
    lo = lo < 6 ? 6 : lo; hi = hi > wide - 6 ? wide - 6 : hi;
    for (int y = 0; y < dst->h; y++) {
        int Y = yolo_affine_row(iv, y, 1) >> 5, sy = Y >> 5, fy = Y & 31;
        const unsigned char *r0 = sy >= 0 && sy < H ? src->rgb + (size_t)sy * W * 3 : grey;
        const unsigned char *r1 = sy + 1 >= 0 && sy + 1 < H ? src->rgb + (size_t)(sy + 1) * W * 3 : grey;
        #pragma omp simd
        for (int e = lo; e < hi; e++) v[e] = (32 - fy) * r0[e - 6] + fy * r1[e - 6];
        unsigned char *o = dst->rgb + (size_t)y * n;
        #pragma omp simd
        for (int e = 0; e < n; e++) o[e] = (unsigned char)(((32 - wx[e]) * v[off[e]] + wx[e] * v[off[e] + 3] + 512) >> 10);
    }
    free(off); free(grey);
}
static void yolo_warp(const yolo_image *src, yolo_image *dst, const double M[9], int perspective) {
    double iv[9];
    yolo_warp_inverse(M, perspective, iv);
    if (!perspective && iv[1] == 0 && iv[3] == 0) { yolo_warp_separable(src, dst, iv); return; }
    int W = src->w, H = src->h, ow = dst->w;
    /* per column: the affine parts; per pixel of a row: source position in 1/32 pixel */
    int *adelta = (int *)yolo_xmalloc((size_t)4 * ow * sizeof(int)), *bdelta = adelta + ow, *X = bdelta + ow, *Y = X + ow;
    for (int x = 0; x < ow; x++) { adelta[x] = yolo_affine_col(iv, x, 0); bdelta[x] = yolo_affine_col(iv, x, 1); }
    int bw = 1024 / (dst->h < 16 ? dst->h : 16);   /* warpPerspective's tiles: 16 rows (or all) of 1024 / rows columns */
    for (int y = 0; y < dst->h; y++) {
        if (!perspective) {
            int X0 = yolo_affine_row(iv, y, 0), Y0 = yolo_affine_row(iv, y, 1);
            #pragma omp simd
            for (int x = 0; x < ow; x++) { X[x] = (X0 + adelta[x]) >> 5; Y[x] = (Y0 + bdelta[x]) >> 5; }
        } else
            for (int x0 = 0; x0 < ow; x0 += bw) {
                double X0 = iv[0] * x0 + iv[1] * y + iv[2], Y0 = iv[3] * x0 + iv[4] * y + iv[5], Z0 = iv[6] * x0 + iv[7] * y + iv[8];
                for (int x = x0; x < ow && x < x0 + bw; x++) {
                    double Z = Z0 + iv[6] * (x - x0);
                    Z = Z ? 32 / Z : 0;
                    double fX = fmax((double)INT_MIN, fmin((double)INT_MAX, (X0 + iv[0] * (x - x0)) * Z));
                    double fY = fmax((double)INT_MIN, fmin((double)INT_MAX, (Y0 + iv[3] * (x - x0)) * Z));
                    X[x] = (int)yolo_cv_round(fX); Y[x] = (int)yolo_cv_round(fY);
                }
            }
        unsigned char *o = dst->rgb + (size_t)y * ow * 3;
        for (int x = 0; x < ow; x++, o += 3) {
            int sx = X[x] >> 5, sy = Y[x] >> 5, fx = X[x] & 31, fy = Y[x] & 31;
            sx = sx < -32768 ? -32768 : sx > 32767 ? 32767 : sx;   /* OpenCV keeps them as 16-bit */
            sy = sy < -32768 ? -32768 : sy > 32767 ? 32767 : sy;
            int w00 = (32 - fx) * (32 - fy), w01 = fx * (32 - fy), w10 = (32 - fx) * fy, w11 = fx * fy;
            if ((unsigned)sx < (unsigned)(W - 1) && (unsigned)sy < (unsigned)(H - 1)) {   /* all four inside */
                const unsigned char *p = src->rgb + ((size_t)sy * W + sx) * 3, *q = p + (size_t)W * 3;
                for (int c = 0; c < 3; c++) o[c] = (unsigned char)((w00 * p[c] + w01 * p[3 + c] + w10 * q[c] + w11 * q[3 + c] + 512) >> 10);
            } else if (sx >= W || sx + 1 < 0 || sy >= H || sy + 1 < 0) o[0] = o[1] = o[2] = 114;   /* all four outside */
            else {
                int in_x0 = sx >= 0, in_x1 = sx + 1 < W, in_y0 = sy >= 0, in_y1 = sy + 1 < H;
                for (int c = 0; c < 3; c++) {
                    int p00 = in_x0 && in_y0 ? src->rgb[((size_t)sy * W + sx) * 3 + c] : 114;
                    int p01 = in_x1 && in_y0 ? src->rgb[((size_t)sy * W + sx + 1) * 3 + c] : 114;
                    int p10 = in_x0 && in_y1 ? src->rgb[((size_t)(sy + 1) * W + sx) * 3 + c] : 114;
                    int p11 = in_x1 && in_y1 ? src->rgb[((size_t)(sy + 1) * W + sx + 1) * 3 + c] : 114;
                    o[c] = (unsigned char)((w00 * p00 + w01 * p01 + w10 * p10 + w11 * p11 + 512) >> 10);
                }
            }
        }
    }
    free(adelta);
}

/* OpenCV's 8-bit RGB -> HSV (cvtColor BGR2HSV, H in 0..179), in
   integers: V = max, S = 255 (V - min) / V, H = 30 (sector offset +
   difference / (V - min)), each division a multiplication by a reciprocal
   in 12-bit fixed point, 255 * 4096 / V and 30 * 4096 / (V - min) rounded
   (OpenCV's sdiv_table, hdiv_table: float division rounds to the same
   integers for every byte, and a 0 divisor only meets a 0 numerator) */
static inline void yolo_hsv8(int R, int G, int B, int *H, int *S, int *V) {
    int v = R > G ? (R > B ? R : B) : (G > B ? G : B), diff = v - (R < G ? (R < B ? R : B) : (G < B ? G : B));
    int sdiv = (int)rintf(255 * 4096.0f / (float)(v + (v == 0))), hdiv = (int)rintf(30 * 4096.0f / (float)(diff + (diff == 0)));
    int h = v == R ? G - B : v == G ? B - R + 2 * diff : R - G + 4 * diff;
    h = (h * hdiv + 2048) >> 12;
    *H = h < 0 ? h + 180 : h;
    *S = (diff * sdiv + 2048) >> 12;
    *V = v;
}

/* The source pixels yolo_warp reads for an ow x oh output: columns
   [box[0], box[1]) and rows [box[2], box[3]). An affine position is a
   row part plus a column part, each rounded from a linear function, so
   it moves monotonically along rows and columns and the four corners
   bound it (plus the right and lower neighbour). A perspective warp may
   read anything. */
static void yolo_warp_reads(const double M[9], int perspective, int ow, int oh, int box[4]) {
    box[0] = box[2] = INT_MIN; box[1] = box[3] = INT_MAX;
    if (perspective) return;
    double iv[9];
    yolo_warp_inverse(M, 0, iv);
    box[0] = box[2] = INT_MAX; box[1] = box[3] = INT_MIN;
    for (int c = 0; c < 4; c++) {
        int x = c & 1 ? ow - 1 : 0, y = c & 2 ? oh - 1 : 0;
        int sx = (yolo_affine_row(iv, y, 0) + yolo_affine_col(iv, x, 0)) >> 10, sy = (yolo_affine_row(iv, y, 1) + yolo_affine_col(iv, x, 1)) >> 10;
        box[0] = sx < box[0] ? sx : box[0]; box[1] = sx + 2 > box[1] ? sx + 2 : box[1];
        box[2] = sy < box[2] ? sy : box[2]; box[3] = sy + 2 > box[3] ? sy + 2 : box[3];
    }
}

/* HSV jitter as the official augment_hsv computes it with OpenCV: the
   picture to 8-bit HSV (yolo_hsv8), each channel through a lookup table
   of its gain, and back (HSV2BGR), bit for bit. Back to RGB in float: the
   hue h/30 in sixths of the colour wheel, its whole part the sector, its
   fraction f; the three channels are V, V (1 - S), V (1 - S f) or
   V (1 - S (1 - f)) as the sector says. OpenCV does this 32 pixels at a
   time in AVX2, truncating to 8 bits, and the last pixels of a row that
   do not fill 32 one by one, rounding; we follow it in both (a picture of
   a width that is a multiple of 32, every training picture, only takes
   the first). The pixel loop has no branches (selects) and works on 32
   pixels of a row split into planes, so that the compiler vectorises it
   whole. */
static void yolo_hsv_apply(yolo_image *im, double gh, double gs, double gv) {
    const float hscale = 6.0f / 180;
    float lh[256], ls[256], lv[256];   /* the official's tables, (x g) mod 180 and clip(x g, 0, 255) truncated,
                                          as OpenCV takes them on: hue in sixths, saturation and value in [0, 1] */
    for (int x = 0; x < 256; x++) {
        lh[x] = (float)(int)fmod(x * gh, 180.0) * hscale;
        ls[x] = (float)(int)fmin(fmax(x * gs, 0), 255) * (1.0f / 255);
        lv[x] = (float)(int)fmin(fmax(x * gv, 0), 255) * (1.0f / 255);
    }
    int W = im->w, wide = W / 32 * 32, grey_out = (int)(lv[114] * 255);
    unsigned char *plane = (unsigned char *)yolo_xmalloc((size_t)3 * W), *pr = plane, *pg = pr + W, *pb = pg + W;
    for (int y = 0; y < im->h; y++) {
        unsigned char *px = im->rgb + (size_t)y * W * 3;
        for (int k = 0; k < wide; k++) { pr[k] = px[3 * k]; pg[k] = px[3 * k + 1]; pb[k] = px[3 * k + 2]; }
        for (int k0 = 0; k0 < wide; k0 += 32) {   /* OpenCV's blocks of 32 */
            int grey = 1;   /* the mosaic's grey (114) border, a fifth of its blocks: one value, V's (H = S = 0) */
            for (int k = k0; k < k0 + 32; k++) grey &= (pr[k] == 114) & (pg[k] == 114) & (pb[k] == 114);
            if (grey) { memset(pr + k0, grey_out, 32); memset(pg + k0, grey_out, 32); memset(pb + k0, grey_out, 32); continue; }
            #pragma omp simd
            for (int k = k0; k < k0 + 32; k++) {
                int H, S, V;
                yolo_hsv8(pr[k], pg[k], pb[k], &H, &S, &V);
                float h = lh[H], s = ls[S], v = lv[V];
                float sector = (float)(int)h, f = h - sector;
                float t0 = v, t1 = v * (1 - s), t2 = v * (1 - s * f), t3 = v * (1 - s * (1 - f));
                float r = sector < 1 ? t0 : sector == 1 ? t2 : sector < 4 ? t1 : sector == 4 ? t3 : t0;
                float g = sector < 1 ? t3 : sector < 3 ? t0 : sector == 3 ? t2 : t1;
                float b = sector < 2 ? t1 : sector == 2 ? t3 : sector < 5 ? t0 : t2;
                pr[k] = (unsigned char)(int)(r * 255); pg[k] = (unsigned char)(int)(g * 255); pb[k] = (unsigned char)(int)(b * 255);
            }
        }
        for (int k = 0; k < wide; k++) { px[3 * k] = pr[k]; px[3 * k + 1] = pg[k]; px[3 * k + 2] = pb[k]; }
        for (int k = wide; k < W; k++) {   /* OpenCV's one-by-one tail: the same maths, rounded */
            int H, S, V;
            yolo_hsv8(px[3 * k], px[3 * k + 1], px[3 * k + 2], &H, &S, &V);
            float h = lh[H], s = ls[S], v = lv[V], rgb[3] = { v, v, v };
            if (s != 0) {
                static const int pick[6][3] = { { 0, 3, 1 }, { 2, 0, 1 }, { 1, 0, 3 }, { 1, 2, 0 }, { 3, 1, 0 }, { 0, 1, 2 } };   /* r, g, b */
                h = fmodf(h, 6.0f);
                int sector = (int)floorf(h);
                float f = h - sector, t[4];
                t[0] = v; t[1] = v * (1 - s); t[2] = v * (1 - s * f); t[3] = v * (1 - s * (1 - f));
                for (int c = 0; c < 3; c++) rgb[c] = t[pick[sector][c]];
            }
            for (int c = 0; c < 3; c++) px[3 * k + c] = (unsigned char)lrintf(rgb[c] * 255);
        }
    }
    free(plane);
}

/* the gains drawn as the official: uniform(-1, 1) times each gain, plus 1 */
static void yolo_augment_hsv(yolo_image *im, double hg, double sg, double vg, yolo_rng *r) {
    if (!(hg || sg || vg)) return;
    double gh = (2 * yolo_rng_uniform(r) - 1) * hg + 1, gs = (2 * yolo_rng_uniform(r) - 1) * sg + 1;
    double gv = (2 * yolo_rng_uniform(r) - 1) * vg + 1;
    yolo_hsv_apply(im, gh, gs, gv);
}

/* Beta(a, a) from two gamma draws (Marsaglia-Tsang), for mixup */
static double yolo_rng_normal(yolo_rng *r) {
    double u = yolo_rng_uniform(r), v = yolo_rng_uniform(r);
    return sqrt(-2 * log(u + 1e-300)) * cos(2 * 3.14159265358979323846 * v);
}
static double yolo_rng_gamma(yolo_rng *r, double a) {
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = yolo_rng_normal(r), v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = yolo_rng_uniform(r);
        if (log(u + 1e-300) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
}

/* the flips of a training sample */
enum { YOLO_FLIP_LR = 1, YOLO_FLIP_UD = 2 };

/* boxes of one training sample, pixels: class, x1, y1, x2, y2 */
typedef struct yolo_boxes { int n, cap; float *b; } yolo_boxes;   /* b: [n*5] */
static void yolo_boxes_add(yolo_boxes *bx, float c, double x1, double y1, double x2, double y2) {
    bx->b = (float *)yolo_grow(bx->b, 5 * sizeof(float), bx->n + 1, &bx->cap);
    float *o = bx->b + (size_t)bx->n++ * 5;
    o[0] = c; o[1] = (float)x1; o[2] = (float)y1; o[3] = (float)x2; o[4] = (float)y2;
}

/* The official random_perspective's matrix for a w x h picture onto an
   out_w x out_h canvas: centre, perspective, rotation and scale, shear,
   translation (M = T S R P C). u: its eight random draws, in the official
   order: perspective x, y; angle (degrees); scale; shear x, y (degrees);
   translation x, y (fractions of the canvas). */
static void yolo_perspective_matrix(int w, int h, int out_w, int out_h, const double u[8], double M[9]) {
    double C[9] = { 1, 0, -w / 2.0, 0, 1, -h / 2.0, 0, 0, 1 };
    double P[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, R[9] = { 0, 0, 0, 0, 0, 0, 0, 0, 1 }, S[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    double T[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    P[6] = u[0]; P[7] = u[1];
    double a = u[2] * 3.14159265358979323846 / 180, s = u[3];
    R[0] = s * cos(a); R[1] = s * sin(a); R[3] = -s * sin(a); R[4] = s * cos(a);   /* getRotationMatrix2D */
    S[1] = tan(u[4] * 3.14159265358979323846 / 180);
    S[3] = tan(u[5] * 3.14159265358979323846 / 180);
    T[2] = u[6] * out_w;
    T[5] = u[7] * out_h;
    double t1[9], t2[9], t3[9];
#define YOLO_MM(o, x, y) for (int i_ = 0; i_ < 3; i_++) for (int j_ = 0; j_ < 3; j_++) \
        o[i_ * 3 + j_] = x[i_ * 3] * y[j_] + x[i_ * 3 + 1] * y[3 + j_] + x[i_ * 3 + 2] * y[6 + j_];
    YOLO_MM(t1, P, C) YOLO_MM(t2, R, t1) YOLO_MM(t3, S, t2) YOLO_MM(M, T, t3)
#undef YOLO_MM
}
/* The official random_perspective: the picture warped by that matrix,
   every box's four corners moved, the box around them clipped, and boxes
   that shrank too much (area < 10%, a side < 2 px, aspect > 100)
   dropped */
static void yolo_perspective_apply(yolo_image *im, yolo_boxes *bx, int out_w, int out_h, int perspective, const double u[8]) {
    double M[9], s = u[3];
    yolo_perspective_matrix(im->w, im->h, out_w, out_h, u, M);
    yolo_image out = { out_w, out_h, (unsigned char *)yolo_xmalloc((size_t)out_w * out_h * 3) };
    yolo_warp(im, &out, M, perspective);
    yolo_image_free(im);
    *im = out;
    int kept = 0;
    for (int k = 0; k < bx->n; k++) {
        float *b = bx->b + (size_t)k * 5;
        double xs[4] = { b[1], b[3], b[1], b[3] }, ys[4] = { b[2], b[4], b[4], b[2] }, nx[4], ny[4];
        for (int c = 0; c < 4; c++) {
            double zw = perspective ? M[6] * xs[c] + M[7] * ys[c] + M[8] : 1;
            nx[c] = (M[0] * xs[c] + M[1] * ys[c] + M[2]) / zw;
            ny[c] = (M[3] * xs[c] + M[4] * ys[c] + M[5]) / zw;
        }
        double x1 = fmin(fmin(nx[0], nx[1]), fmin(nx[2], nx[3])), x2 = fmax(fmax(nx[0], nx[1]), fmax(nx[2], nx[3]));
        double y1 = fmin(fmin(ny[0], ny[1]), fmin(ny[2], ny[3])), y2 = fmax(fmax(ny[0], ny[1]), fmax(ny[2], ny[3]));
        x1 = fmin(fmax(x1, 0), out_w); x2 = fmin(fmax(x2, 0), out_w);
        y1 = fmin(fmax(y1, 0), out_h); y2 = fmin(fmax(y2, 0), out_h);
        double w0 = (b[3] - b[1]) * s, h0 = (b[4] - b[2]) * s, w1 = x2 - x1, h1 = y2 - y1, eps = 1e-16;
        double ar = fmax(w1 / (h1 + eps), h1 / (w1 + eps));
        if (!(w1 > 2 && h1 > 2 && w1 * h1 / (w0 * h0 + eps) > 0.1 && ar < 100)) continue;
        float *o = bx->b + (size_t)kept++ * 5;
        o[0] = b[0]; o[1] = (float)x1; o[2] = (float)y1; o[3] = (float)x2; o[4] = (float)y2;
    }
    bx->n = kept;
}

/* the eight draws of random_perspective from the hyperparameters */
static void yolo_perspective_draw(const yolo_hyp *hp, yolo_rng *r, double u[8]) {
    double half[8] = { hp->perspective, hp->perspective, hp->degrees, hp->scale, hp->shear, hp->shear, hp->translate, hp->translate };
    double mid[8] = { 0, 0, 0, 1, 0, 0, 0.5, 0.5 };
    for (int k = 0; k < 8; k++) u[k] = mid[k] - half[k] + 2 * half[k] * yolo_rng_uniform(r);
}

static void yolo_random_perspective(yolo_image *im, yolo_boxes *bx, int out_w, int out_h, const yolo_hyp *hp, yolo_rng *r) {
    double u[8];
    yolo_perspective_draw(hp, r, u);
    yolo_perspective_apply(im, bx, out_w, out_h, hp->perspective != 0, u);
}

/* The official load_mosaic: four pictures idx[0..3] around the centre
   (xc, yc) of a 2S x 2S grey canvas (top left, top right, bottom left,
   bottom right), then a random perspective (draws u) that crops back to
   S x S: the border of -S/2 on each side. Only the part of the canvas
   the warp reads (yolo_warp_reads) is made: a picture wholly outside it
   (about one in eight, when the crop zooms in) is neither loaded nor
   placed, though its boxes, which need only its size, are, and a JPEG
   is decoded only down to its last row in it (in all, about a quarter
   fewer rows decoded without a cache, for the recipe's draws). */
static int yolo_mosaic_apply(const yolo_dataset *ds, const int idx[4], int xc, int yc, int S, int perspective,
                             const double u[8], yolo_image *out, yolo_boxes *bx, char *err) {
    yolo_image canvas = { 2 * S, 2 * S, (unsigned char *)yolo_xmalloc((size_t)4 * S * S * 3) };
    double M[9];
    int reads[4];   /* clipped to the canvas: columns x0, x1, rows y0, y1 */
    yolo_perspective_matrix(2 * S, 2 * S, S, S, u, M);
    yolo_warp_reads(M, perspective, S, S, reads);
    for (int q = 0; q < 4; q++) reads[q] = reads[q] < 0 ? 0 : reads[q] > 2 * S ? 2 * S : reads[q];
    for (int y = reads[2]; y < reads[3]; y++) memset(canvas.rgb + ((size_t)y * 2 * S + reads[0]) * 3, 114, (size_t)(reads[1] - reads[0]) * 3);
    for (int k = 0; k < 4; k++) {
        int cached = ds->cache && ds->cache[idx[k]].rgb;   /* read in place, not copied */
        yolo_image im = { 0, 0, NULL };
        int w, h, x1a, y1a, x2a, y2a, x1b, y1b;
        if (cached) { w = ds->cache[idx[k]].w; h = ds->cache[idx[k]].h; }
        else yolo_resized_size(ds->w0[idx[k]], ds->h0[idx[k]], S, &w, &h);
        if (k == 0) { x1a = xc - w > 0 ? xc - w : 0; y1a = yc - h > 0 ? yc - h : 0; x2a = xc; y2a = yc; x1b = w - (x2a - x1a); y1b = h - (y2a - y1a); }
        else if (k == 1) { x1a = xc; y1a = yc - h > 0 ? yc - h : 0; x2a = xc + w < 2 * S ? xc + w : 2 * S; y2a = yc; x1b = 0; y1b = h - (y2a - y1a); }
        else if (k == 2) { x1a = xc - w > 0 ? xc - w : 0; y1a = yc; x2a = xc; y2a = yc + h < 2 * S ? yc + h : 2 * S; x1b = w - (x2a - x1a); y1b = 0; }
        else { x1a = xc; y1a = yc; x2a = xc + w < 2 * S ? xc + w : 2 * S; y2a = yc + h < 2 * S ? yc + h : 2 * S; x1b = 0; y1b = 0; }
        int u0 = x1a > reads[0] ? x1a : reads[0], u1 = x2a < reads[1] ? x2a : reads[1];   /* what the warp reads of it */
        int v0 = y1a > reads[2] ? y1a : reads[2], v1 = y2a < reads[3] ? y2a : reads[3];
        if (u0 < u1 && v0 < v1) {
            if (cached) im = ds->cache[idx[k]];
            else if (yolo_load_resized(ds, idx[k], S, 1, &im, y1b + v1 - y1a, err)) { yolo_image_free(&canvas); return -1; }
            for (int y = v0; y < v1; y++)
                memcpy(canvas.rgb + ((size_t)y * 2 * S + u0) * 3, im.rgb + ((size_t)(y1b + y - y1a) * w + x1b + u0 - x1a) * 3, (size_t)(u1 - u0) * 3);
            if (!cached) yolo_image_free(&im);
        }
        int padw = x1a - x1b, padh = y1a - y1b;
        const float *l = ds->lab[idx[k]];
        for (int j = 0; j < ds->nlab[idx[k]]; j++) {
            const float *b = l + j * 5;
            double x1 = w * (b[1] - b[3] / 2) + padw, y1 = h * (b[2] - b[4] / 2) + padh;
            double x2 = w * (b[1] + b[3] / 2) + padw, y2 = h * (b[2] + b[4] / 2) + padh;
            yolo_boxes_add(bx, b[0], fmin(fmax(x1, 0), 2 * S), fmin(fmax(y1, 0), 2 * S), fmin(fmax(x2, 0), 2 * S), fmin(fmax(y2, 0), 2 * S));
        }
    }
    yolo_perspective_apply(&canvas, bx, S, S, perspective, u);
    *out = canvas;
    return 0;
}

/* the mosaic's draws: its centre (y first, as the official), three more
   pictures, their order, the perspective */
static int yolo_mosaic(const yolo_dataset *ds, int index, int S, const yolo_hyp *hp, yolo_rng *r,
                       yolo_image *out, yolo_boxes *bx, char *err) {
    int yc = (int)(S / 2.0 + yolo_rng_uniform(r) * S), xc = (int)(S / 2.0 + yolo_rng_uniform(r) * S);
    int idx[4] = { index, (int)(yolo_rng_u64(r) % ds->n), (int)(yolo_rng_u64(r) % ds->n), (int)(yolo_rng_u64(r) % ds->n) };
    for (int k = 3; k > 0; k--) { int j = (int)(yolo_rng_u64(r) % (k + 1)), t = idx[k]; idx[k] = idx[j]; idx[j] = t; }
    double u[8];
    yolo_perspective_draw(hp, r, u);
    return yolo_mosaic_apply(ds, idx, xc, yc, S, hp->perspective != 0, u, out, bx, err);
}

/* Letterbox: the picture scaled by r = min(out_h / h, out_w / w) (at most
   1 unless scaleup), bilinear, centred on an out_w x out_h grey (114)
   canvas; it replaces im. *ratio = r and *dw, *dh the fractional padding of
   each side, as the official letterbox returns them: a box maps back onto
   the picture as (x - dw) / r. */
void yolo_letterbox(yolo_image *im, int out_w, int out_h, int scaleup, double *ratio, double *dw, double *dh) {
    double r = fmin((double)out_h / im->h, (double)out_w / im->w);
    if (!scaleup && r > 1) r = 1;
    int nw = (int)floor(im->w * r + 0.5), nh = (int)floor(im->h * r + 0.5);
    *dw = (out_w - nw) / 2.0; *dh = (out_h - nh) / 2.0; *ratio = r;
    yolo_image rs = *im;
    if (nw != im->w || nh != im->h) yolo_resize(im, &rs, nw, nh, 0);
    int top = (int)floor(*dh - 0.1 + 0.5), left = (int)floor(*dw - 0.1 + 0.5);
    yolo_image out = { out_w, out_h, (unsigned char *)yolo_xmalloc((size_t)out_w * out_h * 3) };
    memset(out.rgb, 114, (size_t)out_w * out_h * 3);
    for (int y = 0; y < nh && y + top < out_h; y++)
        memcpy(out.rgb + ((size_t)(y + top) * out_w + left) * 3, rs.rgb + (size_t)y * nw * 3, (size_t)(nw < out_w - left ? nw : out_w - left) * 3);
    if (rs.rgb != im->rgb) yolo_image_free(&rs);
    yolo_image_free(im);
    *im = out;
}

/* One training sample: mosaic (+ mixup) of size S x S or a picture
   letterboxed into W x H (S x S, or its --rect batch's rectangle) with a
   random perspective, then HSV and flips. Boxes come back normalised
   (class, cx, cy, w, h), clipped to the picture, and flipped; the pixels
   are flipped (*flips) on their way into the batch, by
   yolo_image_to_input_flipped. */
static int yolo_train_sample(const yolo_dataset *ds, int index, int S, int W, int H, const yolo_hyp *hp, int mosaic_on, yolo_rng *r,
                             yolo_image *out, yolo_boxes *bx, int *flips, char *err) {
    bx->n = 0;
    if (mosaic_on && yolo_rng_uniform(r) < hp->mosaic) {
        if (yolo_mosaic(ds, index, S, hp, r, out, bx, err)) return -1;
        if (yolo_rng_uniform(r) < hp->mixup) {
            yolo_image im2;
            yolo_boxes b2 = { 0, 0, NULL };
            if (yolo_mosaic(ds, (int)(yolo_rng_u64(r) % ds->n), S, hp, r, &im2, &b2, err)) { free(b2.b); return -1; }
            double ga = yolo_rng_gamma(r, 32), gb = yolo_rng_gamma(r, 32), rr = ga / (ga + gb);
            int n = S * S * 3;
            unsigned char *a = out->rgb, *b = im2.rgb;
            #pragma omp simd
            for (int k = 0; k < n; k++) a[k] = (unsigned char)(a[k] * rr + b[k] * (1 - rr));
            for (int k = 0; k < b2.n; k++) yolo_boxes_add(bx, b2.b[k * 5], b2.b[k * 5 + 1], b2.b[k * 5 + 2], b2.b[k * 5 + 3], b2.b[k * 5 + 4]);
            yolo_image_free(&im2); free(b2.b);
        }
    } else {
        yolo_image im;
        if (yolo_load_resized(ds, index, S, 1, &im, 0, err)) return -1;
        int w = im.w, h = im.h;
        double ratio, dw, dh;
        yolo_letterbox(&im, W, H, 1, &ratio, &dw, &dh);
        for (int j = 0; j < ds->nlab[index]; j++) {
            const float *b = ds->lab[index] + j * 5;
            yolo_boxes_add(bx, b[0], ratio * w * (b[1] - b[3] / 2) + dw, ratio * h * (b[2] - b[4] / 2) + dh,
                           ratio * w * (b[1] + b[3] / 2) + dw, ratio * h * (b[2] + b[4] / 2) + dh);
        }
        yolo_random_perspective(&im, bx, W, H, hp, r);
        *out = im;
    }
    for (int k = 0; k < bx->n; k++) {   /* to normalised centre form, clipped (eps 1e-3 as the official) */
        float *b = bx->b + (size_t)k * 5;
        double x1 = fmin(fmax(b[1], 0), W - 1e-3), y1 = fmin(fmax(b[2], 0), H - 1e-3);
        double x2 = fmin(fmax(b[3], 0), W - 1e-3), y2 = fmin(fmax(b[4], 0), H - 1e-3);
        b[1] = (float)((x1 + x2) / 2 / W); b[2] = (float)((y1 + y2) / 2 / H);
        b[3] = (float)((x2 - x1) / W); b[4] = (float)((y2 - y1) / H);
    }
    yolo_augment_hsv(out, hp->hsv_h, hp->hsv_s, hp->hsv_v, r);
    *flips = 0;
    if (yolo_rng_uniform(r) < hp->flipud) {
        *flips |= YOLO_FLIP_UD;
        for (int k = 0; k < bx->n; k++) bx->b[k * 5 + 2] = 1 - bx->b[k * 5 + 2];
    }
    if (yolo_rng_uniform(r) < hp->fliplr) {
        *flips |= YOLO_FLIP_LR;
        for (int k = 0; k < bx->n; k++) bx->b[k * 5 + 1] = 1 - bx->b[k * 5 + 1];
    }
    return 0;
}

/* --- drawing detections (detect) --- */

/* the official plotting palette, one colour per class modulo 20 */
static const unsigned int yolo_palette[20] = {
    0xFF3838, 0xFF9D97, 0xFF701F, 0xFFB21D, 0xCFD231, 0x48F90A, 0x92CC17, 0x3DDB86, 0x1A9334, 0x00D4BB,
    0x2C99A8, 0x00C2FF, 0x344593, 0x6473FF, 0x0018EC, 0x8438FF, 0x520085, 0xCB38FF, 0xFF95C8, 0xFF37C7,
};

static void yolo_fill(yolo_image *im, int x0, int y0, int x1, int y1, unsigned int rgb) {
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->w) x1 = im->w;
    if (y1 > im->h) y1 = im->h;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            unsigned char *p = im->rgb + ((size_t)y * im->w + x) * 3;
            p[0] = (unsigned char)(rgb >> 16); p[1] = (unsigned char)(rgb >> 8); p[2] = (unsigned char)rgb;
        }
}

/* stb_easy_font draws printable ASCII: anything else becomes '?' */
static void yolo_ascii(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; s[n] && n + 1 < cap; n++) out[n] = s[n] >= 32 && s[n] < 127 ? s[n] : '?';
    out[n] = 0;
}
static int yolo_text_width(const char *s, int scale) {
    char clean[256];
    yolo_ascii(s, clean, sizeof clean);
    stb_easy_font_spacing(0);
    return stb_easy_font_width(clean) * scale;
}

/* Text with stb_easy_font's bitmap font (its glyphs are quads of pixels),
   each pixel scale x scale, at (x, y) = its top-left corner; rotated reads
   bottom to top from (x, y), its bottom-left corner. */
static void yolo_text(yolo_image *im, int x, int y, const char *s, int scale, unsigned rgb, int rotated) {
    char clean[256];
    yolo_ascii(s, clean, sizeof clean);
    int bytes = (int)(strlen(clean) * 1024 + 64);   /* 64 bytes a quad, at most 16 quads a glyph */
    float *v = (float *)yolo_xmalloc((size_t)bytes);
    stb_easy_font_spacing(0);
    int quads = stb_easy_font_print(0, 0, clean, NULL, v, bytes);
    for (int q = 0; q < quads; q++) {   /* 4 vertices of x, y, z, colour: corners 0 and 2 span the quad */
        const float *a = v + q * 16, *c = v + q * 16 + 8;
        int x0 = (int)a[0] * scale, y0 = (int)a[1] * scale, x1 = (int)c[0] * scale, y1 = (int)c[1] * scale;
        if (rotated) yolo_fill(im, x + y0, y - x1, x + y1, y - x0, rgb);
        else yolo_fill(im, x + x0, y + y0, x + x1, y + y1, rgb);
    }
    free(v);
}


/* A detection as the official annotator draws it: the box outline of
   thickness lw in the class colour and, unless label is NULL, the label in
   white on a filled band of the same colour above the box (inside it when
   there is no room above). */
void yolo_draw_detection(yolo_image *im, const yolo_det *d, int lw, const char *label) {
    unsigned int c = yolo_palette[d->cls % 20];
    int x1 = (int)d->x1, y1 = (int)d->y1, x2 = (int)d->x2, y2 = (int)d->y2;
    yolo_fill(im, x1, y1, x2, y1 + lw, c); yolo_fill(im, x1, y2 - lw, x2, y2, c);
    yolo_fill(im, x1, y1, x1 + lw, y2, c); yolo_fill(im, x2 - lw, y1, x2, y2, c);
    if (!label) return;
    int s = lw > 2 ? lw - 1 : 1, tw = yolo_text_width(label, s) + 2 * s, th = 11 * s;
    int top = y1 - th >= 0 ? y1 - th : y1;
    yolo_fill(im, x1, top, x1 + tw, top + th, c);
    yolo_text(im, x1 + s, top + s, label, s, 0xFFFFFF, 0);
}

/* an RGB8 picture [h, w, 3] as one picture of a batch's pixels [3, h, w]
   (channel planes), mirrored left-right and/or upside down on the way
   (flips) */
static void yolo_image_to_pixels_flipped(const yolo_image *im, int flips, unsigned char *dst) {
    int W = im->w, H = im->h, x0 = flips & YOLO_FLIP_LR ? W - 1 : 0, dx = flips & YOLO_FLIP_LR ? -1 : 1;
    size_t HW = (size_t)W * H;
    for (int y = 0; y < H; y++) {
        const unsigned char *row = im->rgb + (size_t)(flips & YOLO_FLIP_UD ? H - 1 - y : y) * W * 3;
        unsigned char *o = dst + (size_t)y * W;
        #pragma omp simd
        for (int x = 0; x < W; x++) {
            const unsigned char *q = row + (x0 + dx * x) * 3;
            o[x] = q[0]; o[HW + x] = q[1]; o[2 * HW + x] = q[2];
        }
    }
}
/* the same as the model's input [3, h, w] in [0, 1] */
void yolo_image_to_input(const yolo_image *im, yolo_real *dst) {
    size_t n = (size_t)3 * im->w * im->h;
    unsigned char *pixels = (unsigned char *)yolo_xmalloc(n);
    yolo_image_to_pixels_flipped(im, 0, pixels);
    yolo_pixels_to_input(dst, pixels, n);
    free(pixels);
}

/* --- --multi-scale: each training batch at a size drawn for it --- */

/* The official train_dual.py draws, before every batch,
   sz = randrange(S / 2, 3 S / 2 + gs) // gs * gs (gs = 32, the largest
   stride): a multiple of 32 from about S / 2 to 3 S / 2, all equally likely
   when S / 2 is one. draw: a random 64-bit number; UINT64_MAX gives the
   largest size (the memory plan's). */
static int yolo_multi_scale_size(int S, uint64_t draw) {
    int lo = S / 2, hi = S * 3 / 2 + 32;   /* randrange's [lo, hi); S is a multiple of 32 */
    int v = draw == UINT64_MAX ? hi - 1 : lo + (int)(draw % (uint64_t)(hi - lo));
    return v / 32 * 32;
}

/* torch.nn.functional.interpolate(mode='bilinear', align_corners=False) of
   C planes h x w to H x W: output pixel x samples the input at
   (x + 0.5) w / W - 0.5 (0 below 0), between its two neighbours on each
   axis (the last pixel repeated past the edge), weights linear in the
   distance. */
static void yolo_resize_bilinear(const yolo_real *src, int C, int h, int w, yolo_real *dst, int H, int W) {
    int *x0 = (int *)yolo_xmalloc((size_t)W * 2 * sizeof(int));
    double *fx = (double *)yolo_xmalloc((size_t)W * sizeof(double));
    for (int x = 0; x < W; x++) {   /* the same columns on every row */
        double u = fmax(((double)w / W) * (x + 0.5) - 0.5, 0);
        x0[2 * x] = (int)u; x0[2 * x + 1] = (int)u + ((int)u < w - 1); fx[x] = u - (int)u;
    }
    for (int c = 0; c < C; c++)   /* in a loader thread: the threads share the batches */
        for (int y = 0; y < H; y++) {
            double v = fmax(((double)h / H) * (y + 0.5) - 0.5, 0), fy = v - (int)v;
            int y0 = (int)v, y1 = y0 + (y0 < h - 1);
            const yolo_real *r0 = src + ((size_t)c * h + y0) * w, *r1 = src + ((size_t)c * h + y1) * w;
            yolo_real *o = dst + ((size_t)c * H + y) * W;
            for (int x = 0; x < W; x++) {
                int a = x0[2 * x], b = x0[2 * x + 1];
                o[x] = (yolo_real)((1 - fy) * ((1 - fx[x]) * r0[a] + fx[x] * r0[b]) + fy * ((1 - fx[x]) * r1[a] + fx[x] * r1[b]));
            }
        }
    free(x0); free(fx);
}

/* a batch of H x W at size sz: scaled by sf = sz / its longer side, each
   side rounded up to a multiple of 32 */
static void yolo_multi_scale_shape(int H, int W, int sz, int *h, int *w) {
    double sf = (double)sz / (H > W ? H : W);
    *h = (int)ceil(H * sf / 32) * 32; *w = (int)ceil(W * sf / 32) * 32;
}

/* batch bt of the epoch to its drawn size, the pictures interpolated
   bilinearly (the targets are normalised: they stay) */
static void yolo_multi_scale(const yolo_loader *ld, yolo_batch *bt) {
    yolo_rng r = { ld->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(bt->index + 1)) };
    int H, W;
    yolo_multi_scale_shape(bt->H, bt->W, yolo_multi_scale_size(ld->S, yolo_rng_u64(&r)), &H, &W);
    if (H == bt->H && W == bt->W) return;   /* the official's sf == 1 */
    size_t n = (size_t)bt->B * 3 * bt->H * bt->W;
    yolo_real *src = (yolo_real *)yolo_xmalloc(n * sizeof(yolo_real));
    memcpy(src, bt->images, n * sizeof(yolo_real));
    yolo_resize_bilinear(src, bt->B * 3, bt->H, bt->W, bt->images, H, W);
    free(src);
    bt->H = H; bt->W = W;
}

/* --- --quad: four pictures into one of twice the size --- */

/* The official collate_fn4, group by group of four pictures (the last
   B mod 4 left out): with upsample[g] the group's first picture alone,
   interpolated bilinearly to twice its size (align_corners False) and, as
   the official does with its uint8 pictures, truncated back to whole grey
   levels, with its labels; else the four tiled 2 x 2 (first and second
   down the left column, third and fourth down the right), their labels
   moved to their quarter. Pictures and labels stay normalised. */
static void yolo_quad_collate(yolo_batch *bt, const int *upsample) {
    int n = bt->B / 4, H = bt->H, W = bt->W, nt = 0;
    size_t pic = (size_t)3 * H * W;
    yolo_real *src = (yolo_real *)yolo_xmalloc((size_t)bt->B * pic * sizeof(yolo_real));
    yolo_real *tg = (yolo_real *)yolo_xmalloc(((size_t)bt->nt + 1) * 6 * sizeof(yolo_real));
    memcpy(src, bt->images, (size_t)bt->B * pic * sizeof(yolo_real));
    memcpy(tg, bt->targets, (size_t)bt->nt * 6 * sizeof(yolo_real));
    for (int g = 0; g < n; g++) {
        yolo_real *dst = bt->images + (size_t)g * 4 * pic;   /* [3, 2H, 2W] */
        const yolo_real *four = src + (size_t)g * 4 * pic;
        if (upsample[g]) {
            yolo_real *grey = (yolo_real *)yolo_xmalloc(pic * sizeof(yolo_real));
            for (size_t i = 0; i < pic; i++) grey[i] = (yolo_real)lrint(four[i] * 255);
            yolo_resize_bilinear(grey, 3, H, W, dst, 2 * H, 2 * W);   /* quarters and three quarters: exact */
            for (size_t i = 0; i < 4 * pic; i++) dst[i] = (yolo_real)(floor(dst[i]) / 255);
            free(grey);
        } else {
            for (int c = 0; c < 3; c++)
                for (int y = 0; y < 2 * H; y++)
                    for (int q = 0; q < 2; q++)   /* left half from picture (y >= H), right half from 2 + (y >= H) */
                        memcpy(dst + ((size_t)c * 2 * H + y) * 2 * W + q * W,
                               four + (size_t)(2 * q + (y >= H)) * pic + ((size_t)c * H + y % H) * W, (size_t)W * sizeof(yolo_real));
        }
        for (int t = 0; t < bt->nt; t++) {   /* the group's targets, in order */
            const yolo_real *r = tg + (size_t)t * 6;
            int j = (int)r[0] - 4 * g;
            if (j < 0 || j > 3 || (upsample[g] && j)) continue;
            yolo_real *o = bt->targets + (size_t)nt++ * 6;
            double dx = upsample[g] ? 0 : j >> 1, dy = upsample[g] ? 0 : j & 1, s = upsample[g] ? 1 : 0.5;
            o[0] = (yolo_real)g; o[1] = r[1];
            o[2] = (yolo_real)((r[2] + dx) * s); o[3] = (yolo_real)((r[3] + dy) * s);
            o[4] = (yolo_real)(r[4] * s); o[5] = (yolo_real)(r[5] * s);
        }
    }
    free(src); free(tg);
    bt->B = n; bt->H = 2 * H; bt->W = 2 * W; bt->nt = nt;   /* ids: the first n stay, as the official's paths */
}

/* --quad on batch bt: each group's coin (random.random() < 0.5) drawn from the epoch's seed */
static void yolo_quad(const yolo_loader *ld, yolo_batch *bt) {
    yolo_rng r = { ld->seed ^ (0xA0761D6478BD642Full * (uint64_t)(bt->index + 1)) };
    int *upsample = (int *)yolo_xmalloc((size_t)(bt->B / 4 + 1) * sizeof(int));
    for (int g = 0; g < bt->B / 4; g++) upsample[g] = yolo_rng_uniform(&r) < 0.5;
    yolo_quad_collate(bt, upsample);
    free(upsample);
}

/* --- --image-weights: pictures drawn by the classes they hold --- */

/* As the official train_dual.py (labels_to_class_weights,
   labels_to_image_weights): class c weighs its inverse frequency among the
   training labels (a class without labels counted once), normalised over
   the classes, times (1 - mAP_c)^2, mAP_c its mAP50-95 at the last
   validation: rare classes and badly detected ones weigh more. A picture
   weighs the sum of its labels' class weights (a picture without labels
   nothing). */
void yolo_image_weights(const yolo_dataset *ds, int nc, const double *maps, double *iw) {
    double *cw = (double *)yolo_xcalloc(nc, sizeof(double)), sum = 0;
    for (int i = 0; i < ds->n; i++)
        for (int k = 0; k < ds->nlab[i]; k++) cw[(int)ds->lab[i][k * 5]] += 1;
    for (int c = 0; c < nc; c++) { cw[c] = 1 / fmax(cw[c], 1); sum += cw[c]; }
    for (int c = 0; c < nc; c++) cw[c] = cw[c] / sum * (1 - maps[c]) * (1 - maps[c]);
    for (int i = 0; i < ds->n; i++) {
        iw[i] = 0;
        for (int k = 0; k < ds->nlab[i]; k++) iw[i] += cw[(int)ds->lab[i][k * 5]];
    }
    free(cw);
}

/* k indices of [0, n) drawn with replacement, i with probability
   w[i] / sum w, as random.choices(range(n), weights=w, k=k): a uniform
   draw u sum w finds the first cumulative weight above it. Returns 0, or -1
   (out untouched) when the weights sum to zero. */
static int yolo_weighted_draws(const double *w, int n, int k, uint64_t seed, int *out) {
    double *cum = (double *)yolo_xmalloc((size_t)n * sizeof(double)), total = 0;
    for (int i = 0; i < n; i++) cum[i] = total += w[i];
    yolo_rng r = { seed ^ 0x5851F42D4C957F2Dull };
    for (int j = 0; j < k && total > 0; j++) {
        double u = yolo_rng_uniform(&r) * total;
        int lo = 0, hi = n - 1;
        while (lo < hi) { int mid = (lo + hi) / 2; if (cum[mid] > u) hi = mid; else lo = mid + 1; }
        out[j] = lo;
    }
    free(cum);
    return total > 0 ? 0 : -1;
}

/* --- the loader: batches built by threads ahead of the model --- */


/* The random stream of the training sample at `position` of an epoch: a
   splitmix64 stream whose starting state is itself hashed (one splitmix64
   output of the epoch's seed and the position), so that each sample starts
   at its own random place on the generator's cycle of 2^64 states and no
   two samples draw the same numbers, as the official's draws (one
   Mersenne Twister per loader worker) are independent. An unhashed state
   seed ^ golden (position + 1) put nearby samples' streams a few steps
   apart on the cycle whenever the seed is small (seed 0, epoch 0: every
   sample drew its neighbour's numbers shifted by one, the same mosaic
   partners). */
static yolo_rng yolo_sample_rng(uint64_t epoch_seed, long position) {
    yolo_rng r = { epoch_seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(position + 1)) };
    r.s = yolo_rng_u64(&r);
    return r;
}

/* batch k into slot bt, whose buffers it reuses */
/* The shape of batch k, set when its slot is taken; its samples are then
   made one by one (by several threads at once) and collated last. */
static void yolo_batch_begin(const yolo_loader *ld, int k, yolo_batch *bt) {
    int i0 = k * ld->B, n = ld->n - i0;
    bt->index = k; bt->B = n < ld->B ? n : ld->B; bt->nt = 0;
    bt->H = ld->rect ? ld->bh[k] : ld->S; bt->W = ld->rect ? ld->bw[k] : ld->S;
}

/* The place in the epoch's whole order of this process's picture i: with
   a shard, rank + world i, past the end wrapping round to the start (the
   DistributedSampler pads the order with its head to a multiple of the
   world size). */
static long yolo_loader_place(const yolo_loader *ld, long i) { return ld->rank + (long)ld->world * i; }
static int yolo_loader_picture(const yolo_loader *ld, long i) { return ld->order[yolo_loader_place(ld, i) % ld->ds->n]; }

/* Sample j of batch k into its place in bt: pixels, id, gain and padding,
   and its boxes into bx. Every sample draws from its own random stream
   (yolo_sample_rng, by its place in the whole epoch), so which thread or
   which process makes it changes nothing. */
static int yolo_make_sample(const yolo_loader *ld, int k, int j, yolo_batch *bt, yolo_boxes *bx, char *err) {
    const yolo_dataset *ds = ld->ds;
    int i0 = k * ld->B, H = bt->H, W = bt->W, id = yolo_loader_picture(ld, i0 + j), rc, flips = 0;
    yolo_image im;
    bt->ids[j] = id;
    bx->n = 0;
    if (ld->train) {
        yolo_rng r = yolo_sample_rng(ld->seed, yolo_loader_place(ld, i0 + j));
        rc = yolo_train_sample(ds, id, ld->S, W, H, ld->hyp, ld->mosaic && !ld->rect, &r, &im, bx, &flips, err);
        bt->gain[j] = 1; bt->padx[j] = bt->pady[j] = 0;
    } else {
        rc = yolo_load_resized(ds, id, ld->S, 0, &im, 0, err);
        if (!rc) {
            int w = im.w, h = im.h;
            double ratio, dw, dh;
            yolo_letterbox(&im, W, H, 0, &ratio, &dw, &dh);
            /* as the official scale_boxes: the load's gain (h / h0) times the letterbox's, and the padding */
            bt->gain[j] = (double)h / ds->h0[id] * ratio; bt->padx[j] = dw; bt->pady[j] = dh;
            for (int t = 0; t < ds->nlab[id]; t++) {
                const float *b = ds->lab[id] + t * 5;
                yolo_boxes_add(bx, b[0], b[1] * w * ratio / W, b[2] * h * ratio / H, b[3] * w * ratio / W, b[4] * h * ratio / H);
            }
            for (int t = 0; t < bx->n; t++) {   /* centres shifted by the padding */
                bx->b[t * 5 + 1] = (float)(bx->b[t * 5 + 1] + dw / W);
                bx->b[t * 5 + 2] = (float)(bx->b[t * 5 + 2] + dh / H);
            }
        }
    }
    if (rc) { memset(bt->pixels + (size_t)j * 3 * H * W, 0, (size_t)3 * H * W); bx->n = 0; return rc; }
    yolo_image_to_pixels_flipped(&im, flips, bt->pixels + (size_t)j * 3 * H * W);
    yolo_image_free(&im);
    return 0;
}

/* A bad picture stops the epoch; of several, the first in the epoch's
   order is named, whichever thread met it first. */
static void yolo_loader_fail(yolo_loader *ld, long at, const char *err) {
    pthread_mutex_lock(&ld->mu);
    if (!ld->failed || at < ld->fail_at) { ld->failed = 1; ld->fail_at = at; snprintf(ld->err, sizeof ld->err, "%s", err); }
    pthread_mutex_unlock(&ld->mu);
}

/* Every sample made: the targets [nt, 6] (image, class, cx, cy, w, h) in
   sample order, then what works on the whole batch. */
static void yolo_batch_finish(const yolo_loader *ld, yolo_batch *bt, const yolo_boxes *bx) {
    for (int j = 0; j < bt->B; j++)
        for (int t = 0; t < bx[j].n; t++) {
            bt->targets = (yolo_real *)yolo_grow(bt->targets, 6 * sizeof(yolo_real), bt->nt + 1, &bt->tcap);
            yolo_real *o6 = bt->targets + (size_t)bt->nt++ * 6;
            o6[0] = (yolo_real)j;
            for (int q = 0; q < 5; q++) o6[1 + q] = bx[j].b[t * 5 + q];
        }
    bt->has_images = !ld->pixels_only;
    if (bt->has_images) yolo_pixels_to_input(bt->images, bt->pixels, (size_t)bt->B * 3 * bt->H * bt->W);
    if (ld->quad) yolo_quad(ld, bt);   /* as the official: collated first, then resized */
    if (ld->multi_scale) yolo_multi_scale(ld, bt);
}

/* batch k into slot s on the calling thread (no loader threads) */
static void yolo_make_batch(yolo_loader *ld, int k, int s) {
    yolo_batch *bt = &ld->slots[s];
    yolo_boxes *bx = ld->boxes + (size_t)s * ld->B;
    char err[YOLO_ERR];
    yolo_batch_begin(ld, k, bt);
    for (int j = 0; j < bt->B; j++)
        if (yolo_make_sample(ld, k, j, bt, &bx[j], err)) yolo_loader_fail(ld, (long)k * ld->B + j, err);
    yolo_batch_finish(ld, bt, bx);
}

/* the batch's pictures in [0, 1], made from its pixels when it was handed
   over as pixels */
const yolo_real *yolo_batch_images(yolo_batch *bt) {
    if (!bt->has_images) yolo_pixels_to_input(bt->images, bt->pixels, (size_t)bt->B * 3 * bt->H * bt->W);
    bt->has_images = 1;
    return bt->images;
}

/* the batch as the model's input: its images, or its pixels, normalised
   by the model's backend (on the GPU: a quarter of the bytes uploaded) */
void yolo_set_input_batch(yolo_model *m, const yolo_batch *bt, int b0, int n) {
    size_t at = (size_t)b0 * 3 * bt->H * bt->W;
    if (bt->has_images) yolo_set_input(m, n, bt->H, bt->W, bt->images + at);
    else yolo_set_input_pixels(m, n, bt->H, bt->W, bt->pixels + at);
}

static void yolo_batch_free(yolo_batch *b) {
    free(b->pixels); free(b->images); free(b->targets); free(b->ids); free(b->gain); free(b->padx); free(b->pady);
    memset(b, 0, sizeof *b);
}

/* A loader thread takes one sample at a time: of the oldest batch that
   still has one nobody took, else of a new batch when a slot is free. So
   all threads work on the first batch of an epoch together (it comes
   after a batch's worth of samples shared among them, not after one
   thread made them all), and whoever makes a batch's last sample
   collates it. */
static void *yolo_loader_worker(void *arg) {
    yolo_loader *ld = (yolo_loader *)arg;
    char err[YOLO_ERR];
    pthread_mutex_lock(&ld->mu);
    while (!ld->stop) {
        int k = ld->released;
        while (k < ld->next_make && ld->taken[k % ld->depth] >= ld->slots[k % ld->depth].B) k++;
        if (k == ld->next_make) {
            if (ld->next_make >= ld->nbatch) break;
            if (ld->next_make >= ld->released + ld->depth) { pthread_cond_wait(&ld->cv, &ld->mu); continue; }
            k = ld->next_make++;
            ld->state[k % ld->depth] = 1;
            ld->taken[k % ld->depth] = ld->made[k % ld->depth] = 0;
            yolo_batch_begin(ld, k, &ld->slots[k % ld->depth]);
        }
        int s = k % ld->depth, j = ld->taken[s]++;
        yolo_batch *bt = &ld->slots[s];
        yolo_boxes *bx = ld->boxes + (size_t)s * ld->B;
        pthread_mutex_unlock(&ld->mu);
        double t0 = yolo_now();
        if (yolo_make_sample(ld, k, j, bt, &bx[j], err)) yolo_loader_fail(ld, (long)k * ld->B + j, err);
        pthread_mutex_lock(&ld->mu);
        ld->busy += yolo_now() - t0;
        ld->built++;
        if (++ld->made[s] < bt->B) continue;
        pthread_mutex_unlock(&ld->mu);   /* the last sample: collate, then hand it out */
        t0 = yolo_now();
        yolo_batch_finish(ld, bt, bx);
        pthread_mutex_lock(&ld->mu);
        ld->busy += yolo_now() - t0;
        ld->state[s] = 2;
        pthread_cond_broadcast(&ld->cv);
    }
    pthread_mutex_unlock(&ld->mu);
    return NULL;
}

/* the largest picture as the batches build them: S x S, or the largest rectangle */
static void yolo_loader_picture_shape(const yolo_loader *ld, int *H, int *W) {
    *H = *W = ld->S;
    for (int k = 0; ld->rect && k < ld->nbatch; k++) {
        if (k == 0 || ld->bh[k] * ld->bw[k] > *H * *W) { *H = ld->bh[k]; *W = ld->bw[k]; }
    }
}

/* Batches of B pictures at size S. mode YOLO_LOADER_TRAIN: augmented
   (mosaic on or off), shuffled by seed; with YOLO_LOADER_RECT (--rect):
   augmented without mosaic, in rectangles, in order, as the official rect
   training loader; with YOLO_LOADER_MULTI_SCALE (--multi-scale): every
   batch resized to a size drawn for it (yolo_multi_scale); with
   YOLO_LOADER_QUAD (--quad): B / 4 pictures of twice the size a batch
   (yolo_quad; a last batch of fewer than 4 pictures is left out, where the
   official would fail). mode YOLO_LOADER_VAL: validation rectangles.
   workers 0 builds batches in the caller. */
/* the values of a slot's images: room for the pictures as built and for
   the batch as handed out */
static size_t yolo_loader_slot_values(const yolo_loader *ld) {
    int h, w, H, W;
    yolo_loader_picture_shape(ld, &h, &w);
    yolo_loader_max_shape(ld, &H, &W);
    size_t area = (size_t)h * w > (size_t)H * W / (ld->quad ? 4 : 1) ? (size_t)h * w : (size_t)H * W / (ld->quad ? 4 : 1);
    return (size_t)ld->B * 3 * area;
}

/* pixel buffers in whole pages, as the GPU pins them */
static size_t yolo_page_bytes(size_t bytes) { return (bytes + 4095) / 4096 * 4096; }
static unsigned char *yolo_page_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, yolo_page_bytes(bytes))) { fprintf(stderr, "yolov9: out of host memory (%zu bytes)\n", bytes); exit(1); }
    return (unsigned char *)p;
}

int yolo_loader_workers(int workers, int def, const char *prog) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (workers == YOLO_ABSENT) return cpus > 0 && def > cpus ? (int)cpus : def;
    if (cpus < 1 || workers <= cpus) return workers;
    fprintf(stderr, "%s: --workers %d: %ld CPUs, so %ld loader threads (as the official, at most the CPU count)\n", prog, workers, cpus, cpus);
    return (int)cpus;
}

/* batches an epoch: with --quad a last one of fewer than 4 pictures is dropped */
static int yolo_loader_nbatch(const yolo_loader *ld) {
    int B = ld->B, n = ld->n;
    return (n + B - 1) / B - (ld->quad && n % B && n % B < 4);
}

void yolo_loader_init(yolo_loader *ld, const yolo_dataset *ds, const yolo_hyp *hyp, int B, int S, int mode, int workers) {
    memset(ld, 0, sizeof *ld);
    ld->ds = ds; ld->hyp = hyp; ld->B = B; ld->S = S; ld->train = mode & YOLO_LOADER_TRAIN; ld->mosaic = 1;
    ld->rect = !ld->train || (mode & YOLO_LOADER_RECT);
    ld->multi_scale = ld->train && (mode & YOLO_LOADER_MULTI_SCALE);
    ld->quad = ld->train && (mode & YOLO_LOADER_QUAD);
    ld->pixels_only = (mode & YOLO_LOADER_UINT8) && !ld->quad && !ld->multi_scale;
    ld->n = ds->n; ld->world = 1;
    ld->nbatch = yolo_loader_nbatch(ld);
    ld->nworkers = workers > 0 ? workers : 0;   /* 0: batches built by the caller */
    ld->depth = ld->nworkers + (ld->nworkers ? 2 : 1);
    ld->order = (int *)yolo_xmalloc((size_t)ds->n * sizeof(int));
    for (int i = 0; i < ds->n; i++) ld->order[i] = i;
    if (ld->rect) {   /* sort by aspect ratio h / w, then one rectangle per batch, padded by half a stride for validation */
        double pad = ld->train ? 0 : 0.5, *ar = (double *)yolo_xmalloc((size_t)ds->n * sizeof(double));
        for (int i = 0; i < ds->n; i++) ar[i] = (double)ds->h0[i] / ds->w0[i];
        for (int i = 1; i < ds->n; i++)   /* stable insertion sort: the official argsort of a few thousand */
            for (int j = i; j > 0 && ar[ld->order[j]] < ar[ld->order[j - 1]]; j--) { int t = ld->order[j]; ld->order[j] = ld->order[j - 1]; ld->order[j - 1] = t; }
        ld->bw = (int *)yolo_xmalloc(ld->nbatch * sizeof(int)); ld->bh = (int *)yolo_xmalloc(ld->nbatch * sizeof(int));
        for (int k = 0; k < ld->nbatch; k++) {
            double mn = 1e30, mx = 0, sh = 1, sw = 1;
            for (int j = k * B; j < ds->n && j < (k + 1) * B; j++) { double a = ar[ld->order[j]]; if (a < mn) mn = a; if (a > mx) mx = a; }
            if (mx < 1) { sh = mx; sw = 1; } else if (mn > 1) { sh = 1; sw = 1 / mn; }
            ld->bh[k] = (int)ceil(sh * S / 32 + pad) * 32;
            ld->bw[k] = (int)ceil(sw * S / 32 + pad) * 32;
        }
        free(ar);
    }
    ld->slots = (yolo_batch *)yolo_xcalloc(ld->depth, sizeof(yolo_batch));
    ld->cap = yolo_loader_slot_values(ld);
    for (int s = 0; s < ld->depth; s++) {
        yolo_batch *b = &ld->slots[s];
        b->pixels = yolo_page_alloc(ld->cap);
        b->images = (yolo_real *)yolo_xmalloc(ld->cap * sizeof(yolo_real));
        b->tcap = 64;
        b->targets = (yolo_real *)yolo_xmalloc((size_t)b->tcap * 6 * sizeof(yolo_real));
        b->ids = (int *)yolo_xmalloc((size_t)B * sizeof(int));
        b->gain = (double *)yolo_xmalloc(B * sizeof(double)); b->padx = (double *)yolo_xmalloc(B * sizeof(double));
        b->pady = (double *)yolo_xmalloc(B * sizeof(double));
    }
    ld->state = (int *)yolo_xcalloc(ld->depth, sizeof(int));
    ld->taken = (int *)yolo_xcalloc(ld->depth, sizeof(int));
    ld->made = (int *)yolo_xcalloc(ld->depth, sizeof(int));
    ld->boxes = (yolo_boxes *)yolo_xcalloc((size_t)ld->depth * B, sizeof(yolo_boxes));
    pthread_mutex_init(&ld->mu, NULL);
    pthread_cond_init(&ld->cv, NULL);
}

/* the largest batch shape as handed out (the memory plan's); with --quad
   the batches hold B / 4 pictures */
void yolo_loader_max_shape(const yolo_loader *ld, int *H, int *W) {
    yolo_loader_picture_shape(ld, H, W);
    if (ld->quad) { *H *= 2; *W *= 2; }
    if (ld->multi_scale) *H = *W = yolo_multi_scale_size(ld->S, UINT64_MAX);   /* the largest draw, square */
}

/* Two loaders that never run at once, training and its validation, with
   the same number of workers, hold their batches in the same memory: ld's
   slots take owner's pixels and images, made large enough for both (at
   batch 64 and 640 with 12 workers, validation's batches of 128 pictures
   are the larger: 2.4 GB of pinned pixels for both loaders rather than
   3.5). Before owner is pinned; ld is not used after owner is freed. */
void yolo_loader_share(yolo_loader *ld, yolo_loader *owner) {
    if (ld->depth != owner->depth || ld->shares || owner->pinned_by) return;
    int grow = ld->cap > owner->cap;
    for (int s = 0; s < ld->depth; s++) {
        if (grow) {
            free(owner->slots[s].pixels);
            owner->slots[s].pixels = yolo_page_alloc(ld->cap);
            owner->slots[s].images = (yolo_real *)yolo_xrealloc(owner->slots[s].images, ld->cap * sizeof(yolo_real));
        }
        free(ld->slots[s].pixels); free(ld->slots[s].images);
        ld->slots[s].pixels = owner->slots[s].pixels; ld->slots[s].images = owner->slots[s].images;
    }
    if (grow) owner->cap = ld->cap;
    ld->shares = 1;
}

int yolo_loader_pixels(const yolo_backend *be) { return be != &yolo_cpu ? YOLO_LOADER_UINT8 : 0; }

void yolo_loader_pin(yolo_loader *ld, const yolo_backend *be) {
    if (ld->pinned_by || ld->shares) return;   /* a sharer's pixels are pinned with their owner's */
    for (int s = 0; s < ld->depth; s++) be->pin(ld->slots[s].pixels, yolo_page_bytes(ld->cap), 1);
    ld->pinned_by = be;
}

/* Data parallel: of every epoch's order (the same in every process: one
   seed), process `rank` of `world` takes the places rank, rank + world,
   rank + 2 world, ..., ceil(n / world) pictures, the order padded with its
   own head where n is not a multiple of world: torch's DistributedSampler.
   Its batches are then made of its share. Rectangles are not sharded:
   their batch buffers are sized for the shapes of the whole order. */
int yolo_loader_shard(yolo_loader *ld, int rank, int world) {
    if (ld->rect && world > 1) return -1;
    ld->rank = rank; ld->world = world;
    ld->n = (ld->ds->n + world - 1) / world;
    ld->nbatch = yolo_loader_nbatch(ld);
    return 0;
}

/* the loader's own pace: samples a second that its threads make while
   they work (their waits for a free slot left out) */
double yolo_loader_rate(const yolo_loader *ld) {
    return ld->busy > 0 ? ld->built / ld->busy * (ld->nworkers > 0 ? ld->nworkers : 1) : 0;
}

/* start an epoch: the training order is a seeded shuffle (rectangles keep
   theirs), or with image weights n pictures drawn by them (where they
   weigh nothing at all, the shuffle) */
void yolo_loader_start(yolo_loader *ld, int epoch, uint64_t seed) {
    ld->seed = seed * 1000003ull + (uint64_t)epoch;
    int drawn = ld->train && ld->image_weights && !yolo_weighted_draws(ld->image_weights, ld->ds->n, ld->ds->n, ld->seed, ld->order);
    if (ld->train && !ld->rect && !drawn) {
        yolo_rng r = { ld->seed };
        for (int i = 0; i < ld->ds->n; i++) ld->order[i] = i;
        for (int i = ld->ds->n - 1; i > 0; i--) { int j = (int)(yolo_rng_u64(&r) % (uint64_t)(i + 1)), t = ld->order[i]; ld->order[i] = ld->order[j]; ld->order[j] = t; }
    }
    ld->next_make = ld->next_take = ld->released = ld->failed = ld->stop = 0;
    for (int s = 0; s < ld->depth; s++) ld->state[s] = 0;
    if (ld->nworkers > 0) {
        ld->threads = (pthread_t *)yolo_xmalloc((size_t)ld->nworkers * sizeof(pthread_t));
        for (int t = 0; t < ld->nworkers; t++) pthread_create(&ld->threads[t], NULL, yolo_loader_worker, ld);
    }
}

/* The next batch of the epoch (NULL at its end, or on a bad picture: then
   yolo_loader_error says which). The batch stays valid until the next call. */
yolo_batch *yolo_loader_next(yolo_loader *ld) {
    if (ld->next_take > 0) {   /* give the previous slot back */
        int s = (ld->next_take - 1) % ld->depth;
        pthread_mutex_lock(&ld->mu);
        ld->state[s] = 0;
        ld->released++;
        pthread_cond_broadcast(&ld->cv);
        pthread_mutex_unlock(&ld->mu);
    }
    if (ld->next_take >= ld->nbatch) return NULL;
    int k = ld->next_take, s = k % ld->depth;
    double t0 = yolo_now();
    if (ld->nworkers == 0) {
        yolo_make_batch(ld, k, s);
        ld->state[s] = 2;
        ld->busy += yolo_now() - t0;
        ld->built += ld->slots[s].B;
    }
    pthread_mutex_lock(&ld->mu);
    while (ld->state[s] != 2 || ld->slots[s].index != k) pthread_cond_wait(&ld->cv, &ld->mu);
    ld->next_take++;
    pthread_cond_broadcast(&ld->cv);
    int failed = ld->failed;
    pthread_mutex_unlock(&ld->mu);
    ld->wait += yolo_now() - t0;
    return failed ? NULL : &ld->slots[s];
}

const char *yolo_loader_error(const yolo_loader *ld) { return ld->failed ? ld->err : NULL; }

/* end an epoch (also early): join the threads, free what is left */
void yolo_loader_stop(yolo_loader *ld) {
    pthread_mutex_lock(&ld->mu);
    ld->stop = 1;
    pthread_cond_broadcast(&ld->cv);
    pthread_mutex_unlock(&ld->mu);
    for (int t = 0; ld->threads && t < ld->nworkers; t++) pthread_join(ld->threads[t], NULL);
    free(ld->threads);
    ld->threads = NULL;
    for (int s = 0; s < ld->depth; s++) ld->state[s] = 0;
}

void yolo_loader_free(yolo_loader *ld) {
    yolo_loader_stop(ld);
    pthread_mutex_destroy(&ld->mu);
    pthread_cond_destroy(&ld->cv);
    for (int s = 0; s < ld->depth; s++) {
        if (ld->pinned_by) ld->pinned_by->pin(ld->slots[s].pixels, yolo_page_bytes(ld->cap), 0);
        if (ld->shares) ld->slots[s].pixels = NULL, ld->slots[s].images = NULL;
        yolo_batch_free(&ld->slots[s]);
    }
    for (long i = 0; i < (long)ld->depth * ld->B; i++) free(ld->boxes[i].b);
    free(ld->order); free(ld->bw); free(ld->bh); free(ld->slots); free(ld->state); free(ld->taken); free(ld->made); free(ld->boxes);
    memset(ld, 0, sizeof *ld);
}

/* --cache ram: every picture decoded and resized (to S, for training when
   augment) once and kept in memory. --cache disk: kept in a .npy file
   beside it instead, PICTURE.S.npy for training and PICTURE.S-area.npy for
   validation (shrunk with INTER_AREA), made when missing or older than the
   picture; loads then read it back rather than decode. A picture that
   cannot be decoded stays uncached (its load reports it); a .npy file that
   cannot be written is an error. */
int yolo_dataset_cache(yolo_dataset *ds, yolo_cache_kind kind, int S, int augment, char *err) {
    if (kind == YOLO_CACHE_NONE) return 0;
    if (kind == YOLO_CACHE_RAM) ds->cache = (yolo_image *)yolo_xcalloc(ds->n, sizeof(yolo_image));
    char **npy = kind == YOLO_CACHE_DISK ? (char **)yolo_xcalloc(ds->n, sizeof(char *)) : NULL;
    int failed = -1;
    #pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < ds->n; i++) {
        char e[YOLO_ERR];
        yolo_image im = { 0, 0, NULL };
        if (kind == YOLO_CACHE_RAM) {
            if (!yolo_load_resized(ds, i, S, augment, &im, 0, e)) ds->cache[i] = im;
            continue;
        }
        size_t len = strlen(ds->files[i]) + 32;
        char *path = (char *)yolo_xmalloc(len), *dot = strrchr(ds->files[i], '.'), *slash = strrchr(ds->files[i], '/');
        int stem = dot && (!slash || dot > slash) ? (int)(dot - ds->files[i]) : (int)strlen(ds->files[i]);
        snprintf(path, len, "%.*s.%d%s.npy", stem, ds->files[i], S, augment ? "" : "-area");
        struct stat sp, sn;
        if (!stat(path, &sn) && !stat(ds->files[i], &sp) && sn.st_mtime >= sp.st_mtime) { npy[i] = path; continue; }
        if (yolo_load_resized(ds, i, S, augment, &im, 0, e)) { free(path); continue; }
        if (yolo_npy_write(path, &im)) {
            #pragma omp critical
            if (failed < 0) failed = i;
            free(path);
        } else npy[i] = path;
        yolo_image_free(&im);
    }
    ds->npy = npy;
    if (failed >= 0) return yolo_errorf(err, "%s: cannot write its --cache disk file beside it", ds->files[failed]);
    return 0;
}
#endif /* YOLO_NO_DATA */

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 14. evaluation: NMS, matching, AP                                        */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING

/* What validation collects, image by image: every detection with its
   confidence, class and whether it is a true positive at each of the ten
   IoU thresholds 0.50:0.05:0.95 (bit t), and the class of every label. */
typedef struct {
    long n, nt;              /* detections, labels */
    int cap, tcap;           /* room for them */
    float *conf;             /* [n] */
    int *cls;                /* [n] */
    unsigned short *tp;      /* [n] bit t: matched at IoU >= 0.50 + 0.05 t */
    int *tcls;               /* [nt] */
    int images;
} yolo_eval;

/* The official metrics: P and R at the confidence of the best mean F1,
   AP per class (101-point interpolation) at IoU 0.50 and averaged over
   0.50:0.95, and their means over the classes that have labels. */
#define YOLO_CURVE_POINTS 1000   /* the official px = linspace(0, 1, 1000) */
typedef struct {
    int nc;
    double p, r, map50, map;
    int *nt;                 /* [nc] labels per class */
    double *cp, *cr, *ap50, *ap;  /* [nc] per class (0 where no labels) */
    /* [nc][YOLO_CURVE_POINTS] the curves the plots draw (NULL when nothing
       was detected right): precision, recall and F1 against the
       confidence px, and precision against the recall px (IoU 0.5) */
    double *p_curve, *r_curve, *f1_curve, *pr_curve;
} yolo_metrics;

/* the official ConfusionMatrix: m[predicted][true], class nc the background */
typedef struct { int nc; double *m; } yolo_confusion;   /* m: [(nc + 1) * (nc + 1)] */


typedef struct { double pre, infer, nms; int images; } yolo_times;   /* seconds, summed */
/* called with every validation picture's detections in its own pixels */
typedef void (*yolo_det_hook)(void *ctx, int id, const yolo_det *d, int n);

YOLO_C_BEGIN
int  yolo_nms(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres,
              int max_det, int agnostic, const int *classes, int nclasses,
              yolo_det *out);
/* multi_label = 1: an anchor is a candidate for every class above
   conf_thres, as the official validation's NMS (multi_label=True) */
int  yolo_nms_labels(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres, int max_det, int agnostic,
                     const int *classes, int nclasses, int multi_label, yolo_det *out);
/* evaluation: matching, AP, the validation pass */
/* a box from the letterboxed input (scaled by gain, padded by padx, pady)
   back onto its w0 x h0 picture, clipped to it: the official scale_boxes */
void yolo_box_to_picture(float *x1, float *y1, float *x2, float *y2, double gain, double padx, double pady, int w0, int h0);
/* --save-txt: one line per detection, "class cx cy w h" (and " conf" with
   with_conf), normalised to its w0 x h0 picture, no file without one; -1
   (and a line) when the file cannot be written */
int yolo_save_txt(const char *path, const yolo_det *d, int n, double w0, double h0, int with_conf);
void yolo_eval_add(yolo_eval *ev, const yolo_det *det, int nd, const float *lab, int nl);
void yolo_eval_free(yolo_eval *ev);
void yolo_metrics_compute(const yolo_eval *ev, int nc, yolo_metrics *mt);
void yolo_metrics_free(yolo_metrics *mt);
double yolo_fitness(const yolo_metrics *mt);
/* the official validation table on stdout: the line "all" (pictures,
   labels, P, R, mAP50, mAP50-95) and, with per_class, one line per class
   with labels (names may be NULL) */
void yolo_metrics_print(const yolo_metrics *mt, const yolo_eval *ev, char *const *names, int per_class);
#ifndef YOLO_NO_DATA
/* the validation pass over ld's batches: NMS at conf, iou, max_det, each picture's detections and labels into ev
   (and hook). The model takes at most per_forward pictures a forward (0: a whole batch): a batch's rectangle
   is the loader's, of its B pictures, and the memory the model's, of per_forward */
int  yolo_validate(yolo_model *m, yolo_loader *ld, int per_forward, float conf, float iou, int max_det, int single_cls,
                   yolo_eval *ev, yolo_times *tm, yolo_det_hook hook, void *ctx, char *err);
#endif
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* As the official non_max_suppression: candidates (an anchor's best class,
   or with multi_label every class) whose probability exceeds conf_thres,
   sorted by it (at most 30000),
   then greedy suppression of boxes with IoU > iou_thres against a kept one.
   Class-aware by offsetting each box by class * 7680 pixels, so boxes of
   different classes never overlap. pred: one image, [4 + NC, A]. */
typedef struct { double conf, x1, y1, x2, y2; int a, cls; } yolo_cand;
static int yolo_cand_cmp(const void *x, const void *y) {
    const yolo_cand *a = (const yolo_cand *)x, *b = (const yolo_cand *)y;
    if (a->conf != b->conf) return a->conf < b->conf ? 1 : -1;
    return a->a != b->a ? a->a - b->a : a->cls - b->cls;
}

/* Moves the k first candidates in yolo_cand_cmp's order to c[0..k) (in no
   particular order), by quickselect: an untrained model can have all 8400 x 80
   anchor-classes above 0.001, and sorting them all would cost more than the
   forward pass. The order is total, so the result is that of a full sort. */
static void yolo_cand_select(yolo_cand *c, int n, int k) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        yolo_cand pivot = c[lo + (hi - lo) / 2], t;
        int i = lo, j = hi;
        while (i <= j) {
            while (yolo_cand_cmp(&c[i], &pivot) < 0) i++;
            while (yolo_cand_cmp(&c[j], &pivot) > 0) j--;
            if (i <= j) { t = c[i]; c[i] = c[j]; c[j] = t; i++; j--; }
        }
        if (k - 1 <= j) hi = j;          /* c[lo..j] <= pivot <= c[i..hi] */
        else if (k - 1 >= i) lo = i;
        else break;                       /* c[k-1] equals the pivot: done */
    }
}

int yolo_nms_labels(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres, int max_det, int agnostic,
                    const int *classes, int nclasses, int multi_label, yolo_det *out) {
    int cap = A ? A : 1, n = 0;
    yolo_cand *c = (yolo_cand *)yolo_xmalloc((size_t)cap * sizeof(yolo_cand));
    for (int a = 0; a < A; a++) {
        int best = 0;
        for (int k = 1; k < nc; k++) if (pred[(size_t)(4 + k) * A + a] > pred[(size_t)(4 + best) * A + a]) best = k;
        if (!(pred[(size_t)(4 + best) * A + a] > conf_thres)) continue;
        /* the best class, or with multi_label every class above the threshold */
        for (int k = multi_label ? 0 : best; k < (multi_label ? nc : best + 1); k++) {
            double conf = pred[(size_t)(4 + k) * A + a];
            if (!(conf > conf_thres)) continue;
            if (classes) {
                int ok = 0;
                for (int q = 0; q < nclasses; q++) ok |= classes[q] == k;
                if (!ok) continue;
            }
            c = (yolo_cand *)yolo_grow(c, sizeof(yolo_cand), n + 1, &cap);
            double cx = pred[a], cy = pred[(size_t)A + a], w = pred[(size_t)2 * A + a], h = pred[(size_t)3 * A + a];
            yolo_cand d = { conf, cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, a, k };
            c[n++] = d;
        }
    }
    if (n > 30000) { yolo_cand_select(c, n, 30000); n = 30000; }
    qsort(c, n, sizeof *c, yolo_cand_cmp);
    unsigned char *dead = (unsigned char *)yolo_xcalloc(n ? n : 1, 1);
    int kept = 0;
    for (int i = 0; i < n && kept < max_det; i++) {
        if (dead[i]) continue;
        const yolo_cand *p = &c[i];
        yolo_det d = { (float)p->x1, (float)p->y1, (float)p->x2, (float)p->y2, (float)p->conf, p->cls };
        out[kept++] = d;
        double pa = (p->x2 - p->x1) * (p->y2 - p->y1);
        for (int j = i + 1; j < n; j++) {
            const yolo_cand *q = &c[j];
            if (dead[j] || (!agnostic && q->cls != p->cls)) continue;   /* the 7680 px class offset, in effect */
            double iw = fmin(p->x2, q->x2) - fmax(p->x1, q->x1), ih = fmin(p->y2, q->y2) - fmax(p->y1, q->y1);
            if (iw <= 0 || ih <= 0) continue;
            double inter = iw * ih, qa = (q->x2 - q->x1) * (q->y2 - q->y1);
            if (inter / (pa + qa - inter) > iou_thres) dead[j] = 1;
        }
    }
    free(c); free(dead);
    return kept;
}

int yolo_nms(const yolo_real *pred, int A, int nc, float conf_thres, float iou_thres, int max_det,
             int agnostic, const int *classes, int nclasses, yolo_det *out) {
    return yolo_nms_labels(pred, A, nc, conf_thres, iou_thres, max_det, agnostic, classes, nclasses, 0, out);
}

/* --- matching and average precision --- */

void yolo_eval_free(yolo_eval *ev) {
    free(ev->conf); free(ev->cls); free(ev->tp); free(ev->tcls);
    memset(ev, 0, sizeof *ev);
}

/* One image: detections and labels (class, x1, y1, x2, y2), both in the
   original picture's pixels. At each threshold, as the official
   process_batch: the (label, detection) pairs of one class with IoU at or
   above it; every detection keeps its best-IoU pair; then every label
   keeps, among the pairs left, the one of the earliest detection (the
   detections come sorted by confidence). */
void yolo_eval_add(yolo_eval *ev, const yolo_det *det, int nd, const float *lab, int nl) {
    int cap = ev->cap;   /* three arrays of one capacity */
    ev->conf = (float *)yolo_grow(ev->conf, sizeof(float), ev->n + nd, &cap);
    cap = ev->cap;
    ev->cls = (int *)yolo_grow(ev->cls, sizeof(int), ev->n + nd, &cap);
    ev->tp = (unsigned short *)yolo_grow(ev->tp, sizeof(unsigned short), ev->n + nd, &ev->cap);
    ev->tcls = (int *)yolo_grow(ev->tcls, sizeof(int), ev->nt + nl, &ev->tcap);
    for (int j = 0; j < nl; j++) ev->tcls[ev->nt + j] = (int)lab[j * 5];
    ev->images++;
    /* IoU in float32 with eps 1e-7, as torch's box_iou there */
    float *iou = (float *)yolo_xmalloc((size_t)(nl ? nl : 1) * (nd ? nd : 1) * sizeof(float));
    for (int j = 0; j < nl; j++)
        for (int i = 0; i < nd; i++) {
            const float *l = lab + j * 5;
            const yolo_det *d = &det[i];
            float iw = fminf(l[3], d->x2) - fmaxf(l[1], d->x1), ih = fminf(l[4], d->y2) - fmaxf(l[2], d->y1);
            float inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
            float a1 = (l[3] - l[1]) * (l[4] - l[2]), a2 = (d->x2 - d->x1) * (d->y2 - d->y1);
            iou[(size_t)j * nd + i] = inter / (a1 + a2 - inter + 1e-7f);
        }
    int *best = (int *)yolo_xmalloc((size_t)(nd ? nd : 1) * sizeof(int));   /* detection -> label */
    int *taken = (int *)yolo_xmalloc((size_t)(nl ? nl : 1) * sizeof(int));  /* label -> detection */
    for (int i = 0; i < nd; i++) { ev->conf[ev->n + i] = det[i].conf; ev->cls[ev->n + i] = det[i].cls; ev->tp[ev->n + i] = 0; }
    for (int t = 0; t < 10; t++) {
        float thr = (float)(0.5 + 0.05 * t);
        for (int i = 0; i < nd; i++) {
            best[i] = -1;
            for (int j = 0; j < nl; j++) {
                float v = iou[(size_t)j * nd + i];
                if ((int)lab[j * 5] != det[i].cls || !(v >= thr)) continue;
                /* ties: the official's reversed stable sort keeps the last label */
                if (best[i] < 0 || v >= iou[(size_t)best[i] * nd + i]) best[i] = j;
            }
        }
        for (int j = 0; j < nl; j++) taken[j] = -1;
        for (int i = 0; i < nd; i++)
            if (best[i] >= 0 && taken[best[i]] < 0) { taken[best[i]] = i; ev->tp[ev->n + i] |= (unsigned short)(1u << t); }
    }
    ev->n += nd; ev->nt += nl;
    free(iou); free(best); free(taken);
}

typedef struct { float conf; long i; } yolo_ranked;
static int yolo_conf_desc(const void *a, const void *b) {
    const yolo_ranked *x = (const yolo_ranked *)a, *y = (const yolo_ranked *)b;
    if (x->conf != y->conf) return x->conf < y->conf ? 1 : -1;
    return x->i < y->i ? -1 : 1;
}

/* 101-point interpolated AP of one precision-recall curve: the precision
   envelope (running maximum from the right), sampled at recall 0, 0.01,
   ..., 1 and integrated by the trapezoid rule. curve (NULL: not wanted)
   gets the envelope at recall px = linspace(0, 1, YOLO_CURVE_POINTS). */
static double yolo_compute_ap(const double *recall, const double *precision, long n, double *curve) {
    double *mrec = (double *)yolo_xmalloc((size_t)(n + 2) * sizeof(double)), *mpre = (double *)yolo_xmalloc((size_t)(n + 2) * sizeof(double));
    mrec[0] = 0; mpre[0] = 1;
    for (long i = 0; i < n; i++) { mrec[i + 1] = recall[i]; mpre[i + 1] = precision[i]; }
    mrec[n + 1] = 1; mpre[n + 1] = 0;
    for (long i = n; i >= 0; i--) if (mpre[i + 1] > mpre[i]) mpre[i] = mpre[i + 1];
    double ap = 0, prev = 0;
    for (int k = 0; k <= 100; k++) {
        double x = k / 100.0, y = yolo_interp(x, mrec, mpre, n + 2, mpre[0], mpre[n + 1]);
        if (k) ap += 0.01 * (y + prev) / 2;
        prev = y;
    }
    for (int k = 0; curve && k < YOLO_CURVE_POINTS; k++)
        curve[k] = yolo_interp((double)k / (YOLO_CURVE_POINTS - 1), mrec, mpre, n + 2, mpre[0], mpre[n + 1]);
    free(mrec); free(mpre);
    return ap;
}

void yolo_metrics_free(yolo_metrics *mt) {
    free(mt->nt); free(mt->cp); free(mt->cr); free(mt->ap50); free(mt->ap);
    free(mt->p_curve); free(mt->r_curve); free(mt->f1_curve); free(mt->pr_curve);
    memset(mt, 0, sizeof *mt);
}

/* The official ap_per_class, then the means. */
void yolo_metrics_compute(const yolo_eval *ev, int nc, yolo_metrics *mt) {
    memset(mt, 0, sizeof *mt);
    mt->nc = nc;
    mt->nt = (int *)yolo_xcalloc(nc, sizeof(int));
    mt->cp = (double *)yolo_xcalloc(nc, sizeof(double)); mt->cr = (double *)yolo_xcalloc(nc, sizeof(double));
    mt->ap50 = (double *)yolo_xcalloc(nc, sizeof(double)); mt->ap = (double *)yolo_xcalloc(nc, sizeof(double));
    for (long j = 0; j < ev->nt; j++) if (ev->tcls[j] >= 0 && ev->tcls[j] < nc) mt->nt[ev->tcls[j]]++;
    int any = 0;   /* the official computes nothing unless one detection is right somewhere */
    for (long i = 0; i < ev->n && !any; i++) any = ev->tp[i] != 0;
    if (!any) return;
    yolo_ranked *rk = (yolo_ranked *)yolo_xmalloc((size_t)(ev->n ? ev->n : 1) * sizeof(yolo_ranked));
    for (long i = 0; i < ev->n; i++) { rk[i].conf = ev->conf[i]; rk[i].i = i; }
    qsort(rk, ev->n, sizeof *rk, yolo_conf_desc);
    const int NP = YOLO_CURVE_POINTS;
    double *pc = (double *)yolo_xcalloc((size_t)nc * NP, sizeof(double)), *rc = (double *)yolo_xcalloc((size_t)nc * NP, sizeof(double));
    mt->pr_curve = (double *)yolo_xcalloc((size_t)nc * NP, sizeof(double));
    double *negconf = (double *)yolo_xmalloc((size_t)(ev->n + 1) * sizeof(double));
    double *rec = (double *)yolo_xmalloc((size_t)(ev->n + 1) * 10 * sizeof(double)), *pre = (double *)yolo_xmalloc((size_t)(ev->n + 1) * 10 * sizeof(double));
    int ncls = 0;
    for (int c = 0; c < nc; c++) {
        if (!mt->nt[c]) continue;
        ncls++;
        long np = 0;
        double tpc[10] = { 0 }, fpc[10] = { 0 };
        for (long k = 0; k < ev->n; k++) {
            long i = rk[k].i;
            if (ev->cls[i] != c) continue;
            negconf[np] = -(double)ev->conf[i];
            for (int t = 0; t < 10; t++) {
                if (ev->tp[i] >> t & 1) tpc[t] += 1; else fpc[t] += 1;
                rec[(size_t)t * (ev->n + 1) + np] = tpc[t] / (mt->nt[c] + 1e-16);
                pre[(size_t)t * (ev->n + 1) + np] = tpc[t] / (tpc[t] + fpc[t]);
            }
            np++;
        }
        if (!np) continue;
        for (int k = 0; k < NP; k++) {   /* curves at px = linspace(0, 1, 1000), IoU 0.50 */
            double x = -(double)k / (NP - 1);
            rc[(size_t)c * NP + k] = yolo_interp(x, negconf, rec, np, 0, rec[np - 1]);
            pc[(size_t)c * NP + k] = yolo_interp(x, negconf, pre, np, 1, pre[np - 1]);
        }
        double s = 0;
        for (int t = 0; t < 10; t++) {
            double a = yolo_compute_ap(rec + (size_t)t * (ev->n + 1), pre + (size_t)t * (ev->n + 1), np,
                                       t == 0 ? mt->pr_curve + (size_t)c * NP : NULL);
            if (t == 0) mt->ap50[c] = a;
            s += a;
        }
        mt->ap[c] = s / 10;
    }
    /* the confidence of the best mean F1 (smoothed by a box filter of 101) */
    double *f1 = (double *)yolo_xcalloc(NP, sizeof(double)), best = -1;
    mt->f1_curve = (double *)yolo_xcalloc((size_t)nc * NP, sizeof(double));
    int bi = 0;
    for (int k = 0; k < NP; k++) {
        for (int c = 0; c < nc; c++)
            if (mt->nt[c]) {
                double p = pc[(size_t)c * NP + k], r = rc[(size_t)c * NP + k];
                f1[k] += mt->f1_curve[(size_t)c * NP + k] = 2 * p * r / (p + r + 1e-16);
            }
        f1[k] /= ncls;
    }
    for (int k = 0; k < NP; k++) {
        double s = 0;
        for (int q = k - 50; q <= k + 50; q++) s += f1[q < 0 ? 0 : q >= NP ? NP - 1 : q];
        if (s / 101 > best) { best = s / 101; bi = k; }
    }
    for (int c = 0; c < nc; c++) {
        if (!mt->nt[c]) continue;
        mt->cp[c] = pc[(size_t)c * NP + bi]; mt->cr[c] = rc[(size_t)c * NP + bi];
        mt->p += mt->cp[c] / ncls; mt->r += mt->cr[c] / ncls;
        mt->map50 += mt->ap50[c] / ncls; mt->map += mt->ap[c] / ncls;
    }
    mt->p_curve = pc; mt->r_curve = rc;
    free(rk); free(negconf); free(rec); free(pre); free(f1);
}

static float yolo_unpad(double v, double pad, double gain, int size) { return (float)fmin(fmax((v - pad) / gain, 0), size); }
void yolo_box_to_picture(float *x1, float *y1, float *x2, float *y2, double gain, double padx, double pady, int w0, int h0) {
    *x1 = yolo_unpad(*x1, padx, gain, w0); *x2 = yolo_unpad(*x2, padx, gain, w0);
    *y1 = yolo_unpad(*y1, pady, gain, h0); *y2 = yolo_unpad(*y2, pady, gain, h0);
}

int yolo_save_txt(const char *path, const yolo_det *d, int n, double w0, double h0, int with_conf) {
    if (!n) return 0;   /* no file, as the official (which appends a file row by row) */
    FILE *f = yolo_create_file(path, "w");
    if (!f) return -1;
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d %.6g %.6g %.6g %.6g", d[i].cls, (d[i].x1 + d[i].x2) / 2 / w0, (d[i].y1 + d[i].y2) / 2 / h0,
                (d[i].x2 - d[i].x1) / w0, (d[i].y2 - d[i].y1) / h0);
        if (with_conf) fprintf(f, " %.6g", d[i].conf);
        fprintf(f, "\n");
    }
    return yolo_close_written(f, path);
}

/* fitness of a checkpoint, as the official: 0.1 mAP50 + 0.9 mAP50-95 */
double yolo_fitness(const yolo_metrics *mt) { return 0.1 * mt->map50 + 0.9 * mt->map; }

void yolo_metrics_print(const yolo_metrics *mt, const yolo_eval *ev, char *const *names, int per_class) {
    printf("%22s %10d %10ld %10.3g %10.3g %10.3g %10.3g\n", "all", ev->images, ev->nt, mt->p, mt->r, mt->map50, mt->map);
    for (int c = 0; per_class && c < mt->nc; c++)
        if (mt->nt[c])
            printf("%22s %10d %10d %10.3g %10.3g %10.3g %10.3g\n", names ? names[c] : "", ev->images, mt->nt[c], mt->cp[c],
                   mt->cr[c], mt->ap50[c], mt->ap[c]);
}

#ifndef YOLO_NO_DATA
/* --- validation: the model over a loader --- */

/* Every validation picture through the model (its eval form: call
   yolo_model_fuse first for speed), the detections scaled back to the
   original pixels and clipped to it, as the official scale_boxes, then
   matched against the labels into ev. hook, when given, sees every
   picture's detections (for --save-txt / --save-json). single_cls
   (--single-cls, the dataset's labels already all 0): as the official,
   one NMS over all classes (agnostic), then every detection class 0.
   Returns 0, or -1 with err when a picture cannot be read. */
int yolo_validate(yolo_model *m, yolo_loader *ld, int per_forward, float conf, float iou, int max_det, int single_cls,
                  yolo_eval *ev, yolo_times *tm, yolo_det_hook hook, void *ctx, char *err) {
    const yolo_dataset *ds = ld->ds;
    if (per_forward <= 0 || per_forward > ld->B) per_forward = ld->B;
    yolo_det **dets = (yolo_det **)yolo_xmalloc((size_t)ld->B * sizeof(yolo_det *));
    int *count = (int *)yolo_xmalloc((size_t)ld->B * sizeof(int));
    for (int b = 0; b < ld->B; b++) dets[b] = (yolo_det *)yolo_xmalloc((size_t)max_det * sizeof(yolo_det));
    float *lab = NULL;
    int labcap = 0;
    yolo_loader_start(ld, 0, 0);
    for (yolo_batch *bt; (bt = yolo_loader_next(ld));) {
        for (int b0 = 0; b0 < bt->B; b0 += per_forward) {
            int n = bt->B - b0 < per_forward ? bt->B - b0 : per_forward;
            double t0 = yolo_now();
            yolo_set_input_batch(m, bt, b0, n);   /* uint8 pixels (YOLO_LOADER_UINT8) become the input in the forward */
            m->be->sync();
            double t1 = yolo_now();
            yolo_forward(m, 0);
            m->be->sync();
            double t2 = yolo_now();
            yolo_predict(m, conf, iou, max_det, single_cls, NULL, 0, 1, dets + b0, count + b0);   /* multi-label, as the official validation */
            double t3 = yolo_now();
            if (tm) { tm->pre += t1 - t0; tm->infer += t2 - t1; tm->nms += t3 - t2; tm->images += n; }
        }
        lab = (float *)yolo_grow(lab, 5 * sizeof(float), bt->nt, &labcap);
        for (int b = 0, t = 0; b < bt->B; b++) {
            int id = bt->ids[b], w0 = ds->w0[id], h0 = ds->h0[id], nl = 0;
            double g = bt->gain[b], px = bt->padx[b], py = bt->pady[b];
            for (int i = 0; i < count[b]; i++) {
                yolo_det *d = &dets[b][i];
                yolo_box_to_picture(&d->x1, &d->y1, &d->x2, &d->y2, g, px, py, w0, h0);
                if (single_cls) d->cls = 0;
            }
            /* the batch's targets come image by image: this picture's boxes, back to its pixels */
            for (; t < bt->nt && (int)bt->targets[t * 6] == b; t++) {
                const yolo_real *r = bt->targets + t * 6;
                double cx = r[2] * bt->W, cy = r[3] * bt->H, w = r[4] * bt->W, h = r[5] * bt->H;
                float *o = lab + (size_t)nl++ * 5;   /* class, x1, y1, x2, y2 */
                o[0] = (float)r[1];
                o[1] = yolo_unpad(cx - w / 2, px, g, w0); o[2] = yolo_unpad(cy - h / 2, py, g, h0);
                o[3] = yolo_unpad(cx + w / 2, px, g, w0); o[4] = yolo_unpad(cy + h / 2, py, g, h0);
            }
            yolo_eval_add(ev, dets[b], count[b], lab, nl);
            if (hook) hook(ctx, id, dets[b], count[b]);
        }
    }
    const char *e = yolo_loader_error(ld);
    int rc = e ? yolo_errorf(err, "%s", e) : 0;
    yolo_loader_stop(ld);
    for (int b = 0; b < ld->B; b++) free(dets[b]);
    free(dets); free(count); free(lab);
    return rc;
}
#endif /* YOLO_NO_DATA */

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 15. command line: the official flags                                     */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING

/* The programs take the official scripts' flags with their spelling and
   their argparse arity: a boolean flag takes no value, nargs='?' an
   optional one (its constant when absent), nargs='+' one or more. One
   table of yolo_flag per program says which, and for a number the range
   it allows: a value outside it is refused (yolo_read_number). A flag
   that has a default starts at it; one whose absence means something
   else starts at YOLO_ABSENT, which no range holds: 0 is a value, never
   "not given". */
typedef enum { YOLO_FLAG_BOOL, YOLO_FLAG_INT, YOLO_FLAG_FLOAT, YOLO_FLAG_STR, YOLO_FLAG_OPT, YOLO_FLAG_INTS } yolo_flag_kind;
#define YOLO_MAX_INTS 256
typedef struct { int n, v[YOLO_MAX_INTS]; } yolo_ints;   /* the values of a nargs='+' flag */
typedef struct {
    const char *names;       /* its spellings, space-separated: "--imgsz --img --img-size" */
    yolo_flag_kind kind;
    void *value;             /* int *, double *, const char **, yolo_ints *; NULL: accepted, but does not apply here */
    const char *help;        /* one line for --help; with value NULL, why it does not apply */
    const char *constant;    /* YOLO_FLAG_OPT: the value when the flag comes alone; YOLO_FLAG_INT,
                                _FLOAT: one value taken outside [lo, hi] ("-1": --batch-size's AutoBatch) */
    double lo, hi;           /* YOLO_FLAG_INT, _FLOAT, _INTS: the range of a value */
} yolo_flag;

/* A progress bar: on a terminal one line redrawn in place, into a file
   (a log) the same line every 10 seconds and once at the end. */
typedef struct {
    FILE *f;
    int tty;
    long total;
    double t0, last;         /* when it started, when a line last went to the file */
} yolo_progress;
/* validation's bar: yolo_val_progress_hook with a yolo_val_progress as
   yolo_validate's hook counts the pictures, then hands them to next */
typedef struct { yolo_progress bar; long done; yolo_det_hook next; void *next_ctx; } yolo_val_progress;

YOLO_C_BEGIN
/* the command line (section 15): flags into their values. --help or -h
   prints the table and exits 0; an unknown flag, a missing value, one
   that is no number in the flag's range: one line, exit 2. A flag that
   does not apply says so in one line on stderr and the run goes on. */
void yolo_flags_parse(const yolo_flag *flags, int nflags, int argc, char **argv, const char *prog, const char *usage);
/* the same without --help and exit: 0, or -1 and err, one line from where ("train", or a checkpoint's args) */
int  yolo_flags_read(const yolo_flag *flags, int nflags, int argc, char **argv, const char *where, char *err);
void yolo_flags_usage(const yolo_flag *flags, int nflags, const char *prog, const char *usage, FILE *f);
/* --img as the official check_img_size: rounded up to a multiple of the
   largest stride (32), at least floor, with a warning when it changes */
int  yolo_check_img_size(int img, int floor, const char *prog);
/* progress: done of total, the columns left of the bar (the official
   ones: epoch, memory, losses ...) and right of it (rates) */
void yolo_progress_start(yolo_progress *p, FILE *f, long total);
void yolo_progress_show(yolo_progress *p, long done, const char *left, const char *right);
void yolo_val_progress_start(yolo_val_progress *v, long pictures, yolo_det_hook next, void *next_ctx);
void yolo_val_progress_hook(void *ctx, int id, const yolo_det *d, int n);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING

/* The flag named k[0..klen): one of its spellings, else, as argparse
   reads long options, the one flag that has spellings beginning with k
   (--conf for --conf-thres). NULL when no flag does, or when several do:
   then *matches lists the spellings that begin with k. Unlike argparse,
   a prefix of several spellings of one flag (--im: --imgsz, --img,
   --img-size) is that flag. */
static const yolo_flag *yolo_flag_find(const yolo_flag *flags, int nflags, const char *k, size_t klen, char *matches, size_t cap) {
    const yolo_flag *found = NULL;
    int several = 0;
    size_t o = 0;
    matches[0] = 0;
    for (int exact = 1; exact >= 0 && !found; exact--)
        for (int i = 0; i < nflags; i++)
            for (const char *s = flags[i].names; *s;) {
                size_t n = strcspn(s, " ");
                if ((exact ? n == klen : n > klen) && !strncmp(s, k, klen)) {
                    if (exact) return &flags[i];
                    several |= found && found != &flags[i];
                    found = &flags[i];
                    if (o < cap) o += snprintf(matches + o, cap - o, "%s%.*s", o ? ", " : "", (int)n, s);
                }
                s += n; while (*s == ' ') s++;
            }
    return several ? NULL : found;
}

void yolo_flags_usage(const yolo_flag *flags, int nflags, const char *prog, const char *usage, FILE *f) {
    static const char *metavar[] = { "", " N", " X", " S", " [S]", " N [N ...]" };
    fprintf(f, "usage: %s %s\n", prog, usage);
    for (int i = 0; i < nflags; i++) {
        char left[128], range[64] = "";
        snprintf(left, sizeof left, "%.*s%s", (int)strcspn(flags[i].names, " "), flags[i].names, metavar[flags[i].kind]);
        if (flags[i].value && (flags[i].kind == YOLO_FLAG_INT || flags[i].kind == YOLO_FLAG_FLOAT || flags[i].kind == YOLO_FLAG_INTS))
            snprintf(range, sizeof range, " [%.16g, %.16g]%s%.16s", flags[i].lo, flags[i].hi, flags[i].constant ? " or " : "",
                     flags[i].constant ? flags[i].constant : "");
        fprintf(f, "  %-28s %s%s%s%s\n", left, flags[i].value ? "" : "(does not apply here: ", flags[i].help, range, flags[i].value ? "" : ")");
    }
}

int yolo_flags_read(const yolo_flag *flags, int nflags, int argc, char **argv, const char *where, char *err) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2)) return yolo_errorf(err, "%s: unexpected argument '%.100s'", where, a);
        const char *eq = strchr(a, '=');   /* --flag=value, as argparse */
        char name[64], matches[512];
        size_t klen = eq ? (size_t)(eq - a) : strlen(a);
        snprintf(name, sizeof name, "%.*s", (int)klen, a);
        const yolo_flag *f = yolo_flag_find(flags, nflags, a, klen, matches, sizeof matches);
        if (!f && matches[0]) return yolo_errorf(err, "%s: ambiguous flag %s could match %s", where, name, matches);
        if (!f) return yolo_errorf(err, "%s: unknown flag %s", where, name);
        /* its values: the =value, else the next arguments that are not flags */
        const char *vals[YOLO_MAX_INTS];
        int nv = 0;
        if (eq) vals[nv++] = eq + 1;
        else if (f->kind != YOLO_FLAG_BOOL)
            while (i + 1 < argc && nv < YOLO_MAX_INTS && strncmp(argv[i + 1], "--", 2) && strcmp(argv[i + 1], "-h")) {
                vals[nv++] = argv[++i];
                if (f->kind != YOLO_FLAG_INTS) break;
            }
        if (f->kind == YOLO_FLAG_BOOL && nv) return yolo_errorf(err, "%s: %s takes no value (got '%.100s')", where, name, vals[0]);
        if (f->kind != YOLO_FLAG_BOOL && f->kind != YOLO_FLAG_OPT && !nv) return yolo_errorf(err, "%s: %s needs a value", where, name);
        int number = f->kind == YOLO_FLAG_INT || f->kind == YOLO_FLAG_FLOAT || f->kind == YOLO_FLAG_INTS;
        if (number && !(f->lo < f->hi))   /* a table without ranges: the program's fault */
            return yolo_errorf(err, "%s: %s has no range in the flag table", where, name);
        double x;
        yolo_ints ints = { 0, { 0 } };
        switch (f->kind) {
        case YOLO_FLAG_BOOL: if (f->value) *(int *)f->value = 1; break;
        case YOLO_FLAG_STR: if (f->value) *(const char **)f->value = vals[0]; break;
        case YOLO_FLAG_OPT: if (f->value) *(const char **)f->value = nv ? vals[0] : f->constant; break;
        case YOLO_FLAG_INT: case YOLO_FLAG_FLOAT:
            if (yolo_read_number(vals[0], f->kind == YOLO_FLAG_INT, f->lo, f->hi, where, name, &x, err)) {
                double also = f->constant ? strtod(f->constant, NULL) : NAN;   /* the one value outside the range */
                if (!f->constant || yolo_read_number(vals[0], f->kind == YOLO_FLAG_INT, also, also, where, name, &x, NULL)) {
                    if (f->constant) snprintf(err + strlen(err), YOLO_ERR - strlen(err), ", or %s", f->constant);
                    return -1;
                }
            }
            if (f->value && f->kind == YOLO_FLAG_INT) *(int *)f->value = (int)x;
            else if (f->value) *(double *)f->value = x;
            break;
        case YOLO_FLAG_INTS:   /* "0 2" as the official, "0,2" too */
            for (int k = 0; k < nv; k++)
                for (const char *t = vals[k]; *t;) {
                    char w[64];
                    size_t n = strcspn(t, ",");
                    snprintf(w, sizeof w, "%.*s", (int)n, t);
                    if (yolo_read_number(w, 1, f->lo, f->hi, where, name, &x, err)) return -1;
                    if (ints.n == YOLO_MAX_INTS) return yolo_errorf(err, "%s: %s takes at most %d values", where, name, YOLO_MAX_INTS);
                    ints.v[ints.n++] = (int)x;
                    t += n; if (*t) t++;
                }
            if (f->value) *(yolo_ints *)f->value = ints;
            break;
        }
        if (!f->value) fprintf(stderr, "%s: %s does not apply here (%s); ignored\n", where, name, f->help);
    }
    return 0;
}

void yolo_flags_parse(const yolo_flag *flags, int nflags, int argc, char **argv, const char *prog, const char *usage) {
    char err[YOLO_ERR];
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { yolo_flags_usage(flags, nflags, prog, usage, stdout); exit(0); }
    if (yolo_flags_read(flags, nflags, argc, argv, prog, err)) {   /* one line, as every refusal */
        fprintf(stderr, "%s (%s --help lists every flag)\n", err, prog);
        exit(2);
    }
}

/* m:ss, or h:mm:ss */
static void yolo_clock(double s, char *out, size_t cap) {
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(out, cap, "%02ld:%02ld", t / 60, t % 60);
}

void yolo_progress_start(yolo_progress *p, FILE *f, long total) {
    p->f = f; p->tty = isatty(fileno(f)); p->total = total; p->t0 = p->last = yolo_now();
}

/* LEFT  57% |██████     | 12/21 [00:05<00:04, RIGHT] */
void yolo_progress_show(yolo_progress *p, long done, const char *left, const char *right) {
    double now = yolo_now(), spent = now - p->t0;
    int end = done >= p->total;
    if (!p->tty && !end && now - p->last < 10) return;
    p->last = now;
    char bar[64] = "", el[16], eta[16];
    int width = 10, full = p->total ? (int)(width * done / p->total) : width;
    for (int i = 0, o = 0; i < width; i++) o += snprintf(bar + o, sizeof bar - o, "%s", i < full ? (p->tty ? "\xe2\x96\x88" : "#") : " ");
    yolo_clock(spent, el, sizeof el);
    yolo_clock(done ? spent / done * (p->total - done) : 0, eta, sizeof eta);
    fprintf(p->f, "%s%s %3d%% |%s| %ld/%ld [%s<%s, %s]%s", p->tty ? "\r" : "", left, p->total ? (int)(100 * done / p->total) : 100,
            bar, done, p->total, el, eta, right, p->tty ? "\033[K" : "\n");
    if (p->tty && end) fputc('\n', p->f);
    fflush(p->f);
}

void yolo_val_progress_start(yolo_val_progress *v, long pictures, yolo_det_hook next, void *next_ctx) {
    yolo_progress_start(&v->bar, stdout, pictures);
    v->done = 0; v->next = next; v->next_ctx = next_ctx;
}

void yolo_val_progress_hook(void *ctx, int id, const yolo_det *d, int n) {
    yolo_val_progress *v = (yolo_val_progress *)ctx;
    char left[128], right[32];
    snprintf(left, sizeof left, "%22s %10s %10s %10s %10s %10s %10s", "Class", "Images", "Instances", "P", "R", "mAP50", "mAP50-95");
    v->done++;
    snprintf(right, sizeof right, "%.1f img/s", v->done / (yolo_now() - v->bar.t0));
    yolo_progress_show(&v->bar, v->done, left, right);
    if (v->next) v->next(v->next_ctx, id, d, n);
}

int yolo_check_img_size(int img, int floor, const char *prog) {
    int size = (int)(((long)img + 31) / 32 * 32);   /* img is in the flag's range, [1, YOLO_MAX_IMG] */
    if (size < floor) size = floor;
    if (size != img) fprintf(stderr, "%s: WARNING --img-size %d must be multiple of max stride 32, updating to %d\n", prog, img, size);
    return size;
}

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 16. plots: the pictures of a run folder                                  */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
#ifndef YOLO_NO_DATA
/* What the plots of a validation need, gathered picture by picture by
   yolo_val_plots_hook (as yolo_validate's hook; it hands each picture on
   to next): the confusion matrix, and the first three batches' pictures
   with their detections, at most 16 of each (the official plot_images'
   max_subplots). */
typedef struct {
    const yolo_dataset *ds;
    int batch, per, seen, n; /* pictures a batch, kept of each, seen, kept (up to 3 per) */
    int *ids, *ndet;         /* [3 per] */
    yolo_det **dets;         /* [3 per][ndet] in picture pixels */
    yolo_confusion cm;
    yolo_det_hook next;
    void *next_ctx;
} yolo_val_plots;
#endif
YOLO_C_BEGIN
#ifndef YOLO_NO_DATA
/* plots (section 16): the pictures of the official run folder. Each returns
   0, or -1 (with a line on stderr) when the file cannot be written. */
/* a picture written by its name's extension: .png, .bmp, else JPEG of that
   quality; 0, or -1 and a line naming path */
int  yolo_write_image(const char *path, const yolo_image *im, int quality);
/* results.csv against the epoch: the official plot_results' ten panels
   (2 x 5, titled) into png, the other columns into png's _extra.png */
int  yolo_plot_results(const char *csv, const char *png);
int  yolo_plot_pr_curves(const yolo_metrics *mt, char *const *names, const char *dir);   /* PR_, F1_, P_, R_curve.png */
void yolo_confusion_add(yolo_confusion *cm, const yolo_det *d, int nd, const float *lab, int nl);
int  yolo_plot_confusion(const yolo_confusion *cm, char *const *names, const char *path);
int  yolo_plot_labels(const yolo_dataset *ds, int nc, char *const *names, const char *path);
int  yolo_plot_correlogram(const yolo_dataset *ds, const char *path);   /* labels_correlogram.jpg */
int  yolo_plot_mosaic(const char *path, const yolo_image *pics, const char *const *titles, const yolo_det *const *boxes,
                      const int *nbox, int n, char *const *names);
int  yolo_plot_batch(const char *path, const yolo_real *images, int B, int H, int W, const yolo_real *targets, int nt,
                     char *const *names);
void yolo_val_plots_start(yolo_val_plots *v, const yolo_dataset *ds, int nc, int batch, yolo_det_hook next, void *next_ctx);
void yolo_val_plots_hook(void *ctx, int id, const yolo_det *d, int n);
/* confusion_matrix.png, the PR family, val_batch{0,1,2}_labels.jpg and
   _pred.jpg into dir; frees what v gathered */
int  yolo_val_plots_save(yolo_val_plots *v, const yolo_metrics *mt, char *const *names, const char *dir);
#endif /* YOLO_NO_DATA */
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
#ifndef YOLO_NO_DATA
/* The official run folder's pictures, drawn by our own code into PNG/JPEG
   with stb_image_write: lines, markers, axes with ticks, legends, heat
   maps and mosaics of pictures with their boxes. Text is stb_easy_font's
   ASCII bitmap font (quads of pixels), scaled by whole pixels. */

/* a line of width lw from (x0, y0) to (x1, y1): squares stamped every half
   pixel; dotted: only where the distance travelled, *dist, falls in the
   first half of every 4 lw pixels (it carries on over a polyline) */
static void yolo_line(yolo_image *im, double x0, double y0, double x1, double y1, int lw, unsigned rgb, double *dist) {
    double len = hypot(x1 - x0, y1 - y0), start = dist ? *dist : 0;
    int steps = (int)(2 * len) + 1;
    if (dist) *dist += len;
    for (int k = 0; k <= steps; k++) {
        double t = (double)k / steps, x = x0 + t * (x1 - x0), y = y0 + t * (y1 - y0);
        if (dist && fmod(start + t * len, 4.0 * lw) > 2.0 * lw) continue;
        yolo_fill(im, (int)(x - lw / 2.0 + 0.5), (int)(y - lw / 2.0 + 0.5), (int)(x - lw / 2.0 + 0.5) + lw, (int)(y - lw / 2.0 + 0.5) + lw, rgb);
    }
}

static void yolo_rect(yolo_image *im, int x0, int y0, int x1, int y1, int lw, unsigned rgb) {
    yolo_fill(im, x0, y0, x1, y0 + lw, rgb); yolo_fill(im, x0, y1 - lw, x1, y1, rgb);
    yolo_fill(im, x0, y0, x0 + lw, y1, rgb); yolo_fill(im, x1 - lw, y0, x1, y1, rgb);
}

static yolo_image yolo_canvas(int w, int h) {
    yolo_image im = { w, h, (unsigned char *)yolo_xmalloc((size_t)w * h * 3) };
    memset(im.rgb, 255, (size_t)w * h * 3);
    return im;
}

/* stb_image_write's output into our own file, so that a failed write
   (a full disk) is seen: stb's own file writer does not check */
static void yolo_stbi_to_file(void *f, void *data, int n) { fwrite(data, 1, (size_t)n, (FILE *)f); }

int yolo_write_image(const char *path, const yolo_image *im, int quality) {
    const char *dot = strrchr(path, '.');
    FILE *f = yolo_create_file(path, "wb");
    if (!f) return -1;
    int ok = dot && !strcasecmp(dot, ".png") ? stbi_write_png_to_func(yolo_stbi_to_file, f, im->w, im->h, 3, im->rgb, im->w * 3)
             : dot && !strcasecmp(dot, ".bmp") ? stbi_write_bmp_to_func(yolo_stbi_to_file, f, im->w, im->h, 3, im->rgb)
                                               : stbi_write_jpg_to_func(yolo_stbi_to_file, f, im->w, im->h, 3, im->rgb, quality);
    if (!ok) { fclose(f); fprintf(stderr, "%s: cannot encode the picture\n", path); return -1; }
    return yolo_close_written(f, path);
}

/* a plot written (.png, else JPEG), then freed */
static int yolo_save_picture(yolo_image *im, const char *path) {
    int rc = yolo_write_image(path, im, 90);
    free(im->rgb);
    return rc;
}

/* --- axes: a data rectangle mapped onto a pixel rectangle --- */

typedef struct {
    yolo_image *im;
    int x, y, w, h;          /* the plotting area in pixels */
    double x0, x1, y0, y1;   /* the data it shows */
    int legend;              /* legend entries drawn so far */
} yolo_axes;

static double yolo_ax_px(const yolo_axes *a, double x) { return a->x + (x - a->x0) / (a->x1 - a->x0) * a->w; }
static double yolo_ax_py(const yolo_axes *a, double y) { return a->y + a->h - (y - a->y0) / (a->y1 - a->y0) * a->h; }

/* a tick step of 1, 2 or 5 times a power of ten giving about n ticks */
static double yolo_nice_step(double range, int n) {
    double raw = range / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* frame, grid-free ticks with their numbers, the title above, the axis labels */
static void yolo_axes_draw(yolo_axes *a, const char *title, const char *xlabel, const char *ylabel, int s) {
    if (!(a->x1 > a->x0)) a->x1 = a->x0 + 1;
    if (!(a->y1 > a->y0)) { a->y0 -= 0.5; a->y1 = a->y0 + 1; }
    yolo_rect(a->im, a->x - 1, a->y - 1, a->x + a->w + 1, a->y + a->h + 1, 1, 0x000000);
    for (int axis = 0; axis < 2; axis++) {
        double lo = axis ? a->y0 : a->x0, hi = axis ? a->y1 : a->x1, step = yolo_nice_step(hi - lo, 5);
        for (double t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
            char num[32];
            snprintf(num, sizeof num, "%g", fabs(t) < step * 1e-6 ? 0.0 : t);
            if (axis) {
                int py = (int)yolo_ax_py(a, t);
                yolo_fill(a->im, a->x - 4 * s, py, a->x, py + 1, 0x000000);
                yolo_text(a->im, a->x - 6 * s - yolo_text_width(num, s), py - 4 * s, num, s, 0x000000, 0);
            } else {
                int px = (int)yolo_ax_px(a, t);
                yolo_fill(a->im, px, a->y + a->h, px + 1, a->y + a->h + 4 * s, 0x000000);
                yolo_text(a->im, px - yolo_text_width(num, s) / 2, a->y + a->h + 6 * s, num, s, 0x000000, 0);
            }
        }
    }
    if (title) yolo_text(a->im, a->x + a->w / 2 - yolo_text_width(title, s) / 2, a->y - 14 * s, title, s, 0x000000, 0);
    if (xlabel) yolo_text(a->im, a->x + a->w / 2 - yolo_text_width(xlabel, s) / 2, a->y + a->h + 18 * s, xlabel, s, 0x000000, 0);
    if (ylabel) yolo_text(a->im, a->x - 48 * s, a->y + a->h / 2 + yolo_text_width(ylabel, s) / 2, ylabel, s, 0x000000, 1);
}

/* a series: a line (lw > 0, dotted or not), markers of size marker */
static void yolo_axes_plot(yolo_axes *a, const double *x, const double *y, int n, unsigned rgb, int lw, int dotted, int marker) {
    double dist = 0;
    for (int i = 0; i < n; i++) {
        double px = yolo_ax_px(a, x[i]), py = yolo_ax_py(a, y[i]);
        if (!isfinite(py)) continue;
        py = fmin(fmax(py, a->y), a->y + a->h);
        if (lw && i + 1 < n && isfinite(y[i + 1]))
            yolo_line(a->im, px, py, yolo_ax_px(a, x[i + 1]), fmin(fmax(yolo_ax_py(a, y[i + 1]), a->y), a->y + a->h), lw, rgb,
                      dotted ? &dist : NULL);
        if (marker) yolo_fill(a->im, (int)px - marker / 2, (int)py - marker / 2, (int)px - marker / 2 + marker, (int)py - marker / 2 + marker, rgb);
    }
}

/* one legend entry, stacked from the top-right (where = 0) or bottom-left (1) corner */
static void yolo_axes_legend(yolo_axes *a, const char *label, unsigned rgb, int s, int where) {
    int row = 11 * s, k = a->legend++, w = yolo_text_width(label, s) + 22 * s;
    int x = where ? a->x + 8 * s : a->x + a->w - w - 8 * s, y = where ? a->y + a->h - (k + 1) * row - 6 * s : a->y + 6 * s + k * row;
    yolo_fill(a->im, x, y + 4 * s, x + 14 * s, y + 6 * s, rgb);
    yolo_text(a->im, x + 18 * s, y, label, s, 0x000000, 0);
}

/* --- results.png --- */

/* The official plot_results' ten panels, 2 x 5 in this order, each titled
   with its column's name: the training losses, P and R, the validation
   losses, the two mAPs. */
static const char *const yolo_results_panels[10] = {
    "train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/precision", "metrics/recall",
    "val/box_loss", "val/cls_loss", "val/dfl_loss", "metrics/mAP_0.5", "metrics/mAP_0.5:0.95" };
#define YOLO_PANEL_W 480
#define YOLO_PANEL_H 600

/* columns col[0..n) of a results table v [rows, 64] against its column 0
   (the epoch), YOLO_PANEL_W x _H panels in rows of 5, titled with their
   column names (an absent column, -1, titled alone); as the official
   lines of width 2 with markers, the legend "results" in the second */
static int yolo_plot_columns(const double *v, int rows, char names[][64], const int *col, const char *const *titles, int n,
                             const char *png) {
    int s = 2, per_row = 5, pw = YOLO_PANEL_W, ph = YOLO_PANEL_H;
    yolo_image im = yolo_canvas(per_row * pw, (n + per_row - 1) / per_row * ph);
    double *x = (double *)yolo_xmalloc((size_t)(rows + 1) * sizeof(double)), *y = (double *)yolo_xmalloc((size_t)(rows + 1) * sizeof(double));
    for (int p = 0; p < n; p++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int r = 0; r < rows && col[p] >= 0; r++) {
            x[r] = v[(size_t)r * 64]; y[r] = v[(size_t)r * 64 + col[p]];
            lo = fmin(lo, y[r]); hi = fmax(hi, y[r]);
        }
        if (col[p] < 0 || !rows) lo = hi = 0;
        double pad = hi - lo > 1e-9 * fmax(1, fabs(hi)) ? (hi - lo) * 0.05 : fmax(0.1 * fabs(hi), 0.1);   /* a flat column: +-10% */
        yolo_axes a = { &im, (p % per_row) * pw + 80, (p / per_row) * ph + 40, pw - 110, ph - 90,
                        rows ? x[0] : 0, rows > 1 ? x[rows - 1] : (rows ? x[0] + 1 : 1), lo - pad, hi + pad, 0 };
        yolo_axes_draw(&a, titles ? titles[p] : names[col[p]], NULL, NULL, s);
        if (col[p] >= 0) yolo_axes_plot(&a, x, y, rows, 0x1F77B4, 3, 0, 8);
        if (p == 1) yolo_axes_legend(&a, "results", 0x1F77B4, s, 0);
    }
    free(x); free(y);
    return yolo_save_picture(&im, png);
}

int yolo_plot_results(const char *csv, const char *png) {
    FILE *f = fopen(csv, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", csv); return -1; }
    char line[4096], names[64][64];
    int ncol = 0, rows = 0, cap = 64;
    double *v = (double *)yolo_xmalloc((size_t)cap * 64 * sizeof(double));
    if (fgets(line, sizeof line, f))
        for (char *t = strtok(line, ",\r\n"); t && ncol < 64; t = strtok(NULL, ",\r\n")) snprintf(names[ncol++], 64, "%s", yolo_trim(t));
    while (fgets(line, sizeof line, f)) {
        v = (double *)yolo_grow(v, 64 * sizeof(double), rows + 1, &cap);
        char *t = line;
        for (int c = 0; c < ncol; c++) { v[(size_t)rows * 64 + c] = strtod(t, &t); if (*t == ',') t++; }
        rows++;
    }
    fclose(f);
    /* the official ten by name (a table of an older layout may lack some), then
       every other column but the epoch into PNG's _extra.png */
    int col[10], rest[64], nrest = 0, used[64] = { 0 };
    for (int p = 0; p < 10; p++) {
        col[p] = -1;
        for (int c = 1; c < ncol; c++) if (!strcmp(names[c], yolo_results_panels[p])) { col[p] = c; used[c] = 1; }
    }
    for (int c = 1; c < ncol; c++) if (!used[c]) rest[nrest++] = c;
    int rc = yolo_plot_columns(v, rows, names, col, yolo_results_panels, 10, png);
    if (nrest) {
        char extra[1100];
        size_t n = strlen(png);
        snprintf(extra, sizeof extra, "%.*s_extra.png", (int)(n > 4 && !strcmp(png + n - 4, ".png") ? n - 4 : n), png);
        rc |= yolo_plot_columns(v, rows, names, rest, NULL, nrest, extra);
    }
    free(v);
    return rc;
}

/* --- the precision-recall family: PR_curve, F1_curve, P_curve, R_curve --- */

/* matplotlib's tab10, for the per-class lines */
static const unsigned yolo_tab10[10] = { 0x1F77B4, 0xFF7F0E, 0x2CA02C, 0xD62728, 0x9467BD, 0x8C564B, 0xE377C2, 0x7F7F7F, 0xBCBD22, 0x17BECF };

/* every class's curve over px = linspace(0, 1, 1000) (per class, a label in
   the legend when there are fewer than 21 classes, grey lines otherwise)
   and the mean over the classes in thick blue */
static int yolo_plot_curve_family(const yolo_metrics *mt, const double *curves, char *const *names, const char *xlabel,
                                  const char *ylabel, int pr, const char *path) {
    const int NP = YOLO_CURVE_POINTS, s = 2;
    yolo_image im = yolo_canvas(1400, 900);
    yolo_axes a = { &im, 110, 50, 900, 760, 0, 1, 0, 1, 0 };
    char title[64];   /* the official titles */
    snprintf(title, sizeof title, pr ? "Precision-Recall Curve" : "%s-Confidence Curve", ylabel);
    yolo_axes_draw(&a, title, xlabel, ylabel, s);
    double *px = (double *)yolo_xmalloc(NP * sizeof(double)), *mean = (double *)yolo_xcalloc(NP, sizeof(double));
    for (int k = 0; k < NP; k++) px[k] = (double)k / (NP - 1);
    int shown = 0, few = mt->nc < 21;
    for (int c = 0; c < mt->nc; c++) {
        const double *y = curves + (size_t)c * NP;
        int flat = 1;   /* the official PR family leaves out classes without detections (all 0 here) */
        for (int k = 0; k < NP && flat; k++) flat = y[k] == 0;
        if (!mt->nt[c] || (pr && flat)) continue;
        for (int k = 0; k < NP; k++) mean[k] += y[k];
        yolo_axes_plot(&a, px, y, NP, few ? yolo_tab10[shown % 10] : 0x808080, 1, 0, 0);
        if (few) {
            char label[128];
            if (pr) snprintf(label, sizeof label, "%s %.3f", names ? names[c] : "", mt->ap50[c]);
            else snprintf(label, sizeof label, "%s", names ? names[c] : "");
            yolo_text(&im, a.x + a.w + 20, a.y + 10 + shown * 24, label, s, yolo_tab10[shown % 10], 0);
        }
        shown++;
    }
    char label[96];
    if (shown) for (int k = 0; k < NP; k++) mean[k] /= shown;
    if (pr) snprintf(label, sizeof label, "all classes %.3f mAP@0.5", mt->map50);
    else {   /* the official smooths the mean by a box filter of 5% of the points */
        double *sm = (double *)yolo_xmalloc(NP * sizeof(double)), best = -1;
        int nf = (int)(0.05 * NP * 2) / 2 + 1, bi = 0;   /* odd: 101 */
        for (int k = 0; k < NP; k++) {
            double acc = 0;
            for (int q = k - nf / 2; q <= k + nf / 2; q++) acc += mean[q < 0 ? 0 : q >= NP ? NP - 1 : q];
            sm[k] = acc / nf;
            if (sm[k] > best) { best = sm[k]; bi = k; }
        }
        memcpy(mean, sm, NP * sizeof(double));
        free(sm);
        snprintf(label, sizeof label, "all classes %.2f at %.3f", best, px[bi]);
    }
    yolo_axes_plot(&a, px, mean, NP, 0x0000FF, 4, 0, 0);
    yolo_text(&im, a.x + a.w + 20, a.y + a.h - 30, label, s, 0x0000FF, 0);
    free(px); free(mean);
    return yolo_save_picture(&im, path);
}

int yolo_plot_pr_curves(const yolo_metrics *mt, char *const *names, const char *dir) {
    char path[1200];
    int rc = 0;
    if (!mt->pr_curve) return 0;   /* nothing was detected right: the official draws nothing either */
    snprintf(path, sizeof path, "%s/PR_curve.png", dir);
    rc |= yolo_plot_curve_family(mt, mt->pr_curve, names, "Recall", "Precision", 1, path);
    snprintf(path, sizeof path, "%s/F1_curve.png", dir);
    rc |= yolo_plot_curve_family(mt, mt->f1_curve, names, "Confidence", "F1", 0, path);
    snprintf(path, sizeof path, "%s/P_curve.png", dir);
    rc |= yolo_plot_curve_family(mt, mt->p_curve, names, "Confidence", "Precision", 0, path);
    snprintf(path, sizeof path, "%s/R_curve.png", dir);
    rc |= yolo_plot_curve_family(mt, mt->r_curve, names, "Confidence", "Recall", 0, path);
    return rc;
}

/* --- the confusion matrix --- */

/* The official ConfusionMatrix.process_batch for one picture: detections
   above conf 0.25 against the labels (class, x1, y1, x2, y2) at IoU > 0.45,
   each label and each detection matched at most once, best IoU first.
   Matched pairs count at [predicted, true]; an unmatched label at
   [background, true], an unmatched detection at [predicted, background]. */
void yolo_confusion_add(yolo_confusion *cm, const yolo_det *d, int nd, const float *lab, int nl) {
    int nc = cm->nc, n1 = nc + 1;
    typedef struct { double iou; int l, p; } pair;
    pair *m = (pair *)yolo_xmalloc((size_t)(nl * nd + 1) * sizeof(pair));
    int nm = 0, *det_used = (int *)yolo_xcalloc(nd + 1, sizeof(int)), *lab_used = (int *)yolo_xcalloc(nl + 1, sizeof(int));
    for (int l = 0; l < nl; l++)
        for (int p = 0; p < nd; p++) {
            if (d[p].conf <= 0.25f) continue;
            const float *b = lab + l * 5;
            double iw = fmin(b[3], d[p].x2) - fmax(b[1], d[p].x1), ih = fmin(b[4], d[p].y2) - fmax(b[2], d[p].y1);
            double inter = iw > 0 && ih > 0 ? iw * ih : 0;
            double u = (b[3] - b[1]) * (b[4] - b[2]) + (d[p].x2 - d[p].x1) * (d[p].y2 - d[p].y1) - inter;
            double iou = inter / (u + 1e-7);
            if (iou > 0.45) m[nm++] = (pair){ iou, l, p };
        }
    for (int i = 1; i < nm; i++)   /* by IoU, highest first (insertion: few pairs) */
        for (int j = i; j > 0 && m[j].iou > m[j - 1].iou; j--) { pair t = m[j]; m[j] = m[j - 1]; m[j - 1] = t; }
    int *keep = (int *)yolo_xcalloc(nm + 1, sizeof(int));
    for (int i = 0; i < nm; i++)
        if (!det_used[m[i].p] && !lab_used[m[i].l]) { det_used[m[i].p] = lab_used[m[i].l] = 1; keep[i] = 1; }
    for (int i = 0; i < nm; i++)
        if (keep[i]) cm->m[(size_t)d[m[i].p].cls * n1 + (int)lab[m[i].l * 5]] += 1;
    for (int l = 0; l < nl; l++) if (!lab_used[l]) cm->m[(size_t)nc * n1 + (int)lab[l * 5]] += 1;
    for (int p = 0; p < nd; p++) if (d[p].conf > 0.25f && !det_used[p]) cm->m[(size_t)d[p].cls * n1 + nc] += 1;
    free(m); free(det_used); free(lab_used); free(keep);
}

/* matplotlib's 'Blues' at t in [0, 1], linear between its ends */
static unsigned yolo_blues(double t) {
    unsigned r = (unsigned)(247 - t * (247 - 8)), g = (unsigned)(251 - t * (251 - 48)), b = (unsigned)(255 - t * (255 - 107));
    return r << 16 | g << 8 | b;
}

/* As the official heat map (seaborn's): normalised per true class
   (column), entries under 0.005 left blank, coloured from 0 to the largest
   entry with the colour bar beside it, titled "Confusion Matrix"; the
   official sets its y label twice ("True", then "Predicted") and so loses
   the x axis' name, which this one keeps */
int yolo_plot_confusion(const yolo_confusion *cm, char *const *names, const char *path) {
    int n1 = cm->nc + 1, s = 2, cell = n1 <= 12 ? 64 : n1 <= 30 ? 32 : 12, margin = cell >= 32 ? 260 : 140, bar = 30;
    yolo_image im = yolo_canvas(margin + n1 * cell + 60 + bar + 90, margin + n1 * cell + 80);
    int x0 = margin, y0 = 80;
    double *norm = (double *)yolo_xcalloc((size_t)n1 * n1, sizeof(double)), top = 0;
    for (int t = 0; t < n1; t++) {
        double col = 0;
        for (int p = 0; p < n1; p++) col += cm->m[(size_t)p * n1 + t];
        for (int p = 0; p < n1; p++) top = fmax(top, norm[(size_t)p * n1 + t] = cm->m[(size_t)p * n1 + t] / (col + 1e-9));
    }
    if (!(top > 0)) top = 1;
    for (int t = 0; t < n1; t++)
        for (int p = 0; p < n1; p++) {
            double v = norm[(size_t)p * n1 + t];
            if (v < 0.005) continue;
            yolo_fill(&im, x0 + t * cell, y0 + p * cell, x0 + (t + 1) * cell, y0 + (p + 1) * cell, yolo_blues(v / top));
            if (n1 < 30) {
                char num[16];
                snprintf(num, sizeof num, "%.2f", v);
                int ts = cell >= 64 ? 2 : 1;
                yolo_text(&im, x0 + t * cell + cell / 2 - yolo_text_width(num, ts) / 2, y0 + p * cell + cell / 2 - 4 * ts, num, ts,
                          v / top > 0.5 ? 0xFFFFFF : 0x000000, 0);
            }
        }
    free(norm);
    yolo_rect(&im, x0 - 1, y0 - 1, x0 + n1 * cell + 1, y0 + n1 * cell + 1, 1, 0x000000);
    int ts = cell >= 32 ? 2 : 1;   /* class names along both sides (up to 98 classes, as the official) */
    for (int c = 0; c < n1 && cm->nc < 99; c++) {
        const char *nm = c == cm->nc ? "background" : names ? names[c] : "";
        yolo_text(&im, x0 - yolo_text_width(nm, ts) - 6, y0 + c * cell + cell / 2 - 4 * ts, nm, ts, 0x000000, 0);
        yolo_text(&im, x0 + c * cell + cell / 2 - 4 * ts, y0 + n1 * cell + 6 + yolo_text_width(nm, ts), nm, ts, 0x000000, 1);
    }
    /* the colour bar: 0 at the bottom, the largest entry at the top, with its ticks */
    yolo_axes cb = { &im, x0 + n1 * cell + 60, y0, bar, n1 * cell, 0, 1, 0, top, 0 };
    for (int y = 0; y < cb.h; y++) yolo_fill(&im, cb.x, cb.y + y, cb.x + bar, cb.y + y + 1, yolo_blues(1 - (double)y / cb.h));
    yolo_rect(&im, cb.x - 1, cb.y - 1, cb.x + bar + 1, cb.y + cb.h + 1, 1, 0x000000);
    for (double step = yolo_nice_step(top, 5), t = 0; t <= top + step * 1e-9; t += step) {
        char num[32];
        int py = (int)yolo_ax_py(&cb, t);
        snprintf(num, sizeof num, "%g", t);
        yolo_fill(&im, cb.x + bar, py, cb.x + bar + 4 * s, py + 1, 0x000000);
        yolo_text(&im, cb.x + bar + 6 * s, py - 4 * s, num, s, 0x000000, 0);
    }
    const char *title = "Confusion Matrix";
    yolo_text(&im, x0 + n1 * cell / 2 - yolo_text_width(title, s) / 2, 30, title, s, 0x000000, 0);
    yolo_text(&im, x0 + n1 * cell / 2 - yolo_text_width("True", s) / 2, im.h - 30, "True", s, 0x000000, 0);
    yolo_text(&im, 16, y0 + n1 * cell / 2 + yolo_text_width("Predicted", s) / 2, "Predicted", s, 0x000000, 1);
    return yolo_save_picture(&im, path);
}

/* --- mosaics: train_batch*.jpg, val_batch*_labels.jpg and _pred.jpg --- */

/* Pictures in a square grid (at most 1920 pixels a side), each scaled into
   its tile, with its boxes (boxes[i]: nbox[i] of them, in the picture's
   pixels; conf < 0: a label, drawn without a confidence) and its file name
   at the top. As the official plot_images, predictions under 0.25 are not
   drawn. */
int yolo_plot_mosaic(const char *path, const yolo_image *pics, const char *const *titles, const yolo_det *const *boxes,
                     const int *nbox, int n, char *const *names) {
    int ns = (int)ceil(sqrt((double)n)), tile = 640;
    if (ns * tile > 1920) tile = 1920 / ns;
    yolo_image im = yolo_canvas(ns * tile, ns * tile);
    for (int i = 0; i < n; i++) {
        const yolo_image *p = &pics[i];
        int ox = (i % ns) * tile, oy = (i / ns) * tile;
        double r = fmin((double)tile / p->w, (double)tile / p->h);
        int w = (int)(p->w * r), h = (int)(p->h * r);
        for (int y = 0; y < h; y++)   /* nearest-neighbour scaling */
            for (int x = 0; x < w; x++)
                memcpy(im.rgb + ((size_t)(oy + y) * im.w + ox + x) * 3, p->rgb + ((size_t)(int)(y / r) * p->w + (int)(x / r)) * 3, 3);
        for (int k = 0; k < nbox[i]; k++) {
            yolo_det d = boxes[i][k];
            if (d.conf >= 0 && d.conf < 0.25f) continue;
            d.x1 = (float)(ox + d.x1 * r); d.x2 = (float)(ox + d.x2 * r); d.y1 = (float)(oy + d.y1 * r); d.y2 = (float)(oy + d.y2 * r);
            char label[128];
            const char *nm = names ? names[d.cls] : "";
            if (d.conf >= 0) snprintf(label, sizeof label, "%s %.1f", nm, d.conf); else snprintf(label, sizeof label, "%s", nm);
            yolo_draw_detection(&im, &d, 2, label);
        }
        if (titles) yolo_text(&im, ox + 6, oy + 6, titles[i], 2, 0xDCDCDC, 0);
        yolo_rect(&im, ox, oy, ox + tile, oy + tile, 3, 0xFFFFFF);
    }
    return yolo_save_picture(&im, path);
}

/* a training batch [B, 3, H, W] in [0, 1] with its targets [nt, 6] (image, class, cx, cy, w, h normalised) */
int yolo_plot_batch(const char *path, const yolo_real *images, int B, int H, int W, const yolo_real *targets, int nt,
                    char *const *names) {
    yolo_image *pics = (yolo_image *)yolo_xcalloc(B, sizeof(yolo_image));
    yolo_det **boxes = (yolo_det **)yolo_xcalloc(B, sizeof(yolo_det *));
    int *nbox = (int *)yolo_xcalloc(B, sizeof(int));
    size_t HW = (size_t)H * W;
    for (int b = 0; b < B; b++) {
        pics[b].w = W; pics[b].h = H; pics[b].rgb = (unsigned char *)yolo_xmalloc(HW * 3);
        for (size_t i = 0; i < HW; i++)
            for (int c = 0; c < 3; c++) pics[b].rgb[i * 3 + c] = (unsigned char)fmin(255, fmax(0, images[(b * 3 + c) * HW + i] * 255 + 0.5));
        boxes[b] = (yolo_det *)yolo_xmalloc((size_t)(nt + 1) * sizeof(yolo_det));
    }
    for (int t = 0; t < nt; t++) {
        const yolo_real *r = targets + t * 6;
        int b = (int)r[0];
        if (b < 0 || b >= B) continue;
        double cx = r[2] * W, cy = r[3] * H, w = r[4] * W, h = r[5] * H;
        boxes[b][nbox[b]++] = (yolo_det){ (float)(cx - w / 2), (float)(cy - h / 2), (float)(cx + w / 2), (float)(cy + h / 2), -1, (int)r[1] };
    }
    int rc = yolo_plot_mosaic(path, pics, NULL, (const yolo_det *const *)boxes, nbox, B, names);
    for (int b = 0; b < B; b++) { free(pics[b].rgb); free(boxes[b]); }
    free(pics); free(boxes); free(nbox);
    return rc;
}

/* --- labels.jpg: what the training labels look like --- */

/* four panels as the official plot_labels: instances per class, the first
   1000 boxes drawn about one centre, and the 2-D histograms of the box
   centres (x, y) and sizes (width, height), darker where there are more */
int yolo_plot_labels(const yolo_dataset *ds, int nc, char *const *names, const char *path) {
    const int P = 600, s = 2, B = 50;   /* panel size, bins of the histograms */
    yolo_image im = yolo_canvas(2 * P, 2 * P);
    long *count = (long *)yolo_xcalloc(nc, sizeof(long)), most = 1, shown = 0;
    double *hxy = (double *)yolo_xcalloc(2 * B * B, sizeof(double)), *hwh = hxy + B * B;
    for (int i = 0; i < ds->n; i++)
        for (int k = 0; k < ds->nlab[i]; k++) {
            const float *l = ds->lab[i] + k * 5;
            int c = (int)l[0];
            if (c >= 0 && c < nc && ++count[c] > most) most = count[c];
            hxy[(int)fmin(B - 1, l[2] * B) * B + (int)fmin(B - 1, l[1] * B)] += 1;
            hwh[(int)fmin(B - 1, l[4] * B) * B + (int)fmin(B - 1, l[3] * B)] += 1;
        }
    /* instances per class: one bar each, in the class colours */
    yolo_axes a = { &im, 120, 40, P - 150, P - 130, -0.5, nc - 0.5, 0, most * 1.05, 0 };
    yolo_axes_draw(&a, NULL, nc <= 30 ? NULL : "classes", "instances", s);
    for (int c = 0; c < nc; c++) {
        yolo_fill(&im, (int)yolo_ax_px(&a, c - 0.4), (int)yolo_ax_py(&a, count[c]), (int)yolo_ax_px(&a, c + 0.4) + 1, a.y + a.h,
                  yolo_palette[c % 20]);
        if (nc <= 30 && names) yolo_text(&im, (int)yolo_ax_px(&a, c) - 4, a.y + a.h + 26 + yolo_text_width(names[c], 1), names[c], 1, 0x000000, 1);
    }
    /* the first 1000 boxes about the centre of a square */
    for (int i = 0; i < ds->n && shown < 1000; i++)
        for (int k = 0; k < ds->nlab[i] && shown < 1000; k++, shown++) {
            const float *l = ds->lab[i] + k * 5;
            int c = (int)l[0], cx = P + P / 2, cy = P / 2, w = (int)(l[3] * (P - 40)), h = (int)(l[4] * (P - 40));
            yolo_rect(&im, cx - w / 2, cy - h / 2, cx + w / 2 + 1, cy + h / 2 + 1, 1, yolo_palette[(c < 0 ? 0 : c) % 20]);
        }
    /* the 2-D histograms */
    for (int panel = 0; panel < 2; panel++) {
        const double *h = panel ? hwh : hxy;
        double top = 1;
        for (int i = 0; i < B * B; i++) top = fmax(top, h[i]);
        yolo_axes b = { &im, panel * P + 120, P + 30, P - 150, P - 120, 0, 1, 0, 1, 0 };
        for (int i = 0; i < B * B; i++) {
            if (!h[i]) continue;
            double v = 0.15 + 0.85 * h[i] / top;   /* light to dark blue */
            unsigned r = (unsigned)(235 - v * 204), g = (unsigned)(240 - v * 165), bl = (unsigned)(255 - v * 75);
            int bx = i % B, by = i / B;
            yolo_fill(&im, (int)yolo_ax_px(&b, (double)bx / B), (int)yolo_ax_py(&b, (double)(by + 1) / B) + 1,
                      (int)yolo_ax_px(&b, (double)(bx + 1) / B) + 1, (int)yolo_ax_py(&b, (double)by / B) + 1, r << 16 | g << 8 | bl);
        }
        yolo_axes_draw(&b, NULL, panel ? "width" : "x", panel ? "height" : "y", s);
    }
    free(count); free(hxy);
    return yolo_save_picture(&im, path);
}

static int yolo_cmp_long(const void *a, const void *b) { long x = *(const long *)a, y = *(const long *)b; return (x > y) - (x < y); }

/* labels_correlogram.jpg, as the official's seaborn pairplot of the boxes
   (corner=True): every box's x, y, width and height (normalised), their
   histograms (50 bins over each one's range) on the diagonal and the 2-D
   histogram of every pair below it, its colour saturating at the 90th
   percentile of the filled bins (pmax=0.9) */
int yolo_plot_correlogram(const yolo_dataset *ds, const char *path) {
    const int P = 400, s = 2, B = 50;
    static const char *var[4] = { "x", "y", "width", "height" };
    long n = 0;
    for (int i = 0; i < ds->n; i++) n += ds->nlab[i];
    float *v = (float *)yolo_xmalloc((size_t)(n + 1) * 4 * sizeof(float));
    double lo[4], hi[4];
    for (int k = 0; k < 4; k++) { lo[k] = n ? INFINITY : 0; hi[k] = n ? -INFINITY : 1; }
    for (int i = 0, at = 0; i < ds->n; i++)
        for (int b = 0; b < ds->nlab[i]; b++, at++)
            for (int k = 0; k < 4; k++) {
                v[at * 4 + k] = ds->lab[i][b * 5 + 1 + k];
                lo[k] = fmin(lo[k], v[at * 4 + k]); hi[k] = fmax(hi[k], v[at * 4 + k]);
            }
    for (int k = 0; k < 4; k++) if (!(hi[k] > lo[k])) { lo[k] -= 0.05; hi[k] += 0.05; }
    yolo_image im = yolo_canvas(4 * P, 4 * P);
    long *h = (long *)yolo_xcalloc((size_t)B * B, sizeof(long));
    for (int r = 0; r < 4; r++)
        for (int c = 0; c <= r; c++) {
            memset(h, 0, (size_t)B * B * sizeof(long));
            long top = 1;
            for (long q = 0; q < n; q++) {
                int bx = (int)fmin(B - 1, (v[q * 4 + c] - lo[c]) / (hi[c] - lo[c]) * B), by = (int)fmin(B - 1, (v[q * 4 + r] - lo[r]) / (hi[r] - lo[r]) * B);
                long k = r == c ? ++h[bx] : ++h[(size_t)by * B + bx];
                if (k > top) top = k;
            }
            yolo_axes a = { &im, c * P + 110, r * P + 20, P - 130, P - 90, lo[c], hi[c], 0, r == c ? top * 1.05 : hi[r], 0 };
            if (r != c) a.y0 = lo[r];
            if (r == c)   /* the histogram's bars */
                for (int b = 0; b < B; b++)
                    yolo_fill(&im, (int)yolo_ax_px(&a, lo[c] + (hi[c] - lo[c]) * b / B), (int)yolo_ax_py(&a, h[b]),
                              (int)yolo_ax_px(&a, lo[c] + (hi[c] - lo[c]) * (b + 1) / B), a.y + a.h, 0x8CB4DA);
            else {   /* the 2-D histogram, saturating at the 90th percentile of its filled bins */
                long *sorted = (long *)yolo_xmalloc((size_t)B * B * sizeof(long)), m = 0;
                for (int k = 0; k < B * B; k++) if (h[k]) sorted[m++] = h[k];
                qsort(sorted, m, sizeof(long), yolo_cmp_long);
                double sat = m ? (double)sorted[(long)(0.9 * (m - 1))] : 1;
                free(sorted);
                for (int k = 0; k < B * B; k++) {
                    if (!h[k]) continue;
                    int bx = k % B, by = k / B;
                    yolo_fill(&im, (int)yolo_ax_px(&a, lo[c] + (hi[c] - lo[c]) * bx / B), (int)yolo_ax_py(&a, lo[r] + (hi[r] - lo[r]) * (by + 1) / B),
                              (int)yolo_ax_px(&a, lo[c] + (hi[c] - lo[c]) * (bx + 1) / B) + 1, (int)yolo_ax_py(&a, lo[r] + (hi[r] - lo[r]) * by / B) + 1,
                              yolo_blues(0.15 + 0.85 * fmin(1, h[k] / sat)));
                }
            }
            yolo_axes_draw(&a, NULL, r == 3 ? var[c] : NULL, c == 0 && r > 0 ? var[r] : NULL, s);
        }
    free(h); free(v);
    return yolo_save_picture(&im, path);
}

/* --- a validation's plots --- */

void yolo_val_plots_start(yolo_val_plots *v, const yolo_dataset *ds, int nc, int batch, yolo_det_hook next, void *next_ctx) {
    memset(v, 0, sizeof *v);
    v->ds = ds; v->batch = batch; v->per = batch < 16 ? batch : 16; v->next = next; v->next_ctx = next_ctx;
    v->ids = (int *)yolo_xcalloc(3 * v->per, sizeof(int)); v->ndet = (int *)yolo_xcalloc(3 * v->per, sizeof(int));
    v->dets = (yolo_det **)yolo_xcalloc(3 * v->per, sizeof(yolo_det *));
    v->cm.nc = nc; v->cm.m = (double *)yolo_xcalloc((size_t)(nc + 1) * (nc + 1), sizeof(double));
}

/* picture id's labels as class, x1, y1, x2, y2 in its pixels (caller frees) */
static float *yolo_picture_labels(const yolo_dataset *ds, int id) {
    float *lab = (float *)yolo_xmalloc((size_t)(ds->nlab[id] + 1) * 5 * sizeof(float));
    for (int k = 0; k < ds->nlab[id]; k++) {
        const float *l = ds->lab[id] + k * 5;
        float *o = lab + k * 5, w0 = (float)ds->w0[id], h0 = (float)ds->h0[id];
        o[0] = l[0]; o[1] = (l[1] - l[3] / 2) * w0; o[2] = (l[2] - l[4] / 2) * h0; o[3] = (l[1] + l[3] / 2) * w0; o[4] = (l[2] + l[4] / 2) * h0;
    }
    return lab;
}

void yolo_val_plots_hook(void *ctx, int id, const yolo_det *d, int n) {
    yolo_val_plots *v = (yolo_val_plots *)ctx;
    float *lab = yolo_picture_labels(v->ds, id);
    yolo_confusion_add(&v->cm, d, n, lab, v->ds->nlab[id]);
    free(lab);
    int b = v->seen / v->batch, k = v->seen % v->batch;   /* the picture's batch and place in it */
    v->seen++;
    if (b < 3 && k < v->per) {
        v->ids[v->n] = id; v->ndet[v->n] = n;
        v->dets[v->n] = (yolo_det *)yolo_xmalloc((size_t)(n + 1) * sizeof(yolo_det));
        memcpy(v->dets[v->n], d, (size_t)n * sizeof(yolo_det));
        v->n++;
    }
    if (v->next) v->next(v->next_ctx, id, d, n);
}

int yolo_val_plots_save(yolo_val_plots *v, const yolo_metrics *mt, char *const *names, const char *dir) {
    char path[1200], err[YOLO_ERR];
    int rc = 0;
    snprintf(path, sizeof path, "%s/confusion_matrix.png", dir);
    rc |= yolo_plot_confusion(&v->cm, names, path);
    rc |= yolo_plot_pr_curves(mt, names, dir);
    for (int b = 0; b * v->per < v->n; b++) {   /* each batch twice: with its labels, with its detections */
        int n = v->n - b * v->per < v->per ? v->n - b * v->per : v->per;
        yolo_image *pics = (yolo_image *)yolo_xcalloc(n, sizeof(yolo_image));
        yolo_det **labels = (yolo_det **)yolo_xcalloc(n, sizeof(yolo_det *));
        int *nl = (int *)yolo_xcalloc(n, sizeof(int));
        const char **titles = (const char **)yolo_xcalloc(n, sizeof(char *));
        for (int i = 0; i < n; i++) {
            int id = v->ids[b * v->per + i];
            const char *slash = strrchr(v->ds->files[id], '/');
            titles[i] = slash ? slash + 1 : v->ds->files[id];
            if (yolo_image_load(&pics[i], v->ds->files[id], err)) { fprintf(stderr, "%s\n", err); pics[i] = yolo_canvas(32, 32); }
            float *lab = yolo_picture_labels(v->ds, id);
            nl[i] = v->ds->nlab[id];
            labels[i] = (yolo_det *)yolo_xmalloc((size_t)(nl[i] + 1) * sizeof(yolo_det));
            for (int k = 0; k < nl[i]; k++)
                labels[i][k] = (yolo_det){ lab[k * 5 + 1], lab[k * 5 + 2], lab[k * 5 + 3], lab[k * 5 + 4], -1, (int)lab[k * 5] };
            free(lab);
        }
        snprintf(path, sizeof path, "%s/val_batch%d_labels.jpg", dir, b);
        rc |= yolo_plot_mosaic(path, pics, titles, (const yolo_det *const *)labels, nl, n, names);
        snprintf(path, sizeof path, "%s/val_batch%d_pred.jpg", dir, b);
        rc |= yolo_plot_mosaic(path, pics, titles, (const yolo_det *const *)(v->dets + b * v->per), v->ndet + b * v->per, n, names);
        for (int i = 0; i < n; i++) { free(pics[i].rgb); free(labels[i]); }
        free(pics); free(labels); free(nl); free(titles);
    }
    for (int i = 0; i < v->n; i++) free(v->dets[i]);
    free(v->dets); free(v->ids); free(v->ndet); free(v->cm.m);
    memset(v, 0, sizeof *v);
    return rc;
}

#endif /* YOLO_NO_DATA */

#endif /* YOLOV9_IMPLEMENTING */

/* ------------------------------------------------------------------------ */
/* 17. data parallel: one process per GPU, gradients summed over them       */
/* ------------------------------------------------------------------------ */
#ifdef YOLOV9_DECLARING
YOLO_C_BEGIN
/* data parallel (section 17): one process per GPU (or per share of the
   CPU), started by mpirun; world 1 without it, or in a build without MPI */
typedef struct {
    int rank, world;         /* this process, of how many */
    int local_rank;          /* its place among those on its machine: the GPU it takes */
    int mpi;                 /* 1: MPI was started (and is finished by yolo_dp_end) */
    const yolo_backend *group;   /* the backend whose group yolo_dp_join joined (left by yolo_dp_end), or NULL */
    /* the gradient's buckets (yolo_dp_overlap): the flat gradient cut at layer boundaries into ranges of
       about bucket_bytes (4 MB unless set before the first step), the last layers' first */
    size_t bucket_bytes;
    int nbuckets, started;   /* how many; how many of them this step has started summing */
    struct yolo_dp_bucket *buckets;
    void *requests;          /* MPI's: [nbuckets] the sums under way */
    yolo_bn_group bn_group;  /* --sync-bn's (yolo_dp_sync_bn) */
} yolo_dp;
int  yolo_dp_start(yolo_dp *dp, char *err);
/* after the backend is chosen, before training: the CUDA backend joins its NCCL group */
int  yolo_dp_join(yolo_dp *dp, const yolo_backend *be, char *err);
/* before the backward of the batch that ends an optimizer step: that backward starts summing each bucket of
   the gradient over the processes as soon as its layers' backwards are done, while it goes on */
void yolo_dp_overlap(yolo_dp *dp, yolo_model *m);
/* after it: every bucket summed (those the backward did not start, started now), rank 0's BatchNorm
   statistics to all: the step's gradient, the same in every process */
void yolo_dp_sum_grads(yolo_dp *dp, yolo_model *m);
/* --sync-bn: from now on every BatchNorm of m normalises by the statistics of all processes' shares */
void yolo_dp_sync_bn(yolo_dp *dp, yolo_model *m);
/* rank 0's bytes (host memory) to every process */
void yolo_dp_broadcast(const yolo_dp *dp, void *bytes, size_t n);
void yolo_dp_end(yolo_dp *dp);
YOLO_C_END
#endif /* YOLOV9_DECLARING */
#ifdef YOLOV9_IMPLEMENTING
/* The official trains on several GPUs with PyTorch DDP: one process per
   GPU, each on its own share of every batch (--batch is the total; each
   process takes batch / world pictures, the shares DistributedSampler
   deals out: yolo_loader_shard). Its gradient is that of its own share's
   loss, which the loss already scales by the share's size, times world
   (train_dual.py: loss *= WORLD_SIZE), and DDP averages the processes'
   gradients: the step's gradient is their SUM,

       g = 1/world sum_r world d(B_r L_r)/dw = sum_r d(B_r L_r)/dw,

   the gradient of one process that ran every share through and added
   their gradients up. (Not the gradient of one process on the whole batch:
   the loss normalises by the target scores of what it sees, here one
   share; and each BatchNorm normalises by its own share's statistics.)
   Ours differentiates the same loss times world (the same numbers in
   half, overflows included), sums, and divides world out at the step.
   Everything after the sum (clipping, the optimizer, the EMA) then runs
   the same in every process on the same numbers, so the weights stay
   identical without being sent (but for the EMA's rounding to half after
   a validation in half: process 0 alone validates, and saves).

   DDP also sends rank 0's buffers to the others before each forward: the
   BatchNorm running statistics are rank 0's, updated by its own shares
   alone. Training never reads them, the EMA and the checkpoints do: here
   they ride along in the gradient's sum, in the gradient's own slots for
   them (unused: they are not trained), rank 0's values and everyone
   else's zeros, and come back as rank 0's in every process.

   The sum goes over MPI on the host for the CPU backend, through the
   backend's group_sum (NCCL) for the GPU, once per optimizer step, in
   the backward of the last batch it accumulates (summing is linear, so
   DDP's sum after every backward adds up to the same gradient; the
   batches before keep theirs local, DDP's no_sync). It overlaps that
   backward, as DDP's buckets do: the flat gradient holds the layers in
   order, so the backward, walking from the last layer, finishes it from
   the top down; it tells when a layer is done (m->grads_final), and once
   the layers of a bucket (a range of about 4 MB, cut at layer boundaries)
   are all done, the bucket's sum starts (MPI_Iallreduce; NCCL on a stream
   of its own) while the backward goes on below it. Clipping and the
   optimizer wait for all of them (yolo_dp_sum_grads).
   Each value is summed once, by one reduction of the same world size
   whatever the buckets: the same numbers run after run, and for two
   processes (a + b) equal to the sum of the whole buffer after the
   backward to the last bit. MPI's and NCCL's reductions hand every
   process the same result (NCCL's ring sums each value in one place and
   copies it out), so the processes' weights stay identical.

   --sync-bn (the official converts BatchNorm to SyncBatchNorm under DDP)
   gives every BatchNorm one group (m->bn_group): the BatchNorm ops add
   their per-channel sums up over the processes between the partial sums
   and the statistics, and in the backward the sums of g and g xhat (not
   the gamma and beta gradients: the parameter gradients are summed with
   the others). The sums are doubles, reduced as above, so every process
   normalises by the same statistics. */

#ifdef YOLO_MPI
#include <mpi.h>

/* started by mpirun (Open MPI, or an MPICH / PMI launcher) */
static int yolo_mpi_launched(void) { return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE"); }

/* MPI_Init's failure is returned; every call after it runs under
   MPI_ERRORS_ARE_FATAL (set here, though it is MPI_COMM_WORLD's default):
   a failed call ends the whole run with MPI's message, none returns */
static int yolo_mpi_start(yolo_dp *dp, char *err) {
    if (!yolo_mpi_launched()) return 0;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) return yolo_errorf(err, "MPI_Init failed: this process cannot join the others mpirun started");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    dp->mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &dp->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dp->world);
    MPI_Comm here;   /* the processes sharing this machine's memory: local_rank picks the GPU */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, dp->rank, MPI_INFO_NULL, &here);
    MPI_Comm_rank(here, &dp->local_rank);
    MPI_Comm_free(&here);
    return 0;
}

static void yolo_mpi_bcast(void *bytes, size_t n) { MPI_Bcast(bytes, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD); }

static MPI_Datatype yolo_mpi_real(void) { return sizeof(yolo_real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT; }

/* a bucket's sum started; a look at those under way (MPI moves nonblocking sums on only inside its calls) */
static void yolo_mpi_sum_start(yolo_dp *dp, yolo_real *x, size_t n, int k) {
    MPI_Request *req = (MPI_Request *)dp->requests;
    MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, yolo_mpi_real(), MPI_SUM, MPI_COMM_WORLD, &req[k]);
    int done;
    MPI_Testall(dp->started + 1, req, &done, MPI_STATUSES_IGNORE);
}
static void yolo_mpi_sum_wait(yolo_dp *dp) { MPI_Waitall(dp->started, (MPI_Request *)dp->requests, MPI_STATUSES_IGNORE); }
static void yolo_mpi_requests(yolo_dp *dp) { dp->requests = yolo_xcalloc(dp->nbuckets, sizeof(MPI_Request)); }

/* --sync-bn's sums on the host: summed onto rank 0, then rank 0's sum to everyone, the same bits everywhere */
static void yolo_mpi_sum_f64(double *x, size_t n) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : x, x, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(x, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void yolo_mpi_end(void) { MPI_Finalize(); }
#else
/* a build without MPI is one process; started by mpirun, it says so */
static int yolo_mpi_start(yolo_dp *dp, char *err) {
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    (void)dp;
    if (size && atoi(size) > 1)
        return yolo_errorf(err, "this program was built without MPI: each of the %s processes would train alone "
                                "(build with mpicc present: make, see README)", size);
    return 0;
}
static void yolo_mpi_bcast(void *bytes, size_t n) { (void)bytes; (void)n; }
static void yolo_mpi_sum_start(yolo_dp *dp, yolo_real *x, size_t n, int k) { (void)dp; (void)x; (void)n; (void)k; }
static void yolo_mpi_sum_wait(yolo_dp *dp) { (void)dp; }
static void yolo_mpi_requests(yolo_dp *dp) { (void)dp; }
static void yolo_mpi_sum_f64(double *x, size_t n) { (void)x; (void)n; }
static void yolo_mpi_end(void) {}
#endif

int yolo_dp_start(yolo_dp *dp, char *err) {
    memset(dp, 0, sizeof *dp);
    dp->world = 1;
    return yolo_mpi_start(dp, err);
}

/* Under mpirun the group sums even for one process (a sum of one: the same
   numbers as without it; that is how gpu_check tests NCCL on one GPU). */
int yolo_dp_join(yolo_dp *dp, const yolo_backend *be, char *err) {
    if (!dp->mpi || be == &yolo_cpu) return 0;
    if (!be->group_join)
        return yolo_errorf(err, "the %s backend of this build cannot sum over processes (built without NCCL: see README)", be->name);
    if (be->group_join(dp->rank, dp->world, yolo_mpi_bcast, err)) return -1;
    dp->group = be;
    return 0;
}

/* The next range of BatchNorm running statistics in the values from
   param k on: [*off, *off + *n), a layer's mean and variance side by
   side in one range; returns the param after it, or -1 when none is left */
static int yolo_dp_next_stats(const yolo_model *m, int k, size_t *off, size_t *n) {
    for (; k < m->nparams && m->params[k].kind != YOLO_P_RUNNING_MEAN && m->params[k].kind != YOLO_P_RUNNING_VAR; k++) {}
    if (k == m->nparams) return -1;
    *off = m->params[k].offset; *n = 0;
    for (; k < m->nparams && (m->params[k].kind == YOLO_P_RUNNING_MEAN || m->params[k].kind == YOLO_P_RUNNING_VAR) &&
           m->params[k].offset == *off + *n; k++) *n += m->params[k].numel;
    return k;
}

/* A bucket: the gradient's values [lo, hi), the parameters of layers
   layer .. (the next bucket's layer - 1); complete once layer's backward
   is done (the backward walks down, the layers above it came first). */
typedef struct yolo_dp_bucket { int layer; size_t lo, hi; } yolo_dp_bucket;

/* the buckets of m, from the top of the gradient down: a bucket closes at
   the first layer (walking down) that brings it to bucket_bytes, and at
   layer 0 */
static void yolo_dp_buckets(yolo_dp *dp, const yolo_model *m) {
    if (dp->buckets) return;
    if (!dp->bucket_bytes) dp->bucket_bytes = (size_t)4 << 20;
    dp->buckets = (yolo_dp_bucket *)yolo_xcalloc(m->nlayers, sizeof(yolo_dp_bucket));
    size_t hi = m->nvalues, lo = hi;   /* the open bucket */
    for (int i = m->nlayers - 1; i >= 0; i--) {
        const yolo_layer *L = &m->layers[i];
        if (L->param1 > L->param0) lo = m->params[L->param0].offset;
        if (lo < hi && (i == 0 || (hi - lo) * sizeof(yolo_real) >= dp->bucket_bytes)) {
            yolo_dp_bucket *b = &dp->buckets[dp->nbuckets++];
            b->layer = i; b->lo = lo; b->hi = hi;
            hi = lo;
        }
    }
    yolo_mpi_requests(dp);
}

/* Rank 0's BatchNorm running statistics ride in the sum, in the
   gradient's own slots for them (they are not trained): in (to 1, before
   the sum: rank 0's values, everyone else's zeros) and out (to 0, after
   it: the sum, rank 0's, into every process's values; the slots zero
   again), for the statistics in [lo, hi). */
static void yolo_dp_stats(const yolo_dp *dp, yolo_model *m, size_t lo, size_t hi, int to) {
    const yolo_backend *be = m->be;
    size_t off, n, bytes = sizeof(yolo_real);
    for (int k = 0; (k = yolo_dp_next_stats(m, k, &off, &n)) >= 0;) {
        if (off < lo || off >= hi) continue;
        if (to && dp->rank == 0) be->copy(m->grads + off, m->values + off, n * bytes);
        else if (to) be->zero(m->grads + off, n * bytes);
        else { be->copy(m->values + off, m->grads + off, n * bytes); be->zero(m->grads + off, n * bytes); }
    }
}

/* the next bucket's sum started */
static void yolo_dp_bucket_start(yolo_dp *dp, yolo_model *m) {
    const yolo_dp_bucket *b = &dp->buckets[dp->started];
    yolo_dp_stats(dp, m, b->lo, b->hi, 1);
    if (m->be->group_sum) m->be->group_sum(m->grads + b->lo, b->hi - b->lo);
    else yolo_mpi_sum_start(dp, m->grads + b->lo, b->hi - b->lo, dp->started);
    dp->started++;
}

/* m->grads_final: layer is done; a bucket it completes starts */
static void yolo_dp_layer_done(void *ctx, yolo_model *m, int layer) {
    yolo_dp *dp = (yolo_dp *)ctx;
    if (dp->started < dp->nbuckets && dp->buckets[dp->started].layer == layer) yolo_dp_bucket_start(dp, m);
}

void yolo_dp_overlap(yolo_dp *dp, yolo_model *m) {
    if (!dp->mpi) return;
    yolo_dp_buckets(dp, m);
    m->grads_final = yolo_dp_layer_done;
    m->grads_final_ctx = dp;
}

void yolo_dp_sum_grads(yolo_dp *dp, yolo_model *m) {
    if (!dp->mpi) return;
    yolo_dp_buckets(dp, m);
    m->grads_final = NULL;
    while (dp->started < dp->nbuckets) yolo_dp_bucket_start(dp, m);   /* without yolo_dp_overlap: all of them now */
    if (m->be->group_sum) m->be->group_wait();
    else yolo_mpi_sum_wait(dp);
    yolo_dp_stats(dp, m, 0, m->nvalues, 0);
    dp->started = 0;
}

void yolo_dp_sync_bn(yolo_dp *dp, yolo_model *m) {
    if (!dp->mpi) return;
    dp->bn_group.world = dp->world;
    dp->bn_group.sum = m->be->group_sum_f64 ? m->be->group_sum_f64 : yolo_mpi_sum_f64;
    m->bn_group = &dp->bn_group;
}

void yolo_dp_broadcast(const yolo_dp *dp, void *bytes, size_t n) {
    if (dp->mpi) yolo_mpi_bcast(bytes, n);
}

void yolo_dp_end(yolo_dp *dp) {
    if (dp->group && dp->group->group_leave) dp->group->group_leave();   /* (NCCL's before MPI's end) */
    dp->group = NULL;
    free(dp->buckets); free(dp->requests);
    dp->buckets = NULL; dp->requests = NULL; dp->nbuckets = 0;
    if (dp->mpi) yolo_mpi_end();
    dp->mpi = 0;
}

#endif /* YOLOV9_IMPLEMENTING */
#undef YOLOV9_DECLARING
#ifdef YOLOV9_IMPLEMENTING
#undef YOLOV9_IMPLEMENTING
#define YOLOV9_IMPLEMENTATION_DONE
#endif
