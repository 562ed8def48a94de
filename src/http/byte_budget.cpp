#include "topoguard/http/byte_budget.h"

namespace topoguard::http {

bool ByteBudget::update(std::size_t& held, std::size_t now) {
  std::size_t total = 0;
  if (now >= held) {
    total = used_.fetch_add(now - held) + (now - held);
  } else {
    total = used_.fetch_sub(held - now) - (held - now);
  }
  held = now;
  if (total > burst_high_ && !in_burst_.load()) {
    in_burst_ = true;
  }
  return total <= allowed(now);
}

bool ByteBudget::try_take(std::size_t bytes) {
  std::size_t current = used_.load();
  do {
    if (current + bytes > allowed(bytes)) {
      return false;
    }
  } while (!used_.compare_exchange_weak(current, current + bytes));
  if (current + bytes > burst_high_) {
    in_burst_ = true;
  }
  return true;
}

void ByteBudget::give_back(std::size_t bytes) { used_.fetch_sub(bytes); }

bool ByteBudget::burst_ended() {
  return in_burst_.load() && used_.load() < burst_low_ && in_burst_.exchange(false);
}

}  // namespace topoguard::http
