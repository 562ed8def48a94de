#include "topoguard/common/text_file.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "temp_dir.h"

namespace topoguard {
namespace {

// A file at its cap is read whole; one byte more is kTooLarge, naming the file and the cap.
TEST(ReadTextFile, ReadsUpToTheCapAndRefusesOneByteMore) {
  testing::TempDir dir;
  const std::string at_cap = dir.write("at-cap", std::string(1024, 'a'));
  const std::string over = dir.write("over", std::string(1025, 'a'));
  const Result<std::string> read = read_text_file(at_cap, 1024);
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(read->size(), 1024u);
  const Result<std::string> refused = read_text_file(over, 1024);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kTooLarge);
  EXPECT_EQ(refused.error().location.file, over);
  EXPECT_EQ(refused.error().message, "larger than the cap of 1 KiB");
}

// A character device never ends: it is refused before a byte is read.
TEST(ReadTextFile, RefusesADevice) {
  const Result<std::string> read = read_text_file("/dev/zero", kMaxInputFileBytes);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kIo);
  EXPECT_EQ(read.error().location.file, "/dev/zero");
  EXPECT_NE(read.error().message.find("a character device"), std::string::npos);
}

// A FIFO with no writer would block an open for reading: it is refused, not waited on.
TEST(ReadTextFile, RefusesAFifoWithoutWaitingForAWriter) {
  testing::TempDir dir;
  const std::string fifo = dir.path() + "/fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result<std::string> read = read_text_file(fifo, kMaxInputFileBytes);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("a FIFO"), std::string::npos);
}

// A directory and a missing file are errors naming the path.
TEST(ReadTextFile, RefusesADirectoryAndAMissingFile) {
  testing::TempDir dir;
  const Result<std::string> folder = read_text_file(dir.path(), kMaxInputFileBytes);
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().location.file, dir.path());
  const Result<std::string> missing = read_text_file(dir.path() + "/absent", kMaxInputFileBytes);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
}

// A stream is capped the same way.
TEST(ReadTextStream, RefusesOneByteOverTheCap) {
  std::istringstream in(std::string(65, 'a'));
  const Result<std::string> read = read_text_stream(in, "-", 64);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "larger than the cap of 64 bytes");
}

// Caps are said in the largest unit that divides them.
TEST(ByteSizeText, SaysCapsInTheLargestWholeUnit) {
  EXPECT_EQ(byte_size_text(kMaxTokenFileBytes), "64 KiB");
  EXPECT_EQ(byte_size_text(kMaxCredentialFileBytes), "1 MiB");
  EXPECT_EQ(byte_size_text(kMaxInputFileBytes), "256 MiB");
  EXPECT_EQ(byte_size_text(1500), "1500 bytes");
}

}  // namespace
}  // namespace topoguard
