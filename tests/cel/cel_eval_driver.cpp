// Test driver for the differential and conformance tests: reads one JSON request per line,
//   {"expr": "...", "device": {...}?, "vars": {"name": <typed>}?}
// and prints one JSON line per request: {"outcome": "true|false|error|unknown", "message": ...,
// "value": <typed>}. Typed values are {"int": "3"}, {"uint": "3"}, {"double": 1.5 | "NaN" |
// "Infinity" | "-Infinity"}, {"string": "s"}, {"bytes": [1, 2]}, {"bool": true}, {"null": null},
// {"list": [...]}, {"map": [[key, value], ...]}; a device attribute may also be
// {"version": "1.2.3"}, a capacity a quantity string. A syntax error prints {"syntax_error": ...}.
// With "selector": true the expression is evaluated as the engine evaluates a device selector
// (cel::evaluate: the per-call cost and memory limits, unknown past them) and only the outcome
// and its message are printed.
#include <cmath>
#include <iostream>
#include <string>

#include "topoguard/cel/cel.h"
#include "topoguard/common/json.h"

namespace {

using topoguard::Json;
namespace cel = topoguard::cel;

std::optional<cel::Value> typed_value(const Json& typed) {
  if (!typed.is_object() || typed.size() != 1) {
    return std::nullopt;
  }
  const std::string& kind = typed.begin().key();
  const Json& value = typed.begin().value();
  if (kind == "null") {
    return cel::Value{cel::NullLiteral{}};
  }
  if (kind == "bool") {
    return cel::Value{value.get<bool>()};
  }
  if (kind == "int") {
    return cel::Value{static_cast<std::int64_t>(std::stoll(value.get<std::string>()))};
  }
  if (kind == "uint") {
    return cel::Value{static_cast<std::uint64_t>(std::stoull(value.get<std::string>()))};
  }
  if (kind == "double") {
    if (value.is_string()) {
      const std::string text = value.get<std::string>();
      return cel::Value{text == "NaN" ? std::nan("")
                                      : (text == "Infinity" ? HUGE_VAL : -HUGE_VAL)};
    }
    return cel::Value{value.get<double>()};
  }
  if (kind == "string") {
    return cel::Value{value.get<std::string>()};
  }
  if (kind == "bytes") {
    std::string data;
    for (const Json& byte : value) {
      data.push_back(static_cast<char>(byte.get<int>()));
    }
    return cel::Value{cel::Bytes{std::move(data)}};
  }
  if (kind == "list") {
    auto list = std::make_shared<cel::List>();
    for (const Json& element : value) {
      auto converted = typed_value(element);
      if (!converted) {
        return std::nullopt;
      }
      list->push_back(std::move(*converted));
    }
    return cel::Value{cel::ListPtr{std::move(list)}};
  }
  if (kind == "map") {
    auto map = std::make_shared<cel::MapValue>();
    for (const Json& entry : value) {
      auto key = typed_value(entry.at(0));
      auto item = typed_value(entry.at(1));
      if (!key || !item || !cel::MapKey::of(*key)) {
        return std::nullopt;
      }
      map->insert(*cel::MapKey::of(*key), *key, std::move(*item));
    }
    return cel::Value{cel::MapPtr{std::move(map)}};
  }
  return std::nullopt;
}

Json typed_json(const cel::Value& value) {
  return std::visit(
      [](const auto& item) -> Json {
        using T = std::decay_t<decltype(item)>;
        if constexpr (std::is_same_v<T, cel::NullLiteral>) {
          return Json{{"null", nullptr}};
        } else if constexpr (std::is_same_v<T, bool>) {
          return Json{{"bool", item}};
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return Json{{"int", std::to_string(item)}};
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          return Json{{"uint", std::to_string(item)}};
        } else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(item)) {
            return Json{{"double", "NaN"}};
          }
          if (std::isinf(item)) {
            return Json{{"double", item > 0 ? "Infinity" : "-Infinity"}};
          }
          return Json{{"double", item}};
        } else if constexpr (std::is_same_v<T, cel::StringPtr>) {
          return Json{{"string", *item}};
        } else if constexpr (std::is_same_v<T, cel::BytesPtr>) {
          Json bytes = Json::array();
          for (char c : item->data) {
            bytes.push_back(static_cast<unsigned char>(c));
          }
          return Json{{"bytes", bytes}};
        } else if constexpr (std::is_same_v<T, cel::ListPtr>) {
          Json list = Json::array();
          for (const cel::Value& element : *item) {
            list.push_back(typed_json(element));
          }
          return Json{{"list", list}};
        } else if constexpr (std::is_same_v<T, cel::MapPtr>) {
          Json map = Json::array();
          for (const auto& [key, element] : item->entries()) {
            map.push_back(Json::array({typed_json(key), typed_json(element)}));
          }
          return Json{{"map", map}};
        } else if constexpr (std::is_same_v<T, cel::ErrorValue>) {
          return Json{{"error", item.message}};
        } else if constexpr (std::is_same_v<T, cel::UnknownValue>) {
          return Json{{"unknown", item.reason}};
        } else {
          return Json{{"opaque", cel::Value{item}.type_name()}};
        }
      },
      value.variant());
}

