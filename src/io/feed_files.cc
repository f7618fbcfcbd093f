#include "io/feed_files.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/logger.h"
#include "io/json.h"
#include "io/npy.h"

namespace parity::io {

namespace {

namespace fs = std::filesystem;

bool is_feed_file(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".json" || ext == ".npz" || ext == ".npy";
}

}  // namespace

FileFeedSource::FileFeedSource(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      files_.push_back(path);  // read (and checked) when its feeds are asked for
      continue;
    }
    std::vector<std::string> found;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file() && is_feed_file(e.path())) found.push_back(e.path().string());
    if (ec) fail("failed to load input data from the folder {}: {}", path, ec.message());
    if (found.empty())
      fail(
          "failed to load input data from the folder {}: it holds no .json, .npz or .npy "
          "file; give a folder of input files, or the files themselves",
          path);
    std::sort(found.begin(), found.end());
    files_.insert(files_.end(), found.begin(), found.end());
  }
}

std::vector<TensorMap> FileFeedSource::read(const std::string& path) const {
  logger().info("Loading input data from {}", path);
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".npy") {
    Tensor array = load_npy(path);
    if (metadata_.empty())
      fail(
          "failed to load input data from {}: an .npy file holds one array without its input's "
          "name, and the model's inputs are not known where the feeds are read (a Dask client); "
          "save feeds as .npz (np.savez(path, name=array)) or JSON",
          path);
    if (metadata_.size() != 1)
      fail(
          "failed to load input data from {}: an .npy file holds one array, and the model has "
          "{} inputs [{}]; save the arrays of one feed together in an .npz (np.savez(path, "
          "name=array, ...))",
          path, metadata_.size(), fmt::join(metadata_.names(), ", "));
    TensorMap feed;
    feed.set(metadata_[0].name, std::move(array));
    return {std::move(feed)};
  }
  if (ext == ".npz") {
    std::vector<std::pair<std::string, Tensor>> arrays;
    try {
      arrays = npz_decode(read_file(path));
    } catch (const Error& e) {
      fail("failed to load input data from {}: {}", path, e.what());
    }
    TensorMap feed;
    for (auto& [name, t] : arrays) feed.set(name, std::move(t));
    return {std::move(feed)};
  }
  return load_inputs(path);
}

bool FileFeedSource::open_next() {
  if (next_file_ >= files_.size()) return false;
  base_ += feeds_.size();
  feeds_ = read(files_[next_file_++]);
  return true;
}

std::optional<TensorMap> FileFeedSource::get(size_t i) {
  if (i < base_) {  // an earlier feed: start again
    next_file_ = 0;
    base_ = 0;
    feeds_.clear();
  }
  while (i >= base_ + feeds_.size())
    if (!open_next()) return std::nullopt;
  return feeds_[i - base_];
}

}  // namespace parity::io
