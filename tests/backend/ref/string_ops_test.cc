// String ops against Python evaluated at test time: StringConcat (np.char.add), StringSplit
// (str.split, which the spec's reference uses through np.char.split), RegexFullMatch
// (re.fullmatch, which agrees with RE2 on these patterns), StringNormalizer (str.lower/upper
// on letters whose simple and full case mappings agree) and TfIdfVectorizer (a brute-force
// count written from the spec's description).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

// Runs Python code that defines `result` as a JSON-serialisable value; returns it.
nlohmann::json python_json(const std::string& body) {
  CommandResult r =
      run_python("import json, re\nimport numpy as np\n" + body + "\nprint(json.dumps(result))\n");
  if (r.exit_code != 0) fail("the Python reference script failed:\n{}\n{}", r.output, body);
  return nlohmann::json::parse(r.output);
}

Tensor strings(Shape shape, const std::vector<std::string>& values) {
  return Tensor::from_vector<std::string>(std::move(shape), values);
}

std::vector<std::string> strings_of(const Tensor& t) {
  return {t.data<std::string>(), t.data<std::string>() + t.numel()};
}

const std::vector<std::string> kWords = {"hello",
                                         "",
                                         "Ünïcødé",
                                         "a,b,,c",
                                         "  lead  trail ",
                                         "x--y--z--",
                                         "tab\tand\u3000ideographic space"};

TEST(StringConcatKernel, BroadcastsLikeNumPy) {
  nlohmann::json j = python_json(R"(
x = np.array([['ab'], ['Ωmega'], ['']]); y = np.array(['', '-1', 'ü'])
result = np.char.add(x, y).ravel().tolist())");
  TensorMap feed;
  feed.set("x", strings({3, 1}, {"ab", "Ωmega", ""}));
  feed.set("y", strings({3}, {"", "-1", "ü"}));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 20]>
    g (string[3,1] x, string[3] y) => (string z) { z = StringConcat(x, y) }
  )",
                                 feed);
  EXPECT_EQ(out.at("z").shape(), (Shape{3, 3}));
  EXPECT_EQ(strings_of(out.at("z")), j.get<std::vector<std::string>>());

  feed.set("x", strings({3}, {"a", "b", "c"}));
  feed.set("y", strings({2}, {"a", "b"}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 20]>
      g (string[3] x, string[2] y) => (string z) { z = StringConcat(x, y) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("StringConcat_0"), std::string::npos) << message;
  EXPECT_NE(message.find("broadcast"), std::string::npos) << message;
}

// Python's split of every word, padded with "" to the longest, and the counts.
nlohmann::json python_split(const std::string& args) {
  nlohmann::json words = kWords;
  return python_json("words = json.loads(r'''" + words.dump() + "''')\n" + "parts = [w.split(" +
                     args +
                     ") for w in words]\n"
                     "width = max(len(p) for p in parts)\n"
                     "result = [[q for p in parts for q in p + [''] * (width - len(p))], "
                     "[len(p) for p in parts], width]");
}

TEST(StringSplitKernel, MatchesPythonWithAndWithoutDelimiterAndMaxsplit) {
  struct Case {
    const char* attrs;
    const char* python_args;
  };
  for (const Case& c :
       {Case{"", ""}, Case{"<maxsplit = 1>", "None, 1"}, Case{"<delimiter = \",\">", "','"},
        Case{"<delimiter = \"--\", maxsplit = 2>", "'--', 2"},
        Case{"<delimiter = \" \">", "' '"}}) {
    nlohmann::json j = python_split(c.python_args);
    TensorMap feed;
    feed.set("x", strings({static_cast<int64_t>(kWords.size())}, kWords));
    TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 20]>
      g (string[{}] x) => (string y, int64 z) {{ y, z = StringSplit{}(x) }}
    )",
                                               kWords.size(), c.attrs),
                                   feed);
    const int64_t width = j[2].get<int64_t>();
    EXPECT_EQ(out.at("y").shape(), (Shape{static_cast<int64_t>(kWords.size()), width})) << c.attrs;
    EXPECT_EQ(strings_of(out.at("y")), j[0].get<std::vector<std::string>>()) << c.attrs;
    const Tensor& z = out.at("z");
    EXPECT_EQ(std::vector<int64_t>(z.data<int64_t>(), z.data<int64_t>() + z.numel()),
              j[1].get<std::vector<int64_t>>())
        << c.attrs;
  }
}

