// A long-running part of `serve` (the cluster cache, self-managed TLS, the report writer, the
// HTTPS server), as controller-runtime's Manager runs Runnables: started in order by a
// runtime::Manager, asked whether it is ready, asked for its metrics, stopped in reverse order.
#pragma once

#include <chrono>
#include <string>

#include "topoguard/common/result.h"

namespace topoguard::runtime {

class Component {
 public:
  virtual ~Component() = default;

  // What the logs and errors call it ("cluster cache", "self-managed TLS").
  [[nodiscard]] virtual std::string name() const = 0;
  // Starts its threads and returns; an error when it cannot run (the manager then stops the
  // components started before it).
  [[nodiscard]] virtual Status start() = 0;
  // Stops and joins its threads; false when it could not end by `deadline` (the process should
  // then exit anyway). Called once, after a successful start().
  virtual bool stop(std::chrono::steady_clock::time_point deadline) = 0;
  // Why the process is not ready for its sake (for /readyz), or "" when it is.
  [[nodiscard]] virtual std::string not_ready_reason() const { return ""; }
  // Its metrics in the Prometheus text format, or "".
  [[nodiscard]] virtual std::string metrics() const { return ""; }
};

}  // namespace topoguard::runtime
