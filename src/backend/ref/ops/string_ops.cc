// String ops: StringNormalizer, TfIdfVectorizer, StringConcat, StringSplit, RegexFullMatch.
#include <locale.h>

#include <clocale>
#include <cwctype>
#include <map>
#include <regex>
#include <unordered_map>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

// ---------------------------------------------------------------------------------------------
// UTF-8 and case mapping

// Decodes UTF-8 into code points; false on a malformed sequence.
bool decode_utf8(std::string_view s, std::u32string& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int extra = b < 0x80           ? 0
                : (b >> 5) == 0x6  ? 1
                : (b >> 4) == 0xE  ? 2
                : (b >> 3) == 0x1E ? 3
                                   : -1;
    if (extra < 0 || s.size() - i <= static_cast<size_t>(extra)) return false;
    char32_t cp = extra == 0 ? b : b & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    out.push_back(cp);
    i += 1 + extra;
  }
  return true;
}

void encode_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

enum class CaseChange { kNone, kLower, kUpper };

// Unicode simple case mapping through the C.UTF-8 locale (thread-safe *_l calls; the global
// locale is never touched). Without that locale only ASCII letters change case.
class CaseMapper {
 public:
  CaseMapper() : locale_(newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr))) {}
  ~CaseMapper() {
    if (locale_) freelocale(locale_);
  }
  CaseMapper(const CaseMapper&) = delete;
  CaseMapper& operator=(const CaseMapper&) = delete;

  char32_t map(char32_t c, CaseChange change) const {
    if (change == CaseChange::kNone) return c;
    if (locale_) {
      const auto w = static_cast<wint_t>(c);
      return static_cast<char32_t>(change == CaseChange::kLower ? towlower_l(w, locale_)
                                                                : towupper_l(w, locale_));
    }
    if (change == CaseChange::kLower && c >= 'A' && c <= 'Z') return c + 32;
    if (change == CaseChange::kUpper && c >= 'a' && c <= 'z') return c - 32;
    return c;
  }

  // false when `s` is not valid UTF-8.
  bool apply(std::string_view s, CaseChange change, std::string& out) const {
    std::u32string cps;
    if (!decode_utf8(s, cps)) return false;
    out.clear();
    for (char32_t c : cps) encode_utf8(map(c, change), out);
    return true;
  }

 private:
  locale_t locale_;
};

// StringNormalizer: drops stopwords (exactly, or ignoring case), then changes case. The input
// is [C] or [1, C]; when every string is dropped the output is one empty string ([1] or
// [1, 1]). Case mapping is Unicode's simple (locale-independent) mapping for every `locale`:
// it equals en_US; locale-specific rules such as Turkish dotted/dotless i are not applied.
class StringNormalizer : public Kernel {
 public:
  explicit StringNormalizer(const OpContext& ctx)
      : case_sensitive_(ctx.attr_int("is_case_sensitive", 0) != 0) {
    const std::string action = ctx.attr_string("case_change_action", "NONE");
    if (action == "LOWER")
      change_ = CaseChange::kLower;
    else if (action == "UPPER")
      change_ = CaseChange::kUpper;
    else if (action != "NONE")
      ctx.fail("attribute 'case_change_action' is '{}'; valid choices: LOWER, UPPER, NONE", action);
    for (const std::string& word : ctx.attr_strings("stopwords", {})) {
      std::string key = word;
      if (!case_sensitive_ && !mapper_.apply(word, CaseChange::kLower, key))
        ctx.fail("stopword '{}' is not valid UTF-8", word);
      stopwords_.push_back(std::move(key));
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    if (x.dtype() != DataType::kString)
      ctx.fail("input X has element type {}; it must be string", dtype_name(x.dtype()));
    if (!(x.rank() == 1 || (x.rank() == 2 && x.shape()[0] == 1)))
      ctx.fail("input X has shape {}; it must be [C] or [1, C]", shape_str(x.shape()));
    const std::string* src = x.data<std::string>();
    std::vector<std::string> kept;
    std::string key;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (!case_sensitive_ && !mapper_.apply(src[i], CaseChange::kLower, key))
        ctx.fail("input X holds a string that is not valid UTF-8 at index {}", i);
      const std::string& probe = case_sensitive_ ? src[i] : key;
      if (std::find(stopwords_.begin(), stopwords_.end(), probe) != stopwords_.end()) continue;
      std::string out;
      if (!mapper_.apply(src[i], change_, out))
        ctx.fail("input X holds a string that is not valid UTF-8 at index {}", i);
      kept.push_back(std::move(out));
    }
    if (kept.empty()) kept.emplace_back();
    const int64_t n = static_cast<int64_t>(kept.size());
    Tensor y(DataType::kString, x.rank() == 1 ? Shape{n} : Shape{1, n});
    std::move(kept.begin(), kept.end(), y.data<std::string>());
    return {std::move(y)};
  }

