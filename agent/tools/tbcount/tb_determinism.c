/* SPDX-License-Identifier: Apache-2.0 */
/* Preloaded into an instruction-counting agent (LD_PRELOAD, docs/metrics.md): every source of
 * randomness and wall-clock time a TLS library reads gives a fixed stream, so two runs
 * execute the same instructions. getrandom (also through syscall(), as mbed TLS and OpenSSL
 * call it), getentropy, /dev/urandom (wolfSSL opens it per RNG), the wall clock (mbed TLS 2.28
 * writes it into the hello random) and the pid. CLOCK_MONOTONIC and the CPU clocks stay
 * real: no library decision depends on them in an in-memory run. NOT secure: counting only.
 * TLSBENCH_SEED in the environment picks the stream (the plan's seed). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TB_FIXED_EPOCH 1893456000 /* 2030-01-01: inside the test credentials' validity */
#define TB_FIXED_PID 4242
#define TB_RANDOM_FILE_BYTES 65536

static uint64_t tb_state;
static int tb_seeded;

static uint64_t tb_next(void) { /* splitmix64 */
    if (!tb_seeded) {
        const char *seed = getenv("TLSBENCH_SEED");
        tb_state = 0x7462656e6368ull + (seed ? strtoull(seed, NULL, 0) : 0);
        tb_seeded = 1;
    }
    uint64_t z = (tb_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void tb_fill(void *buf, size_t len) {
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = tb_next();
        memcpy(p + i, &v, len - i < 8 ? len - i : 8);
    }
}

ssize_t getrandom(void *buf, size_t len, unsigned flags) {
    (void)flags;
    tb_fill(buf, len);
    return (ssize_t)len;
}

int getentropy(void *buf, size_t len) {
    tb_fill(buf, len);
    return 0;
}

long syscall(long n, ...) {
    va_list ap;
    va_start(ap, n);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_getrandom) {
        tb_fill((void *)a[0], (size_t)a[1]);
        return a[1];
    }
    static long (*real)(long, ...);
    if (!real)
        real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* /dev/urandom and /dev/random: a memory file holding the stream's next 64 KiB. */
static int tb_random_fd(void) {
    static uint8_t block[TB_RANDOM_FILE_BYTES];
    int fd = memfd_create("tb-random", 0);
    tb_fill(block, sizeof block);
    if (fd < 0 || write(fd, block, sizeof block) != (ssize_t)sizeof block)
        return -1;
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static int tb_is_random_device(const char *path) {
    return path && (strcmp(path, "/dev/urandom") == 0 || strcmp(path, "/dev/random") == 0);
}

typedef int (*tb_open_fn)(const char *, int, ...);

static int tb_open_with(tb_open_fn *real, const char *name, const char *path, int flags, mode_t mode) {
    if (tb_is_random_device(path))
        return tb_random_fd();
    if (!*real)
        *real = (tb_open_fn)dlsym(RTLD_NEXT, name);
    return (*real)(path, flags, mode);
}

int open(const char *path, int flags, ...) {
    static tb_open_fn real;
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    return tb_open_with(&real, "open", path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    static tb_open_fn real;
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    return tb_open_with(&real, "open64", path, flags, mode);
}

time_t time(time_t *t) {
    if (t)
        *t = TB_FIXED_EPOCH;
    return TB_FIXED_EPOCH;
}

int gettimeofday(struct timeval *tv, void *tz) {
    (void)tz;
    if (tv)
        *tv = (struct timeval){TB_FIXED_EPOCH, 0};
    return 0;
}

static int tb_is_wall_clock(clockid_t id) {
    return id == CLOCK_REALTIME || id == CLOCK_BOOTTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    static int (*real)(clockid_t, struct timespec *);
    if (tb_is_wall_clock(id)) {
        *ts = (struct timespec){TB_FIXED_EPOCH, 0};
        return 0;
    }
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    return real(id, ts);
}

pid_t getpid(void) { return TB_FIXED_PID; }
