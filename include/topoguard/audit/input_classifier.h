// What of the input CI feeds the audit is not a Kubernetes object, by rules the README states
// ("What is not a manifest"): kustomize files and the patches they name, JSON patches, Helm
// charts and templates, values and other configuration files. Such input is skipped with a
// note; everything else is read as manifests, so a Kubernetes object with a typo stays an
// input error. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"

namespace topoguard::audit {

enum class NotAnObject {
  kJsonPatch,       // a document that is an array of RFC 6902 operations ({op, path, ...})
  kKustomization,   // a kustomization file (by name, or apiVersion kustomize.config.k8s.io/*)
  kKustomizePatch,  // a file a kustomization of the input names as a patch
  kHelmChart,       // a file in a folder holding Chart.yaml
  kTemplate,        // text holding template actions ({{ .Values.x }}, or {{ where YAML fails)
  kNoKind,          // documents naming neither apiVersion nor kind in a file naming none either
};

// Input that is not a Kubernetes object: a document (line > 0), a whole file or a Helm chart's
// folder (line 0).
struct SkippedInput {
  std::string file;
  int line = 0;
  NotAnObject reason = NotAnObject::kNoKind;
};

// One line for the log: "FILE[:LINE]: skipped, not a Kubernetes object: <description>".
[[nodiscard]] std::string skipped_input_text(const SkippedInput& skipped);

// What the note says after "skipped: ": what the input is and what to do with it.
[[nodiscard]] std::string_view not_an_object_description(NotAnObject reason);
// A short name for counts and machine reports ("json-patch", "helm-template", ...).
[[nodiscard]] std::string_view not_an_object_name(NotAnObject reason);

// kustomization.yaml, kustomization.yml or Kustomization: the names kustomize reads.
[[nodiscard]] bool is_kustomization_file_name(std::string_view file_name);

// Chart.yaml: the file that makes a folder a Helm chart.
inline constexpr std::string_view kHelmChartFile = "Chart.yaml";

// A Helm (Go) template action that reads the chart: `{{` followed, inside the same action, by
// one of Helm's built-in objects (.Values .Release .Chart .Capabilities .Files .Template) or by
// `include`, `template`, `define` or `tpl` as the action's first word. Prometheus alert text
// ({{ $labels.pod }}) and Argo parameters ({{inputs.parameters.x}}) are not.
[[nodiscard]] bool holds_helm_template_action(std::string_view text);

// `{{` anywhere: with a YAML error, the file is a template of some kind, not broken YAML.
[[nodiscard]] bool holds_template_braces(std::string_view text);

// A non-empty array whose every element is an object with string `op` and `path`.
[[nodiscard]] bool is_json_patch(const Json& document);

// An object whose apiVersion is kustomize.config.k8s.io/<version> (Kustomization, Component).
[[nodiscard]] bool is_kustomize_object(const Json& document);

// An object with an `apiVersion` or a `kind` member: meant as a Kubernetes object.
[[nodiscard]] bool names_api_version_or_kind(const Json& document);

// The files a kustomization names as patches (patches[].path, patchesJson6902[].path and the
// file entries of patchesStrategicMerge), as written in it (relative to its folder).
[[nodiscard]] std::vector<std::string> kustomization_patch_paths(const Json& kustomization);

}  // namespace topoguard::audit
