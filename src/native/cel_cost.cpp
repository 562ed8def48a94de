#include "cel_cost.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "topoguard/cel/cel.h"

namespace topoguard::native {

namespace {

using cel::Call;
using cel::Expr;
using cel::MacroKind;

// cel-go's cost constants (common/cost.go).
constexpr std::uint64_t kSelectAndIdentCost = 1;
constexpr std::uint64_t kListCreateBaseCost = 10;
constexpr std::uint64_t kMapCreateBaseCost = 30;
constexpr std::uint64_t kStructCreateBaseCost = 40;

// Saturating arithmetic: a bound that overflows is as good as infinite.
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

std::uint64_t multiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return a * b;
}

// ceil(size * factor) for cel-go's factors 0.1 (string traversal) and 0.25 (regex length).
std::uint64_t tenth(std::uint64_t size) { return size / 10 + (size % 10 != 0 ? 1 : 0); }
std::uint64_t quarter(std::uint64_t size) { return size / 4 + (size % 4 != 0 ? 1 : 0); }

ShapePtr union_of(const ShapePtr& a, const ShapePtr& b) {
  if (!a) {
    return b;
  }
  if (!b) {
    return a;
  }
  auto shape = std::make_shared<Shape>(*a);
  shape->size = std::max(a->size, b->size);
  if (a->kind != b->kind) {
    // `[]` or `{}` in one branch: the other branch's kind, at the larger size.
    const Shape& typed = a->kind == Shape::Kind::kScalar ? *b : *a;
    shape->kind = typed.kind;
    shape->element = typed.element;
    shape->fields = typed.fields;
    return shape;
  }
  shape->element = union_of(a->element, b->element);
  for (const auto& [name, field] : b->fields) {
    shape->fields[name] = union_of(shape->fields[name], field);
  }
  return shape;
}

// "a.b.c" for identifiers and selections, empty for anything else: what a guard bounds.
std::string path_of(const Expr& expr) {
  if (const auto* ident = std::get_if<cel::Ident>(&expr.node)) {
    return ident->name;
  }
  if (const auto* select = std::get_if<cel::Select>(&expr.node); select && !select->test_only) {
    const std::string operand = path_of(*select->operand);
    return operand.empty() ? std::string() : operand + "." + select->field;
  }
  return {};
}

struct Guard {
  std::string path;
  std::uint64_t limit;
};

const std::int64_t* int_literal(const Expr& expr) {
  const auto* literal = std::get_if<cel::Literal>(&expr.node);
  return literal == nullptr ? nullptr : std::get_if<std::int64_t>(literal);
}

// The P of `size(P)` or `P.size()`.
const Expr* size_operand(const Expr& expr) {
  const auto* call = std::get_if<Call>(&expr.node);
  if (call == nullptr || call->function != "size") {
    return nullptr;
  }
  if (call->target && call->args.empty()) {
    return call->target.get();
  }
  return !call->target && call->args.size() == 1 ? call->args[0].get() : nullptr;
}

// The bound `expr` puts on a path when it is true (`when_true`) or false.
std::optional<Guard> guard_of(const Expr& expr, bool when_true) {
  const auto* call = std::get_if<Call>(&expr.node);
  if (call == nullptr || call->args.size() != 2 || call->target) {
    return std::nullopt;
  }
  const Expr* operand = size_operand(*call->args[0]);
  const std::int64_t* limit = int_literal(*call->args[1]);
  if (operand == nullptr || limit == nullptr || *limit < 1) {
    return std::nullopt;
  }
  const std::string path = path_of(*operand);
  if (path.empty()) {
    return std::nullopt;
  }
  const auto bound = static_cast<std::uint64_t>(*limit);
  const std::string& op = call->function;
  if (when_true && op == "_<=_") {
    return Guard{path, bound};
  }
  if (when_true && op == "_<_") {
    return Guard{path, bound - 1};
  }
  if (!when_true && op == "_>_") {
    return Guard{path, bound};
  }
  if (!when_true && op == "_>=_") {
    return Guard{path, bound - 1};
  }
  return std::nullopt;
}

// Every guard a chain of `&&` (when_true) or `||` (false) establishes once it is passed.
void collect_guards(const Expr& expr, bool when_true, std::vector<Guard>& guards) {
  if (const auto* call = std::get_if<Call>(&expr.node);
      call != nullptr && call->function == (when_true ? "_&&_" : "_||_") &&
      call->args.size() == 2) {
    collect_guards(*call->args[0], when_true, guards);
    collect_guards(*call->args[1], when_true, guards);
    return;
  }
  if (std::optional<Guard> guard = guard_of(expr, when_true)) {
    guards.push_back(std::move(*guard));
  }
}

class Estimator {
 public:
  explicit Estimator(const std::map<std::string, ShapePtr>& roots) : scopes_{roots} {}

