// The known places where ONNX Runtime departs from the ONNX specification (each listed, with
// a reproducer, in docs/onnxruntime-departures.md). Given a model, known_departures returns
// those whose pattern one of its nodes matches, so that a verdict on an output that differs
// between ONNX Runtime and the reference backend can name the likely cause:
//
//   for (const auto& d : onnxrt::known_departures(model, failing_output_names))
//     logger.info("{}", onnxrt::describe(d));
//
// The match is on the node alone (op, opset, attributes, constant inputs): some departures
// show only for some input values (an empty string, a value that overflows), so a match says
// the departure may apply, and the comparison says whether it did.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "onnx/graph.h"

namespace parity::onnxrt {

// One departure, as the documentation page lists it.
struct DepartureInfo {
  std::string_view id;       // the page's anchor, e.g. "averagepool-same-upper-dilations"
  std::string_view op;       // the ONNX op it concerns
  std::string_view summary;  // one line: what the specification says and what ONNX Runtime does
};

// Every departure the page lists, in its order.
const std::vector<DepartureInfo>& all_departures();

// A departure matched by one node of a model.
struct Departure {
  const DepartureInfo* info = nullptr;
  std::string node;      // the node's name
  std::string top_node;  // the top-level node it is in (itself, or the If/Loop/Scan owning it)
};

// The departures that may apply to the model's nodes (its subgraphs included), in node order.
std::vector<Departure> known_departures(const ir::Model& model);
// Only those of nodes the named graph values depend on (the failing outputs of a comparison):
// the nodes producing them and, transitively, their inputs' producers in the top-level graph
// (a departure inside a control-flow body counts when the node owning the body does).
std::vector<Departure> known_departures(const ir::Model& model,
                                        const std::vector<std::string>& values);

// "node 'pool' (AveragePool) may meet a known ONNX Runtime departure from the specification:
// <summary> (docs/onnxruntime-departures.md#<id>)".
std::string describe(const Departure& d);

}  // namespace parity::onnxrt
