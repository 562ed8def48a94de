#include "topoguard/audit/manifest_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include <fnmatch.h>

#include "topoguard/common/text_file.h"
#include "topoguard/k8s/object_name.h"

namespace topoguard::audit {

namespace {

namespace fs = std::filesystem;

bool has_manifest_extension(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml" || extension == ".json";
}

Error io_error(const std::string& path, const std::string& message) {
  return Error{ErrorCode::kIo, message, SourceLocation{path, 0, ""}};
}

bool excluded(const std::vector<std::string>& globs, const std::string& path,
              const std::string& name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
    return ::fnmatch(glob.c_str(), path.c_str(), 0) == 0 ||
           ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
  });
}

bool is_helm_chart(const fs::path& folder) {
  std::error_code ec;
  return fs::exists(folder / kHelmChartFile, ec);
}

struct Collected {
  std::vector<std::string> files;
  std::vector<Error> errors;
  std::vector<SkippedInput> skipped;  // Helm charts' folders
};

void collect_paths(const ManifestPath& input, const ReadOptions& options, Collected& out) {
  const std::string& path = input.path;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    out.errors.push_back(io_error(path, "no such file or directory"));
    return;
  }
  if (!fs::is_directory(status)) {
    if (!excluded(options.exclude, path, fs::path(path).filename().string())) {
      out.files.push_back(path);
    }
    return;
  }
  if (is_helm_chart(path)) {
    out.skipped.push_back(SkippedInput{path, 0, NotAnObject::kHelmChart});
    return;
  }
  const std::size_t first_skipped = out.skipped.size();
  std::vector<std::string> found;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& entry = it->path();
    const bool is_directory = it->is_directory(ec);
    if (excluded(options.exclude, entry.lexically_relative(path).generic_string(),
                 entry.filename().string())) {
      if (is_directory) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (is_directory) {
      if (!input.recursive) {
        it.disable_recursion_pending();
      } else if (is_helm_chart(entry)) {
        it.disable_recursion_pending();
        out.skipped.push_back(SkippedInput{entry.string(), 0, NotAnObject::kHelmChart});
      }
      continue;
    }
    // Not only regular files: a FIFO or a device named like a manifest is an error when read,
    // never a manifest skipped in silence.
    if (has_manifest_extension(entry)) {
      found.push_back(entry.string());
    }
  }
  if (ec) {
    out.errors.push_back(io_error(path, "cannot read directory: " + ec.message()));
  }
  std::sort(found.begin(), found.end());
  std::sort(out.skipped.begin() + static_cast<std::ptrdiff_t>(first_skipped), out.skipped.end(),
            [](const SkippedInput& a, const SkippedInput& b) { return a.file < b.file; });
  out.files.insert(out.files.end(), found.begin(), found.end());
}

// Adds the object at `pointer` of document `d` as a manifest, and an input error at each field
// of its metadata the API server would refuse (the object is still audited: what it says is
// judged as it reads, and the exit code says the input is invalid).
void add_manifest(ManifestSet& set, std::size_t file_index, std::size_t d, std::string pointer,
                  const Json& object) {
  const SourceFile& file = set.files[file_index];
  for (const k8s::NameProblem& problem : k8s::invalid_metadata_names(object)) {
    const std::string field = pointer + problem.pointer;
    set.errors.push_back(Error{
        ErrorCode::kInvalidValue, problem.message,
        SourceLocation{file.path, file.stream.documents[d].lines.line_of(field), field}});
  }
  set.manifests.push_back(Manifest{file_index, d, std::move(pointer), &object});
}

// The whole file is not Kubernetes objects (input_classifier.h's file rules), or nullopt.
std::optional<NotAnObject> file_not_objects(const SourceFile& file,
                                            const std::set<std::string>& kustomize_patches) {
  if (file.path != "-") {
    const std::string name = fs::path(file.path).filename().string();
    if (is_kustomization_file_name(name)) {
      return NotAnObject::kKustomization;
    }
    if (name == kHelmChartFile) {
      return NotAnObject::kHelmChart;
    }
    if (kustomize_patches.contains(fs::path(file.path).lexically_normal().string())) {
      return NotAnObject::kKustomizePatch;
    }
  }
  if (holds_helm_template_action(file.text) ||
      (!file.stream.errors.empty() && holds_template_braces(file.text))) {
    return NotAnObject::kTemplate;
  }
  return std::nullopt;
}

