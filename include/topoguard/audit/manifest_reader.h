// Reads manifests for the audit: files, directories (.yaml .yml .json, recursive unless asked
// otherwise) and "-" for stdin; multi-document streams; `kind: List` expanded into its items.
// The module's only input I/O. Unreadable or broken input becomes an Error naming file and line;
// the rest is still read. What is not a Kubernetes object (input_classifier.h: kustomize files
// and patches, Helm charts and templates, values files) is skipped and listed, never an error.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "topoguard/audit/input_classifier.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/common/yaml_document.h"

namespace topoguard::audit {

struct SourceFile {
  std::string path;  // as given or found; "-" for stdin
  std::string text;
  YamlStream stream;
};

// One Kubernetes object of the input: a document, or an item of a `kind: List` document.
struct Manifest {
  std::size_t file = 0;      // index into ManifestSet::files
  std::size_t document = 0;  // index into that file's stream.documents
  std::string base_pointer;  // "" for a document, "/items/<i>" for a List item
  const Json* object = nullptr;
};

struct ManifestSet {
  std::vector<SourceFile> files;
  std::vector<Manifest> manifests;     // in input order
  std::vector<Error> errors;           // unreadable paths and unparseable documents
  std::vector<SkippedInput> skipped;   // not Kubernetes objects, in input order

  // Line of `pointer` (relative to the manifest's object) in its file; 0 when unknown.
  [[nodiscard]] int line_of(const Manifest& manifest, const std::string& pointer) const;
  [[nodiscard]] const std::string& path_of(const Manifest& manifest) const {
    return files[manifest.file].path;
  }
};

struct ReadLimits {
  std::size_t max_file_bytes = 256u << 20;
  ParseLimits parse;
};

// A path to read: a file, "-", or a folder, walked into its subfolders when `recursive`.
struct ManifestPath {
  std::string path;
  bool recursive = true;
};

struct ReadOptions {
  ReadLimits limits;
  // Globs (fnmatch(3), `*` also matching `/`) tried on each file's and folder's path relative
  // to the folder given (a file given itself: its path as given) and on its name alone; a
  // matching folder is not walked.
  std::vector<std::string> exclude;
};

// Reads every path; `standard_input` serves "-". Directories are walked in sorted order.
[[nodiscard]] ManifestSet read_manifests(const std::vector<ManifestPath>& paths,
                                         std::istream& standard_input,
                                         const ReadOptions& options = {});
// Every folder walked recursively, nothing excluded.
[[nodiscard]] ManifestSet read_manifests(const std::vector<std::string>& paths,
                                         std::istream& standard_input,
                                         const ReadLimits& limits = {});

// Parses already-loaded texts (for tests and benchmarks): (path, text) pairs.
[[nodiscard]] ManifestSet parse_manifests(std::vector<std::pair<std::string, std::string>> texts,
                                          const ReadLimits& limits = {});

// Objects already read elsewhere (a cluster's lists): (source name, object) pairs, each its own
// source with no text and no lines (findings name the source alone).
[[nodiscard]] ManifestSet manifests_from_objects(std::vector<std::pair<std::string, Json>> objects);

}  // namespace topoguard::audit
