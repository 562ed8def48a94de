// JSON whose objects keep their keys in sorted order, for reports whose key order is fixed by the
// names, not by an input's (common/json.h's Json keeps document order).
#pragma once

#include "topoguard/common/json.h"

namespace topoguard {

using SortedJson = nlohmann::json;

}  // namespace topoguard
