#include "device_roles.h"

#include <algorithm>

namespace topoguard::engine {

namespace {

// Stands for every driver the policy does not name: a selector that may match it may match a
// device of any kind.
constexpr std::string_view kUnlistedDriver = "unlisted-driver.topoguard.invalid";

void merge(Roles& into, const Roles& from) {
  into.gpu = into.gpu || from.gpu;
  into.nic = into.nic || from.nic;
}

// 'gpu\.nvidia\.com' -> gpu.nvidia.com: the name a pattern most likely means.
std::string unescaped(std::string_view pattern) {
  std::string name;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      ++i;
    }
    name.push_back(pattern[i]);
  }
  return name;
}

void add_unique(std::vector<std::string>& names, std::string name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    names.push_back(std::move(name));
  }
}

// The answer for `name` from `known`, computed and kept on first use.
template <typename Answer, typename Compute>
Answer memoized(std::map<std::string, Answer, std::less<>>& known, std::string_view name,
                const Compute& compute) {
  if (const auto found = known.find(name); found != known.end()) {
    return found->second;
  }
  const Answer answer = compute();
  known.emplace(name, answer);
  return answer;
}

}  // namespace

DeviceRoles::DeviceRoles(const policy::Policy& policy, const Inventory& inventory)
    : policy_(policy), inventory_(inventory) {
  for (const policy::PatternList* list : {&policy.gpu.drivers, &policy.nic.drivers}) {
    for (const policy::Pattern& pattern : list->patterns()) {
      if (pattern.literal()) {
        add_unique(known_drivers_, *pattern.literal());
        continue;
      }
      std::string name = unescaped(pattern.text());
      if (pattern.full_match(name)) {
        add_unique(known_drivers_, std::move(name));
      }
    }
  }
}

Roles DeviceRoles::of_class_name(std::string_view name) const {
  return memoized(class_name_roles_, name, [this, name] {
    return Roles{policy_.gpu.device_class_names.matches_any(name),
                 policy_.nic.device_class_names.matches_any(name)};
  });
}

Roles DeviceRoles::of_driver(std::string_view driver) const {
  return memoized(driver_roles_, driver, [this, driver] {
    return Roles{policy_.gpu.drivers.matches_any(driver), policy_.nic.drivers.matches_any(driver)};
  });
}

Roles DeviceRoles::of_selectors(const std::vector<const cel::Program*>& selectors) const {
  if (selectors.empty()) {
    return Roles{};
  }
  std::string sources;  // each source length-prefixed, so no two sets share a key
  std::size_t length = 0;
  for (const cel::Program* selector : selectors) {
    length += 21 + selector->source().size();  // digits, ':' and the source
  }
  sources.reserve(length);
  for (const cel::Program* selector : selectors) {
    sources += std::to_string(selector->source().size());
    sources += ':';
    sources += selector->source();
  }
  const std::uint64_t before = budget_ != nullptr ? budget_->remaining() : 0;
  if (const auto found = selector_roles_.find(sources); found != selector_roles_.end()) {
    // Kept answers were worked out with room to spare; with less room left now, working it out
    // again gives the answer this budget gives.
    if (budget_ == nullptr || before >= found->second.cost) {
      if (budget_ != nullptr) {
        budget_->charge(found->second.cost);
      }
      return found->second.roles;
    }
    bool exhausted = false;
    return evaluate_selectors(selectors, exhausted);
  }
  bool exhausted = false;
  const Roles roles = evaluate_selectors(selectors, exhausted);
  if (!exhausted) {
    const std::uint64_t cost = budget_ != nullptr ? before - budget_->remaining() : 0;
    selector_roles_.emplace(std::move(sources), SelectorAnswer{roles, cost});
  }
  return roles;
}