// An object with only one of apiVersion and kind, or with neither beside documents that name
// them, is a Kubernetes object with a typo: an input error at the missing field. The object is
// still read (a List's items, a kind the audit judges), as add_manifest() does with bad names.
void check_type_fields(ManifestSet& set, const SourceFile& file, std::size_t d,
                       const std::string& pointer, const Json& object) {
  const bool has_api_version = member(object, "apiVersion") != nullptr;
  const bool has_kind = member(object, "kind") != nullptr;
  if (has_api_version && has_kind) {
    return;
  }
  const std::string field = pointer + (has_api_version ? "/kind" : "/apiVersion");
  const std::string message =
      has_api_version ? "a Kubernetes object needs a kind"
      : has_kind      ? "a Kubernetes object needs an apiVersion"
                      : "neither apiVersion nor kind, in a file of Kubernetes objects";
  const YamlDocument& document = file.stream.documents[d];
  const int line = pointer.empty() ? document.first_line : document.lines.line_of(pointer);
  set.errors.push_back(
      Error{ErrorCode::kMissingField, message, SourceLocation{file.path, line, field}});
}

// The reason a document of a file of objects is not one, or nullopt. `file_names_objects`: some
// document of the file has an apiVersion or a kind.
std::optional<NotAnObject> document_not_object(const Json& value, bool file_names_objects) {
  if (is_json_patch(value)) {
    return NotAnObject::kJsonPatch;
  }
  if (is_kustomize_object(value)) {
    return NotAnObject::kKustomization;
  }
  if (value.is_object() && !file_names_objects) {
    return NotAnObject::kNoKind;
  }
  return std::nullopt;
}

void index_manifests(ManifestSet& set, std::size_t file_index,
                     const std::set<std::string>& kustomize_patches) {
  const SourceFile& file = set.files[file_index];
  if (const std::optional<NotAnObject> reason = file_not_objects(file, kustomize_patches)) {
    set.skipped.push_back(SkippedInput{file.path, 0, *reason});
    return;
  }
  set.errors.insert(set.errors.end(), file.stream.errors.begin(), file.stream.errors.end());
  const bool names_objects = std::any_of(
      file.stream.documents.begin(), file.stream.documents.end(),
      [](const YamlDocument& document) { return names_api_version_or_kind(document.value); });
  for (std::size_t d = 0; d < file.stream.documents.size(); ++d) {
    const YamlDocument& document = file.stream.documents[d];
    const Json& value = document.value;
    if (const std::optional<NotAnObject> reason = document_not_object(value, names_objects)) {
      set.skipped.push_back(SkippedInput{file.path, document.first_line, *reason});
      continue;
    }
    if (!value.is_object()) {
      set.errors.push_back(Error{ErrorCode::kWrongType,
                                 std::string("a manifest must be an object, got ") +
                                     json_type_name(value),
                                 SourceLocation{file.path, document.first_line, ""}});
      continue;
    }
    check_type_fields(set, file, d, "", value);
    const Json* items = member(value, "items");
    const bool is_list = string_member(value, "kind") == "List" ||
                         (string_member(value, "kind").ends_with("List") && items != nullptr &&
                          items->is_array());
    if (!is_list) {
      add_manifest(set, file_index, d, "", value);
      continue;
    }
    if (items == nullptr || items->is_null()) {
      continue;  // an empty List
    }
    if (!items->is_array()) {
      set.errors.push_back(Error{ErrorCode::kWrongType, "List items must be an array",
                                 SourceLocation{file.path, document.lines.line_of("/items"),
                                                "/items"}});
      continue;
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      const Json& item = (*items)[i];
      const std::string pointer = append_pointer("/items", i);
      if (!item.is_object()) {
        set.errors.push_back(
            Error{ErrorCode::kWrongType, "List item must be an object",
                  SourceLocation{file.path, document.lines.line_of(pointer), pointer}});
        continue;
      }
      check_type_fields(set, file, d, pointer, item);
      add_manifest(set, file_index, d, pointer, item);
    }
  }
}

// The files the input's kustomizations name as patches, as normal paths.
std::set<std::string> kustomize_patch_files(const std::vector<SourceFile>& files) {
  std::set<std::string> patches;
  for (const SourceFile& file : files) {
    const fs::path path(file.path);
    if (file.path == "-" || !is_kustomization_file_name(path.filename().string())) {
      continue;
    }
    for (const YamlDocument& document : file.stream.documents) {
      for (const std::string& patch : kustomization_patch_paths(document.value)) {
        patches.insert((path.parent_path() / patch).lexically_normal().string());
      }
    }
  }
  return patches;
}

}  // namespace

