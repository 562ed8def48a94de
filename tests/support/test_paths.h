#pragma once

#include <string>

// Where the tests find the sources, the shared corpus and the built tools. The paths are compiled
// into one object (test_paths.cpp), not into every test: a test's object then does not depend on
// the folder the tree was cloned to, and a compiler cache filled by one clone serves another.
namespace topoguard::test {

// The repository's root.
const std::string& source_dir();
// ../shared/corpus beside the repository.
const std::string& corpus_dir();
// The topoguard binary of this build.
const std::string& topoguard_binary();
// Debian's Python 3 (it has python3-kubernetes), for the fake API server.
const std::string& test_python();

}  // namespace topoguard::test
