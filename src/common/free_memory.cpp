#include "topoguard/common/free_memory.h"

#include <malloc.h>

#include <cstddef>

// jemalloc's control entry point, found at run time (weak): null when glibc's malloc is linked.
extern "C" int mallctl(const char* name, void* old_value, std::size_t* old_size, void* new_value,
                       std::size_t new_size) __attribute__((weak));

namespace topoguard {

void release_free_memory() {
  if (mallctl != nullptr) {
    // MALLCTL_ARENAS_ALL (4096): every arena's unused dirty pages.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
  } else {
    ::malloc_trim(0);
  }
}

}  // namespace topoguard
