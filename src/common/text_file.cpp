#include "topoguard/common/text_file.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace topoguard {

namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& path, const std::string& message) {
  return Error{ErrorCode::kIo, message, SourceLocation{path, 0, ""}};
}

}  // namespace

Result<std::string> read_text_stream(std::istream& in, const std::string& path, std::size_t limit) {
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit) {
      return Error{ErrorCode::kTooLarge,
                   "input is larger than " + std::to_string(limit >> 20) + " MiB",
                   SourceLocation{path, 0, ""}};
    }
  }
  if (in.bad()) {
    return io_error(path, "read failed");
  }
  return text;
}

Result<std::string> read_text_file(const std::string& path, std::size_t limit) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!ec && size > limit) {
    return Error{ErrorCode::kTooLarge,
                 "file is larger than " + std::to_string(limit >> 20) + " MiB",
                 SourceLocation{path, 0, ""}};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return io_error(path, "cannot open: " + std::generic_category().message(errno));
  }
  return read_text_stream(in, path, limit);
}

Status write_text_file(const std::string& path, const std::string& text) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
  }
  const std::string temporary = path + ".topoguard-tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      return io_error(path, "cannot write " + temporary);
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    return io_error(path, "cannot replace the file: " + ec.message());
  }
  return Ok{};
}

}  // namespace topoguard
