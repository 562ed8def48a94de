// A CEL reader for DRA device selectors that cannot misread.
//
//   Result<cel::Program> program = cel::compile(R"(device.driver == "gpu.nvidia.com")");
//   cel::Activation device;                      // everything unknown by default
//   device.driver = "gpu.nvidia.com";
//   cel::Outcome outcome = cel::evaluate(*program, device).outcome;   // kTrue
//
// compile() parses the whole CEL grammar (every literal form, lists, maps, member and index
// access, calls and receiver calls, all operators with CEL's precedence, `?:`, the macros) into
// a syntax tree with positions; a syntax error is an Error whose message names line:column and
// whose code is kInvalidValue (callers add file, line and field). evaluate() implements the part
// DRA selectors use: `device.driver`, `device.attributes[domain].name` / `[domain][name]`,
// `device.capacity[domain][name]`, the standard operators with CEL's commutative error/unknown
// rules for && and ||, `in`, `has()`, the macros, size/startsWith/endsWith/contains/matches
// (RE2), and Kubernetes' semver() and quantity() libraries. Anything it does not implement
// evaluates to unknown, never to a guessed true or false. Programs are immutable and may be
// evaluated from several threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "topoguard/cel/ast.h"
#include "topoguard/cel/value.h"
#include "topoguard/common/flat_map.h"
#include "topoguard/common/result.h"

namespace topoguard::cel {

// What the syntax tree says without evaluation (see the functions below), worked out once when
// the program is compiled: selectors are classified for every request.
struct ProgramFacts {
  std::vector<std::string> string_literals;
  std::vector<std::string> attributes_read;
  bool may_read_driver = true;
  std::string attribute_read;  // see attribute_read() below; empty when it is something else
};

class Program {
 public:
  [[nodiscard]] const Expr& root() const { return *root_; }
  [[nodiscard]] const std::string& source() const { return *source_; }
  [[nodiscard]] const ProgramFacts& facts() const { return *facts_; }

  struct Compiled;  // the evaluator's precomputed state (private to it)

 private:
  friend Result<Program> compile(std::string_view text);
  friend class ProgramCache;

  std::shared_ptr<const std::string> source_;
  std::shared_ptr<const Expr> root_;
  std::shared_ptr<const Compiled> compiled_;  // literal regular expressions, compiled once
  std::shared_ptr<const ProgramFacts> facts_;
  friend struct Evaluator;
};

// Longest expression compile() accepts, in bytes, and deepest nesting (as cel-go's defaults).
inline constexpr std::size_t kMaxExpressionSize = 100'000;
inline constexpr int kMaxNesting = 250;

// Parses `text` and compiles its literal `matches` patterns; the error names line:column of the
// first syntax error.
[[nodiscard]] Result<Program> compile(std::string_view text);

// Compiled programs by source text, for a caller that compiles the same expressions again and
// again: the expressions of a workload's objects repeat (every pod of a workload carries the same
// claim template; each policy reads a claim again), so, as Kubernetes' own DRA code does,
// compiled expressions are kept. Programs are immutable and shared, so a hit is a copy of four
// shared pointers. Owned by its caller (an engine::Evaluator) and not safe to share between
// threads. Bounded in bytes (an estimate of the syntax tree and every compiled pattern's
// footprint) and in entries; only short expressions are kept, and a full cache starts over (a
// hostile stream of distinct expressions costs one parse each, as without the cache).
class ProgramCache {
 public:
  static constexpr std::size_t kMaxEntries = 1024;
  static constexpr std::size_t kMaxTextBytes = 4096;
  static constexpr std::size_t kMaxBytes = 16 * 1024 * 1024;
  // Syntax-tree bytes per source byte, generously: a node of ~100 bytes per token of 2-3 bytes.
  static constexpr std::size_t kTreeBytesPerSourceByte = 64;