 private:
  CaseMapper mapper_;
  bool case_sensitive_;
  CaseChange change_ = CaseChange::kNone;
  std::vector<std::string> stopwords_;  // lower-cased unless case-sensitive
};
PARITY_REF_OP("", "StringNormalizer", 10, kOpsetMax, StringNormalizer);

// ---------------------------------------------------------------------------------------------
// TfIdfVectorizer

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// Counts the pool's n-grams in each row. Items are compared as int64 ids (a string input maps
// its strings to the ids of the pool's strings, -1 for others). For every skip distance
// d = 1..max_skip_count+1 and every start, the n-grams of sizes [min, max] made of items d
// apart are counted; unigrams are counted at d = 1 only (they do not depend on d).
class TfIdfVectorizer : public Kernel {
 public:
  explicit TfIdfVectorizer(const OpContext& ctx)
      : min_gram_(ctx.attr_int("min_gram_length")),
        max_gram_(ctx.attr_int("max_gram_length")),
        max_skip_(ctx.attr_int("max_skip_count")) {
    if (min_gram_ < 1 || max_gram_ < min_gram_)
      ctx.fail(
          "attributes min_gram_length {} and max_gram_length {} are invalid; they need "
          "1 <= min_gram_length <= max_gram_length",
          min_gram_, max_gram_);
    if (max_skip_ < 0) ctx.fail("attribute 'max_skip_count' is {}; it must be >= 0", max_skip_);
    const std::string mode = ctx.attr_string("mode");
    if (mode == "TF")
      mode_ = TfIdfMode::kTf;
    else if (mode == "IDF")
      mode_ = TfIdfMode::kIdf;
    else if (mode == "TFIDF")
      mode_ = TfIdfMode::kTfIdf;
    else
      ctx.fail("attribute 'mode' is '{}'; valid choices: TF, IDF, TFIDF", mode);

    std::vector<int64_t> pool;
    if (ctx.has_attr("pool_strings")) {
      string_pool_ = true;
      for (const std::string& s : ctx.attr_strings("pool_strings"))
        pool.push_back(
            string_ids_.emplace(s, static_cast<int64_t>(string_ids_.size())).first->second);
    } else {
      pool = ctx.attr_ints("pool_int64s", {});
    }
    const std::vector<int64_t> counts = ctx.attr_ints("ngram_counts");
    const std::vector<int64_t> indexes = ctx.attr_ints("ngram_indexes");
    // ngram_counts[k] is where the (k+1)-grams start in the pool.
    for (size_t k = 0; k < counts.size(); ++k) {
      const int64_t begin = counts[k];
      const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(pool.size());
      const int64_t n = static_cast<int64_t>(k) + 1;
      if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n)
        ctx.fail(
            "attribute 'ngram_counts' is invalid at entry {} ({}): the {}-grams must fill "
            "a whole number of pool entries within the pool of {}",
            k, begin, n, pool.size());
      for (int64_t p = begin; p < end; p += n) {
        const int64_t id = static_cast<int64_t>(ngram_ids_.size());
        ngram_ids_.emplace(std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n), id);
        ngram_sizes_.push_back(n);
      }
    }
    if (indexes.size() != ngram_sizes_.size())
      ctx.fail("attribute 'ngram_indexes' has {} entries; the pool holds {} n-grams",
               indexes.size(), ngram_sizes_.size());
    output_index_ = indexes;
    for (int64_t i : indexes) {
      if (i < 0) ctx.fail("attribute 'ngram_indexes' holds {}; indexes must be >= 0", i);
      width_ = std::max(width_, i + 1);
    }
    weights_ = ctx.attr_floats("weights", {});
    if (!weights_.empty() && weights_.size() != indexes.size())
      ctx.fail("attribute 'weights' has {} entries; it needs one per n-gram ({})", weights_.size(),
               indexes.size());
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    if (x.rank() != 1 && x.rank() != 2)
      ctx.fail("input X has shape {}; it must be [C] or [N, C]", shape_str(x.shape()));
    const bool is_string = x.dtype() == DataType::kString;
    if (is_string != string_pool_)
      ctx.fail("input X has element type {}; it must be {} to match the pool",
               dtype_name(x.dtype()), string_pool_ ? "string" : "int32 or int64");
    const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
    const int64_t cols = x.shape().back();
    std::vector<int64_t> items(static_cast<size_t>(x.numel()));
    if (is_string) {
      const std::string* s = x.data<std::string>();
      for (size_t i = 0; i < items.size(); ++i) {
        auto it = string_ids_.find(s[i]);
        items[i] = it == string_ids_.end() ? -1 : it->second;
      }
    } else {
      items = read_int64s(x, "input X");
    }
    Tensor y(DataType::kFloat32, x.rank() == 2 ? Shape{rows, width_} : Shape{width_});
    float* out = y.data<float>();
    parallel_for(rows, grain_for(cols * (max_skip_ + 1) * max_gram_), [&](int64_t b, int64_t e) {
      std::vector<int64_t> freq(ngram_sizes_.size()), key;
      for (int64_t r = b; r < e; ++r) {
        std::fill(freq.begin(), freq.end(), 0);
        count_row(items.data() + r * cols, cols, freq, key);
        for (size_t i = 0; i < freq.size(); ++i) {
          const double w = weights_.empty() ? 1.0 : weights_[i];
          const double v = mode_ == TfIdfMode::kTf    ? static_cast<double>(freq[i])
                           : mode_ == TfIdfMode::kIdf ? (freq[i] > 0 ? w : 0.0)
                                                      : static_cast<double>(freq[i]) * w;
          out[r * width_ + output_index_[i]] = static_cast<float>(v);
        }
      }
    });
    return {std::move(y)};
  }

 private:
  void count_row(const int64_t* row, int64_t cols, std::vector<int64_t>& freq,
                 std::vector<int64_t>& key) const {
    for (int64_t d = 1; d <= max_skip_ + 1; ++d) {
      const int64_t smallest = d == 1 ? min_gram_ : std::max<int64_t>(min_gram_, 2);
      if (smallest > max_gram_) break;
      for (int64_t start = 0; start + (smallest - 1) * d < cols; ++start) {
        key.clear();
        for (int64_t n = 1; n <= max_gram_ && start + (n - 1) * d < cols; ++n) {
          key.push_back(row[start + (n - 1) * d]);
          if (n < smallest) continue;
          auto it = ngram_ids_.find(key);
          if (it != ngram_ids_.end()) ++freq[it->second];
        }
      }
    }
  }

  int64_t min_gram_, max_gram_, max_skip_;
  TfIdfMode mode_ = TfIdfMode::kTf;
  bool string_pool_ = false;
  std::unordered_map<std::string, int64_t> string_ids_;
  std::map<std::vector<int64_t>, int64_t> ngram_ids_;  // n-gram -> its position in the pool
  std::vector<int64_t> ngram_sizes_, output_index_;
  std::vector<float> weights_;
  int64_t width_ = 0;
};
PARITY_REF_OP("", "TfIdfVectorizer", 9, kOpsetMax, TfIdfVectorizer);

