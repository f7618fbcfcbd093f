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
  for (const char* ref : {"http://", "https://", "src=", "@import", "url("})
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  // Links only within the page.
  for (size_t at = html.find("href="); at != std::string::npos; at = html.find("href=", at + 1))
    EXPECT_EQ(html.substr(at, 7), "href=\"#") << html.substr(at, 40);

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
  EXPECT_NE(dom.find("<td><a href=\"#detail-6\">matrix&lt;/script&gt;&lt;b&gt;</a></td>"),
            std::string::npos);
  EXPECT_TRUE(std::regex_search(dom, std::regex("<canvas class=\"heat\" data-index=\"6\" "
                                                "width=\"[1-9][0-9]*\" height=\"[1-9][0-9]*\"")))
      << dom;
  // The largest local error is highlighted first.
  const size_t table = dom.find("id=\"local-errors\"");
  ASSERT_NE(table, std::string::npos);
  EXPECT_TRUE(std::regex_search(
      dom.substr(table),
      std::regex("<tr class=\"top\"><td>1</td><td><a href=\"#detail-[0-9]+\"><code>" +
                 pair.divergent_node().name)))
      << dom.substr(table, 600);
  // The heatmap's colour legend got the range of its values.
  EXPECT_TRUE(std::regex_search(dom, std::regex("<span class=\"lo\">[^<]+</span><span "
                                                "class=\"ramp\"></span><span class=\"hi\">0.5<")))
      << dom;
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

// Every fragment link of a rendered page ("#detail-3") names an element of the page.
void expect_links_resolve(const std::string& dom) {
  const std::regex href("href=\"#([^\"]+)\"");
  size_t links = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), href); it != std::sregex_iterator();
       ++it, ++links)
    EXPECT_NE(dom.find("id=\"" + (*it)[1].str() + "\""), std::string::npos) << (*it)[1].str();
  EXPECT_GT(links, 0u);
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A deep model (a chain of 150 nodes, node 'n90' computing Sub instead of Add): node names on
// the chart's axis (every other one past 80 nodes), every point linking to its tensor's detail
// or row, sections that collapse, the tolerance on the histograms, the y-axis fitted to the
// errors.
TEST(ReportHtml, DeepModelChartLinksAndCollapsibleSections) {
  constexpr int kNodes = 150;
  auto chain = [&](const std::string& op90) {
    std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
      g (float[16,16] x) => (float[16,16] t150) {
        one = Constant <value = float {0.001}> ()
        t1 = Add(x, one)
    )";
    for (int i = 2; i <= kNodes; ++i)
      text += fmt::format("t{} = {}(t{}, one)\n", i, i == 90 ? op90 : "Add", i - 1);
    return model_from_text(text + "}");
  };
  auto reference = chain("Add"), other = chain("Sub");
  for (auto* m : {&reference, &other})
    for (size_t i = 0; i < (*m)->graph.nodes.size(); ++i)
      (*m)->graph.nodes[i].name = i == 0 ? "one" : fmt::format("n{}", i);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {16, 16}));
  std::vector<std::string> marked;
  for (int i = 1; i <= kNodes; ++i) marked.push_back(fmt::format("t{}", i));
  LayerwiseOptions options;
  options.compare.with_profile = true;
  options.compare.atol = 1e-4;
  BatchFetcher fetch = [&](const std::vector<std::string>& names) {
    ref::Executor executor(other);
    TensorMap all = executor.run(feed, names);
    TensorMap batch;
    for (const auto& n : names) batch.set(n, all.at(n));
    return batch;
  };
  LayerwiseComparison comparison(reference->graph, marked, options, fetch);
  ref::Executor executor(reference);
  executor.set_observer([&](const ir::Node& node, const std::vector<Value>& outputs) {
    comparison.on_node(node, outputs);
  });
  LogCapture log;
  executor.run(feed);
  const LayerwiseResult result = comparison.finish();
  ASSERT_TRUE(result.first_divergence.has_value());
  EXPECT_EQ(result.nodes[*result.first_divergence].name, "n90");

  HtmlReportData data;
  data.runner0 = "pluginref";
  data.runner1 = "other";
  data.passed = result.passed();
  data.outputs = result.tensors;
  data.atol = 1e-4;
  data.layerwise = &result;
  const std::string html = render_html_report(data);
  TempDir dir;
  write_text(dir.file("deep.html"), html);
  const std::string dom = rendered_dom(dir.file("deep.html"));
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << dom.substr(0, 2000);
  expect_links_resolve(dom);
  // 150 points, each a link; names of every other node under the axis.
  EXPECT_EQ(count(dom, "class=\"node-link\""), 150u);
  EXPECT_EQ(count(dom, "class=\"nodename\""), 75u);
  EXPECT_NE(dom.find(">n1</text>"), std::string::npos);
  EXPECT_NE(dom.find(">n149</text>"), std::string::npos);
  // Collapsible: the three sections and each tensor's detail.
  EXPECT_GE(count(dom, "<details"), 3u + 40u) << dom.substr(0, 3000);
  // The tolerance on the histograms: atol 1e-4 on the absolute error, rtol 1e-5 on the relative.
  EXPECT_NE(dom.find("<title>tolerance 0.0001</title>"), std::string::npos);
  EXPECT_NE(dom.find("<title>tolerance 1e-05</title>"), std::string::npos);
  // The y-axis spans the data: the largest error/tolerance is 0.002/1e-4 = 20, so the axis
  // ends at 1e3 (one decade of room), not at a fixed 1e8.
  EXPECT_NE(dom.find(">1e3</text>"), std::string::npos);
  EXPECT_EQ(dom.find(">1e8</text>"), std::string::npos);
}

