// --report FILE.html: one self-contained HTML page that shows what a tool did,
// for people to look at. Inline CSS, charts as inline SVG, no scripts, no
// links, no fonts or images from elsewhere: the page opens offline and can be
// attached to a bug report. All text is escaped.
//
// The writer knows nothing of engines or comparators: it renders the plain
// data below, which the tools fill (tools/args_report.h). Every part is
// optional; a part without data is left out of the page.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vkg::debug {

// One candidate tactic the builder tried for a layer.
struct ReportCandidate {
  std::string tactic;
  std::string precision;                   // "fp32", "fp16"
  std::optional<double> median_ns;         // absent: not timed (failed, rejected or untimed)
  std::optional<double> validation_error;  // --validate-tactics: error against the reference
  bool rejected = false;                   // rejected by validation
  bool chosen = false;                     // the builder's choice
  std::string error;                       // why it could not run or was rejected ("" if none)
};

// One engine layer.
struct ReportLayer {
  std::string name;  // "conv1+bn1+relu1"
  std::string op;
  std::string tactic;
  std::string precision;
  std::vector<std::string> nodes;  // the ONNX nodes the layer runs
  std::optional<double> time_ns;   // absent when nothing measured it
  std::vector<ReportCandidate> candidates;
};

struct ReportEngine {
  std::string source;     // "built from model.onnx", "loaded from model.engine"
  std::string time_kind;  // what time_ns is: "device time, median of 10 run(s)", ...
  std::string note;       // shown above the table ("" for none), e.g. why there are no candidates
  std::vector<ReportLayer> layers;
};

// One row of an error chart: an output, a marked tensor or a layer.
// `error` is what the chart draws (log scale); introduced/inherited split it
// where a tool knows how much a layer added to what it received.
struct ReportErrorRow {
  std::string name;
  std::string detail;                   // e.g. the layer that produces the tensor ("" for none)
  double error = 0;                     // the charted error (max absolute error for comparisons)
  std::optional<double> rel_error;      // max relative error
  std::optional<double> introduced;     // error this layer introduced
  std::optional<double> inherited;      // error it received from its inputs
  std::optional<double> tolerance;      // the absolute tolerance the row is checked against
  std::optional<double> rel_tolerance;  // the relative tolerance
  bool passed = true;
  std::string note;  // e.g. "shapes differ" when no error could be computed
};

struct ReportComparison {
  std::string title;   // "vk-runner-N0 vs. ref-runner-N1, iteration 0"
  std::string metric;  // what `error` is: "max absolute error"
  bool passed = true;
  std::vector<ReportErrorRow> rows;
};

// One iteration of a debug session.
struct ReportIteration {
  int index = 0;
  std::string description;  // the loop's description of the iteration
  bool passed = false;
  bool replayed = false;               // the result came from a debug replay (not checked again)
  std::vector<std::string> changes;    // what changed: tactic choices, marked layers...
  std::vector<std::string> artifacts;  // where the sorted artifacts went
};

// A table of text, for results without a part of their own (diff-tactics' suspects).
struct ReportTable {
  std::string id;  // the table's HTML id ("suspects")
  std::string title;
  std::string note;  // shown above the table ("" for none)
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column
};

struct Report {
  std::string title;  // "vkgraphy convert model.onnx"
  std::string command_line;
  std::string date;                                          // UTC, ISO 8601
  std::string device;                                        // "" when the tool opened no device
  std::vector<std::pair<std::string, std::string>> summary;  // key/value lines shown at the top
  std::optional<ReportEngine> engine;
  std::vector<ReportComparison> comparisons;
  std::string iterations_title;  // "debug build iterations"
  std::string changes_heading;   // column heading of ReportIteration::changes ("tactics that differ from iteration 0")
  std::vector<ReportIteration> iterations;
  std::vector<ReportTable> tables;
};

// The page, as HTML text.
std::string render_html_report(const Report& report);

// Renders and writes the page whole or not at all. Throws Error naming the
// path when it cannot be written.
void write_html_report(const std::string& path, const Report& report);

// Text made safe for HTML content and attribute values (& < > " ').
std::string html_escape(const std::string& text);

}  // namespace vkg::debug
