#include "topoguard/cluster/feasibility.h"

#include <algorithm>
#include <map>
#include <set>

#include "allocation_search.h"
#include "topoguard/cluster/selector_match.h"

namespace topoguard::cluster {

namespace {

// One request choice with its selectors compiled and its match against every device.
struct ChoiceMatch {
  std::string label;
  const k8s::DeviceChoice* choice = nullptr;
  std::vector<Match> matches;  // per device of the state
};

std::string plural(std::size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string in_quotes(const std::string& text) { return "\"" + text + "\""; }

class ClaimChecker {
 public:
  ClaimChecker(const k8s::ClaimSpec& spec, const ClusterState& state,
               const FeasibilityOptions& options)
      : spec_(spec), state_(state), options_(options), activations_(state) {}

  ClaimFeasibility run() {
    match_choices();
    build_constraints();
    if (state_.nodes().empty()) {
      notes_.insert("the cluster state holds no ResourceSlice for any node");
    }
    if (!state_.selector_devices().empty()) {
      notes_.insert("devices of slices with a node selector are not assigned to nodes");
    }
    bool any_unknown = false;
    for (const Node& node : state_.nodes()) {
      NodeFeasibility result = check_node(node);
      if (result.verdict == Verdict::kSatisfiable) {
        out_.verdict = Verdict::kSatisfiable;
      }
      any_unknown = any_unknown || result.verdict == Verdict::kUnknown;
      out_.nodes.push_back(std::move(result));
    }
    if (out_.verdict != Verdict::kSatisfiable) {
      const bool certain = !any_unknown && !state_.nodes().empty() &&
                           state_.selector_devices().empty() && !state_.incomplete();
      out_.verdict = certain ? Verdict::kUnsatisfiable : Verdict::kUnknown;
    }
    out_.notes.assign(notes_.begin(), notes_.end());
    record_publications();
    return std::move(out_);
  }

 private:
  void match_choices() {
    const std::size_t device_count = state_.devices().size();
    for (const k8s::DeviceRequest& request : spec_.requests) {
      std::vector<ChoiceMatch> choices;
      for (const k8s::DeviceChoice& choice : request.choices) {
        ChoiceMatch match;
        match.label = choice.subrequest.empty() ? request.name
                                                : request.name + "/" + choice.subrequest;
        match.choice = &choice;
        match.matches.assign(device_count, Match::kUnknown);
        const DeviceClass* device_class = state_.device_class(choice.device_class_name);
        if (device_class == nullptr) {
          notes_.insert("DeviceClass " + in_quotes(choice.device_class_name) + " of request " +
                        in_quotes(match.label) + " is not in the cluster state: any device may match");
          choices.push_back(std::move(match));
          continue;
        }
        const SelectorSet* class_selectors = class_selector_set(*device_class);
        auto own = SelectorSet::compile(choice.selectors);
        if (class_selectors == nullptr || !own) {
          notes_.insert("a selector of request " + in_quotes(match.label) +
                        " does not parse: any device may match");
          choices.push_back(std::move(match));
          continue;
        }
        for (std::size_t d = 0; d < device_count; ++d) {
          match.matches[d] = match_device(*class_selectors, *own, d, match.label);
        }
        choices.push_back(std::move(match));
      }
      choices_.push_back(std::move(choices));
    }
  }

  const SelectorSet* class_selector_set(const DeviceClass& device_class) {
    auto it = class_selectors_.find(device_class.name);
    if (it == class_selectors_.end()) {
      auto compiled = SelectorSet::compile(device_class.selectors);
      it = class_selectors_
               .emplace(device_class.name, compiled ? std::optional(std::move(compiled).value())
                                                    : std::nullopt)
               .first;
    }
    return it->second ? &*it->second : nullptr;
  }

  Match match_device(const SelectorSet& class_selectors, const SelectorSet& own, std::size_t d,
                     const std::string& label) {
    const cel::Activation& device = activations_.of(d);
    std::string why;
    Match match = class_selectors.match(device, &why);
    if (match != Match::kNo) {
      const Match request_match = own.match(device, &why);
      match = request_match == Match::kNo ? Match::kNo
              : request_match == Match::kUnknown ? Match::kUnknown
                                                 : match;
    }
    if (match == Match::kUnknown) {
      notes_.insert("request " + in_quotes(label) + " may match " +
                    in_quotes(state_.devices()[d].driver) + " devices: " + why);
    }
    if (match == Match::kYes && state_.devices()[d].tainted) {
      notes_.insert("tainted devices may match: tolerations are not modelled");
      match = Match::kUnknown;
    }
    return match;
  }

  void build_constraints() {
    std::map<std::string, std::size_t, std::less<>> request_index;
    for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
      request_index.emplace(spec_.requests[r].name, r);
    }
    for (const k8s::DeviceConstraint& constraint : spec_.constraints) {
      if (!constraint.distinct_attribute.empty()) {
        notes_.insert("distinctAttribute is not modelled");
      }
      if (constraint.match_attribute.empty()) {
        continue;
      }
      search::Constraint out;
      out.attribute = constraint.match_attribute;
      if (constraint.requests.empty()) {
        for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
          out.covers.emplace_back(r, search::Constraint::kAnyChoice);
        }
      }
      for (const std::string& reference : constraint.requests) {
        // "req" covers every subrequest; "req/sub" only that one.
        const std::size_t slash = reference.find('/');
        auto it = request_index.find(std::string_view(reference).substr(0, slash));
        if (it == request_index.end()) {
          continue;
        }
        if (slash == std::string::npos) {
          out.covers.emplace_back(it->second, search::Constraint::kAnyChoice);
          continue;
        }
        const auto& choices = spec_.requests[it->second].choices;
        for (std::size_t c = 0; c < choices.size(); ++c) {
          if (choices[c].subrequest == reference.substr(slash + 1)) {
            out.covers.emplace_back(it->second, c);
          }
        }
      }
      constraints_.push_back(std::move(out));
    }
  }

