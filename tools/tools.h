// The vkgraphy command line: each tool adds its subcommand to the app.
// A tool's callback throws vkg::Error for bad input; main() turns it into an
// error message and the documented exit code (runtime/core/error.h).
#pragma once

#include <CLI/CLI.hpp>

namespace vkg::tools {

// Sets the process exit code a tool's callback wants (default kExitSuccess).
void set_exit_code(int code);

void add_run_tool(CLI::App& app);             // tools/run.cpp
void add_convert_tool(CLI::App& app);         // tools/convert.cpp
void add_inspect_tool(CLI::App& app);         // tools/inspect.cpp
void add_surgeon_tool(CLI::App& app);         // tools/surgeon.cpp
void add_debug_tool(CLI::App& app);           // tools/debug.cpp
// Adds `rewrites` to `debug`: tools/debug_rewrites.cpp.
void add_debug_rewrites(CLI::App& debug);
// Adds `precision` to `debug`: tools/debug_precision.cpp.
void add_debug_precision(CLI::App& debug);
void add_data_tool(CLI::App& app);            // tools/data.cpp
void add_check_tool(CLI::App& app);           // tools/check.cpp
void add_inspect_device(CLI::App& inspect);   // tools/inspect_device.cpp: `inspect device`
void add_inspect_tactics(CLI::App& inspect);  // tools/inspect_tactics.cpp: `inspect tactics`
void add_inspect_capability(CLI::App& inspect);  // tools/inspect_capability.cpp: `inspect capability`
// Adds `diff-tactics` to `parent` (`inspect`, `debug`): tools/diff_tactics.cpp. Exits 0 when it
// names suspect tactics, kExitDebugNotFound when it cannot decide.
void add_diff_tactics_tool(CLI::App& parent);

}  // namespace vkg::tools
