#include "core/logger.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

#include "core/error.h"
#include "core/progress.h"

namespace parity {

namespace {

std::string_view prefix_of(Severity s) {
  if (s >= Severity::kCritical) return "[!] ";
  if (s >= Severity::kError) return "[E] ";
  if (s >= Severity::kWarning) return "[W] ";
  if (s >= Severity::kInfo) return "[I] ";
  if (s >= Severity::kVerbose) return "[V] ";
  if (s >= Severity::kExtraVerbose) return "[X] ";
  if (s >= Severity::kSuperVerbose) return "[S] ";
  return "[U] ";
}

// ANSI colours as Polygraphy uses them per severity.
std::string_view color_of(Severity s) {
  if (s >= Severity::kCritical) return "\033[1;31m";
  if (s >= Severity::kError) return "\033[31m";
  if (s >= Severity::kWarning) return "\033[33m";
  if (s >= Severity::kFinish) return "\033[32m";
  if (s >= Severity::kStart) return "\033[36m";
  if (s >= Severity::kInfo) return "";
  return "\033[2m";
}

}  // namespace

Severity severity_from_count(int n) {
  if (n >= 4) return Severity::kUltraVerbose;
  switch (n) {
    case 3:
      return Severity::kSuperVerbose;
    case 2:
      return Severity::kExtraVerbose;
    case 1:
      return Severity::kVerbose;
    case 0:
      return Severity::kInfo;
    case -1:
      return Severity::kStart;
    case -2:
      return Severity::kFinish;
    case -3:
      return Severity::kWarning;
    case -4:
      return Severity::kError;
    default:
      return Severity::kCritical;
  }
}

std::optional<Severity> severity_from_name(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
  static const std::pair<const char*, Severity> kNames[] = {
      {"ULTRA_VERBOSE", Severity::kUltraVerbose},
      {"SUPER_VERBOSE", Severity::kSuperVerbose},
      {"EXTRA_VERBOSE", Severity::kExtraVerbose},
      {"VERBOSE", Severity::kVerbose},
      {"INFO", Severity::kInfo},
      {"START", Severity::kStart},
      {"FINISH", Severity::kFinish},
      {"WARNING", Severity::kWarning},
      {"ERROR", Severity::kError},
      {"CRITICAL", Severity::kCritical}};
  for (const auto& [k, v] : kNames)
    if (n == k) return v;
  return std::nullopt;
}

Logger& Logger::get() {
  static Logger instance;
  return instance;
}

// Colours only on a terminal, and never when NO_COLOR is set to anything (no-color.org's
// convention, which users set once for every tool).
Logger::Logger() {
  const char* no_color = std::getenv("NO_COLOR");
  colors_ = isatty(fileno(stdout)) != 0 && !(no_color && *no_color);
}

void Logger::set_log_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) fail("failed to open log file '{}': the folder must exist and be writable", path);
  std::lock_guard lock(mutex_);
  log_file_.reset(f);
}

void Logger::set_sink(std::function<void(Severity, const std::string&)> sink) {
  std::lock_guard lock(mutex_);
  sink_ = std::move(sink);
}

void Logger::reset_sink() {
  std::lock_guard lock(mutex_);
  sink_ = nullptr;
}

void Logger::set_severity(Severity s) {
  severity_ = s;
  update_lowest();
}

void Logger::set_path_severity(const std::string& path, Severity s) {
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (p.empty()) return set_severity(s);
  for (auto& [known, severity] : path_severities_)
    if (known == p) {
      severity = s;
      return update_lowest();
    }
  path_severities_.emplace_back(p, s);
  update_lowest();
}

void Logger::update_lowest() {
  lowest_ = severity_;
  for (const auto& [path, s] : path_severities_) lowest_ = std::min(lowest_, s);
}

std::string log_site_path(const char* file) {
  if (!file) return "";
  std::string path = file;
  const size_t src = path.rfind("src/");
  if (src != std::string::npos) return path.substr(src + 4);
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The severity for messages from `site`: the longest matching per-path entry (whole path
// components), else the default.
Severity Logger::threshold(LogSite site) const {
  if (path_severities_.empty() || !site.file) return severity_;
  const std::string path = log_site_path(site.file);
  size_t best = 0;
  Severity s = severity_;
  for (const auto& [prefix, severity] : path_severities_)
    if (path.compare(0, prefix.size(), prefix) == 0 &&
        (path.size() == prefix.size() || path[prefix.size()] == '/') && prefix.size() > best) {
      best = prefix.size();
      s = severity;
    }
  return s;
}

void Logger::write(Severity s, std::string_view message, LogSite site) {
  if (!enabled(s) || s < threshold(site)) return;
  std::string prefix(prefix_of(s));
  if (timestamp_) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char clock[16];
    std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
    prefix += fmt::format("({}) ", clock);
  }
  if (line_info_ && site.file)
    prefix += fmt::format("[{}:{}] ", log_site_path(site.file), site.line);
  // Continuation lines line up under the text after the prefix, plus the indent.
  const std::string indent(4 * static_cast<size_t>(indent_), ' ');
  const std::string pad = std::string(prefix.size(), ' ') + indent;
  std::string line = prefix + indent;
  line.reserve(prefix.size() + message.size() + 16);
  for (char c : message) {
    line.push_back(c);
    if (c == '\n') line.append(pad);
  }

  std::lock_guard lock(mutex_);
  if (sink_) {
    sink_(s, line);
    return;
  }
  // The fatal "[!]" line goes to stderr, like usage errors: a script that reads stdout (or
  // redirects it to a file) still shows the user why the run stopped. Every other line stays on
  // stdout, where Polygraphy prints it.
  clear_progress_line();  // a log line never shares the terminal's line with a progress line
  FILE* out = s == Severity::kCritical ? stderr : stdout;
  if (out == stderr) std::fflush(stdout);  // keep the order of lines on a shared terminal
  if (colors_ && !color_of(s).empty())
    std::fprintf(out, "%s%s\033[0m\n", std::string(color_of(s)).c_str(), line.c_str());
  else
    std::fprintf(out, "%s\n", line.c_str());
  std::fflush(out);
  if (log_file_) {
    std::fprintf(log_file_.get(), "%s\n", line.c_str());
    std::fflush(log_file_.get());
  }
}

void Logger::log_once(Severity s, std::string_view message, SourceSite where) {
  {
    std::lock_guard lock(mutex_);
    if (!seen_once_.insert(std::string(message)).second) return;
  }
  write(s, message, LogSite::of(where));
}

void Logger::critical_message(const std::string& message) { throw Error(message); }

Logger::Indent::Indent(int levels) : levels_(levels) { Logger::get().indent_ += levels_; }
Logger::Indent::~Indent() { Logger::get().indent_ -= levels_; }

std::string pad_name(std::string_view name) {
  std::string s(name);
  if (s.size() < 35) s.append(35 - s.size(), ' ');
  return s;
}

}  // namespace parity