  std::vector<search::Request> candidates_on(const Node& node) const {
    std::vector<search::Request> requests;
    for (std::size_t r = 0; r < choices_.size(); ++r) {
      search::Request request;
      for (const ChoiceMatch& match : choices_[r]) {
        search::Choice choice;
        choice.label = match.label;
        choice.all = match.choice->allocation_mode == k8s::AllocationMode::kAll;
        choice.count = static_cast<std::size_t>(std::max<std::int64_t>(match.choice->count, 0));
        for (std::size_t d : node.devices) {
          if (match.matches[d] == Match::kYes) {
            choice.definite.push_back(d);
          } else if (match.matches[d] == Match::kUnknown) {
            choice.maybe.push_back(d);
          }
        }
        request.choices.push_back(std::move(choice));
      }
      requests.push_back(std::move(request));
    }
    return requests;
  }

  NodeFeasibility check_node(const Node& node) {
    NodeFeasibility result;
    result.node = node.name;
    const std::vector<search::Request> requests = candidates_on(node);
    const auto& devices = state_.devices();
    const search::SearchResult optimistic = search::search(
        devices, requests, constraints_, search::Scenario::kOptimistic, options_.max_steps_per_node);
    describe_requests(requests, result);
    if (optimistic.outcome == search::Outcome::kBoundHit) {
      result.reason = "search bound of " + std::to_string(options_.max_steps_per_node) +
                      " steps reached";
      notes_.insert("the search bound was reached on some nodes");
      return result;
    }
    if (optimistic.outcome == search::Outcome::kNotFound) {
      diagnose(requests, result);
      if (node.incomplete || state_.incomplete()) {
        result.verdict = Verdict::kUnknown;
        result.reason += " (but the node's slices are incomplete)";
      } else {
        result.verdict = Verdict::kUnsatisfiable;
      }
      return result;
    }
    const bool any_maybe = std::any_of(requests.begin(), requests.end(), [](const auto& request) {
      return std::any_of(request.choices.begin(), request.choices.end(),
                         [](const search::Choice& choice) { return !choice.maybe.empty(); });
    });
    const search::SearchResult sure =
        any_maybe ? search::search(devices, requests, constraints_, search::Scenario::kPessimistic,
                                   options_.max_steps_per_node)
                  : optimistic;
    if (sure.outcome != search::Outcome::kFound) {
      result.reason = sure.outcome == search::Outcome::kBoundHit
                          ? "search bound reached"
                          : "satisfiable only if devices topoguard cannot judge exactly match";
      return result;
    }
    result.verdict = Verdict::kSatisfiable;
    for (std::size_t r = 0; r < requests.size(); ++r) {
      std::vector<std::string> ids;
      for (std::size_t d : sure.devices[r]) {
        ids.push_back(devices[d].id());
      }
      result.assignment.emplace_back(requests[r].choices[sure.choices[r]].label, std::move(ids));
    }
    return result;
  }

