#include "topoguard/server/metrics.h"

#include <gtest/gtest.h>

namespace topoguard::server {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

admission::ReviewReply reply_for(std::string kind, admission::Decision decision) {
  admission::ReviewReply reply;
  reply.request.kind = std::move(kind);
  reply.request.operation = "CREATE";
  reply.outcome.decision = decision;
  return reply;
}

// Requests are counted by endpoint, kind, operation and decision; findings by rule and action.
TEST(MetricsTest, CountsRequestsAndFindings) {
  Metrics metrics("1.2.3");
  admission::ReviewReply denied = reply_for("ResourceClaimTemplate", admission::Decision::kDeny);
  denied.outcome.findings.push_back(
      {policy::RuleId::kMissingPcieAlignment, policy::Action::kDeny, "/spec"});
  metrics.record_review("validate", denied, 0.0002);
  metrics.record_review("validate", denied, 0.003);
  admission::ReviewReply bad;
  bad.http_status = 400;
  metrics.record_review("mutate", bad, 0.00001);
  const std::string text = metrics.render();
  EXPECT_TRUE(has_line(text, "topoguard_build_info{version=\"1.2.3\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "topoguard_admission_requests_total{endpoint=\"validate\","
                             "kind=\"ResourceClaimTemplate\",operation=\"CREATE\","
                             "decision=\"deny\"} 2"))
      << text;
  EXPECT_TRUE(has_line(text, "topoguard_admission_requests_total{endpoint=\"mutate\",kind=\"\","
                             "operation=\"\",decision=\"bad_request\"} 1"))
      << text;
  EXPECT_TRUE(has_line(
      text, "topoguard_findings_total{rule=\"missing-pcie-alignment\",action=\"deny\"} 2"));
}

// The histogram is cumulative, spans 100 µs to 10 s and ends in +Inf = count.
TEST(MetricsTest, LatencyHistogramIsCumulative) {
  Metrics metrics("v");
  const auto reply = reply_for("Pod", admission::Decision::kAllow);
  metrics.record_review("mutate", reply, 0.00005);
  metrics.record_review("mutate", reply, 0.002);
  metrics.record_review("mutate", reply, 20.0);
  const std::string text = metrics.render();
  const std::string prefix = "topoguard_admission_request_duration_seconds_bucket{endpoint=\"mutate\",";
  EXPECT_TRUE(has_line(text, prefix + "le=\"0.0001\"} 1")) << text;
  EXPECT_TRUE(has_line(text, prefix + "le=\"0.0025\"} 2")) << text;
  EXPECT_TRUE(has_line(text, prefix + "le=\"10\"} 2")) << text;
  EXPECT_TRUE(has_line(text, prefix + "le=\"+Inf\"} 3")) << text;
  EXPECT_TRUE(has_line(
      text, "topoguard_admission_request_duration_seconds_count{endpoint=\"mutate\"} 3"));
}

// Reloads are counted by result, and the certificate expiry is exported as a timestamp.
TEST(MetricsTest, ReloadsAndExpiry) {
  Metrics metrics("v");
  metrics.record_policy_reload(true);
  metrics.record_policy_reload(false);
  metrics.record_policy_reload(false);
  metrics.record_certificate_reload(true);
  metrics.set_certificate_not_after(1893456000);
  const std::string text = metrics.render();
  EXPECT_TRUE(has_line(text, "topoguard_policy_reloads_total{result=\"ok\"} 1"));
  EXPECT_TRUE(has_line(text, "topoguard_policy_reloads_total{result=\"failed\"} 2"));
  EXPECT_TRUE(has_line(text, "topoguard_certificate_reloads_total{result=\"ok\"} 1"));
  EXPECT_TRUE(has_line(text, "topoguard_certificate_expiry_timestamp_seconds 1893456000"));
}

// Kinds and operations come from requests: anything outside the fixed sets (the kinds the
// engine reads; CREATE, UPDATE, DELETE, CONNECT) is counted as "other".
TEST(MetricsTest, LabelsTakeValuesFromFixedSets) {
  Metrics metrics("v");
  for (std::size_t i = 0; i < 100; ++i) {
    admission::ReviewReply reply = reply_for("Kind" + std::to_string(i), admission::Decision::kSkip);
    reply.request.operation = "OP" + std::to_string(i);
    metrics.record_review("validate", reply, 0.001);
  }
  metrics.record_review("validate", reply_for("bad\"kind\n", admission::Decision::kSkip), 0.001);
  metrics.record_review("validate", reply_for("Deployment", admission::Decision::kSkip), 0.001);
  const std::string text = metrics.render();
  EXPECT_TRUE(has_line(text, "topoguard_admission_requests_total{endpoint=\"validate\","
                             "kind=\"other\",operation=\"other\",decision=\"skip\"} 100"))
      << text;
  EXPECT_TRUE(has_line(text, "topoguard_admission_requests_total{endpoint=\"validate\","
                             "kind=\"other\",operation=\"CREATE\",decision=\"skip\"} 1"))
      << text;
  EXPECT_TRUE(has_line(text, "topoguard_admission_requests_total{endpoint=\"validate\","
                             "kind=\"Deployment\",operation=\"CREATE\",decision=\"skip\"} 1"))
      << text;
  EXPECT_EQ(text.find("bad"), std::string::npos);
  EXPECT_EQ(text.find("OP1"), std::string::npos);
}

// Label values are escaped per the text format.
TEST(MetricsTest, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

}  // namespace
}  // namespace topoguard::server
