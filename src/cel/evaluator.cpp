#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numbers.h"
#include "parser.h"
#include "syntax_walk.h"
#include "topoguard/cel/cel.h"
#include "topoguard/common/bounded_regex.h"

namespace topoguard::cel {

namespace {

// Cost units a pattern's compilation is charged per node of its expansion (regex_expansion):
// about what RE2 takes to write out and compile a node, in the time of one unit of evaluation.
constexpr std::uint64_t kRegexCompileCostPerNode = 8;

std::uint64_t regex_compile_cost(std::string_view pattern) {
  const std::size_t nodes = std::min(regex_expansion(pattern), kMaxRegexExpansion + 1);
  return kRegexCompileCostPerNode * std::max<std::uint64_t>(nodes, 1);
}

}  // namespace

// All literal patterns of one program compiled with it, in expansion nodes (regex_expansion):
// past it, a pattern is compiled by each evaluation that reaches it, as a computed one is, so a
// hostile expression's compilation stays bounded by its size.
constexpr std::size_t kMaxPrecompiledExpansion = 4 * kMaxRegexExpansion;

// A `matches` pattern written as a literal, compiled with the program (within the expansion
// budget above). Immutable afterwards: evaluations on any thread read it.
struct LiteralPattern {
  LiteralPattern(std::string_view pattern, bool precompile)
      : compile_cost(regex_compile_cost(pattern)),
        regex(precompile ? std::optional(compile_bounded_regex(pattern)) : std::nullopt) {}

  const std::uint64_t compile_cost;
  // nullopt: left to the evaluation.
  const std::optional<Result<std::shared_ptr<const re2::RE2>>> regex;
};

struct Program::Compiled {
  // The pattern of every `matches` whose pattern is a literal, by the call's node.
  std::map<const Expr*, LiteralPattern> patterns;
};

namespace {

// cel-go's cost constants (common/cost.go).
constexpr std::uint64_t kListCreateCost = 10;
constexpr std::uint64_t kMapCreateCost = 30;
constexpr double kTraversalFactor = 0.1;   // a string's bytes
constexpr double kRegexLengthFactor = 0.25;  // a pattern's bytes
// The largest string, bytes or list one operation may create.
constexpr std::size_t kMaxValueBytes = 1024 * 1024;

std::uint64_t scaled(std::size_t size, double factor) {
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(size) * factor));
}

// The size cel-go's cost functions see: a string's or bytes' length, a list's or map's entries,
// 1 for anything else.
std::size_t cost_size(const Value& value) {
  if (const auto* text = value.get<std::string>()) {
    return text->size();
  }
  if (const auto* bytes = value.get<Bytes>()) {
    return bytes->data.size();
  }
  if (const auto* list = value.get<ListPtr>()) {
    return (*list)->size();
  }
  if (const auto* map = value.get<MapPtr>()) {
    return (*map)->size();
  }
  return 1;
}

Value no_overload(std::string_view function) {
  return ErrorValue{"no matching overload for '" + std::string(function) + "'"};
}

bool undecided(const Value& value) { return value.is_error() || value.is_unknown(); }

// A pattern over the regex limits is unknown (cel-go would run it); one RE2 rejects is an error.
Value pattern_failure(const Error& error) {
  if (error.code == ErrorCode::kTooLarge) {
    return UnknownValue{error.message};
  }
  return ErrorValue{"invalid regular expression: " + error.message};
}

// The pattern of every `matches` call whose pattern is a string literal, compiled once.
void collect_patterns(const Expr& root, Program::Compiled& compiled) {
  std::size_t expansion_left = kMaxPrecompiledExpansion;
  walk(root, [&compiled, &expansion_left](const Expr& expr) {
    const auto* call = std::get_if<Call>(&expr.node);
    if (call == nullptr || call->function != "matches") {
      return;
    }
    const ExprPtr* pattern = nullptr;
    if (call->target && call->args.size() == 1) {
      pattern = &call->args[0];
    } else if (!call->target && call->args.size() == 2) {
      pattern = &call->args[1];
    }
    const auto* literal = pattern != nullptr ? std::get_if<Literal>(&(*pattern)->node) : nullptr;
    const auto* text = literal != nullptr ? std::get_if<std::string>(literal) : nullptr;
    if (text != nullptr) {
      const std::size_t nodes = std::min(regex_expansion(*text), kMaxRegexExpansion + 1);
      const bool precompile = nodes <= expansion_left;
      expansion_left -= precompile ? nodes : 0;
      compiled.patterns.emplace(std::piecewise_construct, std::forward_as_tuple(&expr),
                                std::forward_as_tuple(*text, precompile));
    }
  });
}

Value literal_value(const Literal& literal) {
  return std::visit([](const auto& value) -> Value { return value; }, literal);
}

Value attribute_value(const AttributeValue& attribute) {
  return std::visit(
      [](const auto& value) -> Value {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, UnknownValue>) {
          return UnknownValue{value.reason.empty() ? "attribute value not read" : value.reason};
        } else {
          return value;
        }
      },
      attribute);
}

template <typename Inner, typename Convert>
MapPtr domain_map(const Inner& entries, Convert convert) {
  auto map = std::make_shared<MapValue>();
  for (const auto& [name, value] : entries) {
    map->insert(*MapKey::of(Value{name}), Value{name}, convert(value));
  }
  return map;
}

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

