#include "surgeon/data_to_input.h"

#include "core/logger.h"

namespace parity::surgeon {

void merge_iterations(std::vector<TensorMap>& inputs, const std::vector<TensorMap>& from,
                      const std::string& path) {
  if (!inputs.empty() && inputs.size() != from.size())
    logger().warning(
        "The provided files have different numbers of iterations.\nNote: Inputs currently "
        "contains {} iterations, but the data in {} contains {} iterations. Some iterations "
        "will contain incomplete data. ",
        inputs.size(), path, from.size());
  if (inputs.size() < from.size()) inputs.resize(from.size());
  for (size_t i = 0; i < from.size(); ++i)
    for (const auto& [name, value] : from[i]) inputs[i].set(name, value);
}

}  // namespace parity::surgeon
