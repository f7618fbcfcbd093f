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

class Logger {
 public:
  static Logger& get();

  void set_severity(Severity s) { severity_ = s; }
  Severity severity() const { return severity_; }
  bool enabled(Severity s) const { return s >= severity_; }
  void set_colors(bool on) { colors_ = on; }
  // Also writes every message (without colours) to this file.
  void set_log_file(const std::string& path);
  // Sends output to `sink` instead of stderr/stdout (tests capture messages this way).
  void set_sink(std::function<void(Severity, const std::string&)> sink);
  void reset_sink();

  void log(Severity s, std::string_view message);
  // Logs only the first time this exact message is seen (Polygraphy's LogMode.ONCE).
  void log_once(Severity s, std::string_view message);

  template <typename... A>
  void verbose(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kVerbose)) log(Severity::kVerbose, fmt::format(f, std::forward<A>(a)...));
  }
  template <typename... A>
  void extra_verbose(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kExtraVerbose))
      log(Severity::kExtraVerbose, fmt::format(f, std::forward<A>(a)...));
  }
  template <typename... A>
  void info(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kInfo)) log(Severity::kInfo, fmt::format(f, std::forward<A>(a)...));
  }
  template <typename... A>
  void start(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kStart)) log(Severity::kStart, fmt::format(f, std::forward<A>(a)...));
  }
  template <typename... A>
  void finish(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kFinish)) log(Severity::kFinish, fmt::format(f, std::forward<A>(a)...));
  }
  template <typename... A>
  void warning(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kWarning)) log(Severity::kWarning, fmt::format(f, std::forward<A>(a)...));
  }
  template <typename... A>
  void error(fmt::format_string<A...> f, A&&... a) {
    if (enabled(Severity::kError)) log(Severity::kError, fmt::format(f, std::forward<A>(a)...));
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
  Severity severity_ = Severity::kInfo;
  bool colors_ = false;
  int indent_ = 0;
  std::mutex mutex_;
  std::set<std::string> seen_once_;
  std::unique_ptr<FILE, int (*)(FILE*)> log_file_{nullptr, &fclose};
  std::function<void(Severity, const std::string&)> sink_;
};

inline Logger& logger() { return Logger::get(); }

// Pads a runner name to Polygraphy's 35 columns for the "<name> | message" prefix.
std::string pad_name(std::string_view name);

}  // namespace parity
