#include "cli/backend_args.h"

#include <algorithm>

#include "core/logger.h"

namespace parity::cli {

std::vector<ConfiguredBackend> BackendArgs::configure() const {
  std::map<const Backend*, std::any> configs;
  std::vector<ConfiguredBackend> out;
  for (const Backend* b : selected) {
    auto it = configs.find(b);
    if (it == configs.end()) {
      const auto given = values.find(b->name);
      it = configs
               .emplace(b,
                        b->configure(given == values.end() ? BackendOptionValues{} : given->second))
               .first;
    }
    out.push_back(ConfiguredBackend{b, it->second});
  }
  // Options of a backend no runner uses are still parsed, so a malformed value fails, and
  // named in a warning, since they change nothing.
  for (const auto& [name, given] : values) {
    const Backend* b = BackendRegistry::global().find(name);
    if (!b || configs.count(b)) continue;
    b->configure(given);
    std::vector<std::string> flags;
    for (const auto& [option, _] : given.all()) flags.push_back("--" + option);
    logger().warning("{} {} no effect: no runner of the {} backend was selected (add {})",
                     fmt::join(flags, ", "), flags.size() == 1 ? "has" : "have", name,
                     b->flag_list().front());
  }
  return out;
}

void add_backend_args(CLI::App& app) {
  for (const Backend* b : BackendRegistry::global().all()) {
    app.add_flag(b->flags)->description(b->help)->group("Runners");
    for (const BackendOption& o : b->options) {
      CLI::Option* opt = nullptr;
      std::string help = o.help;
      if (!o.default_text.empty()) help += ". Defaults to " + o.default_text;
      // No variable is bound: values are read back by collect_backend_args. (A non-const
      // string as the second argument would be taken as the variable to fill.)
      if (o.kind == BackendOption::Kind::kFlag) {
        opt = app.add_flag(o.flags)->description(help);
      } else {
        opt = app.add_option(o.flags)->description(help);
        if (o.kind == BackendOption::Kind::kList)
          opt->expected(1, CLI::detail::expected_max_vector_size);
        else
          opt->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        if (!o.choices.empty()) opt->check(CLI::IsMember(o.choices));
      }
      opt->group(b->group);
    }
  }
}

BackendArgs collect_backend_args(const CLI::App& app) {
  BackendArgs args;
  std::map<const CLI::Option*, const Backend*> selectors;
  for (const Backend* b : BackendRegistry::global().all()) {
    selectors[app.get_option(b->flag_list().front())] = b;
    for (const BackendOption& o : b->options) {
      const CLI::Option* opt = app.get_option(o.flags.substr(0, o.flags.find(',')));
      if (opt->count() == 0) continue;
      std::vector<std::string> results = opt->results();
      if (o.kind == BackendOption::Kind::kValue && results.size() > 1)
        results.erase(results.begin(), results.end() - 1);
      args.values[b->name].set(o.name(), o.kind == BackendOption::Kind::kFlag
                                             ? std::vector<std::string>{"true"}
                                             : results);
    }
  }
  for (const CLI::Option* opt : const_cast<CLI::App&>(app).parse_order())
    if (auto it = selectors.find(opt); it != selectors.end()) args.selected.push_back(it->second);
  return args;
}

}  // namespace parity::cli
