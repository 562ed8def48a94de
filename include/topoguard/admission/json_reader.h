// The JSON reader of the webhook's hot path. nlohmann's parser spends ~100 instructions per input
// byte (its lexer keeps every character twice, for the token and for error messages) and builds a
// tree of everything; this reader scans strings in runs, builds the same Json values nlohmann's
// DOM parser would, and can drop subtrees the webhook never reads while still checking their
// syntax and nesting. Accepts and rejects exactly what Json::parse does (RFC 8259, UTF-8 checked,
// a leading UTF-8 BOM skipped, nothing but whitespace after the value); json_reader_test
// compares the two. Pure, safe to call concurrently.
#pragma once

#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::admission {

enum class JsonFilter {
  kNone,
  // An admission.k8s.io/v1 AdmissionReview: keeps apiVersion, kind and of `request` only uid,
  // kind, operation, namespace, name, dryRun, object and oldObject; drops
  // request.object.metadata.managedFields (server-side apply bookkeeping no rule reads).
  kAdmissionReview,
};

// Errors: kTooDeep when arrays/objects nest deeper than `max_depth` (dropped parts included;
// found before any allocation for them), kInvalidJson with the byte offset otherwise.
[[nodiscard]] Result<Json> read_json(std::string_view text, int max_depth, JsonFilter filter);

}  // namespace topoguard::admission
