// The one exception type of vkgraphy and the process exit codes the tools use.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace vkg {

// Every user-facing failure is an Error whose message names what is wrong
// (the file, the node, the tensor) in one line.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes of every vkgraphy tool (documented in docs/cli.md).
enum ExitCode : int {
  kExitSuccess = 0,
  kExitFailed = 1,        // a comparison or validation failed
  kExitUsage = 2,         // bad command line
  kExitInvalidInput = 3,  // a model, data or other input file is missing, malformed or unsupported
  kExitInternal = 4,      // an unexpected internal failure
  // The debug tools say what they found (docs/debug.md, "Exit codes"):
  kExitDebugMixed = 5,        // build/repeat: some iterations passed and some failed
  kExitDebugAllFailed = 6,    // build/repeat: every iteration failed
  kExitDebugNoFailure = 7,    // reduce: the original model passes the check, so there is nothing to reduce
  kExitDebugNotFound = 8,     // reduce: no failing subgraph; precision: no configuration passes;
                              // diff-tactics: cannot tell which tactic is to blame
  kExitInterrupted = 130,     // stopped by Ctrl-C (SIGINT) or by the end of interactive input
};

}  // namespace vkg

// Throws vkg::Error with a message built from stream insertions:
//   VKG_THROW("node '" << name << "': bad axis " << axis);
#define VKG_THROW(msg)                  \
  do {                                  \
    std::ostringstream vkg_throw_os_;   \
    vkg_throw_os_ << msg;               \
    throw ::vkg::Error(vkg_throw_os_.str()); \
  } while (0)

#define VKG_CHECK(cond, msg) \
  do {                       \
    if (!(cond)) VKG_THROW(msg); \
  } while (0)
