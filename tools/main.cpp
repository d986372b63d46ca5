// vkgraphy: run ONNX models as Vulkan compute and debug them the way Polygraphy
// debugs TensorRT. One binary, one subcommand per tool.
#include <iostream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/core/version.h"
#include "tools/args_debug.h"
#include "tools/args_logging.h"
#include "tools/args_vulkan.h"
#include "tools/tools.h"
#include "tools/usage_errors.h"

namespace vkg::tools {
namespace {
int g_exit_code = kExitSuccess;
}
void set_exit_code(int code) { g_exit_code = code; }
}  // namespace vkg::tools

int main(int argc, char** argv) {
  using namespace vkg;
  CLI::App app{"vkgraphy " VKGRAPHY_VERSION ": run ONNX models on Vulkan and debug them like Polygraphy"};
  app.set_version_flag("--version", VKGRAPHY_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the tool name, as in Polygraphy
  tools::LoggingArgs logging;
  logging.add_to(app);
  tools::vulkan_args().add_to(app);
  // Logging is configured before any tool callback runs.
  app.parse_complete_callback([&] { logging.apply(); });

  tools::add_run_tool(app);
  tools::add_convert_tool(app);
  tools::add_inspect_tool(app);
  tools::add_surgeon_tool(app);
  tools::add_debug_tool(app);
  tools::add_data_tool(app);
  tools::add_check_tool(app);

  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    argc = tools::split_check_command(argc, argv);
    tools::set_own_command(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0 && tools::explain_usage_error(app, e, args, tools::check_command())) return kExitUsage;
    const int rc = app.exit(e);
    return rc == 0 ? kExitSuccess : kExitUsage;
  } catch (const Error& e) {
    VKG_ERROR(e.what());
    return kExitInvalidInput;
  } catch (const std::bad_alloc&) {
    VKG_CRITICAL("out of memory");
    return kExitInternal;
  } catch (const std::exception& e) {
    VKG_CRITICAL("internal error: " << e.what());
    return kExitInternal;
  }
  return tools::g_exit_code;
}