Value logical(bool is_and, const Value& left, const Value& right) {
  const bool absorbing = !is_and;  // false absorbs &&, true absorbs ||
  const auto* left_bool = left.get<bool>();
  const auto* right_bool = right.get<bool>();
  if ((left_bool != nullptr && *left_bool == absorbing) ||
      (right_bool != nullptr && *right_bool == absorbing)) {
    return absorbing;
  }
  if (left_bool != nullptr && right_bool != nullptr) {
    return !absorbing;
  }
  if (left.is_unknown()) {
    return left;
  }
  if (right.is_unknown()) {
    return right;
  }
  if (left.is_error()) {
    return left;
  }
  if (right.is_error()) {
    return right;
  }
  return no_overload(is_and ? "_&&_" : "_||_");
}

// int or uint arithmetic, with CEL's errors for overflow and division by zero.
template <typename T>
Value checked_arithmetic(std::string_view op, T left, T right) {
  T result = 0;
  bool overflow = false;
  if (op == "_+_") {
    overflow = __builtin_add_overflow(left, right, &result);
  } else if (op == "_-_") {
    overflow = __builtin_sub_overflow(left, right, &result);
  } else if (op == "_*_") {
    overflow = __builtin_mul_overflow(left, right, &result);
  } else if (right == 0) {
    return ErrorValue{op == "_/_" ? "divide by zero" : "modulus by zero"};
  } else if (std::is_signed_v<T> && left == std::numeric_limits<T>::min() && right == T(-1)) {
    overflow = true;
  } else {
    result = op == "_/_" ? left / right : left % right;
  }
  if (overflow) {
    return ErrorValue{std::is_signed_v<T> ? "integer overflow" : "unsigned integer overflow"};
  }
  return result;
}

Value arithmetic(std::string_view op, const Value& left, const Value& right) {
  if (const auto* a = left.get<std::int64_t>(); a != nullptr && right.is<std::int64_t>()) {
    return checked_arithmetic(op, *a, *right.get<std::int64_t>());
  }
  if (const auto* a = left.get<std::uint64_t>(); a != nullptr && right.is<std::uint64_t>()) {
    return checked_arithmetic(op, *a, *right.get<std::uint64_t>());
  }
  if (const auto* a = left.get<double>(); a != nullptr && right.is<double>() && op != "_%_") {
    const double b = *right.get<double>();
    return op == "_+_" ? *a + b : op == "_-_" ? *a - b : op == "_*_" ? *a * b : *a / b;
  }
  if (op == "_+_") {
    if (const auto* a = left.get<std::string>(); a != nullptr && right.is<std::string>()) {
      return *a + *right.get<std::string>();
    }
    if (const auto* a = left.get<Bytes>(); a != nullptr && right.is<Bytes>()) {
      return Bytes{a->data + right.get<Bytes>()->data};
    }
    if (const auto* a = left.get<ListPtr>(); a != nullptr && right.is<ListPtr>()) {
      auto joined = std::make_shared<List>(**a);
      const List& tail = **right.get<ListPtr>();
      joined->insert(joined->end(), tail.begin(), tail.end());
      return ListPtr{std::move(joined)};
    }
  }
  return no_overload(op);
}

Value ordering(std::string_view op, const Value& left, const Value& right) {
  std::optional<int> order;
  if (numbers::is_number(left) && numbers::is_number(right)) {
    order = numbers::compare(left, right);
    if (!order) {
      return false;  // NaN
    }
  } else if (const auto* a = left.get<bool>(); a != nullptr && right.is<bool>()) {
    order = static_cast<int>(*a) - static_cast<int>(*right.get<bool>());
  } else if (const auto* s = left.get<std::string>(); s != nullptr && right.is<std::string>()) {
    order = s->compare(*right.get<std::string>());
  } else if (const auto* b = left.get<Bytes>(); b != nullptr && right.is<Bytes>()) {
    order = b->data.compare(right.get<Bytes>()->data);
  } else {
    return no_overload(op);
  }
  if (op == "_<_") {
    return *order < 0;
  }
  if (op == "_<=_") {
    return *order <= 0;
  }
  if (op == "_>_") {
    return *order > 0;
  }
  return *order >= 0;
}

Value membership(const Value& element, const Value& container, std::uint64_t& work_left) {
  if (const auto* list = container.get<ListPtr>()) {
    Value found = false;
    for (const Value& item : **list) {
      Value same = equals(item, element, &work_left);
      if (work_left == 0 && same.is_unknown()) {
        return same;
      }
      if (same.is<bool>() && *same.get<bool>()) {
        return true;
      }
      if (!same.is<bool>() && !found.is_unknown()) {
        found = std::move(same);
      }
    }
    return found;
  }
  if (const auto* map = container.get<MapPtr>()) {
    const auto key = MapKey::of(element);
    return key.has_value() && (*map)->find(*key) != nullptr;
  }
  return no_overload("@in");
}

Value index(const Value& container, const Value& key) {
  if (const auto* list = container.get<ListPtr>()) {
    const auto position = MapKey::of(key);
    if (!position || position->kind != MapKey::Kind::kNumber || key.is<bool>()) {
      return ErrorValue{std::string("unsupported index type '") + key.type_name() + "' in list"};
    }
    if (position->negative || position->magnitude >= (*list)->size()) {
      return ErrorValue{"index out of range"};
    }
    return (**list)[position->magnitude];
  }
  if (const auto* map = container.get<MapPtr>()) {
    const auto map_key = MapKey::of(key);
    const Value* found = map_key ? (*map)->find(*map_key) : nullptr;
    if (found == nullptr) {
      return ErrorValue{"no such key"};
    }
    return *found;
  }
  return no_overload("_[_]");
}

