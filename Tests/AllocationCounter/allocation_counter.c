#include "allocation_counter.h"
#include <errno.h>
#include <stddef.h>
#include <execinfo.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

// glibc's own allocator entry points (exported by libc.so.6 since 2.2.5).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread uint64_t allocations;
static __thread int tracing;

// With tracing on for a thread, each allocation prints its call stack to stderr (to find what
// allocates on a capture thread). backtrace() may allocate itself: not traced again.
static void trace_allocation(void) {
    if (!tracing) return;
    tracing = 0;
    void *frames[24];
    int count = backtrace(frames, 24);
    static const char header[] = "allocation_counter: allocation at\n";
    (void)!write(2, header, sizeof header - 1);
    backtrace_symbols_fd(frames, count, 2);
    tracing = 1;
}

void allocation_counter_trace(int on) { tracing = on; }

// Under AddressSanitizer or ThreadSanitizer (scripts/sanitize.sh) the sanitizer runtime must own
// malloc: an executable that defines malloc wins over its interceptors, and ASan then crashes on
// the first free. So the interposers are left out and the allocation tests skip themselves.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOCATION_COUNTER_SANITIZER "AddressSanitizer"
#elif __has_feature(thread_sanitizer)
#define ALLOCATION_COUNTER_SANITIZER "ThreadSanitizer"
#endif
#endif
#if !defined(ALLOCATION_COUNTER_SANITIZER) && defined(__SANITIZE_ADDRESS__)
#define ALLOCATION_COUNTER_SANITIZER "AddressSanitizer"
#endif
#if !defined(ALLOCATION_COUNTER_SANITIZER) && defined(__SANITIZE_THREAD__)
#define ALLOCATION_COUNTER_SANITIZER "ThreadSanitizer"
#endif

const char *allocation_counter_sanitizer(void) {
#ifdef ALLOCATION_COUNTER_SANITIZER
    return ALLOCATION_COUNTER_SANITIZER;
#else
    return NULL;
#endif
}

uint64_t allocation_counter_this_thread(void) { return allocations; }

int64_t allocation_counter_heap_in_use(void) {
#ifdef ALLOCATION_COUNTER_SANITIZER
    return -1;
#else
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#endif
}

int allocation_counter_is_active(void) {
#ifdef ALLOCATION_COUNTER_SANITIZER
    return 0;
#endif
    uint64_t before = allocations;
    void *probe = malloc(16);
    __libc_free(probe);
    return allocations == before + 1;
}

#ifndef ALLOCATION_COUNTER_SANITIZER
void *malloc(size_t size) { allocations++; trace_allocation(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { allocations++; trace_allocation(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { allocations++; trace_allocation(); return __libc_realloc(pointer, size); }
void free(void *pointer) { __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { allocations++; trace_allocation(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { allocations++; return __libc_memalign(alignment, size); }
void *valloc(size_t size) { allocations++; return __libc_memalign(4096, size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
    allocations++;
    trace_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
#endif
