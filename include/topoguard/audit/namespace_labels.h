// Namespace labels given beside the input (`--namespace-labels FILE`, a policy test's
// `namespaces:`), so that namespaceSelectors can be evaluated when the input holds no Namespace
// objects. Two forms, in YAML or JSON:
// - Namespace objects: multi-document, or a v1 List / NamespaceList of them (what
//   `kubectl get namespaces -o yaml` prints);
// - one mapping of namespace name to labels: `prod-a: {tier: prod}` (`{}` or nothing: no labels).
// Each becomes a Namespace object holding only its name and labels, for engine::Inventory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/yaml_document.h"

namespace topoguard::audit {

// A file of the labels of 100,000 namespaces is a few MiB.
inline constexpr std::size_t kMaxNamespaceLabelsFileBytes = std::size_t{64} << 20;

struct NamespaceLabels {
  std::vector<Json> namespaces;  // apiVersion v1, kind Namespace, metadata {name, labels}
  std::vector<Error> errors;     // each at file, line and field; the rest is still read
};

// The namespaces of `text`, named `file` in errors. Pure.
[[nodiscard]] NamespaceLabels parse_namespace_labels(std::string_view text,
                                                     const std::string& file);

// The namespaces of the map form at `pointer` of a document already parsed (a policy test's
// `namespaces:`), its errors at their lines of `lines`.
[[nodiscard]] NamespaceLabels namespaces_from_map(const Json& map, const std::string& pointer,
                                                  const LineIndex& lines, const std::string& file);

// The namespaces of the file at `path`, read up to kMaxNamespaceLabelsFileBytes.
[[nodiscard]] NamespaceLabels read_namespace_labels(const std::string& path);

}  // namespace topoguard::audit