TEST(RegexFullMatchKernel, AgreesWithFullMatchOfPython) {
  const std::vector<std::string> inputs = {"www.google.com",
                                           "www.facebook.com",
                                           "www.bbc.co.uk",
                                           "abbbc",
                                           "ABC",
                                           "ac",
                                           "555-1234",
                                           "55-1234",
                                           "cd",
                                           ""};
  const std::vector<std::string> patterns = {
      R"(www\.[\w.-]+\.\bcom\b)", "(?i)ab+c", "[0-9]{3}-[0-9]{4}", "a|b|cd", "(a|b)*c?", ".*"};
  nlohmann::json in = inputs;
  for (const std::string& pattern : patterns) {
    nlohmann::json pj = pattern;
    nlohmann::json j =
        python_json("xs = json.loads(r'''" + in.dump() + "''')\n" + "p = json.loads(r'''" +
                    pj.dump() + "''')\n" + "result = [re.fullmatch(p, x) is not None for x in xs]");
    TensorMap feed;
    feed.set("x", strings({2, 5}, inputs));
    TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 20]>
      g (string[2,5] x) => (bool y) {{ y = RegexFullMatch<pattern = {}>(x) }}
    )",
                                               "\"" + pattern + "\""),
                                   feed);
    const Tensor& y = out.at("y");
    EXPECT_EQ(y.shape(), (Shape{2, 5}));
    EXPECT_EQ(std::vector<bool>(y.data<bool>(), y.data<bool>() + y.numel()),
              j.get<std::vector<bool>>())
        << pattern;
  }
  std::string message = error_of([] {
    ref::Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 20]>
      g (string[2] x) => (bool y) { y = RegexFullMatch<pattern = "(unclosed">(x) }
    )"));
  });
  EXPECT_NE(message.find("failed to prepare node 'RegexFullMatch_0' (RegexFullMatch): attribute "
                         "'pattern' is '(unclosed'"),
            std::string::npos)
      << message;
}

TEST(StringNormalizerKernel, DropsStopwordsIgnoringCaseAndChangesCaseOfUnicode) {
  const std::vector<std::string> words = {"École", "STOP", "Ñandú", "привет", "Stop", "mIxEd"};
  nlohmann::json jw = words;
  nlohmann::json j = python_json("ws = json.loads(r'''" + jw.dump() + "''')\n" +
                                 "stop = ['stop', 'ÑANDÚ']\n"
                                 "low = [s.lower() for s in stop]\n"
                                 "kept = [w for w in ws if w.lower() not in low]\n"
                                 "result = [[w.upper() for w in kept], [w.lower() for w in ws if w "
                                 "not in stop]]");
  TensorMap feed;
  feed.set("x", strings({1, 6}, words));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 10]>
    g (string[1,6] x) => (string u, string l) {
      u = StringNormalizer<case_change_action = "UPPER", stopwords = ["stop", "ÑANDÚ"]>(x)
      l = StringNormalizer<case_change_action = "LOWER", is_case_sensitive = 1,
                           stopwords = ["stop", "ÑANDÚ"], locale = "en_US">(x)
    }
  )",
                                 feed);
  EXPECT_EQ(strings_of(out.at("u")), j[0].get<std::vector<std::string>>());
  EXPECT_EQ(out.at("u").shape(), (Shape{1, static_cast<int64_t>(j[0].size())}));
  EXPECT_EQ(strings_of(out.at("l")), j[1].get<std::vector<std::string>>());
}

TEST(TfIdfVectorizerKernel, IdfAndTfIdfWeightsWithAStringPool) {
  // Pool: unigrams a, b, c and bigrams (a b), (b c), (c a); output indexes permuted.
  nlohmann::json j = python_json(R"(
rows = [['a', 'b', 'x', 'c', 'a', 'b'], ['c', 'c', 'b', 'a', 'a', 'a']]
grams = [('a',), ('b',), ('c',), ('a', 'b'), ('b', 'c'), ('c', 'a')]
index = [5, 0, 3, 1, 4, 2]; weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0]
def count(row, gram, max_skip):
    n = len(gram); total = 0
    skips = [0] if n == 1 else range(max_skip + 1)  # unigrams do not depend on the skip
    for s in skips:
        d = s + 1
        for start in range(len(row)):
            idx = [start + k * d for k in range(n)]
            if idx[-1] < len(row) and tuple(row[i] for i in idx) == gram: total += 1
    return total
out = {}
for mode in ('TF', 'IDF', 'TFIDF'):
    res = np.zeros((2, 6))
    for r, row in enumerate(rows):
        for g, gram in enumerate(grams):
            c = count(row, gram, 1)
            w = weights[g]
            res[r, index[g]] = c if mode == 'TF' else (w * (c > 0) if mode == 'IDF' else c * w)
    out[mode] = res.astype(np.float32).ravel().tolist()
result = out
)");
  TensorMap feed;
  feed.set("x", strings({2, 6}, {"a", "b", "x", "c", "a", "b", "c", "c", "b", "a", "a", "a"}));
  for (const char* mode : {"TF", "IDF", "TFIDF"}) {
    TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 9]>
      g (string[2,6] x) => (float y) {{
        y = TfIdfVectorizer<mode = "{}", min_gram_length = 1, max_gram_length = 2,
                            max_skip_count = 1, ngram_counts = [0, 3],
                            ngram_indexes = [5, 0, 3, 1, 4, 2],
                            pool_strings = ["a", "b", "c", "a", "b", "b", "c", "c", "a"],
                            weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0]>(x)
      }}
    )",
                                               mode),
                                   feed);
    const Tensor& y = out.at("y");
    EXPECT_EQ(y.shape(), (Shape{2, 6}));
    EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 12),
              j[mode].get<std::vector<float>>())
        << mode;
  }
}

// ImageDecoder needs image codecs the reference backend does not link: refused with the reason.
TEST(RefusedOps, ImageDecoderSaysItNeedsImageCodecs) {
  std::string message = error_of([] {
    ref::Executor e(model_from_text(R"(
      <ir_version: 9, opset_import: ["" : 20]>
      g (uint8[100] data) => (uint8 image) { image = ImageDecoder(data) }
    )"));
  });
  EXPECT_NE(message.find("failed to prepare node 'ImageDecoder_0' (ImageDecoder): ImageDecoder "
                         "needs image codecs"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