int ManifestSet::line_of(const Manifest& manifest, const std::string& pointer) const {
  return files[manifest.file].stream.documents[manifest.document].lines.line_of(
      manifest.base_pointer + pointer);
}

ManifestSet read_manifests(const std::vector<ManifestPath>& paths, std::istream& standard_input,
                           const ReadOptions& options) {
  const std::size_t max_bytes = options.limits.max_file_bytes;
  Collected collected;
  std::vector<std::pair<std::string, std::string>> texts;
  // Per path: where its texts, errors and skipped folders start.
  struct Start {
    std::size_t text = 0;
    std::size_t error = 0;
    std::size_t skipped = 0;
  };
  std::vector<Start> starts;
  for (const ManifestPath& input : paths) {
    starts.push_back(Start{texts.size(), collected.errors.size(), collected.skipped.size()});
    if (input.path == "-") {
      auto text = read_text_stream(standard_input, "-", max_bytes);
      if (!text) {
        collected.errors.push_back(text.error());
        continue;
      }
      texts.emplace_back("-", std::move(text).value());
      continue;
    }
    const std::size_t first_file = collected.files.size();
    collect_paths(input, options, collected);
    for (std::size_t f = first_file; f < collected.files.size(); ++f) {
      auto text = read_text_file(collected.files[f], max_bytes);
      if (!text) {
        collected.errors.push_back(text.error());
        continue;
      }
      texts.emplace_back(collected.files[f], std::move(text).value());
    }
  }
  ManifestSet parsed = parse_manifests(std::move(texts), options.limits);
  // A path that yields no document, no error and nothing skipped is most likely a mistyped one;
  // it must not pass.
  starts.push_back(Start{parsed.files.size(), collected.errors.size(), collected.skipped.size()});
  for (std::size_t p = 0; p < paths.size(); ++p) {
    const Start& start = starts[p];
    const Start& end = starts[p + 1];
    bool found = end.error > start.error || end.skipped > start.skipped;
    for (std::size_t f = start.text; f < end.text && !found; ++f) {
      found = !parsed.files[f].stream.documents.empty() || !parsed.files[f].stream.errors.empty();
    }
    if (!found) {
      collected.errors.push_back(io_error(paths[p].path, "no manifests found in " + paths[p].path));
    }
  }
  parsed.errors.insert(parsed.errors.begin(), collected.errors.begin(), collected.errors.end());
  parsed.skipped.insert(parsed.skipped.begin(), collected.skipped.begin(), collected.skipped.end());
  return parsed;
}

ManifestSet read_manifests(const std::vector<std::string>& paths, std::istream& standard_input,
                           const ReadLimits& limits) {
  std::vector<ManifestPath> inputs;
  inputs.reserve(paths.size());
  for (const std::string& path : paths) {
    inputs.push_back(ManifestPath{path, true});
  }
  return read_manifests(inputs, standard_input, ReadOptions{limits, {}});
}

ManifestSet parse_manifests(std::vector<std::pair<std::string, std::string>> texts,
                            const ReadLimits& limits) {
  ManifestSet set;
  set.files.reserve(texts.size());  // manifests point into files' documents
  for (auto& [path, text] : texts) {
    SourceFile& file = set.files.emplace_back();
    file.stream = parse_yaml_stream(text, path, limits.parse);
    file.path = std::move(path);
    file.text = std::move(text);
  }
  // A kustomization sorts after the patches it names: every file is parsed before any is read.
  const std::set<std::string> kustomize_patches = kustomize_patch_files(set.files);
  for (std::size_t f = 0; f < set.files.size(); ++f) {
    index_manifests(set, f, kustomize_patches);
  }
  return set;
}

ManifestSet manifests_from_objects(std::vector<std::pair<std::string, Json>> objects) {
  ManifestSet set;
  set.files.reserve(objects.size());  // manifests point into files' documents
  for (auto& [name, object] : objects) {
    SourceFile& file = set.files.emplace_back();
    file.path = std::move(name);
    file.stream.documents.emplace_back().value = std::move(object);
    set.manifests.push_back(
        Manifest{set.files.size() - 1, 0, "", &file.stream.documents.front().value});
  }
  return set;
}

}  // namespace topoguard::audit
