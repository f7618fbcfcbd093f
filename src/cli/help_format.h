// `--help` with the option groups in a given order: Polygraphy's argparse lists its argument
// groups in its own order (Logging, Runners, Model, ...), while CLI11 lists them in the order
// their first flag was added, which follows how Parity's option groups are set up.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace parity::cli {

class OrderedGroupsFormatter : public CLI::Formatter {
 public:
  // `order`: the groups shown first, in this order; the others follow as CLI11 lists them.
  explicit OrderedGroupsFormatter(std::vector<std::string> order) : order_(std::move(order)) {}

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::ostringstream out;
    out << make_description(app) << make_usage(app, name) << make_positionals(app);
    std::vector<std::string> groups;
    for (const std::string& g : order_) groups.push_back(g);
    for (const std::string& g : app->get_groups())
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    bool first = true;
    for (const std::string& group : groups) {
      std::vector<const CLI::Option*> options = app->get_options(
          [&](const CLI::Option* o) { return o->get_group() == group && o->nonpositional(); });
      if (group.empty() || options.empty()) continue;
      if (!first) out << "\n";
      first = false;
      out << make_group(group, false, options);
    }
    out << make_subcommands(app, mode) << '\n' << make_footer(app);
    return out.str();
  }

 private:
  std::vector<std::string> order_;
};

}  // namespace parity::cli
