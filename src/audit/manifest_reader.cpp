#include "topoguard/audit/manifest_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <sstream>
#include <system_error>

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

void collect_paths(const std::string& path, std::vector<std::string>& files,
                   std::vector<Error>& errors) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    errors.push_back(io_error(path, "no such file or directory"));
    return;
  }
  if (!fs::is_directory(status)) {
    files.push_back(path);
    return;
  }
  std::vector<std::string> found;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    // Not only regular files: a FIFO or a device named like a manifest is an error when read,
    // never a manifest skipped in silence.
    if (has_manifest_extension(it->path()) && !it->is_directory(ec)) {
      found.push_back(it->path().string());
    }
  }
  if (ec) {
    errors.push_back(io_error(path, "cannot read directory: " + ec.message()));
  }
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
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

void index_manifests(ManifestSet& set, std::size_t file_index) {
  const SourceFile& file = set.files[file_index];
  for (std::size_t d = 0; d < file.stream.documents.size(); ++d) {
    const Json& value = file.stream.documents[d].value;
    if (!value.is_object()) {
      set.errors.push_back(Error{ErrorCode::kWrongType,
                                 std::string("a manifest must be an object, got ") +
                                     json_type_name(value),
                                 SourceLocation{file.path, file.stream.documents[d].first_line, ""}});
      continue;
    }
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
                                 SourceLocation{file.path,
                                                file.stream.documents[d].lines.line_of("/items"),
                                                "/items"}});
      continue;
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      const Json& item = (*items)[i];
      const std::string pointer = append_pointer("/items", i);
      if (!item.is_object()) {
        set.errors.push_back(
            Error{ErrorCode::kWrongType, "List item must be an object",
                  SourceLocation{file.path, file.stream.documents[d].lines.line_of(pointer),
                                 pointer}});
        continue;
      }
      add_manifest(set, file_index, d, pointer, item);
    }
  }
}

void add_file(ManifestSet& set, std::string path, std::string text, const ReadLimits& limits) {
  SourceFile file;
  file.stream = parse_yaml_stream(text, path, limits.parse);
  file.path = std::move(path);
  file.text = std::move(text);
  for (const Error& error : file.stream.errors) {
    set.errors.push_back(error);
  }
  set.files.push_back(std::move(file));
  index_manifests(set, set.files.size() - 1);
}

}  // namespace

int ManifestSet::line_of(const Manifest& manifest, const std::string& pointer) const {
  return files[manifest.file].stream.documents[manifest.document].lines.line_of(
      manifest.base_pointer + pointer);
}

ManifestSet read_manifests(const std::vector<std::string>& paths, std::istream& standard_input,
                           const ReadLimits& limits) {
  ManifestSet set;
  std::vector<std::pair<std::string, std::string>> texts;
  // Per path: the index of its first text and the number of errors reported before it.
  std::vector<std::pair<std::size_t, std::size_t>> starts;
  for (const std::string& path : paths) {
    starts.emplace_back(texts.size(), set.errors.size());
    if (path == "-") {
      auto text = read_text_stream(standard_input, "-", limits.max_file_bytes);
      if (!text) {
        set.errors.push_back(text.error());
        continue;
      }
      texts.emplace_back("-", std::move(text).value());
      continue;
    }
    std::vector<std::string> files;
    collect_paths(path, files, set.errors);
    for (const std::string& file : files) {
      auto text = read_text_file(file, limits.max_file_bytes);
      if (!text) {
        set.errors.push_back(text.error());
        continue;
      }
      texts.emplace_back(file, std::move(text).value());
    }
  }
  ManifestSet parsed = parse_manifests(std::move(texts), limits);
  // A path that yields no document and no error is most likely a mistyped one; it must not pass.
  for (std::size_t p = 0; p < paths.size(); ++p) {
    const auto [first_text, errors_before] = starts[p];
    const std::size_t end_text = p + 1 < paths.size() ? starts[p + 1].first : parsed.files.size();
    const std::size_t errors_end = p + 1 < paths.size() ? starts[p + 1].second : set.errors.size();
    bool found = errors_end > errors_before;
    for (std::size_t f = first_text; f < end_text && !found; ++f) {
      found = !parsed.files[f].stream.documents.empty() || !parsed.files[f].stream.errors.empty();
    }
    if (!found) {
      set.errors.push_back(io_error(paths[p], "no manifests found in " + paths[p]));
    }
  }
  parsed.errors.insert(parsed.errors.begin(), set.errors.begin(), set.errors.end());
  return parsed;
}

ManifestSet parse_manifests(std::vector<std::pair<std::string, std::string>> texts,
                            const ReadLimits& limits) {
  ManifestSet set;
  set.files.reserve(texts.size());  // manifests point into files' documents
  for (auto& [path, text] : texts) {
    add_file(set, std::move(path), std::move(text), limits);
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