template <typename T>
const T* receiver(const std::vector<Value>& args, bool has_target, std::size_t arity) {
  return has_target && args.size() == arity + 1 ? args[0].get<T>() : nullptr;
}

}  // namespace

struct Evaluator {
  const Program& program;
  const DeviceView* device;
  const std::map<std::string, Value, std::less<>>& variables;
  std::uint64_t limit = kPerCallCostLimit;
  std::vector<std::pair<std::string_view, Value>> scope;
  std::uint64_t cost = 0;
  std::size_t bytes = 0;  // of values created
  bool out_of_memory = false;

  [[nodiscard]] bool exhausted() const { return cost > limit || out_of_memory; }

  // Why the evaluation ends unknown once exhausted() (it then stops at the next node).
  [[nodiscard]] Value limit_reached() const {
    if (out_of_memory) {
      return UnknownValue{"evaluation exceeds its memory limit (" +
                          std::to_string(kMaxValueBytes >> 20) + " MiB a value, " +
                          std::to_string(kMaxEvaluationBytes >> 20) + " MiB in all)"};
    }
    return UnknownValue{"evaluation exceeds the cost limit of " + std::to_string(limit)};
  }

  // False once the evaluation is past its cost limit.
  bool charge(std::uint64_t units) {
    const std::uint64_t room = cost > limit ? 0 : limit - cost;
    cost = units > room ? limit + 1 : cost + units;
    return !exhausted();
  }

  // Accounts `size` bytes of a value about to be created; false when it is over a limit.
  bool allocate(std::size_t size) {
    if (size > kMaxValueBytes || size > kMaxEvaluationBytes - bytes) {
      out_of_memory = true;
      return false;
    }
    bytes += size;
    return true;
  }

  Value eval(const Expr& expr) {
    if (exhausted()) {
      return limit_reached();
    }
    return std::visit([&](const auto& node) { return eval_node(expr, node); }, expr.node);
  }

  Value eval_node(const Expr& /*expr*/, const Literal& literal) { return literal_value(literal); }

  const Value* in_scope(std::string_view name) const {
    for (auto it = scope.rbegin(); it != scope.rend(); ++it) {
      if (it->first == name) {
        return &it->second;
      }
    }
    return nullptr;
  }

  bool is_device(const Expr& expr) const {
    const auto* ident = std::get_if<Ident>(&expr.node);
    return ident != nullptr && device != nullptr &&
           (ident->name == ".device" || (ident->name == "device" && in_scope("device") == nullptr));
  }

  Value eval_node(const Expr& expr, const Ident& ident) {
    charge(1);
    if (const Value* value = in_scope(ident.name)) {
      return *value;
    }
    if (is_device(expr)) {
      return whole_device();
    }
    const std::string_view name =
        ident.name.starts_with('.') ? std::string_view(ident.name).substr(1) : ident.name;
    if (const auto found = variables.find(name); found != variables.end()) {
      return found->second;
    }
    static constexpr std::array<std::string_view, 11> kTypes = {
        "bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type",
        "dyn"};
    if (std::find(kTypes.begin(), kTypes.end(), name) != kTypes.end()) {
      return UnknownValue{"type values are not implemented"};
    }
    return ErrorValue{"undeclared reference to '" + std::string(name) + "'"};
  }

  // `device` as a map, for the rare expression that uses it other than through its fields.
  Value whole_device() {
    auto map = std::make_shared<MapValue>();
    for (const char* field : {"driver", "attributes", "capacity"}) {
      map->insert(*MapKey::of(Value{std::string(field)}), std::string(field), device_field(field));
    }
    return MapPtr{std::move(map)};
  }

  Value device_field(std::string_view field) const {
    if (field == "driver") {
      auto driver = device->driver_name();
      return driver ? Value{std::move(*driver)} : Value{UnknownValue{"driver not bound"}};
    }
    if (field == "attributes") {
      if (!device->attributes_bound()) {
        return UnknownValue{"attributes not bound"};
      }
      auto map = std::make_shared<MapValue>();
      for (const auto& [domain, entries] : device->all_attributes()) {
        map->insert(*MapKey::of(Value{domain}), domain, domain_map(entries, attribute_value));
      }
      return MapPtr{std::move(map)};
    }
    if (field == "capacity") {
      if (!device->capacity_bound()) {
        return UnknownValue{"capacity not bound"};
      }
      auto map = std::make_shared<MapValue>();
      for (const auto& [domain, entries] : device->all_capacity()) {
        map->insert(*MapKey::of(Value{domain}), domain,
                    domain_map(entries, [](const Quantity& quantity) { return Value{quantity}; }));
      }
      return MapPtr{std::move(map)};
    }
    if (field == "allowMultipleAllocations") {
      return UnknownValue{"device.allowMultipleAllocations is not bound"};
    }
    return ErrorValue{"no such key: " + std::string(field)};
  }

  // `device.attributes[domain]` or `device.capacity[domain]`: the allocator gives every domain a
  // map, empty when the device publishes nothing in it.
  struct Domain {
    Value failure;  // error or unknown when set (a null value otherwise)
    std::string name;
    bool attributes = false;  // else capacity
    bool failed() const { return undecided(failure); }
  };

