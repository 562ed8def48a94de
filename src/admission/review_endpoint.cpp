#include "topoguard/admission/review_endpoint.h"

#include <cctype>
#include <cstddef>
#include <memory>
#include <utility>

#include "topoguard/k8s/kinds.h"

namespace topoguard::admission {

namespace {

// Past this many kept answers a thread's Evaluator starts over: a stream of reviews naming ever
// new classes or selectors costs one computation each, as without it, and no more memory. (Its
// feasibility answers are bounded on their own: cluster::FeasibilityCache::kDefaultMaxBytes.)
constexpr std::size_t kMaxRemembered = 4096;

// This thread's Evaluator for `policies` and `inventory` (which the caller keeps alive while it
// uses the evaluator). Reviews repeat the same DeviceClasses and selectors, so what one review
// worked out serves the thread's next ones; a new policy set or a new cluster snapshot gets a new
// one. The inventory is remembered weakly: an idle thread does not keep an old snapshot alive.
engine::Evaluator& thread_evaluator(const policy::PolicySetPtr& policies,
                                    const std::shared_ptr<const engine::Inventory>& inventory) {
  thread_local policy::PolicySetPtr evaluated_policies;
  thread_local std::weak_ptr<const engine::Inventory> evaluated_inventory;
  thread_local bool evaluated_alone = true;
  thread_local std::unique_ptr<engine::Evaluator> evaluator;
  const bool same_inventory = inventory == nullptr
                                  ? evaluated_alone
                                  : !evaluated_alone && evaluated_inventory.lock() == inventory;
  if (evaluator == nullptr || evaluated_policies != policies || !same_inventory ||
      evaluator->remembered() > kMaxRemembered) {
    evaluator.reset();
    evaluated_policies = policies;
    evaluated_inventory = inventory;
    evaluated_alone = inventory == nullptr;
    evaluator = std::make_unique<engine::Evaluator>(
        *policies, inventory != nullptr ? *inventory : admission_inventory());
  }
  return *evaluator;
}

}  // namespace

void ReviewDeadline::read(const RequestSummary& request) {
  std::lock_guard lock(mutex_);
  read_ = true;
  request_ = request;
}

ReviewReply ReviewDeadline::settle(ReviewReply decided) {
  std::lock_guard lock(mutex_);
  if (state_ == State::kOpen) {
    if (std::chrono::steady_clock::now() <= at_) {
      state_ = State::kDecided;
      return decided;
    }
    fall_back_locked();
  }
  return fallback_;
}

std::optional<ReviewReply> ReviewDeadline::fall_back() {
  std::lock_guard lock(mutex_);
  if (state_ == State::kDecided) {
    return std::nullopt;
  }
  if (state_ == State::kOpen) {
    fall_back_locked();
  }
  return fallback_;
}

bool ReviewDeadline::fell_back() const {
  std::lock_guard lock(mutex_);
  return state_ == State::kFellBack;
}

void ReviewDeadline::fall_back_locked() {
  state_ = State::kFellBack;
  fallback_.request = request_;
  if (!read_) {
    // No uid to answer for: an AdmissionReview cannot be written.
    Error error;
    error.code = ErrorCode::kInternal;
    error.message = "the review was not read before the request's timeout";
    fallback_.http_status = 503;
    fallback_.http_error = error.message;
    fallback_.body = error_body_json(503, error);
    return;
  }
  HandledReview handled = failure_response(request_.uid, failure_mode_,
                                           "the decision took longer than the request's timeout");
  fallback_.body = to_admission_review_json(handled.response);
  fallback_.outcome = std::move(handled.outcome);
}

ReviewEndpoint make_review_endpoint(PolicySource policies, HandlerOptions options,
                                    InventorySource inventory,
                                    std::shared_ptr<FeasibilityLane> lane) {
  return [policies = std::move(policies), options, inventory = std::move(inventory),
          lane = std::move(lane)](const ReviewCall& call) {
    ReviewDeadline* deadline = call.deadline.get();
    const auto settled = [deadline](ReviewReply reply) {
      return deadline != nullptr ? deadline->settle(std::move(reply)) : reply;
    };
    if (deadline != nullptr && deadline->fell_back()) {
      return deadline->settle({});  // answered already: nothing left worth deciding
    }
    ReviewReply reply;
    Result<AdmissionRequest> request = parse_admission_review(call.body);
    if (!request) {
      reply.http_status = 400;
      reply.http_error = request.error().to_string();
      reply.body = error_body_json(400, request.error());
      return settled(std::move(reply));
    }
    reply.request = {request->uid,  request->kind.kind,      request->namespace_name,
                     request->name, request->operation, request->dry_run};
    if (deadline != nullptr) {
      deadline->read(reply.request);
      if (std::chrono::steady_clock::now() > deadline->at()) {
        release_tree(request->object);
        release_tree(request->old_object);
        return settled(std::move(reply));  // too late to decide: the failure-mode answer
      }
    }

    HandledReview handled;
    const policy::PolicySetPtr snapshot = policies ? policies() : nullptr;
    if (snapshot == nullptr) {
      handled = failure_response(request->uid, options.failure_mode, "no policy set is loaded");
    } else {
      HandlerOptions try_options = options;
      try_options.cel_budget = call.cel_budget;
      // Held until the decision is made: the evaluator reads it.
      const std::shared_ptr<const engine::Inventory> cluster = inventory ? inventory() : nullptr;
      // Only claims and templates are checked against the cluster's nodes.
      const bool in_lane = lane != nullptr && cluster != nullptr &&
                           k8s::is_claim_kind(request->kind.group, request->kind.kind);
      FeasibilityLane::Ticket ticket;
      if (in_lane) {
        ticket = lane->enter(requester_key(request->username, request->namespace_name),
                             FeasibilityLane::Clock::now());
        try_options.feasibility_steps = ticket.steps();
      }
      handled = handle_admission(std::move(*request), thread_evaluator(snapshot, cluster),
                                 try_options);
      ticket.spend(handled.outcome.feasibility_steps);
      handled.outcome.feasibility_no_share =
          in_lane && ticket.steps() == 0 && handled.outcome.feasibility_budget_exhausted;
      if (inventory && cluster == nullptr && handled.outcome.decision != Decision::kSkip) {
        // Said in the audit log, where the API server keeps it under the webhook's name.
        handled.response.audit_annotations["cluster"] =
            "unknown: the cluster cache is not synced or is stale; claims, templates and nodes "
            "were not consulted";
      }
    }
    if (handled.outcome.needs_full_budget) {
      // Nothing is settled: the review is decided again, from its body, with the full budget.
      release_tree(request->object);
      release_tree(request->old_object);
      reply.outcome = std::move(handled.outcome);
      return reply;
    }
    // The trees nest no deeper than parse_admission_review allows.
    release_tree(request->object);
    release_tree(request->old_object);
    reply.body = to_admission_review_json(handled.response);
    reply.outcome = std::move(handled.outcome);
    return settled(std::move(reply));
  };
}

ReviewEndpoint with_body_limit(std::size_t limit, ReviewEndpoint next) {
  return [limit, next = std::move(next)](const ReviewCall& call) {
    if (call.body.size() <= limit) {
      return next(call);
    }
    ReviewReply reply;
    reply.http_status = 413;
    Error error;
    error.code = ErrorCode::kTooLarge;
    error.message = "body of " + std::to_string(call.body.size()) + " bytes exceeds the limit of " +
                    std::to_string(limit) + " bytes";
    reply.http_error = error.message;
    reply.body = error_body_json(413, error);
    return reply;
  };
}

std::optional<std::chrono::milliseconds> parse_timeout(std::string_view text) {
  // Go's time.Duration.String() subset the API server produces: [0-9]+(ms|s|m|h) repeated.
  if (text.empty() || text.size() > 32) {
    return std::nullopt;
  }
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    double value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    if (i < text.size() && text[i] == '.') {
      ++i;
      double scale = 0.1;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
        value += scale * (text[i] - '0');
        scale /= 10;
        ++i;
      }
    }
    if (i == start) {
      return std::nullopt;
    }
    std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])) != 0) {
      ++i;
    }
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    if (unit == "ms") {
      total_ms += value;
    } else if (unit == "s") {
      total_ms += value * 1000;
    } else if (unit == "m") {
      total_ms += value * 60'000;
    } else if (unit == "h") {
      total_ms += value * 3'600'000;
    } else {
      return std::nullopt;
    }
  }
  return std::chrono::milliseconds(static_cast<long long>(total_ms));
}

}  // namespace topoguard::admission
