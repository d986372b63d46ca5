// The HTML report writer (debug/html_report.h): escaping, self-containment
// and the parts a page holds. The rendered pages are checked in headless
// Chromium by tests/cli/test_report.py.
#include <gtest/gtest.h>

#include <filesystem>

#include "debug/html_report.h"
#include "runtime/core/error.h"
#include "tests/unit/text_util.h"

namespace vkg::debug {
namespace {

Report sample() {
  Report r;
  r.title = "vkgraphy convert <m>.onnx";
  r.command_line = "vkgraphy convert 'a b.onnx'";
  r.device = "llvmpipe";
  ReportEngine e;
  e.source = "built";
  e.time_kind = "median";
  ReportLayer l1{"conv<1>&\"x\"", "Conv", "conv.direct.f32", "fp32", {"conv<1>&\"x\"", "relu'1'"}, 1500.0, {}};
  l1.candidates.push_back({"conv.direct.f32", "fp32", 1500.0, 1e-6, false, true, ""});
  l1.candidates.push_back({"conv.winograd.f32", "fp32", std::nullopt, 0.5, true, false, "rejected: error 0.5"});
  ReportLayer l2{"sig", "Sigmoid", "eltwise.scalar.f32", "fp32", {"sig"}, std::nullopt, {}};
  e.layers = {l1, l2};
  r.engine = e;
  ReportComparison c;
  c.title = "vk vs. ref";
  c.metric = "max absolute error";
  c.passed = false;
  c.rows.push_back({"a", "", 1e-7, 1e-6, std::nullopt, std::nullopt, 1e-5, 1e-5, true, ""});
  c.rows.push_back({"b", "layer x", 0.25, 0.5, 0.2, 0.05, 1e-5, 1e-5, false, ""});
  c.rows.push_back({"c", "", 0, 0, std::nullopt, std::nullopt, 1e-5, 1e-5, true, ""});
  r.comparisons.push_back(c);
  r.iterations_title = "debug build iterations";
  r.iterations.push_back({0, "build 0", false, false, {}, {"arts/bad/x_iter0.engine"}});
  r.iterations.push_back({1, "build 1", true, true, {"conv: a (fp32) -> b (fp16)"}, {}});
  return r;
}

TEST(HtmlReport, EscapesText) { EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;"); }

TEST(HtmlReport, HoldsEveryPartAndNothingExternal) {
  const std::string page = render_html_report(sample());
  for (const char* bad : {"http:", "https:", "src=", "@import", "<link", "<script", "url("})
    EXPECT_EQ(page.find(bad), std::string::npos) << bad;
  EXPECT_EQ(page.find("conv<1>"), std::string::npos);
  EXPECT_NE(page.find("conv&lt;1&gt;&amp;&quot;x&quot;"), std::string::npos);
  EXPECT_EQ(test::count_occurrences(page, "<tr class=\"layer\">"), 2u);
  EXPECT_EQ(test::count_occurrences(page, "<svg class=\"time-chart\""), 1u);
  EXPECT_EQ(test::count_occurrences(page, "<svg class=\"error-chart\""), 1u);
  EXPECT_EQ(test::count_occurrences(page, "<rect class=\"bar"), 2u + 3u);          // one per layer, one per error row
  EXPECT_EQ(test::count_occurrences(page, "<rect class=\"intro\""), 1u);           // the row that knows its introduced error
  EXPECT_EQ(test::count_occurrences(page, "<details class=\"candidates\">"), 1u);  // only the layer with candidates
  EXPECT_EQ(test::count_occurrences(page, "<tr class=\"iteration pass\">"), 1u);
  EXPECT_EQ(test::count_occurrences(page, "<tr class=\"iteration fail\">"), 1u);
  EXPECT_NE(page.find("<th>introduced</th>"), std::string::npos);
  EXPECT_NE(page.find("from debug replay"), std::string::npos);
}

TEST(HtmlReport, LeavesOutPartsWithoutData) {
  Report r;
  r.title = "empty";
  const std::string page = render_html_report(r);
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  EXPECT_EQ(page.find("id=\"iterations\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"layers\""), std::string::npos);
}

TEST(HtmlReport, UnwritablePathIsAnError) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "vkg_html_report_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_THROW(write_html_report(dir.string(), sample()), Error);  // a folder
  const std::string path = (dir / "r.html").string();
  write_html_report(path, sample());
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkg::debug