  std::optional<Domain> device_domain(const Expr& expr) {
    const auto* call = std::get_if<Call>(&expr.node);
    if (call == nullptr || call->function != "_[_]" || call->args.size() != 2) {
      return std::nullopt;
    }
    const auto* select = std::get_if<Select>(&call->args[0]->node);
    if (select == nullptr || select->test_only || !is_device(*select->operand) ||
        (select->field != "attributes" && select->field != "capacity")) {
      return std::nullopt;
    }
    const bool attributes = select->field == "attributes";
    Domain domain;
    Value key = eval(*call->args[1]);
    if (undecided(key)) {
      domain.failure = std::move(key);
      return domain;
    }
    if (attributes ? !device->attributes_bound() : !device->capacity_bound()) {
      domain.failure = UnknownValue{select->field + " not bound"};
      return domain;
    }
    auto* name = key.get<std::string>();
    if (name == nullptr) {
      domain.failure = ErrorValue{"no such key"};
      return domain;
    }
    domain.name = std::move(*name);
    domain.attributes = attributes;
    return domain;
  }

  // The value of `name` in a device domain; `test_only` for has().
  Value domain_entry(const Domain& domain, const Value& name, bool test_only) const {
    if (domain.failed()) {
      return domain.failure;
    }
    const auto* text = name.get<std::string>();
    if (text != nullptr && domain.attributes) {
      const auto found = device->attribute(domain.name, *text);
      if (test_only) {
        return found.has_value();
      }
      if (found) {
        return attribute_value(*found);
      }
    } else if (text != nullptr) {
      auto found = device->capacity_value(domain.name, *text);
      if (test_only) {
        return found.has_value();
      }
      if (found) {
        return std::move(*found);
      }
    } else if (test_only) {
      return false;
    }
    return ErrorValue{"no such key: " + (text != nullptr ? *text : std::string(name.type_name()))};
  }

  Value domain_as_map(const Domain& domain) {
    if (domain.failed()) {
      return domain.failure;
    }
    if (domain.attributes) {
      const Attributes all = device->all_attributes();
      const auto found = all.find(domain.name);
      return domain_map(found != all.end() ? found->second : DomainAttributes{}, attribute_value);
    }
    const Capacity all = device->all_capacity();
    const auto found = all.find(domain.name);
    return domain_map(found != all.end() ? found->second : DomainCapacity{},
                      [](const Quantity& quantity) { return Value{quantity}; });
  }

  Value eval_node(const Expr& /*expr*/, const Select& select) {
    charge(1);
    if (auto domain = device_domain(*select.operand)) {
      return domain_entry(*domain, Value{select.field}, select.test_only);
    }
    if (is_device(*select.operand)) {
      if (!select.test_only) {
        return device_field(select.field);
      }
      if (select.field == "allowMultipleAllocations") {
        return UnknownValue{"device.allowMultipleAllocations is not bound"};
      }
      return select.field == "driver" || select.field == "attributes" ||
             select.field == "capacity";
    }
    Value operand = eval(*select.operand);
    if (undecided(operand)) {
      return operand;
    }
    const auto* map = operand.get<MapPtr>();
    if (map == nullptr) {
      return ErrorValue{std::string("type '") + operand.type_name() +
                        "' does not support field selection"};
    }
    const Value* found = (*map)->find(*MapKey::of(Value{select.field}));
    if (select.test_only) {
      return found != nullptr;
    }
    if (found == nullptr) {
      return ErrorValue{"no such key: " + select.field};
    }
    return *found;
  }

  Value eval_node(const Expr& expr, const Call& call) {
    const std::string& function = call.function;
    if ((function == "_&&_" || function == "_||_") && call.args.size() == 2) {
      const bool is_and = function == "_&&_";
      Value left = eval(*call.args[0]);
      if (const auto* value = left.get<bool>(); value != nullptr && *value != is_and) {
        return *value;  // short circuit
      }
      return logical(is_and, left, eval(*call.args[1]));
    }
    if (function == "_?_:_" && call.args.size() == 3) {
      Value condition = eval(*call.args[0]);
      if (const auto* value = condition.get<bool>()) {
        return eval(*call.args[*value ? 1 : 2]);
      }
      return undecided(condition) ? condition : no_overload(function);
    }
    if (function == "_[_]" && call.args.size() == 2) {
      charge(1);
      if (auto domain = device_domain(expr)) {
        return domain_as_map(*domain);
      }
      if (auto domain = device_domain(*call.args[0])) {
        Value name = eval(*call.args[1]);
        return undecided(name) ? name : domain_entry(*domain, name, false);
      }
    }
    if (!implemented(function)) {
      return UnknownValue{"function '" + function + "' is not implemented"};
    }
    std::vector<Value> args;
    args.reserve(call.args.size() + 1);
    if (call.target) {
      args.push_back(eval(*call.target));
    }
    for (const ExprPtr& arg : call.args) {
      args.push_back(eval(*arg));
    }
    for (Value& arg : args) {
      if (undecided(arg)) {
        return std::move(arg);
      }
    }
    if (!charge(call_cost(function, call.target != nullptr, args)) ||
        !allocate(created_bytes(function, args))) {
      return limit_reached();
    }
    return apply(expr, function, call.target != nullptr, args);
  }