// The heatmap of a rank-4 tensor offers each channel: the other side differs in channel 1 only,
// so channel 1's cells hold the error and the other channels' are zero; the page gets a
// channel picker with "every channel" and the three channels.
TEST(ReportHtml, HeatmapOffersTheChoiceOfChannel) {
  auto model_with = [](const std::string& shift) {
    return model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,3,4,5] x) => (float[2,3,4,5] y)
      <float[1,3,1,1] s = {)" +
                           shift + R"(}>
      { y = Add(x, s) })");
  };
  auto reference = model_with("0.0, 0.0, 0.0"), other = model_with("0.0, 0.5, 0.0");
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2, 3, 4, 5}));
  BatchFetcher fetch = [&](const std::vector<std::string>& names) {
    ref::Executor executor(other);
    TensorMap all = executor.run(feed, names);
    TensorMap batch;
    for (const auto& n : names) batch.set(n, all.at(n));
    return batch;
  };
  LayerwiseOptions options;
  options.compare.with_profile = true;
  LayerwiseComparison comparison(reference->graph, {"y"}, options, fetch);
  ref::Executor executor(reference);
  executor.set_observer([&](const ir::Node& node, const std::vector<Value>& outputs) {
    comparison.on_node(node, outputs);
  });
  LogCapture log;
  executor.run(feed);
  const LayerwiseResult result = comparison.finish();
  ASSERT_EQ(result.tensors.size(), 1u);
  const ErrorProfile& p = result.tensors[0].profile;
  ASSERT_EQ(p.channel_heat.size(), 3u);
  for (size_t c = 0; c < 3; ++c) {
    ASSERT_EQ(p.channel_heat[c].size(), 20u);  // 4 x 5 cells
    for (float v : p.channel_heat[c]) EXPECT_EQ(v, c == 1 ? 0.5f : 0.0f) << c;
  }
  for (float v : p.heat) EXPECT_EQ(v, 0.5f);  // the maximum over channels

  HtmlReportData data;
  data.runner0 = "pluginref";
  data.runner1 = "other";
  data.passed = result.passed();
  data.outputs = result.tensors;
  data.layerwise = &result;
  TempDir dir;
  write_text(dir.file("channels.html"), render_html_report(data));
  const std::string dom = rendered_dom(dir.file("channels.html"));
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("<select class=\"channel\"><option value=\"\">every channel (max)</option>"
                     "<option value=\"0\">channel 0</option><option value=\"1\">channel 1"
                     "</option><option value=\"2\">channel 2</option></select>"),
            std::string::npos)
      << dom;
}

}  // namespace
}  // namespace parity::testing
