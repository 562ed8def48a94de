#include "topoguard/common/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace topoguard {

namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& path, const std::string& message) {
  return Error{ErrorCode::kIo, message, SourceLocation{path, 0, ""}};
}

Error too_large(const std::string& path, std::size_t limit) {
  return Error{ErrorCode::kTooLarge, "larger than the cap of " + byte_size_text(limit),
               SourceLocation{path, 0, ""}};
}

// Closes a descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::string file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

}  // namespace

std::string byte_size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= (std::size_t{1} << 10) && bytes % (std::size_t{1} << 10) == 0) {
    return std::to_string(bytes >> 10) + " KiB";
  }
  return std::to_string(bytes) + " bytes";
}

Result<std::string> read_text_stream(std::istream& in, const std::string& path, std::size_t limit) {
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit) {
      return too_large(path, limit);
    }
  }
  if (in.bad()) {
    return io_error(path, "read failed");
  }
  return text;
}

Result<std::string> read_text_file(const std::string& path, std::size_t limit) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once, and fstat then refuses it.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) {
    return io_error(path, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(file.get(), &status) != 0) {
    return io_error(path, std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    return io_error(path, "cannot read " + file_type_name(status.st_mode) +
                              ": only a regular file is read");
  }
  // The size is a hint only (a file may grow while read): the cap is checked on what is read.
  std::string text;
  text.reserve(std::min(static_cast<std::size_t>(std::max<off_t>(status.st_size, 0)), limit) + 1);
  char buffer[65536];
  while (true) {
    const std::size_t left = limit - text.size();  // one byte past it tells an overrun
    const std::size_t wanted = left >= sizeof buffer ? sizeof buffer : left + 1;
    const ssize_t got = ::read(file.get(), buffer, wanted);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return io_error(path, std::string("read failed: ") + std::strerror(errno));
    }
    if (got == 0) {
      return text;
    }
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > limit) {
      return too_large(path, limit);
    }
  }
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
