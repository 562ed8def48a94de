// JSON text to Json for the client's large inputs (list pages, watch events): simdjson checks the
// text in one pass and the tree is built with each object's members appended in order, so an
// object of n keys costs n log n (nlohmann's ordered_json insert scans for the key: n^2, which
// made a 4 MiB event of 40,000 keys take seconds). Trees are as nlohmann's parser builds them:
// key order kept, non-negative integers unsigned, a repeated key keeping its first position and
// its last value. admission::read_json does the same for review bodies. Not thread-safe: one
// decoder per stream (it keeps its buffers between documents).
#pragma once

#include <memory>
#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::kube {

class JsonDecoder {
 public:
  explicit JsonDecoder(int max_depth = 512);
  ~JsonDecoder();
  JsonDecoder(const JsonDecoder&) = delete;
  JsonDecoder& operator=(const JsonDecoder&) = delete;

  // Errors: kTooDeep past max_depth, kInvalidJson for anything that is not one JSON value.
  [[nodiscard]] Result<Json> decode(std::string_view text);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
  int max_depth_;
};

}  // namespace topoguard::kube
