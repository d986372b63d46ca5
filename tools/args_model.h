// Argument group: which ONNX model to load and how (Polygraphy's ModelArgs and
// OnnxLoadArgs): the model path, --input-shapes, --external-data-dir, and
// switches for shape inference and constant folding.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "runtime/data/data_loader.h"
#include "runtime/onnx/onnx_import.h"

namespace vkg::tools {

// Parses "name:[1,3,224,224]" (a dimension that is not an integer, e.g. "batch" or
// "?", stays dynamic: -1). Throws Error on malformed text.
std::pair<std::string, Shape> parse_input_shape(const std::string& text);
// Parses a list of "name:[dims]" into a map; throws Error on duplicates or bad text.
InputShapes parse_input_shapes(const std::vector<std::string>& texts);

// --load-inputs fixes the builder's input shapes, as --input-shapes does: the shape of each
// model input the files hold joins `shapes`. Where --input-shapes names the input too, the
// two must agree (its -1 dimensions match anything); Error otherwise.
void fix_shapes_from_loaded_inputs(const OnnxModel& model, const DataLoaderOptions& data, InputShapes& shapes);

struct ModelArgs {
  std::string path;
  std::vector<std::string> input_shapes;
  std::string external_data_dir;
  bool no_shape_inference = false;
  bool no_fold_constants = false;

  // Adds the positional model argument and the options. `shapes_flag` is the name of the
  // input-shape option ("--input-shapes" for run, "--override-input-shapes" for surgeon).
  // `with_fold_option`: false for tools that never fold (debug reduce keeps the model's nodes).
  void add_to(CLI::App& app, const std::string& shapes_flag = "--input-shapes", bool with_fold_option = true);
  ImportOptions import_options() const;
  // For a graph the Vulkan builder takes: dynamic input dimensions left by --input-shapes become 1, with a warning.
  ImportOptions builder_import_options() const {
    ImportOptions o = import_options();
    o.static_input_shapes = true;
    return o;
  }
  InputShapes shapes() const { return parse_input_shapes(input_shapes); }
};

}  // namespace vkg::tools
