/* omp_regions: what of a program's time runs outside OpenMP's threads.
   Loaded before libgomp (LD_PRELOAD), it wraps GOMP_parallel, the call
   GCC makes for every `#pragma omp parallel`, and adds up the calling
   thread's CPU time: in regions that run on threads (their if() clause
   said yes), in regions that stay on one thread (if() said no: the pass
   was below its threshold), and in total. Run at OMP_NUM_THREADS=1 (a
   region's if() still says yes or no as at two threads), the time outside
   the first kind is the serial part that caps what a second core gives:
   total - threaded. At exit it writes those three sums and each region's
   calls and time, named by the function GCC outlined it from
   (yolo_bn_apply._omp_fn.0), to $OMP_REGIONS_OUT (stderr if unset).
   tests/omp_serial.sh runs a benchmark twice and prints the difference a
   step. Build: cc -O2 -shared -fPIC -o tests/omp_regions.so tests/omp_regions.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*region_fn)(void *);
static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define MAX_REGIONS 1024
static struct { region_fn fn; int threaded; long calls; double seconds; } regions[MAX_REGIONS];
static int depth;                          /* nested regions count in the outer one */
static double threaded_s, unthreaded_s;

void GOMP_parallel(region_fn fn, void *data, unsigned num_threads, unsigned flags) {
    static void (*gomp)(region_fn, void *, unsigned, unsigned);
    if (!gomp) gomp = (void (*)(region_fn, void *, unsigned, unsigned))dlsym(RTLD_NEXT, "GOMP_parallel");
    if (depth++) { gomp(fn, data, num_threads, flags); depth--; return; }
    double t0 = thread_seconds();
    gomp(fn, data, num_threads, flags);
    double dt = thread_seconds() - t0;
    depth--;
    int threaded = num_threads != 1;   /* GCC passes 1 where the if() clause is false */
    *(threaded ? &threaded_s : &unthreaded_s) += dt;
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (!regions[i].fn) { regions[i].fn = fn; regions[i].threaded = threaded; }
        if (regions[i].fn == fn && regions[i].threaded == threaded) { regions[i].calls++; regions[i].seconds += dt; break; }
    }
}

/* the name of the static function at offset off of the executable, from nm */
static void name_of(unsigned long off, char *name, size_t cap) {
    snprintf(name, cap, "0x%lx", off);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "nm /proc/%d/exe 2>/dev/null", (int)getpid());
    unsetenv("LD_PRELOAD");   /* nm runs without this library */
    FILE *nm = popen(cmd, "r");
    if (!nm) return;
    char line[512], sym[400], type;
    unsigned long a;
    while (fgets(line, sizeof line, nm))
        if (sscanf(line, "%lx %c %399s", &a, &type, sym) == 3 && a == off) { snprintf(name, cap, "%s", sym); break; }
    pclose(nm);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("OMP_REGIONS_OUT");
    FILE *f = path ? fopen(path, "w") : stderr;
    if (!f) return;
    fprintf(f, "total %.6f threaded %.6f unthreaded %.6f\n", thread_seconds(), threaded_s, unthreaded_s);
    for (int i = 0; i < MAX_REGIONS && regions[i].fn; i++) {
        Dl_info d;
        char name[400];
        if (dladdr((void *)regions[i].fn, &d) && d.dli_sname && d.dli_saddr == (void *)regions[i].fn) snprintf(name, sizeof name, "%s", d.dli_sname);
        else name_of((unsigned long)((char *)regions[i].fn - (char *)d.dli_fbase), name, sizeof name);
        fprintf(f, "region %s %s %ld %.6f\n", name, regions[i].threaded ? "threaded" : "one-thread", regions[i].calls,
                regions[i].seconds);
    }
    if (path) fclose(f);
}