  Result<CostEstimate> estimate(const Expr& expr) {
    Result<CostEstimate> result = estimate_node(expr);
    if (!result) {
      return result;
    }
    // A guarded path is no larger than its guard says.
    if (const std::string path = path_of(expr); !path.empty() && result->shape) {
      if (const auto found = bounds_.find(path);
          found != bounds_.end() && found->second < result->shape->size) {
        auto shape = std::make_shared<Shape>(*result->shape);
        shape->size = found->second;
        result->shape = std::move(shape);
      }
    }
    return result;
  }

 private:
  static Error error(const Expr& expr, std::string message) {
    return Error{ErrorCode::kInternal,
                 "cost of the CEL at " + std::to_string(expr.position.line) + ":" +
                     std::to_string(expr.position.column) + ": " + std::move(message),
                 {}};
  }

  Result<CostEstimate> estimate_node(const Expr& expr) {
    return std::visit([&](const auto& node) { return visit(expr, node); }, expr.node);
  }

  Result<CostEstimate> visit(const Expr&, const cel::Literal& literal) {
    if (const auto* text = std::get_if<std::string>(&literal)) {
      return CostEstimate{0, Shape::string(text->size())};
    }
    return CostEstimate{0, Shape::scalar()};
  }

  Result<CostEstimate> visit(const Expr& expr, const cel::Ident& ident) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      if (const auto found = scope->find(ident.name); found != scope->end()) {
        return CostEstimate{kSelectAndIdentCost, found->second};
      }
    }
    return error(expr, "no size is known for `" + ident.name + "`");
  }

  Result<CostEstimate> visit(const Expr& expr, const cel::Select& select) {
    Result<CostEstimate> operand = estimate(*select.operand);
    if (!operand) {
      return operand;
    }
    const std::uint64_t cost = add(operand->cost, kSelectAndIdentCost);
    if (select.test_only) {
      return CostEstimate{cost, Shape::scalar()};
    }
    const auto found = operand->shape->fields.find(select.field);
    if (operand->shape->kind != Shape::Kind::kMap || found == operand->shape->fields.end()) {
      return error(expr, "no size is known for the field `" + select.field + "`");
    }
    return CostEstimate{cost, found->second};
  }

  Result<CostEstimate> visit(const Expr& expr, const cel::CreateList& list) {
    std::uint64_t cost = kListCreateBaseCost;
    ShapePtr element;
    for (const cel::ExprPtr& item : list.elements) {
      Result<CostEstimate> estimate_of_item = estimate(*item);
      if (!estimate_of_item) {
        return estimate_of_item;
      }
      cost = add(cost, estimate_of_item->cost);
      element = union_of(element, estimate_of_item->shape);
    }
    (void)expr;
    return CostEstimate{cost,
                        Shape::list(list.elements.size(), element ? element : Shape::scalar())};
  }

  Result<CostEstimate> visit(const Expr&, const cel::CreateMap& map) {
    std::uint64_t cost = kMapCreateBaseCost;
    std::map<std::string, ShapePtr> fields;
    for (const auto& entry : map.entries) {
      Result<CostEstimate> key = estimate(*entry.key);
      if (!key) {
        return key;
      }
      Result<CostEstimate> value = estimate(*entry.value);
      if (!value) {
        return value;
      }
      cost = add(cost, add(key->cost, value->cost));
      if (const auto* literal = std::get_if<cel::Literal>(&entry.key->node)) {
        if (const auto* name = std::get_if<std::string>(literal)) {
          fields[*name] = value->shape;
        }
      }
    }
    return CostEstimate{cost, Shape::object(std::move(fields))};
  }

  Result<CostEstimate> visit(const Expr&, const cel::CreateStruct& message) {
    std::uint64_t cost = kStructCreateBaseCost;
    std::map<std::string, ShapePtr> fields;
    for (const auto& field : message.fields) {
      Result<CostEstimate> value = estimate(*field.value);
      if (!value) {
        return value;
      }
      cost = add(cost, value->cost);
      fields[field.name] = value->shape;
    }
    return CostEstimate{cost, Shape::object(std::move(fields))};
  }

  Result<CostEstimate> visit(const Expr& expr, const cel::Macro& macro) {
    Result<CostEstimate> range = estimate(*macro.range);
    if (!range) {
      return range;
    }
    if (range->shape->kind != Shape::Kind::kList || !range->shape->element) {
      return error(expr, "a macro over something that is not a list of known size");
    }
    // Inside, the variable is an element; bounds on an outer variable of that name are gone.
    std::map<std::string, std::uint64_t> outer = bounds_;
    std::erase_if(bounds_, [&](const auto& bound) {
      return bound.first == macro.variable || bound.first.starts_with(macro.variable + ".");
    });
    scopes_.push_back({{macro.variable, range->shape->element}});
    Result<CostEstimate> filter = macro.filter ? estimate(*macro.filter) : CostEstimate{0, {}};
    Result<CostEstimate> transform =
        filter && macro.transform ? estimate(*macro.transform) : CostEstimate{0, {}};
    scopes_.pop_back();
    bounds_ = std::move(outer);
    if (!filter) {
      return filter;
    }
    if (!transform) {
      return transform;
    }
    const std::uint64_t count = range->shape->size;
    // Per element: the loop condition and step of cel-go's expansion of each macro.
    std::uint64_t step = 0;
    std::uint64_t fixed = 0;
    ShapePtr result = Shape::scalar();
    switch (macro.kind) {
      case MacroKind::kAll:  // @not_strictly_false(accu); accu && p
        step = add(3, filter->cost);
        fixed = 1;
        break;
      case MacroKind::kExists:  // @not_strictly_false(!accu); accu || p
        step = add(4, filter->cost);
        fixed = 1;
        break;
      case MacroKind::kExistsOne:  // p ? accu + 1 : accu; result accu == 1
        step = add(2, filter->cost);
        fixed = 2;
        break;
      case MacroKind::kMap:  // [p ?] accu + [t] [: accu]
        step = add(add(12, transform->cost), filter->cost);
        fixed = 1 + kListCreateBaseCost;
        result = Shape::list(count, transform->shape);
        break;
      case MacroKind::kFilter:  // p ? accu + [x] : accu
        step = add(13, filter->cost);
        fixed = 1 + kListCreateBaseCost;
        result = Shape::list(count, range->shape->element);
        break;
    }
    return CostEstimate{add(add(range->cost, fixed), multiply(count, step)), result};
  }

  Result<CostEstimate> visit(const Expr& expr, const Call& call) {
    const std::string& function = call.function;
    if (function == "_&&_" || function == "_||_") {
      return logical(call, function == "_&&_");
    }
    if (function == "_?_:_" && call.args.size() == 3) {
      return conditional(call);
    }
    std::vector<CostEstimate> args;
    std::uint64_t cost = 0;
    std::optional<CostEstimate> target;
    if (call.target) {
      Result<CostEstimate> estimated = estimate(*call.target);
      if (!estimated) {
        return estimated;
      }
      cost = estimated->cost;
      target = std::move(*estimated);
    }
    for (const cel::ExprPtr& arg : call.args) {
      Result<CostEstimate> estimated = estimate(*arg);
      if (!estimated) {
        return estimated;
      }
      cost = add(cost, estimated->cost);
      args.push_back(std::move(*estimated));
    }
    const auto size_of = [](const CostEstimate& estimate) { return estimate.shape->size; };
    if (function == "_[_]" && args.size() == 2) {
      const ShapePtr& container = args[0].shape;
      if (container->kind == Shape::Kind::kMap && container->element) {  // a map of any keys
        return CostEstimate{add(cost, 1), container->element};
      }
      if (container->kind != Shape::Kind::kList || !container->element) {
        return error(expr, "an index into something that is not a list of known size");
      }
      return CostEstimate{add(cost, 1), container->element};
    }
    if (function == "@in" && args.size() == 2) {
      // A list is searched; a map's key is looked up (cel-go: O(1)).
      return CostEstimate{
          add(cost, args[1].shape->kind == Shape::Kind::kList ? size_of(args[1]) : 1),
          Shape::scalar()};
    }
    if ((function == "_==_" || function == "_!=_" || function == "_<_" || function == "_<=_" ||
         function == "_>_" || function == "_>=_") &&
        args.size() == 2) {
      return CostEstimate{add(cost, std::max<std::uint64_t>(
                                        1, tenth(std::min(size_of(args[0]), size_of(args[1]))))),
                          Shape::scalar()};
    }
    if (function == "_+_" && args.size() == 2) {
      const std::uint64_t size = add(size_of(args[0]), size_of(args[1]));
      if (args[0].shape->kind == Shape::Kind::kList) {
        return CostEstimate{add(cost, 1), Shape::list(size, union_of(args[0].shape->element,
                                                                     args[1].shape->element))};
      }
      return CostEstimate{add(cost, tenth(size)), Shape::string(size)};
    }
    if (function == "matches" && target && args.size() == 1) {
      return CostEstimate{
          add(cost, multiply(tenth(add(size_of(*target), 1)), quarter(size_of(args[0])))),
          Shape::scalar()};
    }
    if (function == "contains" && target && args.size() == 1) {
      return CostEstimate{add(cost, multiply(tenth(size_of(*target)), tenth(size_of(args[0])))),
                          Shape::scalar()};
    }
    if ((function == "startsWith" || function == "endsWith") && target && args.size() == 1) {
      return CostEstimate{add(cost, tenth(size_of(args[0]))), Shape::scalar()};
    }
    if (function == "string" && !target && args.size() == 1) {
      const ShapePtr& shape = args[0].shape;
      return CostEstimate{add(cost, 1),
                          shape->kind == Shape::Kind::kString ? shape : Shape::string(20)};
    }
    if (function == "dyn" && !target && args.size() == 1) {
      return CostEstimate{add(cost, 1), args[0].shape};
    }
    return CostEstimate{add(cost, 1), Shape::scalar()};
  }

  Result<CostEstimate> logical(const Call& call, bool is_and) {
    Result<CostEstimate> left = estimate(*call.args[0]);
    if (!left) {
      return left;
    }
    std::vector<Guard> guards;
    collect_guards(*call.args[0], is_and, guards);
    Result<CostEstimate> right = guarded(*call.args[1], guards);
    if (!right) {
      return right;
    }
    return CostEstimate{add(left->cost, right->cost), Shape::scalar()};
  }

  Result<CostEstimate> conditional(const Call& call) {
    Result<CostEstimate> condition = estimate(*call.args[0]);
    if (!condition) {
      return condition;
    }
    std::vector<Guard> if_true;
    std::vector<Guard> if_false;
    collect_guards(*call.args[0], true, if_true);
    collect_guards(*call.args[0], false, if_false);
    Result<CostEstimate> yes = guarded(*call.args[1], if_true);
    if (!yes) {
      return yes;
    }
    Result<CostEstimate> no = guarded(*call.args[2], if_false);
    if (!no) {
      return no;
    }
    return CostEstimate{add(condition->cost, std::max(yes->cost, no->cost)),
                        union_of(yes->shape, no->shape)};
  }

  Result<CostEstimate> guarded(const Expr& expr, const std::vector<Guard>& guards) {
    std::map<std::string, std::uint64_t> outer = bounds_;
    for (const Guard& guard : guards) {
      auto [it, inserted] = bounds_.emplace(guard.path, guard.limit);
      if (!inserted) {
        it->second = std::min(it->second, guard.limit);
      }
    }
    Result<CostEstimate> result = estimate(expr);
    bounds_ = std::move(outer);
    return result;
  }

  std::vector<std::map<std::string, ShapePtr>> scopes_;
  std::map<std::string, std::uint64_t> bounds_;  // path -> largest size, from guards
};

}  // namespace