  // What a call costs beyond its arguments, by cel-go's runtime cost model; at least one unit,
  // except comparisons for equality, which are charged as they go (equals()).
  static std::uint64_t call_cost(const std::string& function, bool has_target,
                                 const std::vector<Value>& args) {
    if (function == "_==_" || function == "_!=_" || function == "@in") {
      return 0;
    }
    std::uint64_t units = 1;
    const auto size_of = [&args](std::size_t i) {
      return i < args.size() ? cost_size(args[i]) : std::size_t{0};
    };
    const bool binary = !has_target && args.size() == 2;
    if (binary && (function == "_<_" || function == "_<=_" || function == "_>_" ||
                   function == "_>=_")) {
      units = scaled(std::min(size_of(0), size_of(1)), kTraversalFactor);
    } else if (binary && function == "_+_") {
      // Lists are copied here (cel-go concatenates them lazily): one unit an element.
      units = args[0].is<ListPtr>() ? size_of(0) + size_of(1)
                                    : scaled(size_of(0) + size_of(1), kTraversalFactor);
    } else if (function == "size" && args.size() == 1 && args[0].is<std::string>()) {
      units = scaled(size_of(0), kTraversalFactor);  // code points are counted
    } else if (has_target && args.size() == 2 && function == "contains") {
      units = scaled(size_of(0), kTraversalFactor) * scaled(size_of(1), kTraversalFactor);
    } else if (has_target && args.size() == 2 &&
               (function == "startsWith" || function == "endsWith")) {
      units = scaled(size_of(1), kTraversalFactor);
    } else if (function == "matches" && args.size() == 2) {
      units = scaled(size_of(0) + 1, kTraversalFactor) * scaled(size_of(1), kRegexLengthFactor);
    } else if (function == "semver" || function == "isSemver" || function == "quantity" ||
               function == "isQuantity") {
      units = scaled(size_of(0), kTraversalFactor);
    }
    return std::max<std::uint64_t>(units, 1);
  }

  // Bytes of the value a call creates: concatenations; other calls create scalars or share.
  static std::size_t created_bytes(const std::string& function, const std::vector<Value>& args) {
    if (function != "_+_" || args.size() != 2) {
      return 0;
    }
    if (args[0].is<ListPtr>() && args[1].is<ListPtr>()) {
      return (cost_size(args[0]) + cost_size(args[1])) * sizeof(Value);
    }
    if ((args[0].is<std::string>() && args[1].is<std::string>()) ||
        (args[0].is<Bytes>() && args[1].is<Bytes>())) {
      return cost_size(args[0]) + cost_size(args[1]);
    }
    return 0;
  }

  // The units left before the limit, for work charged as it goes.
  [[nodiscard]] std::uint64_t work_left() const { return cost > limit ? 0 : limit - cost; }
  void spent_work(std::uint64_t before, std::uint64_t after) {
    if (after == 0) {
      cost = limit + 1;
    } else {
      cost += before - after;
    }
  }

  static bool implemented(std::string_view function) {
    static constexpr std::array<std::string_view, 38> kFunctions = {
        "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_+_", "_-_", "_*_", "_/_",
        "_%_", "-_", "!_", "@in", "_[_]", "size", "contains", "startsWith", "endsWith",
        "matches", "semver", "isSemver", "quantity", "isQuantity", "major", "minor", "patch",
        "isGreaterThan", "isLessThan", "compareTo", "isInteger", "asInteger",
        "asApproximateFloat", "sign", "add", "sub", "_&&_", "_||_"};
    return std::find(kFunctions.begin(), kFunctions.end(), function) != kFunctions.end();
  }

  Value apply(const Expr& expr, const std::string& function, bool has_target,
              const std::vector<Value>& args) {
    const bool binary = !has_target && args.size() == 2;
    if (binary && (function == "_==_" || function == "_!=_")) {
      const std::uint64_t before = work_left();
      std::uint64_t left = before;
      Value same = equals(args[0], args[1], &left);
      spent_work(before, left);
      if (const auto* value = same.get<bool>(); value != nullptr && function == "_!=_") {
        return !*value;
      }
      return same;
    }
    if (binary && (function == "_<_" || function == "_<=_" || function == "_>_" ||
                   function == "_>=_")) {
      return ordering(function, args[0], args[1]);
    }
    if (binary && (function == "_+_" || function == "_-_" || function == "_*_" ||
                   function == "_/_" || function == "_%_")) {
      return arithmetic(function, args[0], args[1]);
    }
    if (binary && function == "@in") {
      const std::uint64_t before = work_left();
      std::uint64_t left = before;
      Value found = membership(args[0], args[1], left);
      spent_work(before, left);
      return found;
    }
    if (binary && function == "_[_]") {
      return index(args[0], args[1]);
    }
    if (binary && (function == "_&&_" || function == "_||_")) {
      return logical(function == "_&&_", args[0], args[1]);
    }
    if (!has_target && args.size() == 1 && function == "!_") {
      if (const auto* value = args[0].get<bool>()) {
        return !*value;
      }
      return no_overload(function);
    }
    if (!has_target && args.size() == 1 && function == "-_") {
      if (const auto* value = args[0].get<std::int64_t>()) {
        if (*value == std::numeric_limits<std::int64_t>::min()) {
          return ErrorValue{"integer overflow"};
        }
        return -*value;
      }
      if (const auto* value = args[0].get<double>()) {
        return -*value;
      }
      return no_overload(function);
    }
    if (function == "size" && args.size() == 1) {
      return size(args[0]);
    }
    if (Value result = strings(expr, function, has_target, args); !result.is<NullLiteral>()) {
      return result;
    }
    if (Value result = versions(function, has_target, args); !result.is<NullLiteral>()) {
      return result;
    }
    if (Value result = quantities(function, has_target, args); !result.is<NullLiteral>()) {
      return result;
    }
    return no_overload(function);
  }

