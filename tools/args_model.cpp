#include "tools/args_model.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace vkg::tools {

std::pair<std::string, Shape> parse_input_shape(const std::string& text) {
  const auto open = text.rfind(":[");
  VKG_CHECK(open != std::string::npos && open > 0 && text.back() == ']',
            "malformed input shape '" << text << "': expected name:[d0,d1,...], e.g. input:[1,3,224,224]");
  const std::string name = text.substr(0, open);
  const std::string body = text.substr(open + 2, text.size() - open - 3);
  Shape shape;
  size_t start = 0;
  while (start <= body.size() && !body.empty()) {
    size_t comma = body.find(',', start);
    std::string dim = body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    dim.erase(std::remove_if(dim.begin(), dim.end(), ::isspace), dim.end());
    VKG_CHECK(!dim.empty(), "malformed input shape '" << text << "': empty dimension");
    const bool numeric = std::all_of(dim.begin(), dim.end(), [](char c) { return std::isdigit((unsigned char)c); });
    shape.push_back(numeric ? std::stoll(dim) : -1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {name, shape};
}

InputShapes parse_input_shapes(const std::vector<std::string>& texts) {
  InputShapes shapes;
  for (const auto& t : texts) {
    auto [name, shape] = parse_input_shape(t);
    VKG_CHECK(!shapes.count(name), "input '" << name << "' is given two shapes");
    shapes[name] = shape;
  }
  return shapes;
}

void ModelArgs::add_to(CLI::App& app, const std::string& shapes_flag, bool with_fold_option) {
  app.add_option("model", path, "Path to the ONNX model (or, where the tool takes one, a vkgraphy engine)")->required();
  app.add_option(shapes_flag, input_shapes,
                 "Input shapes, e.g. input0:[1,3,224,224] input1:[1,10]; fixes dynamic dimensions")
      ->take_all();
  app.add_option("--external-data-dir", external_data_dir,
                 "Folder of the model's external data files (default: the model's folder)");
  app.add_flag("--no-shape-inference", no_shape_inference, "Do not run ONNX shape inference");
  if (with_fold_option)
    app.add_flag("--no-fold-constants", no_fold_constants, "Do not fold constant subgraphs at import");
}

ImportOptions ModelArgs::import_options() const {
  ImportOptions o;
  o.input_shapes = shapes();
  o.external_data_dir = external_data_dir;
  o.shape_inference = !no_shape_inference;
  o.fold_constants = !no_fold_constants;
  return o;
}

void fix_shapes_from_loaded_inputs(const OnnxModel& model, const DataLoaderOptions& data, InputShapes& shapes) {
  if (data.load_inputs_paths.empty()) return;
  const std::vector<std::string> names = runtime_input_names(model);
  const std::set<std::string> inputs(names.begin(), names.end());
  for (const auto& [name, loaded] : loaded_input_shapes(data)) {
    if (!inputs.count(name)) continue;
    auto given = shapes.find(name);
    if (given == shapes.end()) {
      shapes[name] = loaded;
      continue;
    }
    bool agree = given->second.size() == loaded.size();
    for (size_t d = 0; agree && d < loaded.size(); ++d) agree = given->second[d] < 0 || given->second[d] == loaded[d];
    VKG_CHECK(agree, "input '" << name << "': --input-shapes gives " << shape_to_string(given->second)
                               << " but the --load-inputs data has shape " << shape_to_string(loaded));
    given->second = loaded;
  }
}

}  // namespace vkg::tools