  // compile(text), or the program compiled from the same text before.
  [[nodiscard]] Result<Program> compile(std::string_view text);
  [[nodiscard]] std::size_t size() const { return programs_.size(); }

 private:
  void keep(std::string_view text, const Program& program);

  std::map<std::string, Program, std::less<>> programs_;
  std::size_t bytes_ = 0;
};

// One device attribute as a ResourceSlice publishes it; UnknownValue for one not read exactly
// (e.g. a list-valued attribute).
using AttributeValue = std::variant<std::int64_t, bool, std::string, Version, UnknownValue>;
// Fully qualified names: domain -> identifier -> value. An attribute a driver publishes without
// a domain belongs to the driver's domain (as the allocator binds it).
// Sorted vectors, not trees: an activation is made per device and kept per node shape.
using DomainAttributes = FlatMap<std::string, AttributeValue>;
using DomainCapacity = FlatMap<std::string, Quantity>;
using Attributes = FlatMap<std::string, DomainAttributes>;
using Capacity = FlatMap<std::string, DomainCapacity>;

// The `device` a selector reads. An Activation holds one in maps; a cluster's published device
// is read in place (cluster::PublishedDevice), so a check copies only the values it reads.
class DeviceView {
 public:
  // Unset: the driver is unknown.
  [[nodiscard]] virtual std::optional<std::string> driver_name() const = 0;
  // Whether attributes (capacity) are known; when not, every read of them is unknown.
  [[nodiscard]] virtual bool attributes_bound() const = 0;
  [[nodiscard]] virtual bool capacity_bound() const = 0;
  // The attribute `name` of `domain` (qualified "domain/name"), or nullopt when not published.
  [[nodiscard]] virtual std::optional<AttributeValue> attribute(std::string_view domain,
                                                                std::string_view name) const = 0;
  [[nodiscard]] virtual std::optional<Quantity> capacity_value(std::string_view domain,
                                                               std::string_view name) const = 0;
  // Everything, by domain then name: for an expression that reads a whole domain or map.
  [[nodiscard]] virtual Attributes all_attributes() const = 0;
  [[nodiscard]] virtual Capacity all_capacity() const = 0;

 protected:
  DeviceView() = default;
  DeviceView(const DeviceView&) = default;
  DeviceView(DeviceView&&) = default;
  DeviceView& operator=(const DeviceView&) = default;
  DeviceView& operator=(DeviceView&&) = default;
  ~DeviceView() = default;
};

// A `device` held in maps; an empty optional is unknown.
struct Activation final : DeviceView {
  std::optional<std::string> driver;
  std::optional<Attributes> attributes;
  std::optional<Capacity> capacity;

  [[nodiscard]] std::optional<std::string> driver_name() const override { return driver; }
  [[nodiscard]] bool attributes_bound() const override { return attributes.has_value(); }
  [[nodiscard]] bool capacity_bound() const override { return capacity.has_value(); }
  [[nodiscard]] std::optional<AttributeValue> attribute(std::string_view domain,
                                                        std::string_view name) const override;
  [[nodiscard]] std::optional<Quantity> capacity_value(std::string_view domain,
                                                       std::string_view name) const override;
  [[nodiscard]] Attributes all_attributes() const override {
    return attributes.value_or(Attributes{});
  }
  [[nodiscard]] Capacity all_capacity() const override { return capacity.value_or(Capacity{}); }
};

// Cost is counted as cel-go counts it at run time (one unit an identifier, select or call; a
// string operation one unit per ten bytes of its operands; `matches` the product of the
// string's and the pattern's; ten a list created, thirty a map), plus what this evaluator's own
// work costs where cel-go's is cheaper (list concatenation copies, `size` of a string counts
// code points, deep comparisons). One evaluation may spend at most the API server's per-call
// limit, and create at most kMaxEvaluationBytes of values; past either its value is unknown.
inline constexpr std::uint64_t kPerCallCostLimit = 1'000'000;
inline constexpr std::size_t kMaxEvaluationBytes = 8 * 1024 * 1024;
// The API server's budget for all CEL of one admission request (RuntimeCELCostBudget).
inline constexpr std::uint64_t kRequestCostBudget = 10'000'000;

// What several evaluations may spend together (a review's selectors): each evaluation may spend
// at most min(kPerCallCostLimit, remaining()); what it spent is then taken off.
class CostBudget {
 public:
  explicit CostBudget(std::uint64_t total) : remaining_(total) {}
  [[nodiscard]] std::uint64_t remaining() const { return remaining_; }
  void charge(std::uint64_t cost) { remaining_ = cost >= remaining_ ? 0 : remaining_ - cost; }
  // Whether an evaluation ended unknown because this budget ran out (Evaluation's
  // budget_exhausted): with a larger budget the same evaluations could have ended otherwise.
  [[nodiscard]] bool cut_short() const { return cut_short_; }
  void mark_cut_short() { cut_short_ = true; }

