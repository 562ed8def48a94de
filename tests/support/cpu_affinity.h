// Pins the calling thread to one CPU, for tests of what the code derives from the affinity mask.
#pragma once

#include <sched.h>

namespace topoguard::testing {

// Restricts the calling thread (and processes it forks afterwards) to the first CPU of its
// current mask. False when the mask cannot be read or set.
inline bool pin_to_first_allowed_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return false;
  }
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &allowed)) {
    ++first;
  }
  if (first == CPU_SETSIZE) {
    return false;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  return ::sched_setaffinity(0, sizeof(one), &one) == 0;
}

}  // namespace topoguard::testing
