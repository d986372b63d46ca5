#include "runtime/data/data_tools.h"

#include <algorithm>
#include <map>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg {

namespace {

std::vector<std::string> names_of(const TensorMap& map) {
  std::vector<std::string> names;
  for (const auto& [name, tensor] : map) names.push_back(name);
  return names;
}

std::string quoted_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return "[" + out + "]";
}

// Warns when an iteration of a stream (the inputs, or one runner's outputs) holds other tensor
// names than the stream's first iteration did.
class NameCheck {
 public:
  void check(const std::string& stream, const TensorMap& iteration, const std::string& path, size_t index) {
    const std::vector<std::string> names = names_of(iteration);
    auto [it, first] = expected_.try_emplace(stream, names);
    if (!first && it->second != names) {
      VKG_WARNING("iteration " << index << " of '" << path << "' holds other tensors than earlier iterations: "
                               << quoted_names(names) << " where " << quoted_names(it->second) << " came before");
    }
  }

 private:
  std::map<std::string, std::vector<std::string>> expected_;
};

void check_one_kind(const std::vector<NamedDataFile>& files) {
  for (const NamedDataFile& f : files) {
    if (f.data.holds_outputs == files.front().data.holds_outputs) continue;
    const NamedDataFile& outputs = f.data.holds_outputs ? f : files.front();
    const NamedDataFile& inputs = f.data.holds_outputs ? files.front() : f;
    VKG_THROW("cannot concatenate input data ('" << inputs.path << "') with output data ('" << outputs.path
                                                 << "'): give files of one kind");
  }
}

}  // namespace

DataFile concat_data(const std::vector<NamedDataFile>& files) {
  VKG_CHECK(!files.empty(), "no data files to concatenate");
  check_one_kind(files);
  DataFile out;
  out.holds_outputs = files.front().data.holds_outputs;
  NameCheck names;
  for (const NamedDataFile& f : files) {
    if (!out.holds_outputs) {
      for (size_t i = 0; i < f.data.inputs.size(); ++i) {
        names.check("inputs", f.data.inputs[i], f.path, i);
        out.inputs.push_back(f.data.inputs[i]);
      }
      continue;
    }
    for (const auto& [runner, iterations] : f.data.outputs.runs) {
      for (size_t i = 0; i < iterations.size(); ++i) names.check("runner " + runner, iterations[i].to_map(), f.path, i);
      auto& runs = out.outputs.runs;
      auto same =
          std::find_if(runs.begin(), runs.end(), [&runner = runner](const auto& run) { return run.first == runner; });
      if (same == runs.end()) {
        runs.emplace_back(runner, iterations);
      } else {
        same->second.insert(same->second.end(), iterations.begin(), iterations.end());
      }
    }
  }
  return out;
}

std::vector<TensorMap> merge_data(const std::vector<NamedDataFile>& files) {
  std::vector<TensorMap> merged;
  bool overwrite_warned = false;
  auto update = [&](const std::vector<TensorMap>& iterations, const std::string& path) {
    if (!merged.empty() && merged.size() != iterations.size()) {
      VKG_WARNING("the files hold different numbers of iterations: " << merged.size() << " so far, " << iterations.size()
                                                                     << " in '" << path
                                                                     << "'; some iterations will lack tensors");
    }
    if (merged.size() < iterations.size()) merged.resize(iterations.size());
    for (size_t i = 0; i < iterations.size(); ++i) {
      for (const auto& [name, tensor] : iterations[i]) {
        if (merged[i].count(name) != 0 && !overwrite_warned) {
          VKG_WARNING("'" << path << "' replaces tensor '" << name
                          << "' of an earlier file; to join iterations instead, use `data concat`");
          overwrite_warned = true;
        }
        merged[i].insert_or_assign(name, tensor);
      }
    }
  };
  for (const NamedDataFile& f : files) {
    if (!f.data.holds_outputs) {
      update(f.data.inputs, f.path);
      continue;
    }
    for (const auto& [runner, iterations] : f.data.outputs.runs) {
      std::vector<TensorMap> maps;
      for (const IterationResult& it : iterations) maps.push_back(it.to_map());
      update(maps, f.path);
    }
  }
  return merged;
}

}  // namespace vkg
