// The backend registry and layer-wise comparison from Python: the same library calls the CLI
// makes for `--onnx-outputs mark all`, the same summary lines, and the HTML report.
#include "backend/plugins.h"
#include "backend/registry.h"
#include "cli/parse_util.h"
#include "layerwise/layerwise_comparator.h"
#include "py_util.h"
#include "report/html_report.h"

namespace parity::python {

namespace {

// Python keyword options (providers=["cpu"], ort_threads=2) as a backend's option values:
// underscores stand for dashes; lists and tuples give several values, a bool a flag.
BackendOptionValues option_values(const Backend& backend, const py::dict& options) {
  BackendOptionValues values;
  for (auto [key, value] : options) {
    std::string name = py::str(key);
    std::replace(name.begin(), name.end(), '_', '-');
    const BackendOption* option = nullptr;
    for (const BackendOption& o : backend.options)
      if (o.name() == name) option = &o;
    if (!option) {
      std::vector<std::string> valid;
      for (const BackendOption& o : backend.options) {
        std::string n = o.name();
        std::replace(n.begin(), n.end(), '-', '_');
        valid.push_back(n);
      }
      fail_usage(
          "failed to configure backend '{}' with option '{}': it has no such option; "
          "valid choices are [{}]",
          backend.name, std::string(py::str(key)), fmt::join(valid, ", "));
    }
    std::vector<std::string> list;
    if (py::isinstance<py::bool_>(value)) {
      list.push_back(value.cast<bool>() ? "true" : "false");
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      for (py::handle item : value) list.push_back(py::str(item));
    } else {
      list.push_back(py::str(value));
    }
    if (!option->choices.empty())
      for (const auto& v : list)
        if (std::find(option->choices.begin(), option->choices.end(), v) == option->choices.end())
          fail_usage("failed to configure backend '{}' with {}='{}': valid choices are [{}]",
                     backend.name, std::string(py::str(key)), v, fmt::join(option->choices, ", "));
    values.set(name, std::move(list));
  }
  return values;
}

ConfiguredBackend configure(const std::string& name, const py::dict& options) {
  const Backend* backend = BackendRegistry::global().find_flag(name);
  if (!backend)
    fail_usage(
        "failed to find backend '{}': no backend of that name is registered; valid "
        "choices are {}",
        name, BackendRegistry::global().names());
  return ConfiguredBackend{backend, backend->configure(option_values(*backend, options))};
}

TensorCompareOptions compare_options(const std::string& metric, py::object atol, py::object rtol,
                                     py::object check_error_stat, py::object error_quantile,
                                     bool infinities_compare_equal, bool check_shapes,
                                     py::object l2_tolerance,
                                     py::object cosine_similarity_threshold,
                                     py::object psnr_tolerance, py::object snr_tolerance) {
  TensorCompareOptions o;
  if (metric == "distance")
    o.metric = CompareMetric::kDistance;
  else if (metric == "quality")
    o.metric = CompareMetric::kQuality;
  else if (metric != "simple")
    fail_usage(
        "failed to compare layer-wise with compare='{}': valid choices are simple, "
        "distance, quality",
        metric);
  o.atol = per_output<double>(atol, 1e-5, to_double);
  o.rtol = per_output<double>(rtol, 1e-5, to_double);
  o.check_error_stat = per_output<ErrorStat>(check_error_stat, ErrorStat::kElemwise, to_error_stat);
  o.error_quantile = per_output<double>(error_quantile, 0.99, to_double);
  o.infinities_compare_equal = infinities_compare_equal;
  o.check_shapes = check_shapes;
  o.l2_tolerance = per_output<double>(l2_tolerance, 1e-5, to_double);
  o.cosine_similarity_threshold = per_output<double>(cosine_similarity_threshold, 0.997, to_double);
  o.psnr_tolerance = per_output<double>(psnr_tolerance, 30.0, to_double);
  o.snr_tolerance = per_output<double>(snr_tolerance, 20.0, to_double);
  return o;
}

py::object node_or_none(const LayerwiseResult& r, std::optional<size_t> index) {
  if (!index) return py::none();
  return py::cast(r.nodes[*index]);
}

}  // namespace

void bind_layerwise(py::module_& m) {
  py::class_<BackendOption>(m, "BackendOption")
      .def_readonly("flags", &BackendOption::flags)
      .def_property_readonly("name", &BackendOption::name)
      .def_readonly("help", &BackendOption::help)
      .def_readonly("default", &BackendOption::default_text)
      .def_readonly("choices", &BackendOption::choices)
      .def_property_readonly("kind", [](const BackendOption& o) {
        return o.kind == BackendOption::Kind::kFlag   ? "flag"
               : o.kind == BackendOption::Kind::kList ? "list"
                                                      : "value";
      });
  py::class_<Backend>(m, "Backend", "A registered backend (backend/registry.h).")
      .def_readonly("name", &Backend::name)
      .def_property_readonly("flags", &Backend::flag_list)
      .def_readonly("help", &Backend::help)
      .def_readonly("group", &Backend::group)
      .def_readonly("options", &Backend::options)
      .def_property_readonly("can_stream", [](const Backend& b) { return bool(b.run_observed); })
      .def("__repr__", [](const Backend& b) { return "<parity backend '" + b.name + "'>"; });
  m.def(
      "backends", [] { return BackendRegistry::global().all(); },
      py::return_value_policy::reference, "Every registered backend, in --help order.");
  m.def(
      "make_backend_runner",
      [](const std::string& backend, py::object model, py::dict options,
         const std::string& name) -> std::shared_ptr<Runner> {
        ConfiguredBackend b = configure(backend, options);
        return b.make_runner(loader_from_object<ModelPtr>(std::move(model), "a parity.Model"),
                             name);
      },
      py::arg("backend"), py::arg("model"), py::arg("options"), py::arg("name") = "");
  m.def(
      "load_any_plugin",
      [](const std::string& path) {
        LoadedPlugin p = load_plugin(path);
        return py::make_tuple(p.ops, p.backends);
      },
      py::arg("path"));

  m.def(
      "parse_byte_size",
      [](const std::string& what, py::object size) -> size_t {
        if (py::isinstance<py::int_>(size)) {
          const long long v = size.cast<long long>();
          if (v < 1)
            fail_usage("failed to use {}={}: a size is a positive number of bytes", what, v);
          return static_cast<size_t>(v);
        }
        return cli::parse_byte_size(what, py::str(size));
      },
      py::arg("what"), py::arg("size"));

  py::class_<TensorErrorStats>(m, "TensorErrorStats")
      .def_readonly("name", &TensorErrorStats::name)
      .def_readonly("compared", &TensorErrorStats::compared)
      .def_readonly("passed", &TensorErrorStats::passed)
      .def_readonly("note", &TensorErrorStats::note)
      .def_readonly("count", &TensorErrorStats::count)
      .def_readonly("mismatches", &TensorErrorStats::mismatches)
      .def_readonly("max_abs", &TensorErrorStats::max_abs)
      .def_readonly("mean_abs", &TensorErrorStats::mean_abs)
      .def_readonly("max_rel", &TensorErrorStats::max_rel)
      .def_readonly("mean_rel", &TensorErrorStats::mean_rel)
      .def_readonly("ratio", &TensorErrorStats::ratio)
      .def_readonly("max_ulps", &TensorErrorStats::max_ulps)
      .def("__repr__", [](const TensorErrorStats& s) {
        return fmt::format("<TensorErrorStats '{}' {} max_abs={} max_rel={}>", s.name,
                           s.passed ? "passed" : "failed", s.max_abs, s.max_rel);
      });
  py::class_<NodeResult>(m, "NodeResult")
      .def_readonly("name", &NodeResult::name)
      .def_readonly("op_type", &NodeResult::op_type)
      .def_readonly("index", &NodeResult::index)
      .def_property_readonly("status",
                             [](const NodeResult& n) { return node_status_name(n.status); })
      .def_property_readonly("passed", &NodeResult::passed)
      .def_readonly("ratio", &NodeResult::ratio)
      .def_readonly("local_ratio", &NodeResult::local_ratio)
      .def_readonly("local_passed", &NodeResult::local_passed)
      .def_readonly("local_note", &NodeResult::local_note)
      .def_readonly("local_max_ulps", &NodeResult::local_max_ulps)
      .def_readonly("rounds_inherited", &NodeResult::rounds_inherited)
      .def("__repr__", [](const NodeResult& n) {
        return fmt::format("<NodeResult '{}' ({}) {}>", n.name, n.op_type,
                           node_status_name(n.status));
      });
  py::class_<LayerwiseResult>(m, "LayerwiseResult")
      .def_readonly("tensors", &LayerwiseResult::tensors)
      .def_readonly("nodes", &LayerwiseResult::nodes)
      .def_readonly("missing", &LayerwiseResult::missing)
      .def_readonly("path", &LayerwiseResult::path)
      .def_readonly("total_nodes", &LayerwiseResult::total_nodes)
      .def_property_readonly("passed", &LayerwiseResult::passed)
      .def_property_readonly(
          "first_divergence",
          [](const LayerwiseResult& r) { return node_or_none(r, r.first_divergence); })
      .def_property_readonly("top_local", [](const LayerwiseResult& r) {
        py::list out;
        for (size_t i : r.top_local) out.append(py::cast(r.nodes[i]));
        return out;
      });
  py::class_<LayerwiseRun, std::shared_ptr<LayerwiseRun>>(m, "LayerwiseRun")
      .def_readonly("iterations", &LayerwiseRun::iterations)
      .def_readonly("runner0", &LayerwiseRun::runner0)
      .def_readonly("runner1", &LayerwiseRun::runner1)
      .def_property_readonly("passed", &LayerwiseRun::passed)
      .def("__bool__", &LayerwiseRun::passed)
      .def(
          "report_html",
          [](const LayerwiseRun& run, const std::string& path, const std::string& command) {
            py::gil_scoped_release nogil;
            write_html_report(path, report_from_layerwise(run), command);
          },
          py::arg("path"), py::arg("command") = "",
          "Writes the self-contained HTML report of this run to `path`.");

  m.def(
      "layerwise_compare",
      [](py::object model, const std::string& reference, py::dict reference_options,
         py::object other, py::dict other_options, py::object data_loader, py::object outputs,
         py::object exclude, const std::string& metric, py::object atol, py::object rtol,
         py::object check_error_stat, py::object error_quantile, bool infinities_compare_equal,
         bool check_shapes, py::object l2_tolerance, py::object cosine_similarity_threshold,
         py::object psnr_tolerance, py::object snr_tolerance, size_t mark_budget, bool local_error,
         bool other_is_first) {
        ModelPtr loaded = loader_from_object<ModelPtr>(std::move(model), "a parity.Model")();
        LayerwiseRunOptions options;
        options.comparison.compare = compare_options(
            metric, atol, rtol, check_error_stat, error_quantile, infinities_compare_equal,
            check_shapes, l2_tolerance, cosine_similarity_threshold, psnr_tolerance, snr_tolerance);
        options.comparison.budget_bytes = mark_budget;
        options.comparison.local_error = local_error;
        options.mark_all = outputs.is_none();
        if (!outputs.is_none()) options.marked = outputs.cast<std::vector<std::string>>();
        if (!exclude.is_none()) options.exclude = exclude.cast<std::vector<std::string>>();
        const ConfiguredBackend ref = configure(reference, reference_options);
        LayerwiseSource source;
        source.is_first = other_is_first;
        RunResults saved;
        if (py::isinstance<RunResults>(other)) {
          saved = other.cast<RunResults>();
          if (saved.size() != 1)
            fail_usage(
                "failed to compare layer-wise with saved results of {} runners: give "
                "the results of one runner",
                saved.size());
          source.saved = &saved[0];
        } else {
          source.backend = configure(py::str(other), other_options);
        }
        FeedSource* borrowed = nullptr;
        std::unique_ptr<FeedSource> owned = feeds_from_object(std::move(data_loader), &borrowed);
        FeedSource& feeds = borrowed ? *borrowed : *owned;
        py::gil_scoped_release nogil;
        return std::make_shared<LayerwiseRun>(
            LayerwiseComparator::run(loaded, ref, source, feeds, options));
      },
      py::arg("model"), py::arg("reference"), py::arg("reference_options"), py::arg("other"),
      py::arg("other_options"), py::arg("data_loader"), py::arg("outputs"), py::arg("exclude"),
      py::arg("compare"), py::arg("atol"), py::arg("rtol"), py::arg("check_error_stat"),
      py::arg("error_quantile"), py::arg("infinities_compare_equal"), py::arg("check_shapes"),
      py::arg("l2_tolerance"), py::arg("cosine_similarity_threshold"), py::arg("psnr_tolerance"),
      py::arg("snr_tolerance"), py::arg("mark_budget"), py::arg("local_error"),
      py::arg("other_is_first"));
}

}  // namespace parity::python