 private:
  std::uint64_t remaining_;
  bool cut_short_ = false;
};

enum class Outcome { kTrue, kFalse, kError, kUnknown };

[[nodiscard]] const char* outcome_name(Outcome outcome);  // "true", "false", "error", "unknown"

struct Evaluation {
  Outcome outcome = Outcome::kUnknown;
  std::string message;  // why, for kError and kUnknown
  std::uint64_t cost = 0;  // units spent (at most the limit plus one operation's cost)
  // Unknown because `budget` ran out below the per-call limit: another evaluation of the same
  // program could end otherwise with more budget left.
  bool budget_exhausted = false;
};

// Evaluates a selector: true/false when its value is a bool, error when CEL would fail (or the
// value is not a bool), unknown when the answer depends on something unbound or unimplemented,
// or the evaluation goes past its cost or memory limit. With `budget`, the cost is charged to it.
[[nodiscard]] Evaluation evaluate(const Program& program, const DeviceView& device,
                                  CostBudget* budget = nullptr);

// An expression's value for one device (a derived attribute's), under the limits of evaluate():
// past the per-call cost limit, the memory limit or `budget` (charged when given), the value is
// unknown.
struct ValueEvaluation {
  Value value;
  std::uint64_t cost = 0;
  bool budget_exhausted = false;  // as Evaluation::budget_exhausted
};
[[nodiscard]] ValueEvaluation evaluate_device_value(const Program& program,
                                                    const DeviceView& device,
                                                    CostBudget* budget = nullptr);

// The expression's value, with `device` bound (when given) and any other variables from
// `variables` (for tests and the differential driver).
[[nodiscard]] Value evaluate_value(const Program& program, const DeviceView* device,
                                   const std::map<std::string, Value, std::less<>>& variables);

// Every string literal of the expression, in source order: the names it can compare against.
[[nodiscard]] const std::vector<std::string>& string_literals(const Program& program);

// Qualified names ("domain/name") of the device attributes the expression reads with literal
// keys, as `device.attributes["domain"].name` or `device.attributes["domain"]["name"]`, in order.
[[nodiscard]] const std::vector<std::string>& attributes_read(const Program& program);

// The qualified name ("domain/name") when the whole expression is one read of a device
// attribute with literal keys, `device.attributes["domain"].name` or
// `device.attributes["domain"]["name"]` (so its value is that attribute's, or the same error);
// empty for any other expression.
[[nodiscard]] const std::string& attribute_read(const Program& program);

// False when the expression certainly does not read `device.driver`: its value is then the same
// for every driver. True when it may (conservatively, any use of `device` other than through
// `.attributes` or `.capacity`).
[[nodiscard]] bool may_read_driver(const Program& program);

// The facts of a syntax tree (compile() keeps them with the program).
[[nodiscard]] ProgramFacts inspect(const Expr& root);

}  // namespace topoguard::cel