  // For each constrained choice whose DeviceClass is known: per driver of the devices it may
  // get, the nodes where none publishes the attribute and the values in another format.
  void record_publications() {
    for (const search::Constraint& constraint : constraints_) {
      for (std::size_t r = 0; r < choices_.size(); ++r) {
        for (std::size_t c = 0; c < choices_[r].size(); ++c) {
          const ChoiceMatch& match = choices_[r][c];
          if (!constraint.covers_choice(r, c) ||
              state_.device_class(match.choice->device_class_name) == nullptr) {
            continue;
          }
          std::map<std::string, AttributePublication> by_driver;
          for (const Node& node : state_.nodes()) {
            std::map<std::string, bool> published;  // driver -> some device publishes
            for (std::size_t d : node.devices) {
              if (match.matches[d] == Match::kNo) {
                continue;
              }
              const Device& device = state_.devices()[d];
              const AttributeValue* value = device.attribute(constraint.attribute);
              published[device.driver] = published[device.driver] || value != nullptr;
              if (value != nullptr && !is_standard_value(constraint.attribute, *value)) {
                auto& values = by_driver[device.driver].nonstandard_values;
                if (std::find(values.begin(), values.end(), value->to_string()) == values.end()) {
                  values.push_back(value->to_string());
                }
              }
            }
            for (const auto& [driver, any] : published) {
              AttributePublication& publication = by_driver[driver];
              publication.nodes.push_back(node.name);
              if (!any) {
                publication.nodes_without.push_back(node.name);
              }
            }
          }
          for (auto& [driver, publication] : by_driver) {
            publication.request = match.label;
            publication.attribute = constraint.attribute;
            publication.driver = driver;
            out_.publications.push_back(std::move(publication));
          }
        }
      }
    }
  }

  // Qualified attributes of every constraint that covers choice `c` of request `r`.
  std::vector<const std::string*> constrained(std::size_t r, std::size_t c) const {
    std::vector<const std::string*> out;
    for (const search::Constraint& constraint : constraints_) {
      if (constraint.covers_choice(r, c)) {
        out.push_back(&constraint.attribute);
      }
    }
    return out;
  }

  bool publishes_all(std::size_t device, const std::vector<const std::string*>& attributes) const {
    return std::all_of(attributes.begin(), attributes.end(), [&](const std::string* attribute) {
      return state_.devices()[device].attribute(*attribute) != nullptr;
    });
  }

