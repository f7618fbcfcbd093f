// The HTML report rendered by a real browser (Debian's headless Chromium): the inline script
// runs without error, builds the verdict table and draws the heatmaps; the first divergent node
// is named; nothing is fetched from the network.
#include <gtest/gtest.h>

#include <regex>

#include "layerwise/layerwise_fixture.h"
#include "report/html_report.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

// The DOM after the page's scripts ran.
std::string rendered_dom(const std::string& html_path) {
  TempDir profile;
  const std::string command =
      "timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic "
      "--no-first-run --disable-background-networking --disable-component-update --disable-sync "
      "--user-data-dir=" +
      profile.path().string() + " --dump-dom 'file://" + html_path + "' 2>/dev/null";
  CommandResult r = run_command(command);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// The text of the element whose opening tag contains `attribute`.
std::string element_text(const std::string& dom, const std::string& attribute) {
  const size_t at = dom.find(attribute);
  if (at == std::string::npos) return "<missing " + attribute + ">";
  const size_t start = dom.find('>', at) + 1;
  return dom.substr(start, dom.find('<', start) - start);
}

TEST(ReportHtml, RendersVerdictsAndFirstDivergenceInABrowser) {
  DivergentPair pair;
  LayerwiseOptions options;
  options.local_error = true;
  options.compare.with_profile = true;
  LogCapture log;
  // A 2-D output for the heatmap, beside the layer-wise tensors.
  LayerwiseResult result = pair.run(options);
  HtmlReportData data;
  data.command = "parity run model.onnx --onnx-outputs mark all <&> \"quoted\"";
  data.runner0 = "pluginref";
  data.runner1 = "other";
  data.passed = result.passed();
  data.outputs = result.tensors;
  Tensor m0(DataType::kFloat32, {40, 70}), m1(DataType::kFloat32, {40, 70});
  m1.data<float>()[5] = 0.5f;
  TensorCompareOptions o;
  o.with_profile = true;
  data.outputs.push_back(compare_tensors("matrix</script><b>", m0, m1, o));
  data.layerwise = &result;
  const std::string html = render_html_report(data);

  // Self-contained: no external resource of any kind.
  for (const char* ref : {"http://", "https://", "src=", "href=", "@import", "url("})
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;

  TempDir dir;
  const std::string path = dir.file("report.html");
  write_text(path, html);
  const std::string dom = rendered_dom(path);
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(element_text(dom, "id=\"first-divergence-node\""), pair.divergent_node().name);
  EXPECT_EQ(element_text(dom, "id=\"overall\""), "FAILED");
  for (const auto& [name, verdict] :
       std::vector<std::pair<std::string, std::string>>{{"a", "PASSED"},
                                                        {"b", "PASSED"},
                                                        {"d", "PASSED"},
                                                        {"e", "FAILED"},
                                                        {"f", "FAILED"},
                                                        {"y", "FAILED"}})
    EXPECT_EQ(element_text(dom, "data-output=\"" + name + "\""), verdict) << name;
  // The escaped name survives as text, and its heatmap canvas was sized by the script.
  EXPECT_EQ(element_text(dom, "data-output=\"matrix"), "FAILED");
  EXPECT_NE(dom.find("<td>matrix&lt;/script&gt;&lt;b&gt;</td>"), std::string::npos);
  EXPECT_TRUE(std::regex_search(dom, std::regex("<canvas class=\"heat\" data-index=\"6\" "
                                                "width=\"[1-9][0-9]*\" height=\"[1-9][0-9]*\"")))
      << dom;
  // The largest local error is highlighted first.
  const size_t table = dom.find("id=\"local-errors\"");
  ASSERT_NE(table, std::string::npos);
  EXPECT_NE(dom.find("<tr class=\"top\"><td>1</td><td><code>" + pair.divergent_node().name, table),
            std::string::npos);
}

TEST(ReportHtml, PlainRunWithoutLayerwiseSection) {
  HtmlReportData data;
  data.runner0 = "a";
  data.runner1 = "b";
  TensorCompareOptions o;
  o.with_profile = true;
  data.outputs.push_back(compare_tensors("out", Tensor::from_vector<float>({2}, {1, 2}),
                                         Tensor::from_vector<float>({2}, {1, 2}), o));
  const std::string html = render_html_report(data);
  EXPECT_EQ(html.find("id=\"layerwise\""), std::string::npos);
  TempDir dir;
  write_text(dir.file("r.html"), html);
  const std::string dom = rendered_dom(dir.file("r.html"));
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos);
  EXPECT_EQ(element_text(dom, "data-output=\"out\""), "PASSED");
  EXPECT_EQ(element_text(dom, "id=\"overall\""), "PASSED");
}

}  // namespace
}  // namespace parity::testing
