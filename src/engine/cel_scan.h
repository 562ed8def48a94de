// Reads the few facts the engine needs out of CEL selector expressions without evaluating them:
// which drivers an expression pins (`device.driver == "x"`) and which device attributes it
// mentions (`device.attributes["domain"].id` or `...["domain"]["id"]`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace topoguard::engine {

// Qualified names ("domain/id") of the attributes an expression reads, in order.
[[nodiscard]] std::vector<std::string> attributes_in_cel(std::string_view expression);

}  // namespace topoguard::engine
