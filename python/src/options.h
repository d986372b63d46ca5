// Keyword arguments of the Python calls as the command line's options: `fp16=True` is `--fp16`,
// `layer_precisions={"conv1": "fp32"}` is `--layer-precisions conv1:fp32`, and so on (the name
// with '_' for '-'). Parsed by the same CLI11 argument groups the tools use (tools/args_*), so
// every option means what it means on the command line, with the same checks and messages.
#pragma once

#include <pybind11/pybind11.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace vkg::python {

// The command-line words for `kwargs` against the options of `app`: a True bool is a flag, False
// and None are left out, a dict is NAME:VALUE per item, a list is one value per item, a tuple one
// value written "[a,b,...]" (as shapes and value ranges are: `val_range=(0, 1)`,
// `input_shapes={"x": (1, 3, 224, 224)}`), anything else its str(). Raises TypeError naming `function` and the argument for a keyword `app` has no option for.
std::vector<std::string> kwargs_to_words(const CLI::App& app, const pybind11::kwargs& kwargs,
                                         const std::string& function);

// Parses `words` (after `positional`) with `app`; a parse error becomes vkg::Error with CLI11's
// message, naming `function`.
void parse_words(CLI::App& app, const std::vector<std::string>& positional, const std::vector<std::string>& words,
                 const std::string& function);

}  // namespace vkg::python