  void describe_requests(const std::vector<search::Request>& requests,
                         NodeFeasibility& result) const {
    for (std::size_t r = 0; r < requests.size(); ++r) {
      if (requests[r].choices.empty()) {
        continue;
      }
      const search::Choice& choice = requests[r].choices[0];
      RequestOnNode summary;
      summary.request = choice.label;
      summary.needed = choice.all ? 1 : choice.count;
      summary.matching = choice.definite.size();
      summary.maybe = choice.maybe.size();
      const auto attributes = constrained(r, 0);
      for (const auto* list : {&choice.definite, &choice.maybe}) {
        summary.with_attribute += static_cast<std::size_t>(std::count_if(
            list->begin(), list->end(), [&](std::size_t d) { return publishes_all(d, attributes); }));
      }
      result.requests.push_back(std::move(summary));
    }
  }

  // Why the node cannot hold the claim, judged on each request's first choice.
  void diagnose(const std::vector<search::Request>& requests, NodeFeasibility& result) const {
    std::size_t needed_total = 0;
    for (const RequestOnNode& request : result.requests) {
      needed_total += request.needed;
    }
    const auto coverage = [&](auto&& available) {
      std::size_t covered = 0;
      for (const RequestOnNode& request : result.requests) {
        covered += std::min(request.needed, available(request));
      }
      return needed_total == 0 ? 1.0 : static_cast<double>(covered) / static_cast<double>(needed_total);
    };
    for (const RequestOnNode& request : result.requests) {
      if (request.matching + request.maybe < request.needed) {
        result.shortfall = Shortfall::kNotEnoughDevices;
        result.reason = "request " + in_quotes(request.request) + " needs " +
                        plural(request.needed, "device") + ", " +
                        std::to_string(request.matching + request.maybe) + " match";
        result.closeness =
            coverage([](const RequestOnNode& r) { return r.matching + r.maybe; });
        return;
      }
    }
    for (std::size_t r = 0; r < result.requests.size(); ++r) {
      const RequestOnNode& request = result.requests[r];
      if (request.with_attribute < request.needed) {
        const auto attributes = constrained(r, 0);
        result.shortfall = Shortfall::kAttributeMissing;
        const std::size_t matching = request.matching + request.maybe;
        result.reason = "request " + in_quotes(request.request) + " needs " +
                        plural(request.needed, "device") + " with " +
                        (attributes.empty() ? std::string("the attribute") : *attributes.front()) +
                        "; of its " + plural(matching, "matching device") + ", " +
                        (request.with_attribute == 0 ? std::string("none")
                                                     : std::to_string(request.with_attribute)) +
                        (request.with_attribute > 1 ? " publish it" : " publishes it");
        result.closeness = coverage([](const RequestOnNode& q) { return q.with_attribute; });
        return;
      }
    }
    for (std::size_t r = 0; r < requests.size(); ++r) {
      const search::Choice& choice = requests[r].choices.at(0);
      if (choice.all && result.requests[r].with_attribute < choice.definite.size() + choice.maybe.size()) {
        result.shortfall = Shortfall::kAllModeRejected;
        result.reason = "request " + in_quotes(choice.label) +
                        " (allocationMode All) takes every matching device, and some lack the "
                        "constrained attribute";
        result.closeness = coverage([](const RequestOnNode& q) { return q.with_attribute; });
        return;
      }
    }
    result.shortfall = Shortfall::kNoSharedValue;
    describe_best_value(requests, result);
  }

