// Comparator, compare functions, data loaders and post-processing. Python callables (a
// generator of feeds, a custom compare function) are adapted to the C++ interfaces here, so
// Comparator::run and compare_accuracy are the C++ ones whatever the user passes.
#include "backend/subprocess_runner.h"
#include "backend/value_tensors.h"
#include "comparator/comparator.h"
#include "core/logger.h"
#include "io/json.h"
#include "py_util.h"

namespace parity::python {

namespace {

// A compare function as a Python object: made by CompareFunc.simple/indices, or wrapping a
// Python callable.
struct CompareFuncHandle {
  CompareFunc fn;
};

struct PostprocessFuncHandle {
  PostprocessFunc fn;
};

struct LoggerIndent {
  explicit LoggerIndent(int l) : levels(l) {}
  int levels;
  std::optional<Logger::Indent> indent;
};

// Feeds from any Python iterable of dicts (a list, a generator, a user's data loader), read
// lazily under the GIL.
class PyFeedSource : public FeedSource {
 public:
  // A sized iterable (a list) says how many feeds it has; a generator is read as it yields,
  // so an endless one is consumed one feed at a time.
  explicit PyFeedSource(py::object iterable)
      : size_(py::hasattr(iterable, "__len__") ? std::optional<size_t>(py::len(iterable))
                                               : std::nullopt),
        iterator_(make_py_ref(py::iter(iterable))) {}
  std::optional<size_t> size() const override { return size_; }
  std::optional<TensorMap> get(size_t i) override {
    py::gil_scoped_acquire gil;
    PyObject* item = PyIter_Next(iterator_->ptr());
    if (!item) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return std::nullopt;
    }
    py::object feed = py::reinterpret_steal<py::object>(item);
    return tensors_from_dict(feed, fmt::format("feed {} of the data loader, input", i));
  }

 private:
  std::optional<size_t> size_;
  PyRef iterator_;
};

// The figures of CompareFunc.simple drawn by parity.comparator.error_plots in this process,
// from arrays viewing the compared tensors.
class PyErrorPlotter : public ErrorPlotter {
 public:
  explicit PyErrorPlotter(py::object plots) : plots_(make_py_ref(std::move(plots))) {}

  void heatmaps(const HeatmapRequest& r) override {
    py::gil_scoped_acquire gil;
    plots_->attr("heatmaps")(array_from_tensor(r.diff), r.min, r.max, r.prefix, dir(r.save_dir),
                             r.show, r.use_lognorm);
  }
  void error_metrics_plot(const ErrorMetricsRequest& r) override {
    py::gil_scoped_acquire gil;
    plots_->attr("error_metrics_plot")(array_from_tensor(r.absdiff), array_from_tensor(r.reldiff),
                                       array_from_tensor(r.reference), r.min_reldiff, r.max_reldiff,
                                       r.runner0, r.runner1, r.out0_name, r.out1_name,
                                       dir(r.save_dir), r.show);
  }

 private:
  static py::object dir(const std::string& path) {
    return path.empty() ? py::none() : py::object(py::str(path));
  }
  PyRef plots_;
};

}  // namespace

// Adapts a Python compare function `fn(iteration_result0, iteration_result1) -> {name:
// bool or OutputCompareResult}` to the C++ interface.
CompareFunc compare_func_from_object(py::object obj) {
  if (obj.is_none()) return nullptr;
  if (py::isinstance<CompareFuncHandle>(obj)) return obj.cast<const CompareFuncHandle&>().fn;
  PyRef fn = make_py_ref(std::move(obj));
  return [fn](const IterationResult& a, const IterationResult& b) {
    py::gil_scoped_acquire gil;
    py::object result = (*fn)(a, b);
    IterationCompareResult out;
    for (py::handle item : result.attr("items")()) {
      auto kv = item.cast<py::tuple>();
      OutputCompareResult r;
      if (py::isinstance<OutputCompareResult>(kv[1]))
        r = kv[1].cast<OutputCompareResult>();
      else
        r.passed = py::bool_(kv[1]);
      out.emplace_back(py::str(kv[0]), r);
    }
    return out;
  };
}

