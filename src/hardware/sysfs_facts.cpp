#include "topoguard/hardware/sysfs_facts.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

#include "topoguard/common/text_file.h"

namespace topoguard::hardware {

namespace {

namespace fs = std::filesystem;

// A sysfs attribute is at most a page.
constexpr std::size_t kMaxAttributeBytes = 4096;

std::string trimmed(std::string text) {
  const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.back())) {
    text.pop_back();
  }
  const auto first = std::find_if_not(text.begin(), text.end(), blank);
  return {first, text.end()};
}

std::optional<std::string> read_attribute(const fs::path& path) {
  Result<std::string> text = read_text_file(path.string(), kMaxAttributeBytes);
  return text ? std::optional<std::string>(trimmed(std::move(*text))) : std::nullopt;
}

// "0x030200" as sysfs writes class, vendor and device; none for anything else.
std::optional<std::uint32_t> read_hex_attribute(const fs::path& path, std::string_view name,
                                                const std::string& address,
                                                std::vector<std::string>& problems) {
  const std::optional<std::string> text = read_attribute(path / name);
  if (!text) {
    return std::nullopt;
  }
  std::uint32_t value = 0;
  const std::string_view digits =
      text->starts_with("0x") ? std::string_view(*text).substr(2) : std::string_view();
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    problems.push_back(address + ": " + std::string(name) + " \"" + *text + "\" is no hex number");
    return std::nullopt;
  }
  return value;
}

// The entries of `directory`, at most `budget` of them (the budget shrinks by what was listed).
std::vector<std::string> list_directory(const fs::path& directory, std::size_t& budget,
                                        const std::string& shown, std::vector<std::string>& problems) {
  std::vector<std::string> names;
  std::error_code error;
  fs::directory_iterator entries(directory, error);
  for (; !error && entries != fs::directory_iterator(); entries.increment(error)) {
    if (budget == 0) {
      problems.push_back(shown + ": more than " + std::to_string(kMaxSysfsEntries) +
                         " entries in all; the rest was not read");
      break;
    }
    --budget;
    names.push_back(entries->path().filename().string());
  }
  if (error && error != std::errc::no_such_file_or_directory) {
    problems.push_back(shown + ": " + error.message());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// For class/<kind>/<name>/device links: the PCI address each entry belongs to.
void read_class_devices(const fs::path& root, std::string_view kind, std::size_t& budget,
                        std::map<std::string, PciFunctionFacts*, std::less<>>& by_address,
                        std::vector<std::string> PciFunctionFacts::*names,
                        std::vector<std::string>& problems) {
  const std::string shown = "class/" + std::string(kind);
  for (const std::string& name : list_directory(root / "class" / kind, budget, shown, problems)) {
    std::error_code error;
    const fs::path target = fs::read_symlink(root / "class" / kind / name / "device", error);
    if (error) {
      // A virtual interface (lo, a bridge) has no device; anything else is worth saying.
      if (error != std::errc::no_such_file_or_directory) {
        problems.push_back(shown + "/" + name + "/device: " + error.message());
      }
      continue;
    }
    const auto function = by_address.find(target.filename().string());
    if (function != by_address.end()) {
      (function->second->*names).push_back(name);
    }
  }
}

}  // namespace

Result<SysfsFacts> read_sysfs_facts(const std::string& root_text) {
  const fs::path root(root_text);
  const fs::path bus = root / "bus" / "pci" / "devices";
  std::error_code error;
  if (!fs::is_directory(bus, error)) {
    return Error{ErrorCode::kIo,
                 bus.string() + " is no directory (" +
                     (error ? error.message() : "not a sysfs root") +
                     "): give the sysfs root with --sysfs", {}};
  }
  SysfsFacts facts;
  std::size_t budget = kMaxSysfsEntries;
  for (const std::string& address :
       list_directory(bus, budget, "bus/pci/devices", facts.problems)) {
    PciFunctionFacts function;
    function.address = address;
    const fs::path entry = bus / address;
    std::error_code link_error;
    function.link_target = fs::read_symlink(entry, link_error).string();
    if (link_error) {
      function.link_target.clear();
      facts.problems.push_back("bus/pci/devices/" + address + ": " + link_error.message());
    } else if (function.link_target.starts_with('/')) {
      // The kernel's links are relative; an absolute one would be read outside `root`.
      facts.problems.push_back("bus/pci/devices/" + address + ": links to " +
                               function.link_target + ", outside the sysfs root; not read");
      facts.functions.push_back(std::move(function));
      continue;
    }
    function.class_code = read_hex_attribute(entry, "class", address, facts.problems);
    if (const auto vendor = read_hex_attribute(entry, "vendor", address, facts.problems);
        vendor && *vendor <= 0xffff) {
      function.vendor = static_cast<std::uint16_t>(*vendor);
    }
    if (const auto device = read_hex_attribute(entry, "device", address, facts.problems);
        device && *device <= 0xffff) {
      function.device = static_cast<std::uint16_t>(*device);
    }
    function.numa_node_text = read_attribute(entry / "numa_node");
    std::error_code physfn_error;
    function.physfn = fs::read_symlink(entry / "physfn", physfn_error).filename().string();
    facts.functions.push_back(std::move(function));
  }
  std::map<std::string, PciFunctionFacts*, std::less<>> by_address;
  for (PciFunctionFacts& function : facts.functions) {
    by_address.emplace(function.address, &function);
  }
  read_class_devices(root, "infiniband", budget, by_address, &PciFunctionFacts::rdma_devices,
                     facts.problems);
  read_class_devices(root, "net", budget, by_address, &PciFunctionFacts::net_interfaces,
                     facts.problems);
  return facts;
}

}  // namespace topoguard::hardware
