// What of the CEL `device` an expression may read, worked out from its syntax tree: for callers
// that treat devices alike when everything their selectors can see of them is alike.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topoguard/cel/ast.h"

namespace topoguard::cel {

struct DeviceReads {
  // Qualified names ("domain/name") read with literal keys, in source order, maybe repeated.
  std::vector<std::string> attributes;
  // Domains whose attributes are used as a map (`"x" in device.attributes["d"]`, a macro over
  // it): any attribute of the domain may be read.
  std::vector<std::string> domains;
  // `device` or `device.attributes` is used some other way (passed whole, indexed with a
  // computed key): any attribute may be read. `device.driver`, `device.capacity` and
  // `device.allowMultipleAllocations` are not counted here.
  bool any_attribute = false;
  // Of `attributes`, those whose every read is compared for equality with string literals
  // (`==`, `!=`, `in` a list of them) or tested with has(): qualified name -> the literals,
  // sorted, unique. The expression tells such an attribute's values apart only by which of those
  // literals they equal (and the cost of the comparisons, which grows with the shorter string).
  std::map<std::string, std::vector<std::string>, std::less<>> compared_to_literals;
};

[[nodiscard]] DeviceReads device_reads(const Expr& root);

}  // namespace topoguard::cel
