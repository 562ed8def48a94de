// Tests write patches as RFC 6902 JSON text; the engine's patches are typed. Only `add`
// operations exist in topoguard's patches, so any other operation fails the test.
#pragma once

#include <gtest/gtest.h>

#include "topoguard/common/json.h"
#include "topoguard/engine/json_patch.h"

namespace topoguard::testing {

inline engine::JsonPatch typed_patch(const Json& operations) {
  engine::JsonPatch patch;
  for (const Json& operation : operations) {
    EXPECT_EQ(operation.value("op", std::string()), "add") << operation.dump();
    patch.push_back({engine::PatchOp::kAdd, operation.value("path", std::string()),
                     operation.contains("value") ? operation["value"] : Json()});
  }
  return patch;
}

}  // namespace topoguard::testing
