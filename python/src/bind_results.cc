// Result structures (Polygraphy's comparator/struct.py) and their JSON files.
#include <pybind11/stl_bind.h>

#include "comparator/compare.h"
#include "io/json.h"
#include "py_util.h"

namespace parity::python {

namespace {

using IterationList = std::vector<IterationResult>;

IterationResult make_iteration_result(py::object outputs, std::optional<double> runtime,
                                      std::optional<std::string> runner_name) {
  IterationResult r;
  if (!outputs.is_none()) r.outputs = tensors_from_dict(outputs, "output");
  r.runtime = runtime;
  if (runner_name) r.runner_name = *runner_name;
  return r;
}

IterationList iteration_list_from_object(py::handle obj) {
  if (py::isinstance<IterationList>(obj)) return obj.cast<IterationList>();
  IterationList list;
  for (py::handle item : obj) list.push_back(item.cast<IterationResult>());
  return list;
}

// Runner entries are looked up by name or by position, as in Polygraphy.
IterationList& entry_by_name(RunResults& self, const std::string& name) {
  self.at(name);  // throws Polygraphy's "does not exist in this RunResults instance" error
  for (auto& [n, its] : self)
    if (n == name) return its;
  throw py::key_error(name);
}

}  // namespace

void bind_results(py::module_& m) {
  py::class_<IterationResult>(m, "IterationResult",
                              "The outputs of one inference of one runner (a dict of arrays).")
      .def(py::init(&make_iteration_result), py::arg("outputs") = py::none(),
           py::arg("runtime") = py::none(), py::arg("runner_name") = py::none())
      .def_readwrite("runtime", &IterationResult::runtime)
      .def_readwrite("runner_name", &IterationResult::runner_name)
      .def("__getitem__",
           [](const IterationResult& self, const std::string& name) {
             const Tensor* t = self.outputs.find(name);
             if (!t) throw py::key_error(name);
             return array_from_tensor(*t);
           })
      .def("__setitem__",
           [](IterationResult& self, const std::string& name, py::handle array) {
             self.outputs.set(name, tensor_from_array(array, fmt::format("output '{}'", name)));
           })
      .def("__delitem__",
           [](IterationResult& self, const std::string& name) {
             if (!self.outputs.erase(name)) throw py::key_error(name);
           })
      .def("__contains__", [](const IterationResult& self,
                              const std::string& n) { return self.outputs.contains(n); })
      .def("__len__", [](const IterationResult& self) { return self.outputs.size(); })
      .def("__iter__",
           [](const IterationResult& self) { return py::iter(py::cast(self.outputs.names())); })
      .def("keys", [](const IterationResult& self) { return self.outputs.names(); })
      .def("values",
           [](const IterationResult& self) {
             py::list out;
             for (const auto& [n, t] : self.outputs) out.append(array_from_tensor(t));
             return out;
           })
      .def("items",
           [](const IterationResult& self) {
             return dict_from_tensors(self.outputs).attr("items")();
           })
      .def("__eq__",
           [](const IterationResult& a, const IterationResult& b) {
             if (a.runtime != b.runtime || a.runner_name != b.runner_name ||
                 a.outputs.names() != b.outputs.names())
               return false;
             for (const auto& [name, t] : a.outputs)
               if (!t.equals(b.outputs.at(name))) return false;
             return true;
           })
      .def("__repr__", [](const IterationResult& self) {
        return fmt::format("IterationResult(runner_name='{}', outputs=[{}])", self.runner_name,
                           fmt::join(self.outputs.names(), ", "));
      });

  py::bind_vector<IterationList>(m, "IterationResultList");

  py::class_<RunResults>(m, "RunResults",
                         "A list of (runner name, [IterationResult]) pairs with dict-like access.")
      .def(py::init<>())
      .def("__len__", &RunResults::size)
      .def("keys", &RunResults::keys)
      .def("values",
           [](py::object self) {
             py::list out;
             for (auto& [name, its] : self.cast<RunResults&>())
               out.append(py::cast(&its, py::return_value_policy::reference_internal, self));
             return out;
           })
      .def("items",
           [](py::object self) {
             py::list out;
             for (auto& [name, its] : self.cast<RunResults&>())
               out.append(py::make_tuple(
                   name, py::cast(&its, py::return_value_policy::reference_internal, self)));
             return out;
           })
      .def("__iter__", [](py::object self) { return py::iter(self.attr("items")()); })
      .def("__getitem__",
           [](py::object self, py::object key) -> py::object {
             RunResults& r = self.cast<RunResults&>();
             if (py::isinstance<py::int_>(key)) {
               int64_t i = key.cast<int64_t>();
               if (i < 0) i += static_cast<int64_t>(r.size());
               if (i < 0 || i >= static_cast<int64_t>(r.size()))
                 throw py::index_error(
                     fmt::format("RunResults index {} is out of range: it has "
                                 "{} runner(s)",
                                 key.cast<int64_t>(), r.size()));
               auto it = r.begin() + i;
               return py::make_tuple(
                   it->first,
                   py::cast(&it->second, py::return_value_policy::reference_internal, self));
             }
             return py::cast(&entry_by_name(r, key.cast<std::string>()),
                             py::return_value_policy::reference_internal, self);
           })
      .def("__setitem__",
           [](RunResults& self, const std::string& name, py::handle iterations) {
             self.set(name, iteration_list_from_object(iterations));
           })
      .def("__contains__", &RunResults::contains)
      // Polygraphy's RunResults is a list of (name, iterations) pairs: append((name, its));
      // append(name, its) is accepted too.
      .def(
          "append",
          [](RunResults& self, py::object first, py::object iterations) {
            if (iterations.is_none()) {
              auto pair = first.cast<py::sequence>();
              if (py::isinstance<py::str>(first) || pair.size() != 2)
                throw py::type_error(
                    "RunResults.append() takes a (runner name, [IterationResult]) pair");
              first = pair[0];
              iterations = pair[1];
            }
            self.append({first.cast<std::string>(), iteration_list_from_object(iterations)});
          },
          py::arg("item"), py::arg("iterations") = py::none())
      .def("extend",
           [](RunResults& self, const RunResults& other) {
             for (const auto& entry : other) self.append(entry);
           })
      .def(
          "add",
          [](RunResults& self, py::handle out_list, std::optional<double> runtime,
             std::optional<std::string> runner_name) {
            const std::string name = runner_name.value_or("custom_runner");
            IterationList its;
            for (py::handle out : out_list) {
              IterationResult r;
              r.outputs = tensors_from_dict(out, "output");
              r.runtime = runtime;
              r.runner_name = name;
              its.push_back(std::move(r));
            }
            self.add(std::move(its), name);
          },
          py::arg("out_list"), py::arg("runtime") = py::none(), py::arg("runner_name") = py::none())
      .def("to_json", [](const RunResults& self) { return io::run_results_to_json(self); })
      .def_static("from_json", &io::run_results_from_json)
      .def("save", [](const RunResults& self,
                      const std::string& path) { io::save_run_results(path, self); })
      .def_static("load", &io::load_run_results)
      .def("__repr__", [](const RunResults& self) {
        return fmt::format("RunResults(runners=[{}])", fmt::join(self.keys(), ", "));
      });

  py::class_<OutputCompareResult>(m, "OutputCompareResult")
      .def(py::init([](bool passed) {
             OutputCompareResult r;
             r.passed = passed;
             return r;
           }),
           py::arg("passed"))
      .def_readonly("passed", &OutputCompareResult::passed)
      .def_readonly("max_absdiff", &OutputCompareResult::max_absdiff)
      .def_readonly("max_reldiff", &OutputCompareResult::max_reldiff)
      .def_readonly("mean_absdiff", &OutputCompareResult::mean_absdiff)
      .def_readonly("mean_reldiff", &OutputCompareResult::mean_reldiff)
      .def_readonly("median_absdiff", &OutputCompareResult::median_absdiff)
      .def_readonly("median_reldiff", &OutputCompareResult::median_reldiff)
      .def_readonly("quantile_absdiff", &OutputCompareResult::quantile_absdiff)
      .def_readonly("quantile_reldiff", &OutputCompareResult::quantile_reldiff)
      .def("__bool__", [](const OutputCompareResult& r) { return r.passed; })
      .def("__str__", &OutputCompareResult::str)
      .def("__repr__", &OutputCompareResult::str);

  py::class_<AccuracyResult>(m, "AccuracyResult")
      .def("__bool__", [](const AccuracyResult& r) { return static_cast<bool>(r); })
      .def("__len__", [](const AccuracyResult& r) { return r.entries.size(); })
      .def("keys",
           [](const AccuracyResult& r) {
             std::vector<AccuracyResult::Pair> keys;
             for (const auto& e : r.entries) keys.push_back(e.first);
             return keys;
           })
      .def("items",
           [](const AccuracyResult& r) {
             py::list out;
             for (const auto& [pair, iterations] : r.entries) {
               py::list its;
               for (const auto& it : iterations) {
                 py::dict d;
                 for (const auto& [name, res] : it) d[py::str(name)] = res;
                 its.append(d);
               }
               out.append(py::make_tuple(py::make_tuple(pair.first, pair.second), its));
             }
             return out;
           })
      .def("__getitem__",
           [](py::object self, const AccuracyResult::Pair& key) -> py::object {
             for (py::handle item : self.attr("items")()) {
               auto kv = item.cast<py::tuple>();
               if (kv[0].cast<AccuracyResult::Pair>() == key) return kv[1];
             }
             throw py::key_error(key.first + " vs. " + key.second);
           })
      // runner_pair defaults to the first pair compared, as in Polygraphy.
      .def(
          "stats",
          [](const AccuracyResult& r, std::optional<AccuracyResult::Pair> pair) {
            if (!pair) {
              if (r.entries.empty())
                throw py::key_error("AccuracyResult.stats(): nothing was compared");
              pair = r.entries.front().first;
            }
            return r.stats(*pair);
          },
          py::arg("runner_pair") = py::none())
      .def(
          "percentage",
          [](const AccuracyResult& r, std::optional<AccuracyResult::Pair> pair) {
            if (r.entries.empty()) return 1.0;  // Polygraphy: no data in this result
            return r.percentage(pair.value_or(r.entries.front().first));
          },
          py::arg("runner_pair") = py::none());

  // Input lists (--save-inputs / --load-inputs): a list of feed dicts.
  m.def("inputs_to_json", [](py::handle feeds) {
    std::vector<TensorMap> list;
    for (py::handle feed : feeds) list.push_back(tensors_from_dict(feed, "input"));
    return io::inputs_to_json(list);
  });
  m.def("inputs_from_json", [](const std::string& text) {
    py::list out;
    for (const auto& feed : io::inputs_from_json(text)) out.append(dict_from_tensors(feed));
    return out;
  });
  m.def("write_file", &io::write_file);
  m.def("read_file", [](const std::string& path) { return io::read_file(path); });
}

}  // namespace parity::python
