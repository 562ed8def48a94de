#include "cel_scan.h"

#include <re2/re2.h>

#include "topoguard/engine/inventory.h"

namespace topoguard::engine {

namespace {

const re2::RE2& driver_pattern() {
  static const re2::RE2 pattern(
      R"re((?:device\.driver\s*==\s*["']([^"']+)["'])|(?:["']([^"']+)["']\s*==\s*device\.driver))re");
  return pattern;
}

const re2::RE2& attribute_pattern() {
  static const re2::RE2 pattern(
      R"re(device\.attributes\s*\[\s*["']([^"']+)["']\s*\]\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\]))re");
  return pattern;
}

}  // namespace

std::vector<std::string> drivers_in_cel(std::string_view expression) {
  std::vector<std::string> drivers;
  re2::StringPiece input(expression.data(), expression.size());
  std::string forward;
  std::string backward;
  while (re2::RE2::FindAndConsume(&input, driver_pattern(), &forward, &backward)) {
    drivers.push_back(forward.empty() ? backward : forward);
  }
  return drivers;
}

std::vector<std::string> attributes_in_cel(std::string_view expression) {
  std::vector<std::string> attributes;
  re2::StringPiece input(expression.data(), expression.size());
  std::string domain;
  std::string dotted_id;
  std::string indexed_id;
  while (re2::RE2::FindAndConsume(&input, attribute_pattern(), &domain, &dotted_id, &indexed_id)) {
    attributes.push_back(domain + "/" + (dotted_id.empty() ? indexed_id : dotted_id));
  }
  return attributes;
}

}  // namespace topoguard::engine
