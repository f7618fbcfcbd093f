// The dataset report (report/dataset_report.h): made from the summary alone, with what the
// summary says and the user's text escaped.
#include "report/dataset_report.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

DatasetSummary summary_with_failures() {
  DatasetSummary s({"a", "b"}, default_pairs({"a", "b"}));
  for (size_t i = 0; i < 10; ++i) {
    DatasetIteration it;
    it.index = i;
    if (i == 4) {
      it.errors.push_back("b: <bad> feed");
    } else {
      OutputCompareResult r;
      r.passed = i != 7;
      r.max_absdiff = i == 7 ? 0.5 : 1e-6 * static_cast<double>(i);
      it.pairs.push_back({{"y", r}});
    }
    s.add(std::move(it));
  }
  return s;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DatasetReport, ShowsTheDatasetView) {
  const std::string html = render_dataset_report(summary_with_failures(), 3, "parity run <m>");
  EXPECT_TRUE(
      has(html, "FAILED</b>: runners [&#39;a&#39;, &#39;b&#39;], 10 feeds, 9 ran, 8 passed"))
      << html;
  EXPECT_TRUE(has(html, "<td>4</td><td class=l>b: &lt;bad&gt; feed</td>")) << html;
  EXPECT_TRUE(has(html, "Failing iterations: 7")) << html;
  EXPECT_TRUE(has(html, "Output y: 8/9 iterations passed")) << html;
  EXPECT_TRUE(has(html, "<tr><td>7</td><td>0.5</td></tr>")) << html;  // the worst input first
  EXPECT_TRUE(has(html, "parity run &lt;m&gt;")) << html;
  EXPECT_FALSE(has(html, "<bad>")) << html;
}

TEST(DatasetReport, SameSummarySameReport) {
  // Records added in another order make the same page.
  DatasetSummary a = summary_with_failures();
  DatasetSummary b({"a", "b"}, default_pairs({"a", "b"}));
  std::vector<DatasetIteration> its = a.iterations();
  for (auto it = its.rbegin(); it != its.rend(); ++it) b.add(*it);
  EXPECT_EQ(render_dataset_report(a, 5, "c"), render_dataset_report(b, 5, "c"));
}

}  // namespace
}  // namespace parity