// ---------------------------------------------------------------------------------------------
// Opset 20 string ops

const Tensor& string_input(const Inputs& in, size_t i, const char* name, RunContext& ctx) {
  const Tensor& t = input_tensor(in, i, name);
  if (t.dtype() != DataType::kString)
    ctx.fail("input {} has element type {}; it must be string", name, dtype_name(t.dtype()));
  return t;
}

// StringConcat: elementwise X + Y with NumPy broadcasting.
class StringConcat : public Kernel {
 public:
  explicit StringConcat(const OpContext&) {}
  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& a = string_input(in, 0, "X", ctx);
    const Tensor& b = string_input(in, 1, "Y", ctx);
    const Shape shape = broadcast_shapes({a.shape(), b.shape()});
    Tensor z(DataType::kString, shape);
    const std::string* pa = a.data<std::string>();
    const std::string* pb = b.data<std::string>();
    std::string* pz = z.data<std::string>();
    Broadcast bc(shape, {a.shape(), b.shape()});
    bc.for_each_run(0, bc.numel(), [&](int64_t o, const int64_t* off, int64_t len) {
      for (int64_t i = 0; i < len; ++i) {
        std::string& s = pz[o + i];
        const std::string& x = pa[off[0] + i * bc.step(0)];
        const std::string& y = pb[off[1] + i * bc.step(1)];
        s.reserve(x.size() + y.size());
        s.append(x).append(y);
      }
    });
    return {std::move(z)};
  }
};
PARITY_REF_OP("", "StringConcat", 20, kOpsetMax, StringConcat);