  static Value size(const Value& value) {
    if (const auto* text = value.get<std::string>()) {
      return static_cast<std::int64_t>(code_points(*text));
    }
    if (const auto* bytes = value.get<Bytes>()) {
      return static_cast<std::int64_t>(bytes->data.size());
    }
    if (const auto* list = value.get<ListPtr>()) {
      return static_cast<std::int64_t>((*list)->size());
    }
    if (const auto* map = value.get<MapPtr>()) {
      return static_cast<std::int64_t>((*map)->size());
    }
    return no_overload("size");
  }

  // contains, startsWith, endsWith, matches; null when `function` is none of them.
  Value strings(const Expr& expr, const std::string& function, bool has_target,
                const std::vector<Value>& args) {
    const std::string* subject = nullptr;
    const std::string* argument = nullptr;
    if (has_target && args.size() == 2) {
      subject = args[0].get<std::string>();
      argument = args[1].get<std::string>();
    } else if (!has_target && args.size() == 2 && function == "matches") {
      subject = args[0].get<std::string>();
      argument = args[1].get<std::string>();
    }
    const bool known = function == "contains" || function == "startsWith" ||
                       function == "endsWith" || function == "matches";
    if (!known) {
      return NullLiteral{};
    }
    if (subject == nullptr || argument == nullptr) {
      return no_overload(function);
    }
    if (function == "contains") {
      return subject->find(*argument) != std::string::npos;
    }
    if (function == "startsWith") {
      return subject->starts_with(*argument);
    }
    if (function == "endsWith") {
      return subject->ends_with(*argument);
    }
    // A pattern's compilation is charged on every evaluation, compiled here or before: the cost,
    // and so the answer, never depends on what ran earlier.
    const auto found = program.compiled_->patterns.find(&expr);
    const LiteralPattern* literal =
        found != program.compiled_->patterns.end() ? &found->second : nullptr;
    if (!charge(literal != nullptr ? literal->compile_cost : regex_compile_cost(*argument))) {
      return limit_reached();
    }
    std::optional<Result<std::shared_ptr<const re2::RE2>>> built;
    const Result<std::shared_ptr<const re2::RE2>>& regex =
        literal != nullptr && literal->regex ? *literal->regex
                                             : built.emplace(compile_bounded_regex(*argument));
    if (!regex) {
      return pattern_failure(regex.error());
    }
    return re2::RE2::PartialMatch(*subject, **regex);
  }

  // isGreaterThan / isLessThan / compareTo of the semver and quantity libraries, given how the
  // receiver compares to the argument; null for another function.
  static Value comparison(const std::string& function, int order) {
    if (function == "isGreaterThan") {
      return order > 0;
    }
    if (function == "isLessThan") {
      return order < 0;
    }
    if (function == "compareTo") {
      return static_cast<std::int64_t>(order);
    }
    return NullLiteral{};
  }

  static Value versions(const std::string& function, bool has_target,
                        const std::vector<Value>& args) {
    if ((function == "semver" || function == "isSemver") && !has_target && !args.empty() &&
        args.size() <= 2) {
      const auto* text = args[0].get<std::string>();
      const bool* normalize = args.size() == 2 ? args[1].get<bool>() : nullptr;
      if (text == nullptr || (args.size() == 2 && normalize == nullptr)) {
        return no_overload(function);
      }
      auto version = Version::parse(*text, normalize != nullptr && *normalize);
      if (function == "isSemver") {
        return version.has_value();
      }
      if (!version) {
        return ErrorValue{"invalid semver: " + *text};
      }
      return std::move(*version);
    }
    const auto* version = receiver<Version>(args, has_target, 0);
    if (version != nullptr && function == "major") {
      return static_cast<std::int64_t>(version->major);
    }
    if (version != nullptr && function == "minor") {
      return static_cast<std::int64_t>(version->minor);
    }
    if (version != nullptr && function == "patch") {
      return static_cast<std::int64_t>(version->patch);
    }
    const auto* left = receiver<Version>(args, has_target, 1);
    const auto* right = left != nullptr ? args[1].get<Version>() : nullptr;
    if (right == nullptr) {
      return NullLiteral{};
    }
    return comparison(function, left->compare(*right));
  }