Roles DeviceRoles::evaluate_selectors(const std::vector<const cel::Program*>& selectors,
                                      bool& exhausted) const {
  // Candidates: the policy's drivers, every name the selectors mention, and one driver the
  // policy does not know. Attributes and capacity stay unknown, so a candidate is ruled out only
  // when some selector is false for it whatever the device publishes.
  std::vector<std::string> candidates = known_drivers_;
  for (const cel::Program* selector : selectors) {
    for (const std::string& literal : cel::string_literals(*selector)) {
      add_unique(candidates, literal);
    }
  }
  candidates.emplace_back(kUnlistedDriver);
  const auto may_match = [this, &selectors, &exhausted](const std::string& driver) {
    cel::Activation device;
    device.driver = driver;
    return std::none_of(selectors.begin(), selectors.end(), [&](const cel::Program* selector) {
      const cel::Evaluation evaluation = cel::evaluate(*selector, device, budget_);
      exhausted = exhausted || evaluation.budget_exhausted;
      return evaluation.outcome == cel::Outcome::kFalse;
    });
  };
  // Selectors that never read the driver give every candidate the same answer: evaluate once.
  const bool driver_blind = std::none_of(selectors.begin(), selectors.end(), [](const auto* selector) {
    return cel::may_read_driver(*selector);
  });
  const bool blind_match = driver_blind && may_match(candidates.back());
  bool any = false;
  bool all_gpu = true;
  bool all_nic = true;
  for (const std::string& driver : candidates) {
    if (driver_blind ? !blind_match : !may_match(driver)) {
      continue;
    }
    const Roles roles = of_driver(driver);
    any = true;
    all_gpu = all_gpu && roles.gpu;
    all_nic = all_nic && roles.nic;
  }
  return any ? Roles{all_gpu, all_nic} : Roles{};
}

Roles DeviceRoles::of_device_class(const k8s::DeviceClass& device_class) const {
  Roles roles = of_class_name(device_class.name);
  if (device_class.selectors_readable()) {
    std::vector<const cel::Program*> selectors;
    selectors.reserve(device_class.programs.size());
    for (const cel::Program& selector : device_class.programs) {
      selectors.push_back(&selector);
    }
    merge(roles, of_selectors(selectors));
  }
  return roles;
}

Roles DeviceRoles::of_choice(const k8s::DeviceChoice& choice) const {
  Roles roles = of_class_name(choice.device_class_name);
  // A device must pass its DeviceClass's selectors and the request's own.
  std::vector<const cel::Program*> selectors;
  const k8s::DeviceClass* device_class = inventory_.device_class(choice.device_class_name);
  selectors.reserve(choice.selector_programs.size() +
                    (device_class != nullptr ? device_class->programs.size() : 0));
  if (device_class != nullptr) {
    merge(roles, of_device_class(*device_class));
    if (!device_class->selectors_readable()) {
      return roles;
    }
    for (const cel::Program& selector : device_class->programs) {
      selectors.push_back(&selector);
    }
  }
  for (const cel::Program& selector : choice.selector_programs) {
    selectors.push_back(&selector);
  }
  merge(roles, of_selectors(selectors));
  return roles;
}

Roles DeviceRoles::of_request(const k8s::DeviceRequest& request) const {
  Roles roles;
  for (const k8s::DeviceChoice& choice : request.choices) {
    merge(roles, of_choice(choice));
  }
  return roles;
}

bool DeviceRoles::is_numa_attribute(std::string_view attribute) const {
  return memoized(numa_attributes_, attribute,
                  [this, attribute] { return policy_.numa_attributes.matches_any(attribute); });
}

bool DeviceRoles::selects_numa_node(const k8s::DeviceChoice& choice) const {
  for (const cel::Program& selector : choice.selector_programs) {
    for (const std::string& attribute : cel::attributes_read(selector)) {
      if (is_numa_attribute(attribute)) {
        return true;
      }
    }
  }
  return false;
}

Roles DeviceRoles::of_extended_resource(std::string_view resource) const {
  Roles roles{policy_.gpu.extended_resources.matches_any(resource),
              policy_.nic.extended_resources.matches_any(resource)};
  if (const k8s::DeviceClass* device_class = inventory_.device_class_for_resource(resource)) {
    merge(roles, of_device_class(*device_class));
  } else if (resource.starts_with(kImplicitExtendedResourcePrefix)) {
    // A class the input does not hold: its name says what it is, as in a claim's request.
    merge(roles, of_class_name(resource.substr(kImplicitExtendedResourcePrefix.size())));
  }
  return roles;
}

}  // namespace topoguard::engine
