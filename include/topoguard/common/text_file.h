// Whole text files in and out, for the commands that read inputs and write results. Every file
// topoguard reads goes through read_text_file: regular files only, and never more than the cap
// of the file's kind, so /dev/zero, a FIFO or a huge file ends in an error, not a hang or an OOM.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "topoguard/common/result.h"

namespace topoguard {

// Size caps by kind of file. A bearer token is a JWT of a few KiB; a kubeconfig, a certificate
// chain, a key or a CA bundle (the Mozilla bundle is ~220 KiB) fits in 1 MiB; manifests and
// cluster-state captures may be large (35 MiB of slices at 5,000 nodes), bounded by the memory
// limit.
inline constexpr std::size_t kMaxTokenFileBytes = std::size_t{64} << 10;
inline constexpr std::size_t kMaxCredentialFileBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;

// "64 KiB", "1 MiB", "100 bytes": a cap as an error message says it.
[[nodiscard]] std::string byte_size_text(std::size_t bytes);

// All of `in` (named `path` in errors); kTooLarge past `limit` bytes, kIo when reading fails.
[[nodiscard]] Result<std::string> read_text_stream(std::istream& in, const std::string& path,
                                                   std::size_t limit);

// The file at `path`, read up to `limit` + 1 bytes: kTooLarge past `limit`, kIo when it is not a
// regular file (checked on the open descriptor, which a FIFO cannot block) or cannot be read.
[[nodiscard]] Result<std::string> read_text_file(const std::string& path, std::size_t limit);

// Writes `text` next to `path` and renames it over, so an interrupted write never leaves a
// truncated file; creates missing parent folders.
[[nodiscard]] Status write_text_file(const std::string& path, const std::string& text);

}  // namespace topoguard
