// The bytes of client requests the process holds, under one limit: bodies buffered on
// connections and the reviews being decided (a body and its parsed tree). A flood of large
// requests then stays within the memory the process may use. Part of the limit is kept for
// small requests, so that large ones holding the rest cannot starve them. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>

namespace topoguard::http {

class ByteBudget {
 public:
  // A holder of at most this many bytes (a header, a typical review) may use the reserve.
  static constexpr std::size_t kSmallHolder = 64 * 1024;

  explicit ByteBudget(std::size_t limit)
      : limit_(limit), reserve_(limit / 8), burst_high_(limit / 8), burst_low_(limit / 64) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // A holder's bytes go from `held` to `now` (`held` is updated). False when the total is then
  // above what a holder of that size may use: the caller must refuse it and let go.
  [[nodiscard]] bool update(std::size_t& held, std::size_t now);
  // Takes `bytes` for a new holder; false, taking nothing, when they do not fit.
  [[nodiscard]] bool try_take(std::size_t bytes);
  void give_back(std::size_t bytes);

  [[nodiscard]] std::size_t used() const { return used_.load(); }
  [[nodiscard]] std::size_t limit() const { return limit_; }

  // True once after use has gone above an eighth of the limit and come back below a 64th: the
  // moment a burst of large requests is over, when freed memory is worth handing back to the
  // system.
  [[nodiscard]] bool burst_ended();

 private:
  [[nodiscard]] std::size_t allowed(std::size_t holder) const {
    return holder <= kSmallHolder ? limit_ : limit_ - reserve_;
  }

  const std::size_t limit_;
  const std::size_t reserve_;
  const std::size_t burst_high_;
  const std::size_t burst_low_;
  std::atomic<std::size_t> used_{0};
  std::atomic<bool> in_burst_{false};
};

}  // namespace topoguard::http