namespace {

// (min, max) of Polygraphy's int_range/float_range; None leaves the option unset.
std::optional<std::pair<double, double>> range_pair(const char* what, py::handle r) {
  if (r.is_none()) return std::nullopt;
  auto t = r.cast<py::sequence>();
  if (t.size() != 2)
    fail_usage("failed to create a DataLoader with {}={}: give (min, max)", what,
               std::string(py::repr(r)));
  return std::pair<double, double>{t[0].cast<double>(), t[1].cast<double>()};
}

DataLoaderOptions data_loader_options(uint32_t seed, int64_t iterations, py::object metadata,
                                      py::object val_range, py::object int_range,
                                      py::object float_range, int64_t sequence_length,
                                      int64_t map_size) {
  DataLoaderOptions o;
  o.sequence_length = sequence_length;
  o.map_size = map_size;
  o.seed = seed;
  if (iterations < 1)
    fail_usage("failed to create a DataLoader with iterations={}: at least 1 is needed",
               iterations);
  o.iterations = iterations;
  if (!metadata.is_none()) o.input_metadata = metadata.cast<TensorMetadata>();
  auto range = [](py::handle r) {
    auto t = r.cast<py::sequence>();
    if (t.size() != 2)
      fail_usage("failed to read val_range {}: give (min, max)", std::string(py::repr(r)));
    ValueRange v;
    if (!t[0].is_none()) v.min = t[0].cast<double>();
    if (!t[1].is_none()) v.max = t[1].cast<double>();
    return v;
  };
  if (py::isinstance<py::dict>(val_range)) {
    for (auto [k, v] : val_range.cast<py::dict>()) o.val_range[k.cast<std::string>()] = range(v);
  } else if (!val_range.is_none()) {
    o.val_range[""] = range(val_range);
  }
  o.int_range = range_pair("int_range", int_range);
  o.float_range = range_pair("float_range", float_range);
  return o;
}

}  // namespace

namespace {

// A map as a Python dict (int or str keys, NumPy scalars), as ONNX Runtime's binding takes it.
py::dict dict_from_map(const MapValue& m) {
  py::dict d;
  py::array keys = array_from_tensor(m.keys), values = array_from_tensor(m.values);
  for (int64_t i = 0; i < m.size(); ++i) {
    py::object key = keys[py::int_(i)];
    d[m.keys.dtype() == DataType::kString ? py::object(py::str(key)) : py::object(py::int_(key))] =
        values[py::int_(i)];
  }
  return d;
}

// A generated feed as Python feeds are given: the sequence and map inputs of `metadata` as
// lists and dicts (as tensors_from_dict reads them back), other inputs as arrays.
py::dict feed_dict(const TensorMap& feed, const TensorMetadata* metadata) {
  std::vector<std::string> value_names;
  if (metadata)
    for (const TensorMeta& m : *metadata)
      if (m.value) value_names.push_back(m.name);
  TensorMap rest;
  py::dict values;
  for (const auto& [name, value] : value_inputs(feed, value_names, rest)) {
    py::list items;
    if (value.is_map()) {
      values[py::str(name)] = dict_from_map(value.map);
      continue;
    }
    for (const Tensor& t : value.sequence) items.append(array_from_tensor(t));
    for (const MapValue& m : value.maps) items.append(dict_from_map(m));
    values[py::str(name)] = items;
  }
  // In the inputs' order, as the loader generated them.
  py::dict d;
  if (metadata)
    for (const TensorMeta& m : *metadata) {
      py::str name(m.name);
      if (values.contains(name)) d[name] = values[name];
      if (rest.contains(m.name)) d[name] = array_from_tensor(rest.at(m.name));
    }
  for (const auto& [name, t] : rest)
    if (!d.contains(py::str(name))) d[py::str(name)] = array_from_tensor(t);
  return d;
}

}  // namespace

