#include "cel_scan.h"

#include <cctype>

#include "topoguard/engine/inventory.h"

namespace topoguard::engine {

namespace {

// A small cursor over CEL text. The scans below only recognise the fixed shapes they look for
// (and are on the webhook's hot path, where a capturing regex per selector measured as the
// largest cost of an evaluation).
class Cursor {
 public:
  Cursor(std::string_view text, std::size_t position) : text_(text), position_(position) {}

  void skip_spaces() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) {
      ++position_;
    }
  }

  bool consume(std::string_view token) {
    skip_spaces();
    if (text_.substr(position_, token.size()) != token) {
      return false;
    }
    position_ += token.size();
    return true;
  }

  // A '...' or "..." literal without escapes.
  bool string_literal(std::string& out) {
    skip_spaces();
    if (position_ >= text_.size() || (text_[position_] != '"' && text_[position_] != '\'')) {
      return false;
    }
    const char quote = text_[position_];
    const std::size_t end = text_.find(quote, position_ + 1);
    if (end == std::string_view::npos) {
      return false;
    }
    out.assign(text_.substr(position_ + 1, end - position_ - 1));
    position_ = end + 1;
    return true;
  }

  bool identifier(std::string& out) {
    skip_spaces();
    const std::size_t start = position_;
    while (position_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[position_])) != 0 ||
            text_[position_] == '_')) {
      ++position_;
    }
    out.assign(text_.substr(start, position_ - start));
    return !out.empty() && std::isdigit(static_cast<unsigned char>(out.front())) == 0;
  }

 private:
  std::string_view text_;
  std::size_t position_;
};

// The quoted literal that ends right before `end` (skipping spaces), as in `"x" == device.driver`.
bool literal_before(std::string_view text, std::size_t end, std::string& out) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) {
    --end;
  }
  if (end < 2 || text.substr(end - 2, 2) != "==") {
    return false;
  }
  end -= 2;
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) {
    --end;
  }
  if (end < 2 || (text[end - 1] != '"' && text[end - 1] != '\'')) {
    return false;
  }
  const std::size_t start = text.rfind(text[end - 1], end - 2);
  if (start == std::string_view::npos) {
    return false;
  }
  out.assign(text.substr(start + 1, end - 2 - start));
  return true;
}

}  // namespace

std::vector<std::string> drivers_in_cel(std::string_view expression) {
  constexpr std::string_view kDriver = "device.driver";
  std::vector<std::string> drivers;
  for (std::size_t at = expression.find(kDriver); at != std::string_view::npos;
       at = expression.find(kDriver, at + kDriver.size())) {
    std::string driver;
    Cursor after(expression, at + kDriver.size());
    if ((after.consume("==") && after.string_literal(driver)) ||
        literal_before(expression, at, driver)) {
      drivers.push_back(std::move(driver));
    }
  }
  return drivers;
}

std::vector<std::string> attributes_in_cel(std::string_view expression) {
  constexpr std::string_view kAttributes = "device.attributes";
  std::vector<std::string> attributes;
  for (std::size_t at = expression.find(kAttributes); at != std::string_view::npos;
       at = expression.find(kAttributes, at + kAttributes.size())) {
    Cursor cursor(expression, at + kAttributes.size());
    std::string domain;
    std::string id;
    if (!cursor.consume("[") || !cursor.string_literal(domain) || !cursor.consume("]")) {
      continue;
    }
    const bool read = cursor.consume(".")
                          ? cursor.identifier(id)
                          : cursor.consume("[") && cursor.string_literal(id) && cursor.consume("]");
    if (read) {
      attributes.push_back(domain + "/" + id);
    }
  }
  return attributes;
}

}  // namespace topoguard::engine