ShapePtr Shape::scalar() { return std::make_shared<Shape>(); }

ShapePtr Shape::string(std::uint64_t length) {
  auto shape = std::make_shared<Shape>();
  shape->kind = Kind::kString;
  shape->size = length;
  return shape;
}

ShapePtr Shape::list(std::uint64_t length, ShapePtr element) {
  auto shape = std::make_shared<Shape>();
  shape->kind = Kind::kList;
  shape->size = length;
  shape->element = std::move(element);
  return shape;
}

ShapePtr Shape::object(std::map<std::string, ShapePtr> fields) {
  auto shape = std::make_shared<Shape>();
  shape->kind = Kind::kMap;
  shape->fields = std::move(fields);
  return shape;
}

ShapePtr Shape::map_of(ShapePtr value) {
  auto shape = std::make_shared<Shape>();
  shape->kind = Kind::kMap;
  shape->element = std::move(value);
  return shape;
}

Result<CostEstimate> estimate_cost(std::string_view expression,
                                   const std::map<std::string, ShapePtr>& roots) {
  Result<cel::Program> program = cel::compile(expression);
  if (!program) {
    return Error{
        ErrorCode::kInternal, "compiled CEL does not parse: " + program.error().message, {}};
  }
  return Estimator(roots).estimate(program->root());
}

}  // namespace topoguard::native
