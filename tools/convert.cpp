// `vkgraphy convert`: builds a Vulkan engine from an ONNX model and writes the
// engine file (Polygraphy's `convert` to a TensorRT engine).
#include "runtime/core/logger.h"
#include "runtime/engine/engine_file.h"
#include "tools/args_builder.h"
#include "tools/args_model.h"
#include "tools/args_report.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct ConvertArgs {
  ModelArgs model;
  BuilderArgs builder;
  DataLoaderArgs data;  // --validate-tactics
  ReportArgs report;
  std::string output;
  std::vector<std::string> vk_outputs;  // names, or "mark all"
};

int convert_tool(ConvertArgs& args) {
  const Graph graph = import_onnx(args.model.path, args.model.builder_import_options());
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  const BuildResult built = args.builder.build_for_outputs(graph, *ctx, args.vk_outputs);
  save_engine(args.output, built.engine);
  VKG_INFO("Saved engine to " << args.output << " (" << built.engine.layers.size() << " layers, "
                              << built.engine.weight_bytes() << " bytes of weights, " << built.engine.activation_bytes()
                              << " bytes of activations)");
  if (args.report.wanted()) {
    args.report.report().title = "vkgraphy convert " + args.model.path;
    args.report.set_device(ctx->device().info());
    args.report.set_engine(built.engine, "built from " + args.model.path + ", saved to " + args.output, &built.replay);
    args.report.write();
  }
  return kExitSuccess;
}

}  // namespace

void add_convert_tool(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* convert = app.add_subcommand("convert", "Build a Vulkan engine from an ONNX model and save it");
  convert->fallthrough();
  args->model.add_to(*convert);
  convert->add_option("-o,--output", args->output, "Path of the engine file to write")->required();
  convert
      ->add_option("--vk-outputs", args->vk_outputs,
                   "Extra tensors the engine returns: names, 'mark all' for every tensor (fusion is then "
                   "impossible), or 'mark layers' for the output of every layer as built (fusions kept)")
      ->take_all();
  args->builder.add_to(*convert);
  args->data.add_to(*convert);
  args->report.add_to(*convert, "convert");
  args->builder.use_data_loader(args->data);
  convert->callback([args] { set_exit_code(convert_tool(*args)); });
}

}  // namespace vkg::tools
