// Static questions about a program's syntax tree (no evaluation).
#include <algorithm>
#include <map>
#include <set>

#include "syntax_walk.h"
#include "topoguard/cel/cel.h"
#include "topoguard/cel/device_reads.h"

namespace topoguard::cel {

namespace {

const std::string* string_literal(const Expr& expr) {
  const auto* literal = std::get_if<Literal>(&expr.node);
  return literal == nullptr ? nullptr : std::get_if<std::string>(literal);
}

bool is_device(const Expr& expr) {
  const auto* ident = std::get_if<Ident>(&expr.node);
  return ident != nullptr && (ident->name == "device" || ident->name == ".device");
}

// The `device` identifier of `device.attributes[key]`, or null.
const Expr* attributes_device(const Expr& expr) {
  const auto* index = std::get_if<Call>(&expr.node);
  if (index == nullptr || index->function != "_[_]" || index->args.size() != 2) {
    return nullptr;
  }
  const auto* attributes = std::get_if<Select>(&index->args[0]->node);
  if (attributes == nullptr || attributes->field != "attributes" || attributes->test_only ||
      !is_device(*attributes->operand)) {
    return nullptr;
  }
  return attributes->operand.get();
}

// The domain of `device.attributes["domain"]`, or null.
const std::string* attribute_domain(const Expr& expr) {
  if (attributes_device(expr) == nullptr) {
    return nullptr;
  }
  return string_literal(*std::get<Call>(expr.node).args[1]);
}

}  // namespace

void walk(const Expr& expr, const std::function<void(const Expr&)>& visit) {
  visit(expr);
  const auto child = [&visit](const ExprPtr& node) {
    if (node) {
      walk(*node, visit);
    }
  };
  if (const auto* select = std::get_if<Select>(&expr.node)) {
    child(select->operand);
  } else if (const auto* call = std::get_if<Call>(&expr.node)) {
    child(call->target);
    for (const ExprPtr& arg : call->args) {
      child(arg);
    }
  } else if (const auto* list = std::get_if<CreateList>(&expr.node)) {
    for (const ExprPtr& element : list->elements) {
      child(element);
    }
  } else if (const auto* map = std::get_if<CreateMap>(&expr.node)) {
    for (const auto& entry : map->entries) {
      child(entry.key);
      child(entry.value);
    }
  } else if (const auto* message = std::get_if<CreateStruct>(&expr.node)) {
    for (const auto& field : message->fields) {
      child(field.value);
    }
  } else if (const auto* macro = std::get_if<Macro>(&expr.node)) {
    child(macro->range);
    child(macro->filter);
    child(macro->transform);
  }
}

namespace {

std::vector<std::string> collect_string_literals(const Expr& root) {
  std::vector<std::string> literals;
  walk(root, [&literals](const Expr& expr) {
    if (const std::string* text = string_literal(expr)) {
      literals.push_back(*text);
    }
  });
  return literals;
}

// "domain/name" when `expr` itself is `device.attributes["domain"].name` or
// `device.attributes["domain"]["name"]` (or `has()` of the first), else empty.
std::string attribute_read_by(const Expr& expr) {
  if (const auto* select = std::get_if<Select>(&expr.node)) {
    if (const std::string* domain = attribute_domain(*select->operand)) {
      return *domain + "/" + select->field;
    }
  } else if (const auto* index = std::get_if<Call>(&expr.node);
             index != nullptr && index->function == "_[_]" && index->args.size() == 2) {
    const std::string* domain = attribute_domain(*index->args[0]);
    const std::string* name = string_literal(*index->args[1]);
    if (domain != nullptr && name != nullptr) {
      return *domain + "/" + *name;
    }
  }
  return {};
}

std::vector<std::string> collect_attributes_read(const Expr& root) {
  std::vector<std::string> names;
  walk(root, [&names](const Expr& expr) {
    if (std::string name = attribute_read_by(expr); !name.empty()) {
      names.push_back(std::move(name));
    }
  });
  return names;
}

// The attribute whose value the whole expression is: a read, not a `has()` test of it.
std::string value_of_attribute(const Expr& root) {
  const auto* select = std::get_if<Select>(&root.node);
  return select != nullptr && select->test_only ? std::string() : attribute_read_by(root);
}

bool reads_driver(const Expr& root) {
  // `device` is read only through `.attributes` or `.capacity` when every use of it is the
  // operand of such a field selection; anything else (`device.driver`, `device["driver"]`, the
  // whole device passed to a function or macro) may read the driver.
  std::set<const Expr*> field_operands;
  bool reads = false;
  walk(root, [&](const Expr& expr) {
    if (const auto* select = std::get_if<Select>(&expr.node)) {
      if (select->field == "attributes" || select->field == "capacity") {
        field_operands.insert(select->operand.get());
      }
    } else if (const auto* ident = std::get_if<Ident>(&expr.node)) {
      const bool is_device = ident->name == "device" || ident->name == ".device";
      reads = reads || (is_device && !field_operands.contains(&expr));
    }
  });
  return reads;
}

// The `device` identifier under a literal attribute read (attribute_read_by), or null.
const Expr* device_of_read(const Expr& expr) {
  if (const auto* select = std::get_if<Select>(&expr.node)) {
    return attributes_device(*select->operand);
  }
  return attributes_device(*std::get<Call>(expr.node).args[0]);
}

// The string literals `expr` is compared with when it is an operand of `==` or `!=` whose
// other operand is a string literal, or the left operand of `in` a list of string literals:
// each such comparison, by the compared node.
void note_literal_comparisons(const Expr& expr,
                              std::map<const Expr*, std::vector<std::string>>& compared) {
  const auto* call = std::get_if<Call>(&expr.node);
  if (call == nullptr || call->target != nullptr || call->args.size() != 2) {
    return;
  }
  const Expr& left = *call->args[0];
  const Expr& right = *call->args[1];
  if (call->function == "_==_" || call->function == "_!=_") {
    if (const std::string* literal = string_literal(right)) {
      compared[&left].push_back(*literal);
    }
    if (const std::string* literal = string_literal(left)) {
      compared[&right].push_back(*literal);
    }
    return;
  }
  const auto* list = std::get_if<CreateList>(&right.node);
  if (call->function != "@in" || list == nullptr) {
    return;
  }
  std::vector<std::string> literals;
  for (const ExprPtr& element : list->elements) {
    const std::string* literal = string_literal(*element);
    if (literal == nullptr) {
      return;
    }
    literals.push_back(*literal);
  }
  auto& known = compared[&left];
  known.insert(known.end(), literals.begin(), literals.end());
}

}  // namespace

DeviceReads device_reads(const Expr& root) {
  DeviceReads reads;
  std::set<const Expr*> narrowed;  // `device` identifiers under a literal attribute read
  std::set<const Expr*> harmless;  // under .driver, .capacity, .allowMultipleAllocations
  std::map<const Expr*, std::string> domain_of;  // under device.attributes["domain"] alone
  std::map<const Expr*, std::vector<std::string>> compared;  // nodes compared with literals
  std::map<std::string, const Expr*> read_otherwise;  // a read of the attribute used otherwise
  walk(root, [&](const Expr& expr) {
    note_literal_comparisons(expr, compared);
  });
  walk(root, [&](const Expr& expr) {
    if (std::string name = attribute_read_by(expr); !name.empty()) {
      narrowed.insert(device_of_read(expr));
      const auto* select = std::get_if<Select>(&expr.node);
      auto& literals = reads.compared_to_literals[name];
      if (const auto it = compared.find(&expr); it != compared.end()) {
        literals.insert(literals.end(), it->second.begin(), it->second.end());
      } else if (select == nullptr || !select->test_only) {
        read_otherwise.emplace(name, &expr);
      }
      reads.attributes.push_back(std::move(name));
    } else if (const std::string* domain = attribute_domain(expr)) {
      domain_of.emplace(attributes_device(expr), *domain);
    } else if (const auto* select = std::get_if<Select>(&expr.node);
               select != nullptr && is_device(*select->operand) &&
               (select->field == "driver" || select->field == "capacity" ||
                select->field == "allowMultipleAllocations")) {
      harmless.insert(select->operand.get());
    }
  });
  walk(root, [&](const Expr& expr) {
    if (!is_device(expr) || narrowed.contains(&expr) || harmless.contains(&expr)) {
      return;
    }
    if (auto it = domain_of.find(&expr); it != domain_of.end()) {
      reads.domains.push_back(it->second);
    } else {
      reads.any_attribute = true;
    }
  });
  for (auto it = reads.compared_to_literals.begin(); it != reads.compared_to_literals.end();) {
    if (read_otherwise.count(it->first) != 0) {
      it = reads.compared_to_literals.erase(it);
      continue;
    }
    std::sort(it->second.begin(), it->second.end());
    it->second.erase(std::unique(it->second.begin(), it->second.end()), it->second.end());
    ++it;
  }
  return reads;
}

ProgramFacts inspect(const Expr& root) {
  return ProgramFacts{collect_string_literals(root), collect_attributes_read(root),
                      reads_driver(root), value_of_attribute(root)};
}

const std::vector<std::string>& string_literals(const Program& program) {
  return program.facts().string_literals;
}

const std::vector<std::string>& attributes_read(const Program& program) {
  return program.facts().attributes_read;
}

const std::string& attribute_read(const Program& program) { return program.facts().attribute_read; }

bool may_read_driver(const Program& program) { return program.facts().may_read_driver; }

}  // namespace topoguard::cel
