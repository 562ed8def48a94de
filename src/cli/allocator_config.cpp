// jemalloc's start-up options, read before main() from this symbol (MALLOC_CONF still overrides
// them). A /mutate review allocates a few hundred small objects and frees them together after
// the answer; with jemalloc's default of at most 200 cached objects per size class, each review
// overflowed the thread's cache, which was flushed to the arena and refilled on the next review.
// 2,000 keeps a review's objects in the thread cache: 5% fewer instructions per /mutate review
// (callgrind, bench review). The cache holds at most two slabs' worth per class, so a thread
// keeps tens of KiB more at most.
//
// dirty_decay_ms:1000 (default 10 s) and muzzy_decay_ms:0: pages freed after large requests go
// back to the system within a second of further activity instead of piling up in every arena;
// under a stream of large reviews, the process otherwise kept freed pages beside new ones until
// it passed its memory limit. When the server goes idle after a burst it purges at once
// (TlsEventServer), since decay only advances on allocator activity.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "tcache_nslots_small_max:2000,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
