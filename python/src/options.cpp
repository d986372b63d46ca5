#include "python/src/options.h"

#include <map>

#include "runtime/core/error.h"

namespace py = pybind11;

namespace vkg::python {

namespace {

// Keyword names that differ from their option's long name.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> a = {
      {"optimization_level", "--builder-optimization-level"},
  };
  return a;
}

std::string word(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::string out = "[";
    bool first = true;
    for (const py::handle item : value) {
      out += (first ? "" : ",") + word(item);
      first = false;
    }
    return out + "]";
  }
  return py::str(value).cast<std::string>();
}

}  // namespace

std::vector<std::string> kwargs_to_words(const CLI::App& app, const py::kwargs& kwargs, const std::string& function) {
  std::vector<std::string> words;
  for (const auto& [key, value] : kwargs) {
    const std::string name = key.cast<std::string>();
    auto alias = aliases().find(name);
    std::string flag = alias != aliases().end() ? alias->second : "--" + name;
    if (alias == aliases().end())
      for (char& c : flag) c = c == '_' ? '-' : c;
    const CLI::Option* option = app.get_option_no_throw(flag);
    if (option == nullptr || !option->get_lnames().size())
      throw py::type_error(function + "() got an unexpected keyword argument '" + name + "'");
    if (value.is_none()) continue;
    if (option->get_expected_max() == 0) {  // a switch
      if (!py::isinstance<py::bool_>(value))
        throw py::type_error(function + "(): '" + name + "' is a switch: pass True or False");
      if (value.cast<bool>()) words.push_back(flag);
      continue;
    }
    std::vector<std::string> values;
    if (py::isinstance<py::dict>(value)) {
      for (const auto& [k, v] : value.cast<py::dict>()) values.push_back(py::str(k).cast<std::string>() + ":" + word(v));
    } else if (py::isinstance<py::list>(value)) {
      for (const py::handle item : value) values.push_back(word(item));
    } else {
      values.push_back(word(value));
    }
    if (values.empty()) continue;
    // Options that take one value per occurrence are repeated; the others take all values at once.
    if (option->get_items_expected_max() <= 1) {
      for (const std::string& v : values) {
        words.push_back(flag);
        words.push_back(v);
      }
    } else {
      words.push_back(flag);
      words.insert(words.end(), values.begin(), values.end());
    }
  }
  return words;
}

void parse_words(CLI::App& app, const std::vector<std::string>& positional, const std::vector<std::string>& words,
                 const std::string& function) {
  // CLI11 takes the words in reverse order.
  std::vector<std::string> args(words.rbegin(), words.rend());
  for (auto it = positional.rbegin(); it != positional.rend(); ++it) args.push_back(*it);
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    VKG_THROW(function << "(): " << message);
  }
}

}  // namespace vkg::python