  static Value quantities(const std::string& function, bool has_target,
                          const std::vector<Value>& args) {
    if ((function == "quantity" || function == "isQuantity") && !has_target && args.size() == 1) {
      const auto* text = args[0].get<std::string>();
      if (text == nullptr) {
        return no_overload(function);
      }
      auto quantity = Quantity::parse(*text);
      if (function == "isQuantity") {
        return quantity.has_value();
      }
      if (!quantity) {
        return ErrorValue{"invalid quantity: " + *text};
      }
      return std::move(*quantity);
    }
    if (const auto* quantity = receiver<Quantity>(args, has_target, 0)) {
      if (function == "isInteger") {
        return quantity->is_integer();
      }
      if (function == "asInteger") {
        if (auto integer = quantity->as_integer()) {
          return *integer;
        }
        return ErrorValue{"cannot convert value to integer"};
      }
      if (function == "asApproximateFloat") {
        return quantity->as_approximate_float();
      }
      if (function == "sign") {
        return static_cast<std::int64_t>(quantity->sign());
      }
      return NullLiteral{};
    }
    const auto* left = receiver<Quantity>(args, has_target, 1);
    if (left == nullptr) {
      return NullLiteral{};
    }
    std::optional<Quantity> right;
    if (const auto* other = args[1].get<Quantity>()) {
      right = *other;
    } else if (const auto* integer = args[1].get<std::int64_t>();
               integer != nullptr && (function == "add" || function == "sub")) {
      right = Quantity::from_integer(*integer);
    } else {
      return NullLiteral{};
    }
    if (function == "add") {
      return left->plus(*right);
    }
    if (function == "sub") {
      return left->minus(*right);
    }
    return comparison(function, left->compare(*right));
  }

  Value eval_node(const Expr& /*expr*/, const CreateList& list) {
    if (!charge(kListCreateCost) || !allocate(list.elements.size() * sizeof(Value))) {
      return limit_reached();
    }
    auto elements = std::make_shared<List>();
    elements->reserve(list.elements.size());
    for (const ExprPtr& element : list.elements) {
      Value value = eval(*element);
      if (undecided(value)) {
        return value;
      }
      elements->push_back(std::move(value));
    }
    return ListPtr{std::move(elements)};
  }

  Value eval_node(const Expr& /*expr*/, const CreateMap& create) {
    if (!charge(kMapCreateCost) ||
        !allocate(create.entries.size() * (2 * sizeof(Value) + sizeof(MapKey)))) {
      return limit_reached();
    }
    auto map = std::make_shared<MapValue>();
    for (const auto& entry : create.entries) {
      Value key = eval(*entry.key);
      if (undecided(key)) {
        return key;
      }
      Value value = eval(*entry.value);
      if (undecided(value)) {
        return value;
      }
      if (const auto* text = key.get<std::string>(); text != nullptr && !allocate(text->size())) {
        return limit_reached();  // the map's index copies string keys
      }
      auto map_key = MapKey::of(key);
      if (!map_key || key.is<double>()) {
        return ErrorValue{std::string("unsupported key type '") + key.type_name() + "'"};
      }
      if (!map->insert(std::move(*map_key), std::move(key), std::move(value))) {
        return ErrorValue{"Failed with repeated key"};
      }
    }
    return MapPtr{std::move(map)};
  }

  Value eval_node(const Expr& /*expr*/, const CreateStruct& /*message*/) {
    return UnknownValue{"message construction is not implemented"};
  }

  // A comprehension's range, read in place: a list's elements or a map's keys.
  struct Range {
    const List* list = nullptr;
    const std::vector<std::pair<Value, Value>>* entries = nullptr;

    [[nodiscard]] std::size_t size() const {
      return list != nullptr ? list->size() : entries->size();
    }
    [[nodiscard]] const Value& operator[](std::size_t i) const {
      return list != nullptr ? (*list)[i] : (*entries)[i].first;
    }
  };

  Value eval_node(const Expr& /*expr*/, const Macro& macro) {
    const Value range = eval(*macro.range);
    if (undecided(range)) {
      return range;
    }
    Range items;
    if (const auto* list = range.get<ListPtr>()) {
      items.list = list->get();
    } else if (const auto* map = range.get<MapPtr>()) {
      items.entries = &(*map)->entries();
    } else {
      return ErrorValue{std::string("expression of type '") + range.type_name() +
                        "' cannot be the range of a comprehension"};
    }
    scope.emplace_back(macro.variable, Value{});
    Value result = run_macro(macro, items);
    scope.pop_back();
    return result;
  }

  // Binds the macro variable to item `i`; false once the evaluation is past a limit.
  bool next_item(const Range& items, std::size_t i) {
    if (!charge(1)) {
      return false;
    }
    scope.back().second = items[i];
    return true;
  }

  Value run_macro(const Macro& macro, const Range& items) {
    switch (macro.kind) {
      case MacroKind::kAll:
      case MacroKind::kExists: {
        const bool is_all = macro.kind == MacroKind::kAll;
        Value result = is_all;
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (!next_item(items, i)) {
            return limit_reached();
          }
          result = logical(is_all, result, eval(*macro.filter));
          if (const auto* done = result.get<bool>(); done != nullptr && *done != is_all) {
            break;
          }
        }
        return result;
      }
      case MacroKind::kExistsOne: {
        std::int64_t count = 0;
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (!next_item(items, i)) {
            return limit_reached();
          }
          Value matched = eval(*macro.filter);
          const auto* value = matched.get<bool>();
          if (value == nullptr) {
            return undecided(matched) ? matched : no_overload("_?_:_");
          }
          count += *value ? 1 : 0;
        }
        return count == 1;
      }
      case MacroKind::kMap:
      case MacroKind::kFilter: {
        auto result = std::make_shared<List>();
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (!next_item(items, i)) {
            return limit_reached();
          }
          if (macro.filter) {
            Value keep = eval(*macro.filter);
            const auto* value = keep.get<bool>();
            if (value == nullptr) {
              return undecided(keep) ? keep : no_overload("_?_:_");
            }
            if (!*value) {
              continue;
            }
          }
          Value element = macro.kind == MacroKind::kMap ? eval(*macro.transform) : items[i];
          if (undecided(element)) {
            return element;
          }
          // cel-go appends by creating a one-element list and concatenating.
          if (!charge(kListCreateCost + 1) || !allocate(sizeof(Value))) {
            return limit_reached();
          }
          result->push_back(std::move(element));
        }
        return ListPtr{std::move(result)};
      }
    }
    return ErrorValue{"internal: unknown macro"};
  }
};

