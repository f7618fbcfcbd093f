// Logger with Polygraphy's severities and line format: "[I] message", continuation lines
// indented under the first, 4 spaces per indent level, colours only on a terminal.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace parity {

enum class Severity : int {
  kUltraVerbose = -20,
  kSuperVerbose = -10,
  kExtraVerbose = 0,
  kVerbose = 10,
  kInfo = 20,
  kStart = 22,
  kFinish = 28,
  kWarning = 30,
  kError = 40,
  kCritical = 50,
};

// Polygraphy's mapping of (verbose count - quiet count) to a severity.
Severity severity_from_count(int verbose_minus_quiet);
// Parses a severity name (ULTRA_VERBOSE, info, warning, ...); nullopt when unknown.
std::optional<Severity> severity_from_name(std::string_view name);

// The place in the sources a call is written, as std::source_location gives it: current()
// as a default argument is evaluated at the caller. (std::source_location itself is missing
// from libstdc++ 12 under clang 14, the compiler of the fuzz targets; the builtins are in both
// GCC and clang.)
struct SourceSite {
  const char* file_ = nullptr;
  unsigned line_ = 0;
  static constexpr SourceSite current(const char* file = __builtin_FILE(),
                                      unsigned line = __builtin_LINE()) {
    return SourceSite{file, line};
  }
  constexpr const char* file_name() const { return file_; }
  constexpr unsigned line() const { return line_; }
};

// Where a message was logged: for --log-format line-info and per-path --verbosity.
struct LogSite {
  const char* file = nullptr;  // as the compiler names it; shown relative to src/
  unsigned line = 0;
  static LogSite of(const SourceSite& w) {
    return LogSite{w.file_name(), static_cast<unsigned>(w.line())};
  }
};

// A format string with the place it was written: the severity methods take one, so that every
// call site is known without naming it. (Built at compile time, as fmt::format_string is.)
template <typename... A>
struct FormatAt {
  template <typename S>
  consteval FormatAt(const S& s, SourceSite where = SourceSite::current())
      : format(s), site{where.file_name(), static_cast<unsigned>(where.line())} {}
  fmt::format_string<A...> format;
  LogSite site;
};
template <typename... A>
using FormatHere = FormatAt<std::type_identity_t<A>...>;

class Logger {
 public:
  static Logger& get();

  // The default severity; per-path severities (set_path_severity) take precedence.
  void set_severity(Severity s);
  Severity severity() const { return severity_; }
  // Messages logged from source files under `path` (relative to src/, e.g. "backend/onnxrt" or
  // "comparator/compare_simple.cc") use `s` instead of the default (Polygraphy's per-path
  // --verbosity). An empty path sets the default.
  void set_path_severity(const std::string& path, Severity s);
  // Whether a message of severity `s` may be shown from some path (the exact decision, by the
  // message's path, is made when it is logged).
  bool enabled(Severity s) const { return s >= lowest_; }
  void set_colors(bool on) { colors_ = on; }
  // Polygraphy's --log-format: "(21:33:22) " and "[comparator/comparator.cc:190] " after the
  // severity letter.
  void set_format(bool timestamp, bool line_info) {
    timestamp_ = timestamp;
    line_info_ = line_info;
  }
  // Also writes every message (without colours) to this file.
  void set_log_file(const std::string& path);
  // Sends output to `sink` instead of stderr/stdout (tests capture messages this way).
  void set_sink(std::function<void(Severity, const std::string&)> sink);
  void reset_sink();

  void log(Severity s, std::string_view message, SourceSite where = SourceSite::current()) {
    write(s, message, LogSite::of(where));
  }
  void write(Severity s, std::string_view message, LogSite site);
  // Logs only the first time this exact message is seen (Polygraphy's LogMode.ONCE).
  void log_once(Severity s, std::string_view message, SourceSite where = SourceSite::current());

  template <typename... A>
  void verbose(FormatHere<A...> f, A&&... a) {
    emit(Severity::kVerbose, f.format, f.site, std::forward<A>(a)...);
  }
  template <typename... A>
  void extra_verbose(FormatHere<A...> f, A&&... a) {
    emit(Severity::kExtraVerbose, f.format, f.site, std::forward<A>(a)...);
  }
  template <typename... A>
  void info(FormatHere<A...> f, A&&... a) {
    emit(Severity::kInfo, f.format, f.site, std::forward<A>(a)...);
  }
  template <typename... A>
  void start(FormatHere<A...> f, A&&... a) {
    emit(Severity::kStart, f.format, f.site, std::forward<A>(a)...);
  }
  template <typename... A>
  void finish(FormatHere<A...> f, A&&... a) {
    emit(Severity::kFinish, f.format, f.site, std::forward<A>(a)...);
  }
  template <typename... A>
  void warning(FormatHere<A...> f, A&&... a) {
    emit(Severity::kWarning, f.format, f.site, std::forward<A>(a)...);
  }
  template <typename... A>
  void error(FormatHere<A...> f, A&&... a) {
    emit(Severity::kError, f.format, f.site, std::forward<A>(a)...);
  }
  // Throws parity::Error with the message; whoever catches it at the top (the CLI, the Python
  // module) reports it once, at CRITICAL, so it is never printed twice.
  template <typename... A>
  [[noreturn]] void critical(fmt::format_string<A...> f, A&&... a) {
    critical_message(fmt::format(f, std::forward<A>(a)...));
  }
  [[noreturn]] void critical_message(const std::string& message);

  // Indentation applied to every line logged while an Indent is alive.
  class Indent {
   public:
    explicit Indent(int levels = 1);
    ~Indent();
    Indent(const Indent&) = delete;
    Indent& operator=(const Indent&) = delete;

   private:
    int levels_;
  };
  int indent() const { return indent_; }

 private:
  Logger();
  template <typename... A>
  void emit(Severity s, fmt::format_string<A...> f, LogSite site, A&&... a) {
    if (enabled(s)) write(s, fmt::format(f, std::forward<A>(a)...), site);
  }
  Severity threshold(LogSite site) const;
  void update_lowest();

  Severity severity_ = Severity::kInfo;
  Severity lowest_ = Severity::kInfo;  // the lowest of the default and the per-path severities
  std::vector<std::pair<std::string, Severity>> path_severities_;
  bool colors_ = false;
  bool timestamp_ = false, line_info_ = false;
  int indent_ = 0;
  std::mutex mutex_;
  std::set<std::string> seen_once_;
  std::unique_ptr<FILE, int (*)(FILE*)> log_file_{nullptr, &fclose};
  std::function<void(Severity, const std::string&)> sink_;
};

// The path of a source file relative to src/ ("comparator/comparator.cc"), as line-info shows
// it and per-path severities match it.
std::string log_site_path(const char* file);

inline Logger& logger() { return Logger::get(); }

// Pads a runner name to Polygraphy's 35 columns for the "<name> | message" prefix.
std::string pad_name(std::string_view name);

}  // namespace parity
