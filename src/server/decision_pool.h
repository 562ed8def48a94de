// A fixed set of threads taking admission decisions off the event loops, with a bounded queue:
// one heavy review occupies one pool thread, never a loop thread and the connections on it.
// When the queue is full, submit() refuses instead of queueing without bound.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace topoguard::server {

class DecisionPool {
 public:
  DecisionPool(std::size_t threads, std::size_t max_queued);
  ~DecisionPool();  // stop()
  DecisionPool(const DecisionPool&) = delete;
  DecisionPool& operator=(const DecisionPool&) = delete;

  // Queues `task`; false when max_queued tasks are already waiting or the pool is stopped.
  [[nodiscard]] bool submit(std::function<void()> task);

  // Runs the tasks already queued, then joins the threads. Idempotent.
  void stop();

 private:
  void run();

  std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace topoguard::server