std::optional<cel::Activation> device_of(const Json& json) {
  cel::Activation device;
  if (const auto driver = json.find("driver"); driver != json.end() && driver->is_string()) {
    device.driver = driver->get<std::string>();
  }
  if (const auto attributes = json.find("attributes");
      attributes != json.end() && attributes->is_object()) {
    device.attributes.emplace();
    for (const auto& [domain, names] : attributes->items()) {
      auto& entries = (*device.attributes)[domain];
      for (const auto& [name, typed] : names.items()) {
        const std::string& kind = typed.begin().key();
        const Json& value = typed.begin().value();
        if (kind == "int") {
          entries[name] = static_cast<std::int64_t>(std::stoll(value.get<std::string>()));
        } else if (kind == "bool") {
          entries[name] = value.get<bool>();
        } else if (kind == "string") {
          entries[name] = value.get<std::string>();
        } else if (kind == "version") {
          auto version = cel::Version::parse(value.get<std::string>());
          if (!version) {
            return std::nullopt;
          }
          entries[name] = std::move(*version);
        } else {
          entries[name] = cel::UnknownValue{"unsupported attribute type " + kind};
        }
      }
    }
  }
  if (const auto capacity = json.find("capacity"); capacity != json.end() && capacity->is_object()) {
    device.capacity.emplace();
    for (const auto& [domain, names] : capacity->items()) {
      for (const auto& [name, text] : names.items()) {
        auto quantity = cel::Quantity::parse(text.get<std::string>());
        if (!quantity) {
          return std::nullopt;
        }
        (*device.capacity)[domain].try_emplace(name, std::move(*quantity));
      }
    }
  }
  return device;
}

Json answer(const Json& request) {
  const auto program = cel::compile(request.at("expr").get<std::string>());
  if (!program) {
    return Json{{"syntax_error", program.error().message}};
  }
  std::map<std::string, cel::Value, std::less<>> variables;
  if (const auto vars = request.find("vars"); vars != request.end()) {
    for (const auto& [name, typed] : vars->items()) {
      auto value = typed_value(typed);
      if (!value) {
        return Json{{"bad_request", "unsupported variable " + name}};
      }
      variables.emplace(name, std::move(*value));
    }
  }
  std::optional<cel::Activation> device;
  if (const auto json = request.find("device"); json != request.end()) {
    device = device_of(*json);
    if (!device) {
      return Json{{"bad_request", "unsupported device"}};
    }
  }
  if (request.value("selector", false)) {
    const cel::Evaluation evaluation = cel::evaluate(*program, device ? *device : cel::Activation{});
    return Json{{"outcome", cel::outcome_name(evaluation.outcome)}, {"message", evaluation.message}};
  }
  const cel::Value value =
      cel::evaluate_value(*program, device ? &*device : nullptr, variables);
  Json out{{"value", typed_json(value)}};
  if (const auto* result = value.get<bool>()) {
    out["outcome"] = *result ? "true" : "false";
  } else if (value.is_error()) {
    out["outcome"] = "error";
  } else if (value.is_unknown()) {
    out["outcome"] = "unknown";
  } else {
    out["outcome"] = "value";
  }
  return out;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) {
      continue;
    }
    const Json request = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const Json response = request.is_object() && request.contains("expr")
                              ? answer(request)
                              : Json{{"bad_request", "not a request"}};
    std::cout << response.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  }
  return 0;
}
