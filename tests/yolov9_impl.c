/* yolov9.h's implementation alone, for tests/bench_conv (a .cu of its own that includes the backend) */
#define YOLOV9_IMPLEMENTATION
#include "../yolov9.h"