Result<Program> compile(std::string_view text) {
  Result<ExprPtr> parsed = parse(text);
  if (!parsed) {
    return parsed.error();
  }
  Program program;
  program.source_ = std::make_shared<const std::string>(text);
  program.root_ = std::shared_ptr<const Expr>(std::move(*parsed));
  auto compiled = std::make_shared<Program::Compiled>();
  collect_patterns(*program.root_, *compiled);
  program.compiled_ = std::move(compiled);
  program.facts_ = std::make_shared<const ProgramFacts>(inspect(*program.root_));
  return program;
}

Result<Program> ProgramCache::compile(std::string_view text) {
  if (const auto found = programs_.find(text); found != programs_.end()) {
    return found->second;
  }
  Result<Program> program = cel::compile(text);
  if (program) {
    keep(text, *program);
  }
  return program;
}

void ProgramCache::keep(std::string_view text, const Program& program) {
  if (text.size() > kMaxTextBytes) {
    return;
  }
  // Each literal pattern counts as much as RE2 may take for one.
  const std::size_t size = text.size() * kTreeBytesPerSourceByte +
                           program.compiled_->patterns.size() *
                               static_cast<std::size_t>(kRegexMaxMemory);
  if (size > kMaxBytes / 4) {
    return;
  }
  if (programs_.size() >= kMaxEntries || bytes_ + size > kMaxBytes) {
    programs_.clear();
    bytes_ = 0;
  }
  if (programs_.emplace(std::string(text), program).second) {
    bytes_ += size;
  }
}

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kTrue:
      return "true";
    case Outcome::kFalse:
      return "false";
    case Outcome::kError:
      return "error";
    case Outcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

// `name` of `domain` in maps by domain, or nullopt.
template <class Maps>
auto find_in_domain(const std::optional<Maps>& maps, std::string_view domain,
                    std::string_view name)
    -> std::optional<typename Maps::mapped_type::mapped_type> {
  if (!maps) {
    return std::nullopt;
  }
  const auto in_domain = maps->find(domain);
  if (in_domain == maps->end()) {
    return std::nullopt;
  }
  const auto found = in_domain->second.find(name);
  return found != in_domain->second.end() ? std::optional(found->second) : std::nullopt;
}

}  // namespace

std::optional<AttributeValue> Activation::attribute(std::string_view domain,
                                                    std::string_view name) const {
  return find_in_domain(attributes, domain, name);
}

std::optional<Quantity> Activation::capacity_value(std::string_view domain,
                                                   std::string_view name) const {
  return find_in_domain(capacity, domain, name);
}

Value evaluate_value(const Program& program, const DeviceView* device,
                     const std::map<std::string, Value, std::less<>>& variables) {
  Evaluator evaluator{program, device, variables};
  Value value = evaluator.eval(program.root());
  // A limit reached anywhere makes the whole value unknown, as cel-go aborts the evaluation,
  // even where `||`, `&&` or `?:` would have left the exhausted part out.
  return evaluator.exhausted() ? evaluator.limit_reached() : value;
}

ValueEvaluation evaluate_device_value(const Program& program, const DeviceView& device,
                                      CostBudget* budget) {
  static const std::map<std::string, Value, std::less<>> kNoVariables;
  Evaluator evaluator{program, &device, kNoVariables};
  if (budget != nullptr) {
    evaluator.limit = std::min(kPerCallCostLimit, budget->remaining());
  }
  ValueEvaluation out{evaluator.eval(program.root())};
  out.cost = evaluator.cost;
  if (budget != nullptr) {
    budget->charge(evaluator.cost);
  }
  if (evaluator.exhausted()) {
    out.budget_exhausted = !evaluator.out_of_memory && evaluator.limit < kPerCallCostLimit;
    if (out.budget_exhausted && budget != nullptr) {
      budget->mark_cut_short();
    }
    out.value = evaluator.limit_reached();
  }
  return out;
}

Evaluation evaluate(const Program& program, const DeviceView& device, CostBudget* budget) {
  const ValueEvaluation computed = evaluate_device_value(program, device, budget);
  const Value& value = computed.value;
  Evaluation evaluation;
  evaluation.cost = computed.cost;
  evaluation.budget_exhausted = computed.budget_exhausted;
  if (const auto* result = value.get<bool>()) {
    evaluation.outcome = *result ? Outcome::kTrue : Outcome::kFalse;
  } else if (const auto* error = value.get<ErrorValue>()) {
    evaluation.outcome = Outcome::kError;
    evaluation.message = error->message;
  } else if (const auto* unknown = value.get<UnknownValue>()) {
    evaluation.outcome = Outcome::kUnknown;
    evaluation.message = unknown->reason;
  } else {
    evaluation.outcome = Outcome::kError;
    evaluation.message =
        std::string("the expression evaluates to ") + value.type_name() + ", not bool";
  }
  return evaluation;
}

}  // namespace topoguard::cel