// Python's str.isspace for one code point.
bool is_unicode_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// StringSplit: Python's str.split semantics (the spec's reference is numpy.char.split). With a
// delimiter, every occurrence splits (empty pieces kept); without one (or an empty one), runs
// of whitespace split and leading/trailing whitespace is dropped. `maxsplit` limits the number
// of splits from the left. Y pads each element's pieces with "" to the longest count; Z
// holds each element's count.
class StringSplit : public Kernel {
 public:
  explicit StringSplit(const OpContext& ctx)
      : delimiter_(ctx.attr_string("delimiter", "")),
        maxsplit_(ctx.has_attr("maxsplit") ? ctx.attr_int("maxsplit") : -1) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = string_input(in, 0, "X", ctx);
    const std::string* src = x.data<std::string>();
    std::vector<std::vector<std::string>> pieces(static_cast<size_t>(x.numel()));
    size_t widest = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (delimiter_.empty()) {
        if (!split_whitespace(src[i], pieces[i]))
          ctx.fail("input X holds a string that is not valid UTF-8 at index {}", i);
      } else {
        split_delimiter(src[i], pieces[i]);
      }
      widest = std::max(widest, pieces[i].size());
    }
    Shape y_shape = x.shape();
    y_shape.push_back(static_cast<int64_t>(widest));
    Tensor y(DataType::kString, y_shape);
    Tensor z = uninitialized_tensor(DataType::kInt64, x.shape());
    std::string* py = y.data<std::string>();
    for (size_t i = 0; i < pieces.size(); ++i) {
      z.data<int64_t>()[i] = static_cast<int64_t>(pieces[i].size());
      std::move(pieces[i].begin(), pieces[i].end(), py + i * widest);
    }
    return {std::move(y), std::move(z)};
  }

 private:
  bool splits_left(size_t done) const {
    return maxsplit_ < 0 || done < static_cast<size_t>(maxsplit_);
  }

  void split_delimiter(const std::string& s, std::vector<std::string>& out) const {
    size_t pos = 0;
    for (size_t hit;
         splits_left(out.size()) && (hit = s.find(delimiter_, pos)) != std::string::npos;) {
      out.push_back(s.substr(pos, hit - pos));
      pos = hit + delimiter_.size();
    }
    out.push_back(s.substr(pos));
  }

  // Splits on runs of Unicode whitespace; the pieces keep their original UTF-8 bytes.
  bool split_whitespace(const std::string& s, std::vector<std::string>& out) const {
    std::u32string cps;
    if (!decode_utf8(s, cps)) return false;
    // Byte offset of each code point, to cut the original string.
    std::vector<size_t> offsets;
    offsets.reserve(cps.size() + 1);
    for (size_t i = 0, b = 0; i <= cps.size(); ++i) {
      offsets.push_back(b);
      if (i < cps.size()) b += cps[i] < 0x80 ? 1 : cps[i] < 0x800 ? 2 : cps[i] < 0x10000 ? 3 : 4;
    }
    size_t i = 0;
    while (true) {
      while (i < cps.size() && is_unicode_space(cps[i])) ++i;
      if (i == cps.size()) return true;
      if (!splits_left(out.size())) {
        // The rest, trailing whitespace included, is the last piece (as Python does).
        out.push_back(s.substr(offsets[i]));
        return true;
      }
      size_t j = i;
      while (j < cps.size() && !is_unicode_space(cps[j])) ++j;
      out.push_back(s.substr(offsets[i], offsets[j] - offsets[i]));
      i = j;
    }
  }

  std::string delimiter_;
  int64_t maxsplit_;  // < 0: no limit
};
PARITY_REF_OP("", "StringSplit", 20, kOpsetMax, StringSplit);

