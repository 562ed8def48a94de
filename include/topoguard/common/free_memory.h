// Hands memory the process has freed back to the system, so that resident memory (what a
// container's limit charges) falls with what is held: after a burst of connections, after a
// cluster list. The binary links jemalloc, which otherwise keeps freed pages until its decay
// advances (only on further allocation); tests and sanitizer builds use glibc's malloc.
#pragma once

namespace topoguard {

// Purges every jemalloc arena's unused pages, or trims glibc's heap.
void release_free_memory();

}  // namespace topoguard
