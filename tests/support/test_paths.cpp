#include "test_paths.h"

namespace topoguard::test {

const std::string& source_dir() {
  static const std::string path = TOPOGUARD_SOURCE_DIR;
  return path;
}

const std::string& corpus_dir() {
  static const std::string path = TOPOGUARD_CORPUS_DIR;
  return path;
}

const std::string& topoguard_binary() {
  static const std::string path = TOPOGUARD_BINARY;
  return path;
}

const std::string& test_python() {
  static const std::string path = TOPOGUARD_TEST_PYTHON;
  return path;
}

}  // namespace topoguard::test