// RegexFullMatch: true where the whole string matches `pattern`. The spec's syntax is RE2's;
// this kernel compiles the pattern as an ECMAScript std::regex, which agrees with RE2 on the
// common subset (literals, classes, \d \w \s \b, groups, alternation, greedy/lazy quantifiers,
// anchors) and on full-match results. A leading "(?i)" is honoured as case-insensitive
// matching. Differences: matching is by bytes, not UTF-8 code points ('.' matches one byte);
// RE2-only syntax (\pL, (?P<name>...), \A, \z, other inline flags) is refused with an error;
// ECMAScript-only syntax (backreferences, lookahead) is accepted. libstdc++'s polynomial
// (breadth-first) mode is used so that long inputs cannot exhaust the stack.
class RegexFullMatch : public Kernel {
 public:
  explicit RegexFullMatch(const OpContext& ctx) {
    std::string pattern = ctx.attr_string("pattern");
    auto flags = std::regex_constants::ECMAScript;
#ifdef __GLIBCXX__
    flags |= std::regex_constants::__polynomial;
#endif
    if (pattern.starts_with("(?i)")) {
      flags |= std::regex_constants::icase;
      pattern.erase(0, 4);
    }
    try {
      regex_.emplace(pattern, flags);
    } catch (const std::regex_error& e) {
      ctx.fail(
          "attribute 'pattern' is '{}'; it is not a regular expression this kernel "
          "supports (the RE2 subset ECMAScript shares): {}",
          ctx.attr_string("pattern"), e.what());
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = string_input(in, 0, "X", ctx);
    Tensor y = uninitialized_tensor(DataType::kBool, x.shape());
    const std::string* src = x.data<std::string>();
    bool* dst = y.data<bool>();
    try {
      for (int64_t i = 0; i < x.numel(); ++i) dst[i] = std::regex_match(src[i], *regex_);
    } catch (const std::regex_error& e) {
      ctx.fail("matching the pattern failed: {}", e.what());
    }
    return {std::move(y)};
  }

 private:
  std::optional<std::regex> regex_;
};
PARITY_REF_OP("", "RegexFullMatch", 20, kOpsetMax, RegexFullMatch);

}  // namespace
}  // namespace parity::ref
