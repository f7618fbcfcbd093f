// Dataset runs (comparator/dataset.h) for parity.dataset and parity.distributed: the in-process
// run, the per-worker feed runner, the summary and its records. Records pickle as plain tuples
// of Python floats (exact doubles), so a summary made on a cluster is the one made here.
#include "comparator/dataset.h"
#include "core/logger.h"
#include "io/feed_files.h"
#include "io/json.h"
#include "py_util.h"
#include "report/dataset_report.h"

namespace parity::python {

namespace {

py::tuple compare_result_state(const std::string& name, const OutputCompareResult& r) {
  auto opt = [](const std::optional<double>& v) -> py::object {
    return v ? py::object(py::float_(*v)) : py::object(py::none());
  };
  return py::make_tuple(name, r.passed, r.max_absdiff, r.max_reldiff, r.mean_absdiff,
                        r.mean_reldiff, r.median_absdiff, r.median_reldiff, opt(r.quantile_absdiff),
                        opt(r.quantile_reldiff));
}

std::pair<std::string, OutputCompareResult> compare_result_from_state(py::handle h) {
  auto t = h.cast<py::tuple>();
  if (t.size() != 10) throw std::runtime_error("malformed OutputCompareResult state");
  OutputCompareResult r;
  r.passed = t[1].cast<bool>();
  r.max_absdiff = t[2].cast<double>();
  r.max_reldiff = t[3].cast<double>();
  r.mean_absdiff = t[4].cast<double>();
  r.mean_reldiff = t[5].cast<double>();
  r.median_absdiff = t[6].cast<double>();
  r.median_reldiff = t[7].cast<double>();
  if (!t[8].is_none()) r.quantile_absdiff = t[8].cast<double>();
  if (!t[9].is_none()) r.quantile_reldiff = t[9].cast<double>();
  return {t[0].cast<std::string>(), r};
}

py::tuple iteration_state(const DatasetIteration& it) {
  py::list pairs;
  for (const IterationCompareResult& pair : it.pairs) {
    py::list outputs;
    for (const auto& [name, r] : pair) outputs.append(compare_result_state(name, r));
    pairs.append(outputs);
  }
  return py::make_tuple(it.index, it.errors, pairs);
}

DatasetIteration iteration_from_state(const py::tuple& t) {
  if (t.size() != 3) throw std::runtime_error("malformed DatasetIteration state");
  DatasetIteration it;
  it.index = t[0].cast<size_t>();
  it.errors = t[1].cast<std::vector<std::string>>();
  for (py::handle pair : t[2].cast<py::list>()) {
    IterationCompareResult outputs;
    for (py::handle r : pair.cast<py::list>()) outputs.push_back(compare_result_from_state(r));
    it.pairs.push_back(std::move(outputs));
  }
  return it;
}

// One runner's outcome on one feed as plain Python values, cheap to send between processes:
// (runner name, runtime or None, {output: array} or None, error).
py::tuple outcome_state(const std::string& runner, const RunnerOutcome& o) {
  if (!o.result) return py::make_tuple(runner, py::none(), py::none(), o.error);
  return py::make_tuple(
      runner,
      o.result->runtime ? py::object(py::float_(*o.result->runtime)) : py::object(py::none()),
      dict_from_tensors(o.result->outputs), "");
}

IterationResult iteration_result_from_outcome(size_t index, py::handle h) {
  auto t = h.cast<py::tuple>();
  IterationResult it;
  it.runner_name = t[0].cast<std::string>();
  if (!t[1].is_none()) it.runtime = t[1].cast<double>();
  if (!t[2].is_none()) it.outputs = tensors_from_dict(t[2], "saved output");
  it.error = t[3].cast<std::string>();
  it.dataset_index = index;
  return it;
}

std::vector<Runner*> raw_runners(const std::vector<std::shared_ptr<Runner>>& runners) {
  std::vector<Runner*> raw;
  for (const auto& r : runners) raw.push_back(r.get());
  return raw;
}

// The runners of one worker, active for as long as the object lives (the worker's cache).
struct PyDatasetFeedRunner {
  std::vector<std::shared_ptr<Runner>> runners;  // kept alive while active
  std::unique_ptr<DatasetFeedRunner> impl;
};

}  // namespace

void bind_dataset(py::module_& m) {
  py::class_<DatasetIteration>(m, "DatasetIteration",
                               "The compact record of one iteration of a dataset run.")
      .def_readonly("index", &DatasetIteration::index)
      .def_readonly("errors", &DatasetIteration::errors)
      .def_property_readonly("pairs",
                             [](const DatasetIteration& it) {
                               py::list pairs;
                               for (const IterationCompareResult& pair : it.pairs) {
                                 py::dict outputs;
                                 for (const auto& [name, r] : pair) outputs[py::str(name)] = r;
                                 pairs.append(outputs);
                               }
                               return pairs;
                             })
      .def("ran", &DatasetIteration::ran)
      .def("passed", [](const DatasetIteration& it) { return it.passed(); })
      .def("__eq__",
           [](const DatasetIteration& a, const DatasetIteration& b) {
             return iteration_state(a).equal(iteration_state(b));
           })
      .def(py::pickle([](const DatasetIteration& it) { return iteration_state(it); },
                      [](const py::tuple& t) { return iteration_from_state(t); }));

  py::class_<DatasetSummary>(m, "DatasetSummary",
                             "The records of a dataset run and what they say together.")
      .def(py::init([](const std::vector<std::string>& runners) {
             return DatasetSummary(runners, default_pairs(runners));
           }),
           py::arg("runners"))
      .def("add", &DatasetSummary::add, py::arg("iteration"))
      .def_property_readonly("runners", &DatasetSummary::runners)
      .def_property_readonly("pairs", &DatasetSummary::pairs)
      .def_property_readonly("iterations", &DatasetSummary::iterations)
      .def("ran_count", &DatasetSummary::ran_count)
      .def("passed_count", &DatasetSummary::passed_count)
      .def("passed", [](const DatasetSummary& s) { return s.verdict().passed(); })
      .def("why", [](const DatasetSummary& s) { return s.verdict().why(); })
      .def(
          "log",
          [](const DatasetSummary& s, size_t worst) {
            DatasetSummaryOptions o;
            o.worst = worst;
            s.log(o);
          },
          py::arg("worst") = 5, py::call_guard<py::gil_scoped_release>())
      .def(
          "error_distributions",
          [](const DatasetSummary& s, size_t pair, size_t worst) {
            py::list out;
            for (const OutputErrorDistribution& d : error_distributions(s, pair, worst)) {
              py::dict e;
              e["output"] = d.output;
              e["compared"] = d.compared;
              e["passed"] = d.passed;
              e["abs"] = py::make_tuple(d.abs_min, d.abs_median, d.abs_p90, d.abs_p99, d.abs_max);
              e["rel"] = py::make_tuple(d.rel_min, d.rel_median, d.rel_p90, d.rel_p99, d.rel_max);
              e["abs_mean"] = d.abs_mean;
              e["worst"] = d.worst;
              e["decades"] = d.decades;
              out.append(e);
            }
            return out;
          },
          py::arg("pair") = 0, py::arg("worst") = 5);

  py::class_<PyDatasetFeedRunner>(m, "DatasetFeedRunner",
                                  "Runners kept active to run feeds one at a time.")
      .def(py::init([](const std::vector<std::shared_ptr<Runner>>& runners, py::object compare,
                       bool strict_inputs) {
             auto self = std::make_unique<PyDatasetFeedRunner>();
             self->runners = runners;
             CompareFunc fn = compare_func_from_object(std::move(compare));
             py::gil_scoped_release nogil;
             self->impl =
                 std::make_unique<DatasetFeedRunner>(raw_runners(runners), fn, strict_inputs);
             return self;
           }),
           py::arg("runners"), py::arg("compare_func") = py::none(),
           py::arg("strict_inputs") = false)
      .def_property_readonly("input_metadata",
                             [](const PyDatasetFeedRunner& s) { return s.impl->input_metadata(); })
      .def_property_readonly("names", [](const PyDatasetFeedRunner& s) { return s.impl->names(); })
      .def(
          "run",
          [](PyDatasetFeedRunner& s, size_t index, py::handle feed, bool keep_outputs) {
            TensorMap tensors = tensors_from_dict(feed, fmt::format("feed {}, input", index));
            std::vector<RunnerOutcome> outcomes;
            DatasetIteration record;
            {
              py::gil_scoped_release nogil;
              record = s.impl->run(index, tensors, keep_outputs ? &outcomes : nullptr);
            }
            if (!keep_outputs) return py::make_tuple(record, py::none());
            py::list states;
            for (size_t r = 0; r < outcomes.size(); ++r)
              states.append(outcome_state(s.impl->names()[r], outcomes[r]));
            return py::make_tuple(record, states);
          },
          py::arg("index"), py::arg("feed"), py::arg("keep_outputs") = false)
      .def("close", [](PyDatasetFeedRunner& s) {
        py::gil_scoped_release nogil;
        if (s.impl) s.impl->log_completion();
        s.impl.reset();
      });

  py::class_<io::RunResultsStream>(m, "RunResultsStreamWriter",
                                   "Saves RunResults as iterations come (--save-outputs).")
      .def(py::init<std::string, const std::vector<std::string>&>(), py::arg("path"),
           py::arg("runners"))
      .def(
          "add_outcomes",
          [](io::RunResultsStream& w, size_t index, py::list outcomes) {
            for (size_t r = 0; r < outcomes.size(); ++r)
              w.add(r, iteration_result_from_outcome(index, outcomes[r]));
          },
          py::arg("index"), py::arg("outcomes"))
      .def("finish", &io::RunResultsStream::finish);

  // Feeds from files and folders, read one file at a time, as a Python iterator.
  py::class_<io::FileFeedSource, FeedSource>(m, "FileFeeds",
                                             "Feeds of .json, .npz and .npy files and folders.")
      .def(py::init<const std::vector<std::string>&>(), py::arg("paths"))
      .def_property_readonly("files", &io::FileFeedSource::files)
      .def("set_input_metadata", &io::FileFeedSource::set_input_metadata)
      .def("get", [](io::FileFeedSource& s, size_t i) -> py::object {
        std::optional<TensorMap> feed;
        {
          py::gil_scoped_release nogil;
          feed = s.get(i);
        }
        if (!feed) return py::none();
        return dict_from_tensors(*feed);
      });

  // A DataLoader travels to Dask workers as its options, and each worker makes the same feeds
  // (iteration i from seed + i) for its own runners' inputs: every option travels, the user's
  // input metadata (--input-shapes) and the deprecated int/float ranges included.
  py::reinterpret_borrow<py::class_<DataLoader, FeedSource>>(m.attr("DataLoader"))
      .def(py::pickle(
          [](const DataLoader& d) {
            const DataLoaderOptions& o = d.options();
            auto optional_number = [](const std::optional<double>& v) {
              return v ? py::object(py::float_(*v)) : py::object(py::none());
            };
            py::dict ranges;
            for (const auto& [name, r] : o.val_range)
              ranges[py::str(name)] =
                  py::make_tuple(optional_number(r.min), optional_number(r.max));
            py::list metadata;
            for (const TensorMeta& meta : o.input_metadata) {
              py::object dtype = meta.dtype
                                     ? py::object(py::int_(static_cast<int32_t>(*meta.dtype)))
                                     : py::object(py::none());
              py::object shape = py::none();
              if (meta.shape) {
                py::list dims;
                for (const Dim& dim : *meta.shape)
                  dims.append(py::make_tuple(dim.value, dim.param));
                shape = dims;
              }
              metadata.append(py::make_tuple(meta.name, dtype, shape));
            }
            auto optional_range = [](const std::optional<std::pair<double, double>>& r) {
              return r ? py::object(py::make_tuple(r->first, r->second)) : py::object(py::none());
            };
            return py::make_tuple(o.seed, o.iterations, ranges, metadata,
                                  optional_range(o.int_range), optional_range(o.float_range));
          },
          [](const py::tuple& t) {
            DataLoaderOptions o;
            o.seed = t[0].cast<uint32_t>();
            o.iterations = t[1].cast<int64_t>();
            for (auto [name, r] : t[2].cast<py::dict>()) {
              auto pair = r.cast<py::tuple>();
              ValueRange v;
              if (!pair[0].is_none()) v.min = pair[0].cast<double>();
              if (!pair[1].is_none()) v.max = pair[1].cast<double>();
              o.val_range[name.cast<std::string>()] = v;
            }
            for (auto item : t[3].cast<py::list>()) {
              auto meta = item.cast<py::tuple>();
              std::optional<DataType> dtype;
              if (!meta[1].is_none()) dtype = static_cast<DataType>(meta[1].cast<int32_t>());
              std::optional<DimList> shape;
              if (!meta[2].is_none()) {
                shape.emplace();
                for (auto dim : meta[2].cast<py::list>()) {
                  auto d = dim.cast<py::tuple>();
                  shape->push_back(Dim{d[0].cast<int64_t>(), d[1].cast<std::string>()});
                }
              }
              o.input_metadata.add(meta[0].cast<std::string>(), dtype, std::move(shape));
            }
            auto range_of = [](const py::object& r) -> std::optional<std::pair<double, double>> {
              if (r.is_none()) return std::nullopt;
              auto pair = r.cast<py::tuple>();
              return std::pair{pair[0].cast<double>(), pair[1].cast<double>()};
            };
            o.int_range = range_of(t[4]);
            o.float_range = range_of(t[5]);
            return DataLoader(o);
          }));

  m.def(
      "dataset_run",
      [](const std::vector<std::shared_ptr<Runner>>& runners, py::object data_loader,
         py::object compare, size_t shard_index, size_t shard_count,
         const std::string& save_outputs_path, bool strict_inputs) {
        if (shard_count == 0 || shard_index >= shard_count)
          fail_usage(
              "failed to run a dataset with shard=({}, {}): give (index, count) with 0 <= index "
              "< count",
              shard_index, shard_count);
        FeedSource* borrowed = nullptr;
        std::unique_ptr<FeedSource> owned;
        if (py::isinstance<io::FileFeedSource>(data_loader))
          borrowed = &data_loader.cast<io::FileFeedSource&>();
        else
          owned = feeds_from_object(std::move(data_loader), &borrowed);
        FeedSource& feeds = borrowed ? *borrowed : *owned;
        DatasetRunOptions options;
        options.compare = compare_func_from_object(std::move(compare));
        options.shard = Shard{shard_index, shard_count};
        options.strict_inputs = strict_inputs;
        std::vector<std::string> names;
        for (const auto& r : runners) names.push_back(r->name());
        std::unique_ptr<io::RunResultsStream> writer;
        if (!save_outputs_path.empty()) {
          writer = std::make_unique<io::RunResultsStream>(save_outputs_path, names);
          options.on_iteration = [&](size_t index, const std::vector<RunnerOutcome>& outcomes) {
            for (size_t r = 0; r < outcomes.size(); ++r) {
              IterationResult failed;
              failed.runner_name = names[r];
              failed.dataset_index = index;
              failed.error = outcomes[r].error;
              writer->add(r, outcomes[r].result ? *outcomes[r].result : failed);
            }
          };
        }
        py::gil_scoped_release nogil;
        DatasetSummary summary = run_dataset(raw_runners(runners), feeds, options);
        if (writer) {
          logger().info("Saving inference results to {}", save_outputs_path);
          writer->finish();
        }
        return summary;
      },
      py::arg("runners"), py::arg("data_loader"), py::arg("compare_func"), py::arg("shard_index"),
      py::arg("shard_count"), py::arg("save_outputs_path"), py::arg("strict_inputs"));

  m.def(
      "dataset_compare_results",
      [](const RunResults& results, py::object compare) {
        CompareFunc fn = compare_func_from_object(std::move(compare));
        py::gil_scoped_release nogil;
        return compare_dataset_results(results, fn);
      },
      py::arg("run_results"), py::arg("compare_func"));
  m.def(
      "write_dataset_report",
      [](const std::string& path, const DatasetSummary& summary, size_t worst,
         const std::string& command) { write_dataset_report(path, summary, worst, command); },
      py::arg("path"), py::arg("summary"), py::arg("worst"), py::arg("command"),
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace parity::python
