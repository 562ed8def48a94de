#include "topoguard/kube/rfc3339.h"

#include <cstdio>
#include <ctime>

namespace topoguard::kube {

namespace {

std::string format_utc(std::chrono::system_clock::time_point time, bool micro) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time - seconds).count();
  const std::time_t whole = std::chrono::system_clock::to_time_t(seconds);
  std::tm fields{};
  gmtime_r(&whole, &fields);
  char text[40];
  int length = std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d",
                             fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday,
                             fields.tm_hour, fields.tm_min, fields.tm_sec);
  if (micro) {
    length += std::snprintf(text + length, sizeof(text) - static_cast<std::size_t>(length),
                            ".%06lld", static_cast<long long>(micros));
  }
  return std::string(text, static_cast<std::size_t>(length)) + "Z";
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS
  if (text.size() < 20) {
    return std::nullopt;
  }
  const auto digits = [&](std::size_t at, std::size_t count) -> int {
    int value = 0;
    for (std::size_t i = at; i < at + count; ++i) {
      if (text[i] < '0' || text[i] > '9') {
        return -1;
      }
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  if (text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  std::tm fields{};
  fields.tm_year = digits(0, 4) - 1900;
  fields.tm_mon = digits(5, 2) - 1;
  fields.tm_mday = digits(8, 2);
  fields.tm_hour = digits(11, 2);
  fields.tm_min = digits(14, 2);
  fields.tm_sec = digits(17, 2);
  if (fields.tm_year < 0 || fields.tm_mon < 0 || fields.tm_mon > 11 || fields.tm_mday < 1 ||
      fields.tm_mday > 31 || fields.tm_hour < 0 || fields.tm_hour > 23 || fields.tm_min < 0 ||
      fields.tm_min > 59 || fields.tm_sec < 0 || fields.tm_sec > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  std::chrono::nanoseconds fraction{0};
  if (text[at] == '.') {
    ++at;
    long long scale = 100'000'000;
    const std::size_t first = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      fraction += std::chrono::nanoseconds((text[at] - '0') * scale);
      scale /= 10;
      ++at;
    }
    if (at == first) {
      return std::nullopt;
    }
  }
  std::chrono::seconds offset{0};
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z') && at + 1 == text.size()) {
    // UTC
  } else if (at + 6 == text.size() && (text[at] == '+' || text[at] == '-') && text[at + 3] == ':') {
    const int hours = digits(at + 1, 2);
    const int minutes = digits(at + 4, 2);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) {
      return std::nullopt;
    }
    offset = std::chrono::hours(hours) + std::chrono::minutes(minutes);
    if (text[at] == '-') {
      offset = -offset;
    }
  } else {
    return std::nullopt;
  }
  const std::time_t seconds = ::timegm(&fields);
  return std::chrono::system_clock::from_time_t(seconds) - offset +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(fraction);
}

std::string format_rfc3339(std::chrono::system_clock::time_point time) {
  return format_utc(time, false);
}

std::string format_rfc3339_micro(std::chrono::system_clock::time_point time) {
  return format_utc(time, true);
}

}  // namespace topoguard::kube
