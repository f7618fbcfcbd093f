#include "cli/option_checks.h"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

namespace parity::cli {
namespace {

// The help text CLI::Range gives ("INT in [1 - 1024]"), so --help reads as before.
template <typename T>
std::string range_description(T lo, T hi) {
  std::ostringstream out;
  out << CLI::detail::type_name<T>() << " in [" << lo << " - " << hi << "]";
  return out.str();
}

template <typename T>
CLI::Option* check_range_of(CLI::Option* opt, T lo, T hi, const char* kind) {
  const std::string flag = opt->get_name();
  auto check = [=](std::string& text) -> std::string {
    T v{};
    if (CLI::detail::lexical_cast(text, v) && !std::isnan(static_cast<double>(v)) && v >= lo &&
        v <= hi)
      return {};
    return fmt::format("failed to parse {} with value '{}': it must be {} in [{}, {}]", flag, text,
                       kind, lo, hi);
  };
  return opt->check(CLI::Validator(check, range_description(lo, hi)));
}

}  // namespace

CLI::Option* check_range(CLI::Option* opt, int64_t lo, int64_t hi) {
  return check_range_of(opt, lo, hi, "an integer");
}

CLI::Option* check_range(CLI::Option* opt, double lo, double hi) {
  return check_range_of(opt, lo, hi, "a number");
}

}  // namespace parity::cli
