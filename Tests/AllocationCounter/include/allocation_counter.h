// AllocationCounter: counts heap allocations per thread, for the tests that prove steady-state
// capture allocates nothing per frame. Linked into the test executable only, it interposes
// malloc and friends (forwarding to glibc's __libc_* entry points) for the whole process.
#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H
#include <stdint.h>

/// Allocations (malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc, valloc) made
/// by the calling thread since it started.
uint64_t allocation_counter_this_thread(void);

/// Whether the interposition is in effect (an allocation made now is counted).
int allocation_counter_is_active(void);

/// Turns printing a call stack for each allocation of the calling thread on (1) or off (0).
void allocation_counter_trace(int on);

/// "AddressSanitizer" or "ThreadSanitizer" when the binary is built with one (then malloc is
/// not interposed: the sanitizer owns it), NULL otherwise.
const char *allocation_counter_sanitizer(void);

/// Bytes glibc's allocator has handed out and not had back, over all arenas (mallinfo2's
/// `uordblks + hblkhd`): the heap in use, without the free memory arenas keep for reuse. -1
/// under a sanitizer (its own allocator serves malloc then).
int64_t allocation_counter_heap_in_use(void);
#endif
