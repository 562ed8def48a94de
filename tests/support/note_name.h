// Names parameterised test cases after their `note` field, so failures read like a spec.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace topoguard::testing {

struct NoteName {
  template <typename Case>
  std::string operator()(const ::testing::TestParamInfo<Case>& param_info) const {
    return std::string(param_info.param.note);
  }
};

}  // namespace topoguard::testing