std::unique_ptr<FeedSource> feeds_from_object(py::object data_loader, FeedSource** borrowed) {
  *borrowed = nullptr;
  if (data_loader.is_none()) return std::make_unique<DataLoader>();
  if (py::isinstance<DataLoader>(data_loader)) {
    *borrowed = &data_loader.cast<DataLoader&>();
    return nullptr;
  }
  return std::make_unique<PyFeedSource>(std::move(data_loader));
}

double to_double(py::handle h) { return h.cast<double>(); }
int64_t to_int(py::handle h) { return h.cast<int64_t>(); }
ErrorStat to_error_stat(py::handle h) { return error_stat_from_name(h.cast<std::string>()); }

void bind_comparator(py::module_& m) {
  py::class_<CompareFuncHandle>(m, "CompareFuncHandle")
      .def("__call__",
           [](const CompareFuncHandle& self, const IterationResult& a, const IterationResult& b) {
             IterationCompareResult r = self.fn(a, b);
             py::dict out;
             for (const auto& [name, res] : r) out[py::str(name)] = res;
             return out;
           });

  m.def(
      "compare_func_simple",
      [](bool check_shapes, py::object rtol, py::object atol, bool fail_fast,
         py::object check_error_stat, bool infinities_compare_equal, py::object error_quantile,
         std::string save_heatmaps, bool show_heatmaps, std::string save_error_metrics_plot,
         bool show_error_metrics_plot, py::object plotter) {
        SimpleCompareOptions o;
        o.plots = {save_heatmaps, show_heatmaps, save_error_metrics_plot, show_error_metrics_plot};
        if (o.plots.any()) {
          if (plotter.is_none())
            fail_usage(
                "failed to make CompareFunc.simple with figures of the errors: no plotter "
                "was given; use parity.comparator.CompareFunc.simple");
          o.plotter = std::make_shared<PyErrorPlotter>(std::move(plotter));
        }
        o.check_shapes = check_shapes;
        o.rtol = per_output<double>(rtol, 1e-5, to_double);
        o.atol = per_output<double>(atol, 1e-5, to_double);
        o.fail_fast = fail_fast;
        o.check_error_stat =
            per_output<ErrorStat>(check_error_stat, ErrorStat::kElemwise, to_error_stat);
        o.infinities_compare_equal = infinities_compare_equal;
        o.error_quantile = per_output<double>(error_quantile, 0.99, to_double);
        return CompareFuncHandle{compare_func::simple(o)};
      },
      py::arg("check_shapes"), py::arg("rtol"), py::arg("atol"), py::arg("fail_fast"),
      py::arg("check_error_stat"), py::arg("infinities_compare_equal"), py::arg("error_quantile"),
      py::arg("save_heatmaps") = "", py::arg("show_heatmaps") = false,
      py::arg("save_error_metrics_plot") = "", py::arg("show_error_metrics_plot") = false,
      py::arg("plotter") = py::none());

  m.def(
      "compare_func_indices",
      [](py::object index_tolerance, bool fail_fast) {
        IndicesCompareOptions o;
        o.index_tolerance = per_output<int64_t>(index_tolerance, 0, to_int);
        o.fail_fast = fail_fast;
        return CompareFuncHandle{compare_func::indices(o)};
      },
      py::arg("index_tolerance"), py::arg("fail_fast"));

  m.def(
      "compare_func_distance",
      [](py::object l2_tolerance, py::object cosine_similarity_threshold, bool check_shapes,
         bool fail_fast) {
        DistanceCompareOptions o;
        o.l2_tolerance = per_output<double>(l2_tolerance, 1e-5, to_double);
        o.cosine_similarity_threshold =
            per_output<double>(cosine_similarity_threshold, 0.997, to_double);
        o.check_shapes = check_shapes;
        o.fail_fast = fail_fast;
        return CompareFuncHandle{compare_func::distance(o)};
      },
      py::arg("l2_tolerance"), py::arg("cosine_similarity_threshold"), py::arg("check_shapes"),
      py::arg("fail_fast"));

  m.def(
      "compare_func_quality",
      [](py::object psnr_tolerance, py::object snr_tolerance, bool check_shapes, bool fail_fast) {
        QualityCompareOptions o;
        o.psnr_tolerance = per_output<double>(psnr_tolerance, 30.0, to_double);
        o.snr_tolerance = per_output<double>(snr_tolerance, 20.0, to_double);
        o.check_shapes = check_shapes;
        o.fail_fast = fail_fast;
        return CompareFuncHandle{compare_func::quality(o)};
      },
      py::arg("psnr_tolerance"), py::arg("snr_tolerance"), py::arg("check_shapes"),
      py::arg("fail_fast"));

  py::class_<PostprocessFuncHandle>(m, "PostprocessFuncHandle")
      .def("__call__", [](const PostprocessFuncHandle& self, IterationResult& r) {
        self.fn(r);
        return r;
      });
  m.def("postprocess_top_k", [](py::object k) {
    TopKOptions o;
    auto one = [](py::handle v) {
      if (py::isinstance<py::int_>(v)) return std::pair<int64_t, int64_t>{v.cast<int64_t>(), -1};
      auto t = v.cast<std::pair<int64_t, int64_t>>();
      return t;
    };
    if (py::isinstance<py::dict>(k)) {
      for (auto [name, v] : k.cast<py::dict>()) o.k.values[name.cast<std::string>()] = one(v);
    } else {
      o.k.values[""] = one(k);
    }
    return PostprocessFuncHandle{postprocess_func::top_k(o)};
  });

  py::class_<FeedSource>(m, "FeedSource");
  py::class_<DataLoader, FeedSource>(m, "DataLoader", "Generates Polygraphy's inputs bit for bit.")
      .def(py::init([](uint32_t seed, int64_t iterations, py::object input_metadata,
                       py::object val_range, py::object int_range, py::object float_range,
                       int64_t sequence_length, int64_t map_size) {
             return DataLoader(data_loader_options(seed, iterations, input_metadata, val_range,
                                                   int_range, float_range, sequence_length,
                                                   map_size));
           }),
           py::arg("seed") = 1, py::arg("iterations") = 1, py::arg("input_metadata") = py::none(),
           py::arg("val_range") = py::none(), py::arg("int_range") = py::none(),
           py::arg("float_range") = py::none(), py::kw_only(), py::arg("sequence_length") = 1,
           py::arg("map_size") = 1)
      .def("set_input_metadata", &DataLoader::set_input_metadata)
      .def_property(
          "input_metadata",
          [](const DataLoader& d) -> py::object {
            const TensorMetadata* meta = d.input_metadata();
            return meta ? py::cast(*meta) : py::none();
          },
          [](DataLoader& d, const TensorMetadata& meta) { d.set_input_metadata(meta); })
      .def("__len__", [](const DataLoader& d) { return *d.size(); })
      .def("__getitem__", [](DataLoader& d, size_t i) {
        std::optional<TensorMap> feed = d.get(i);
        if (!feed) throw py::index_error(fmt::format("DataLoader index {} is out of range", i));
        return feed_dict(*feed, d.input_metadata());
      });

  m.def(
      "comparator_run",
      [](const std::vector<std::shared_ptr<Runner>>& runners, py::object data_loader,
         int64_t warm_up, const std::string& save_inputs_path, bool strict_inputs,
         bool use_subprocess, std::optional<double> subprocess_timeout) {
        FeedSource* borrowed = nullptr;
        std::unique_ptr<FeedSource> owned = feeds_from_object(std::move(data_loader), &borrowed);
        FeedSource& feeds = borrowed ? *borrowed : *owned;
        // With use_subprocess each runner runs in a child process; as in Polygraphy, a runner
        // that terminates prematurely raises.
        std::vector<std::unique_ptr<SubprocessRunner>> isolated;
        std::vector<Runner*> raw;
        for (const auto& r : runners) {
          if (use_subprocess) {
            isolated.push_back(
                std::make_unique<SubprocessRunner>(*r, SubprocessOptions{subprocess_timeout}));
            raw.push_back(isolated.back().get());
          } else {
            raw.push_back(r.get());
          }
        }
        std::vector<TensorMap> used;
        RunOptions options;
        options.warm_up = warm_up;
        options.strict_inputs = strict_inputs;
        if (!save_inputs_path.empty()) options.used_feeds = &used;
        RunResults results;
        {
          py::gil_scoped_release nogil;
          results = Comparator::run(raw, feeds, options);
          if (!save_inputs_path.empty()) {
            logger().info("Saving inference input data to {}", save_inputs_path);
            io::save_inputs(save_inputs_path, used);
          }
        }
        return results;
      },
      py::arg("runners"), py::arg("data_loader"), py::arg("warm_up"), py::arg("save_inputs_path"),
      py::arg("strict_inputs") = false, py::arg("use_subprocess") = false,
      py::arg("subprocess_timeout") = py::none());

  m.def(
      "comparator_compare_accuracy",
      [](const RunResults& results, bool fail_fast, py::object comparisons,
         py::object compare_func) {
        std::optional<std::vector<std::pair<size_t, size_t>>> pairs;
        if (!comparisons.is_none())
          pairs = comparisons.cast<std::vector<std::pair<size_t, size_t>>>();
        CompareFunc fn = compare_func_from_object(std::move(compare_func));
        py::gil_scoped_release nogil;
        return Comparator::compare_accuracy(results, fail_fast, pairs, fn);
      },
      py::arg("run_results"), py::arg("fail_fast"), py::arg("comparisons"),
      py::arg("compare_func"));

  m.def("comparator_validate", &Comparator::validate, py::arg("run_results"), py::arg("check_inf"),
        py::arg("check_nan"), py::arg("fail_fast"), py::call_guard<py::gil_scoped_release>());

  m.def("comparator_default_comparisons", &Comparator::default_comparisons);

  m.def(
      "comparator_postprocess",
      [](RunResults& results, py::object fn) {
        if (py::isinstance<PostprocessFuncHandle>(fn)) {
          PostprocessFunc f = fn.cast<const PostprocessFuncHandle&>().fn;
          py::gil_scoped_release nogil;
          Comparator::postprocess(results, f);
          return;
        }
        // A Python function gets each IterationResult (by reference, so it may change it in
        // place) and may return a replacement.
        for (auto& [name, its] : results)
          for (auto& it : its) {
            py::object ret = fn(py::cast(&it, py::return_value_policy::reference));
            if (!ret.is_none()) it = ret.cast<IterationResult>();
          }
      },
      py::arg("run_results"), py::arg("postprocess_func"));

  // The logger (parity.logger.G_LOGGER is a thin Python object over these).
  m.def("get_severity", [] { return static_cast<int>(logger().severity()); });
  m.def("set_severity", [](int s) { logger().set_severity(static_cast<Severity>(s)); });
  m.def("set_colors", [](bool on) { logger().set_colors(on); });
  m.def("set_log_file", [](const std::string& path) { logger().set_log_file(path); });
  m.def("log", [](int severity, const std::string& message) {
    logger().log(static_cast<Severity>(severity), message);
  });
  m.def("log_once", [](int severity, const std::string& message) {
    logger().log_once(static_cast<Severity>(severity), message);
  });
  // G_LOGGER.indent(): an indentation that lasts from enter() to exit() (a `with` block).
  py::class_<LoggerIndent>(m, "LoggerIndent")
      .def(py::init<int>(), py::arg("levels") = 1)
      .def("enter", [](LoggerIndent& self) { self.indent.emplace(self.levels); })
      .def("exit", [](LoggerIndent& self) { self.indent.reset(); });
  m.def("logger_indent", [] { return logger().indent(); });
  m.def("severity_from_count",
        [](int count) { return static_cast<int>(severity_from_count(count)); });
}

}  // namespace parity::python