  // For the first constraint: the value that serves most of the needed devices, and what each
  // request lacks there.
  void describe_best_value(const std::vector<search::Request>& requests,
                           NodeFeasibility& result) const {
    if (constraints_.empty()) {
      result.reason = "the requests compete for the same devices";
      return;
    }
    const search::Constraint& constraint = constraints_.front();
    std::vector<std::pair<AttributeValue::Type, AttributeValue::Scalar>> values;
    for (const auto& request : requests) {
      const search::Choice& choice = request.choices.at(0);
      for (const auto* list : {&choice.definite, &choice.maybe}) {
        for (std::size_t d : *list) {
          if (const AttributeValue* value = state_.devices()[d].attribute(constraint.attribute)) {
            for (const auto& element : value->values) {
              if (std::find(values.begin(), values.end(), std::pair(value->type, element)) ==
                  values.end()) {
                values.emplace_back(value->type, element);
              }
            }
          }
        }
      }
    }
    double best = -1;
    std::string best_text;
    for (const auto& [type, value] : values) {
      std::size_t needed = 0;
      std::size_t covered = 0;
      std::string text;
      for (std::size_t r = 0; r < requests.size(); ++r) {
        if (!constraint.covers_choice(r, 0)) {
          continue;
        }
        const search::Choice& choice = requests[r].choices[0];
        std::size_t available = 0;
        for (const auto* list : {&choice.definite, &choice.maybe}) {
          available += static_cast<std::size_t>(std::count_if(list->begin(), list->end(),
              // Named captures: clang (the fuzz build) cannot capture structured bindings.
              [&, &wanted_type = type, &wanted = value](std::size_t d) {
            return search::has_value(state_.devices()[d], constraint.attribute, wanted_type, wanted);
          }));
        }
        const std::size_t need = result.requests[r].needed;
        needed += need;
        covered += std::min(need, available);
        text += (text.empty() ? "" : ", ") + in_quotes(choice.label) + " " +
                std::to_string(available) + " of " + std::to_string(need);
      }
      const double score = needed == 0 ? 1.0 : static_cast<double>(covered) / static_cast<double>(needed);
      if (score > best) {
        best = score;
        best_text = scalar_to_string(value) + " has " + text;
      }
    }
    result.closeness = std::max(best, 0.0);
    result.reason = "no " + constraint.attribute + " value is shared by enough devices (best: " +
                    best_text + ")";
  }

  const k8s::ClaimSpec& spec_;
  const ClusterState& state_;
  const FeasibilityOptions& options_;
  DeviceActivations activations_;
  std::map<std::string, std::optional<SelectorSet>, std::less<>> class_selectors_;
  std::vector<std::vector<ChoiceMatch>> choices_;  // per request
  std::vector<search::Constraint> constraints_;
  std::set<std::string> notes_;
  ClaimFeasibility out_;
};

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

int shortfall_rank(Shortfall shortfall) {
  switch (shortfall) {
    case Shortfall::kNoSharedValue:
      return 0;
    case Shortfall::kAttributeMissing:
      return 1;
    case Shortfall::kAllModeRejected:
      return 2;
    case Shortfall::kNotEnoughDevices:
      return 3;
    case Shortfall::kNone:
      break;
  }
  return 4;
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSatisfiable:
      return "satisfiable";
    case Verdict::kUnsatisfiable:
      return "unsatisfiable";
    case Verdict::kUnknown:
      break;
  }
  return "unknown";
}

bool is_standard_value(std::string_view attribute, const AttributeValue& value) {
  if (attribute != "resource.kubernetes.io/pcieRoot") {
    return true;
  }
  return value.type == AttributeValue::Type::kString &&
         std::all_of(value.values.begin(), value.values.end(), [](const auto& element) {
           const std::string_view text = std::get<std::string>(element);
           return text.size() == 10 && text.substr(0, 3) == "pci" && text[7] == ':' &&
                  is_hex(text.substr(3, 4)) && is_hex(text.substr(8, 2));
         });
}

const NodeFeasibility* ClaimFeasibility::closest() const {
  const NodeFeasibility* best = nullptr;
  for (const NodeFeasibility& node : nodes) {
    if (node.verdict != Verdict::kUnsatisfiable) {
      continue;
    }
    if (best == nullptr || shortfall_rank(node.shortfall) < shortfall_rank(best->shortfall) ||
        (shortfall_rank(node.shortfall) == shortfall_rank(best->shortfall) &&
         node.closeness > best->closeness)) {
      best = &node;
    }
  }
  return best;
}

ClaimFeasibility check_feasibility(const k8s::ClaimSpec& spec, const ClusterState& state,
                                   const FeasibilityOptions& options) {
  return ClaimChecker(spec, state, options).run();
}

}  // namespace topoguard::cluster
