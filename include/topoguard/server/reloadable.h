// A value read from files and read again when they change (Secret and ConfigMap volume updates,
// certificate renewals): a version that does not load is refused and the last good one stays in
// use. current() is safe from any thread and cheap (a shared_ptr copy under a mutex); poll() is
// called from one watcher thread. The serving certificate and the policies are both kept so.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/server/file_fingerprint.h"

namespace topoguard::server {

enum class ReloadResult { kUnchanged, kReloaded, kFailed };

struct ReloadReport {
  ReloadResult result = ReloadResult::kUnchanged;
  Error error;  // for kFailed
};

template <typename T>
class Reloadable {
 public:
  using Ptr = std::shared_ptr<const T>;
  using Loader = std::function<Result<Ptr>()>;

  Reloadable(const Reloadable&) = delete;
  Reloadable& operator=(const Reloadable&) = delete;

  [[nodiscard]] Ptr current() const {
    std::lock_guard lock(mutex_);
    return current_;
  }

  // Replaces the value with one that did not come from the files (self-managed TLS hands over
  // the certificate it read from its Secret).
  void set(Ptr next) {
    std::lock_guard lock(mutex_);
    current_ = std::move(next);
  }

  // Loads again when the files' fingerprint changed since the last attempt. With no paths,
  // never (the value does not come from files).
  ReloadReport poll() {
    if (paths_.empty()) {
      return {};
    }
    std::string fingerprint = fingerprint_paths(paths_);
    if (fingerprint == fingerprint_) {
      return {};
    }
    // Remember the attempt even when it fails: a half-written version is retried when the files
    // change again, not re-read (and re-counted) on every poll.
    fingerprint_ = std::move(fingerprint);
    Result<Ptr> next = loader_();
    if (!next) {
      return {ReloadResult::kFailed, next.error()};
    }
    {
      std::lock_guard lock(mutex_);
      current_ = std::move(*next);
    }
    return {ReloadResult::kReloaded, {}};
  }

 protected:
  // Loads the first value of a `Derived` watching `paths`; an error when it cannot be loaded.
  template <typename Derived>
  static Result<std::shared_ptr<Derived>> load(std::vector<std::string> paths, Loader loader) {
    // Taken before loading: a change during the load is seen by the next poll.
    std::string fingerprint = fingerprint_paths(paths);
    Result<Ptr> first = loader();
    if (!first) {
      return first.error();
    }
    return std::shared_ptr<Derived>(new Derived(std::move(paths), std::move(loader),
                                                std::move(*first), std::move(fingerprint)));
  }

  Reloadable(std::vector<std::string> paths, Loader loader, Ptr first, std::string fingerprint)
      : paths_(std::move(paths)),
        loader_(std::move(loader)),
        fingerprint_(std::move(fingerprint)),
        current_(std::move(first)) {}
  ~Reloadable() = default;

 private:
  const std::vector<std::string> paths_;
  const Loader loader_;
  std::string fingerprint_;  // of the last attempt; only poll() touches it
  mutable std::mutex mutex_;
  Ptr current_;  // guarded by mutex_
};

}  // namespace topoguard::server
