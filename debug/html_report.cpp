#include "debug/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/core/file_io.h"

namespace vkg::debug {

namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:1.5em;color:#1b1f24;
background:#fff;font-size:14px}
h1{font-size:1.5em;margin:0 0 .4em}h2{font-size:1.2em;margin:1.6em 0 .5em;border-bottom:1px solid #d0d7de}
code,.mono{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.92em}
table{border-collapse:collapse;margin:.4em 0}th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;
vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;white-space:nowrap}
tr.fail td{background:#ffebe9}tr.pass td.result{color:#1a7f37;font-weight:600}tr.fail td.result{color:#cf222e;
font-weight:600}tr.rejected td{color:#8c959f;text-decoration:line-through}tr.chosen td{font-weight:600}
.meta td:first-child{font-weight:600;background:#f6f8fa}.note{color:#57606a;font-style:italic}
details{margin:.2em 0}summary{cursor:pointer}.hbar{display:inline-block;height:.8em;background:#54aeff;
vertical-align:middle}.hbar.rej{background:#ff8182}svg text{font-family:inherit;font-size:12px}
svg .axis{stroke:#d0d7de}svg .bar{fill:#54aeff}svg .bar.fail{fill:#ff8182}svg .intro{fill:#9a6700}
svg .tol{stroke:#cf222e;stroke-dasharray:4 3}ul.plain{margin:0;padding-left:1.1em}
)";

constexpr int kChartWidth = 960;
constexpr int kLabelWidth = 300;
constexpr int kBarArea = 520;
constexpr int kRowHeight = 18;

std::string esc(const std::string& s) { return html_escape(s); }

std::string number(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string duration(double ns) {
  char buf[64];
  if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f \xC2\xB5s", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}

std::string short_label(const std::string& s, size_t max = 44) {
  if (s.size() <= max) return s;
  return s.substr(0, max - 3) + "...";
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// A horizontal bar chart on a linear scale from 0: one row (and one rect.bar) per entry.
struct Bar {
  std::string label;
  std::optional<double> value;
  std::string value_text;
  bool fail = false;
};

void linear_bar_chart(std::ostringstream& os, const std::string& cls, const std::string& caption,
                      const std::vector<Bar>& bars) {
  double max = 0;
  for (const Bar& b : bars)
    if (b.value) max = std::max(max, *b.value);
  const int height = int(bars.size()) * kRowHeight + 24;
  os << "<svg class=\"" << cls << "\" role=\"img\" width=\"" << kChartWidth << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << kChartWidth << " " << height << "\"><title>" << esc(caption) << "</title>\n";
  os << "<line class=\"axis\" x1=\"" << kLabelWidth << "\" y1=\"0\" x2=\"" << kLabelWidth << "\" y2=\"" << height - 20
     << "\"/>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const int y = int(i) * kRowHeight;
    const double w = b.value && max > 0 ? *b.value / max * kBarArea : 0;
    os << "<g class=\"row\"><title>" << esc(b.label) << ": " << esc(b.value_text) << "</title><text x=\""
       << kLabelWidth - 6 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\">" << esc(short_label(b.label))
       << "</text><rect class=\"bar" << (b.fail ? " fail" : "") << "\" x=\"" << kLabelWidth << "\" y=\"" << y + 3
       << "\" width=\"" << number(w, 6) << "\" height=\"" << kRowHeight - 5 << "\"/><text x=\"" << kLabelWidth + w + 5
       << "\" y=\"" << y + 13 << "\">" << esc(b.value_text) << "</text></g>\n";
  }
  os << "<text x=\"" << kLabelWidth << "\" y=\"" << height - 6 << "\">0</text><text x=\"" << kLabelWidth + kBarArea
     << "\" y=\"" << height - 6 << "\" text-anchor=\"end\">" << esc(caption) << "</text></svg>\n";
}

// Decade range [lo, hi] (powers of ten) covering the positive values.
std::pair<int, int> decades(const std::vector<double>& values) {
  double min = 0, max = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    min = min == 0 ? v : std::min(min, v);
    max = std::max(max, v);
  }
  if (max == 0) return {-8, 0};
  int lo = int(std::floor(std::log10(min))) - 1;  // a decade below the smallest, so its bar shows
  int hi = int(std::ceil(std::log10(max)));
  if (hi <= lo) hi = lo + 1;
  lo = std::max(lo, hi - 16);
  return {lo, hi};
}

// Error rows on a log scale: one rect.bar per row, an extra rect.intro for the
// introduced part where known, and a dashed mark at the row's tolerance.
void error_chart(std::ostringstream& os, const ReportComparison& c) {
  std::vector<double> values;
  for (const ReportErrorRow& r : c.rows) {
    values.push_back(r.error);
    if (r.introduced) values.push_back(*r.introduced);
    if (r.tolerance) values.push_back(*r.tolerance);
  }
  const auto [lo, hi] = decades(values);
  auto x_of = [lo = lo, hi = hi](double v) {
    if (std::isnan(v) || std::isinf(v)) return double(kBarArea);
    if (!(v > 0)) return 0.0;
    const double f = (std::log10(v) - lo) / double(hi - lo);
    return std::clamp(f, 0.0, 1.0) * kBarArea;
  };
  const int height = int(c.rows.size()) * kRowHeight + 28;
  os << "<svg class=\"error-chart\" role=\"img\" width=\"" << kChartWidth << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << kChartWidth << " " << height << "\"><title>" << esc(c.metric)
     << " (log scale)</title>\n";
  for (int d = lo; d <= hi; ++d) {
    const double x = kLabelWidth + double(d - lo) / double(hi - lo) * kBarArea;
    os << "<line class=\"axis\" x1=\"" << number(x, 6) << "\" y1=\"0\" x2=\"" << number(x, 6) << "\" y2=\""
       << height - 22 << "\"/><text x=\"" << number(x, 6) << "\" y=\"" << height - 8 << "\" text-anchor=\"middle\">1e"
       << d << "</text>\n";
  }
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const ReportErrorRow& r = c.rows[i];
    const int y = int(i) * kRowHeight;
    const double w = x_of(r.error);
    const std::string text = r.note.empty() ? number(r.error) : r.note;
    os << "<g class=\"row\"><title>" << esc(r.name) << ": " << esc(text);
    if (r.introduced) os << ", introduced " << number(*r.introduced);
    if (r.inherited) os << ", inherited " << number(*r.inherited);
    if (r.tolerance) os << ", tolerance " << number(*r.tolerance);
    os << "</title><text x=\"" << kLabelWidth - 6 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\">"
       << esc(short_label(r.name)) << "</text><rect class=\"bar" << (r.passed ? "" : " fail") << "\" x=\""
       << kLabelWidth << "\" y=\"" << y + 3 << "\" width=\"" << number(w, 6) << "\" height=\"" << kRowHeight - 5
       << "\"/>";
    if (r.introduced)
      os << "<rect class=\"intro\" x=\"" << kLabelWidth << "\" y=\"" << y + 11 << "\" width=\""
         << number(x_of(*r.introduced), 6) << "\" height=\"4\"/>";
    if (r.tolerance) {
      const double tx = kLabelWidth + x_of(*r.tolerance);
      os << "<line class=\"tol\" x1=\"" << number(tx, 6) << "\" y1=\"" << y + 1 << "\" x2=\"" << number(tx, 6)
         << "\" y2=\"" << y + kRowHeight - 1 << "\"/>";
    }
    os << "<text x=\"" << number(kLabelWidth + w + 5, 6) << "\" y=\"" << y + 13 << "\">" << esc(text)
       << "</text></g>\n";
  }
  os << "</svg>\n";
}

void candidates_table(std::ostringstream& os, const ReportLayer& layer) {
  double max = 0;
  for (const ReportCandidate& c : layer.candidates)
    if (c.median_ns) max = std::max(max, *c.median_ns);
  bool validated = false;
  for (const ReportCandidate& c : layer.candidates) validated |= c.validation_error.has_value();
  os << "<details class=\"candidates\"><summary>" << esc(layer.name) << " <span class=\"note\">("
     << layer.candidates.size() << " candidate(s))</span></summary>\n<table><tr><th>tactic</th><th>precision</th>"
     << "<th>median time</th><th></th>" << (validated ? "<th>validation error</th>" : "") << "<th>status</th></tr>\n";
  for (const ReportCandidate& c : layer.candidates) {
    os << "<tr class=\"candidate" << (c.chosen ? " chosen" : "") << (c.rejected ? " rejected" : "")
       << "\"><td class=\"mono\">" << esc(c.tactic) << "</td><td>" << esc(c.precision) << "</td><td class=\"num\">"
       << (c.median_ns ? duration(*c.median_ns) : "-") << "</td><td>";
    if (c.median_ns && max > 0)
      os << "<span class=\"hbar" << (c.rejected ? " rej" : "")
         << "\" style=\"width:" << number(*c.median_ns / max * 200, 4) << "px\"></span>";
    os << "</td>";
    if (validated) os << "<td class=\"num\">" << (c.validation_error ? number(*c.validation_error) : "-") << "</td>";
    std::string status = c.chosen ? "chosen" : "";
    if (c.rejected) status = "rejected";
    if (!c.error.empty()) status += (status.empty() ? "" : ": ") + c.error;
    os << "<td>" << esc(status) << "</td></tr>\n";
  }
  os << "</table></details>\n";
}

void engine_section(std::ostringstream& os, const ReportEngine& e) {
  os << "<section id=\"engine\"><h2>Engine layers</h2>\n<p>" << e.layers.size() << " layer(s), " << esc(e.source)
     << ". Time: " << esc(e.time_kind) << ".</p>\n";
  if (!e.note.empty()) os << "<p class=\"note\">" << esc(e.note) << "</p>\n";
  double total = 0;
  for (const ReportLayer& l : e.layers) total += l.time_ns.value_or(0);
  os << "<table id=\"layers\"><tr><th>#</th><th>layer</th><th>op</th><th>tactic</th><th>precision</th>"
     << "<th>fused ONNX nodes</th><th>time</th><th>%</th></tr>\n";
  for (size_t i = 0; i < e.layers.size(); ++i) {
    const ReportLayer& l = e.layers[i];
    os << "<tr class=\"layer\"><td class=\"num\">" << i << "</td><td class=\"mono\">" << esc(l.name) << "</td><td>"
       << esc(l.op) << "</td><td class=\"mono\">" << esc(l.tactic) << "</td><td>" << esc(l.precision)
       << "</td><td class=\"mono\">" << esc(join(l.nodes, ", ")) << "</td><td class=\"num\">"
       << (l.time_ns ? duration(*l.time_ns) : "-") << "</td><td class=\"num\">"
       << (l.time_ns && total > 0 ? number(100 * *l.time_ns / total, 3) : "-") << "</td></tr>\n";
  }
  os << "<tr><td></td><td colspan=\"5\">total</td><td class=\"num\">" << (total > 0 ? duration(total) : "-")
     << "</td><td></td></tr></table>\n";

  os << "<h2>Time per layer</h2>\n";
  std::vector<Bar> bars;
  for (const ReportLayer& l : e.layers)
    bars.push_back({l.name, l.time_ns, l.time_ns ? duration(*l.time_ns) : "not measured", false});
  linear_bar_chart(os, "time-chart", "time per layer (" + e.time_kind + ")", bars);

  bool any = false;
  for (const ReportLayer& l : e.layers) any |= !l.candidates.empty();
  os << "<h2>Candidate tactics</h2>\n";
  if (!any) {
    os << "<p class=\"note\">No candidate timings: " << esc(e.note.empty() ? "the build recorded none" : e.note)
       << "</p>\n";
  } else {
    os << "<div id=\"candidates\">\n";
    for (const ReportLayer& l : e.layers)
      if (!l.candidates.empty()) candidates_table(os, l);
    os << "</div>\n";
  }
  os << "</section>\n";
}

void comparison_section(std::ostringstream& os, const ReportComparison& c) {
  bool introduced = false, inherited = false, rel = false, reltol = false;
  for (const ReportErrorRow& r : c.rows) {
    introduced |= r.introduced.has_value();
    inherited |= r.inherited.has_value();
    rel |= r.rel_error.has_value();
    reltol |= r.rel_tolerance.has_value();
  }
  os << "<section class=\"comparison\"><h2>" << esc(c.title) << ": " << (c.passed ? "PASSED" : "FAILED") << "</h2>\n";
  error_chart(os, c);
  os << "<table class=\"errors\"><tr><th>name</th><th>" << esc(c.metric) << "</th>"
     << (rel ? "<th>max relative error</th>" : "") << (introduced ? "<th>introduced</th>" : "")
     << (inherited ? "<th>inherited</th>" : "") << "<th>tolerance</th>" << (reltol ? "<th>rel. tolerance</th>" : "")
     << "<th>result</th></tr>\n";
  auto opt = [](const std::optional<double>& v) { return v ? number(*v) : std::string("-"); };
  for (const ReportErrorRow& r : c.rows) {
    os << "<tr class=\"error-row " << (r.passed ? "pass" : "fail") << "\"><td class=\"mono\">" << esc(r.name);
    if (!r.detail.empty()) os << " <span class=\"note\">(" << esc(r.detail) << ")</span>";
    os << "</td><td class=\"num\">" << esc(r.note.empty() ? number(r.error) : r.note) << "</td>";
    if (rel) os << "<td class=\"num\">" << opt(r.rel_error) << "</td>";
    if (introduced) os << "<td class=\"num\">" << opt(r.introduced) << "</td>";
    if (inherited) os << "<td class=\"num\">" << opt(r.inherited) << "</td>";
    os << "<td class=\"num\">" << opt(r.tolerance) << "</td>";
    if (reltol) os << "<td class=\"num\">" << opt(r.rel_tolerance) << "</td>";
    os << "<td class=\"result\">" << (r.passed ? "pass" : "fail") << "</td></tr>\n";
  }
  os << "</table></section>\n";
}

void iterations_section(std::ostringstream& os, const Report& r) {
  int passed = 0;
  for (const ReportIteration& it : r.iterations) passed += it.passed ? 1 : 0;
  os << "<section id=\"debug\"><h2>" << esc(r.iterations_title.empty() ? "Iterations" : r.iterations_title)
     << "</h2>\n<p>" << r.iterations.size() << " iteration(s), " << passed << " passed.</p>\n"
     << "<table id=\"iterations\"><tr><th>#</th><th>description</th><th>result</th><th>"
     << esc(r.changes_heading.empty() ? "what changed" : r.changes_heading) << "</th><th>artifacts</th></tr>\n";
  for (const ReportIteration& it : r.iterations) {
    os << "<tr class=\"iteration " << (it.passed ? "pass" : "fail") << "\"><td class=\"num\">" << it.index
       << "</td><td>" << esc(it.description) << "</td><td class=\"result\">" << (it.passed ? "pass" : "fail")
       << (it.replayed ? " <span class=\"note\">(from debug replay)</span>" : "") << "</td><td>";
    if (it.changes.empty() && it.replayed) {
      os << "<span class=\"note\">not made again: the result is the one the debug replay recorded</span>";
    } else if (!it.changes.empty()) {
      os << "<ul class=\"plain mono\">";
      for (const std::string& c : it.changes) os << "<li>" << esc(c) << "</li>";
      os << "</ul>";
    }
    os << "</td><td class=\"mono\">";
    for (size_t i = 0; i < it.artifacts.size(); ++i) os << (i ? "<br>" : "") << esc(it.artifacts[i]);
    os << "</td></tr>\n";
  }
  os << "</table></section>\n";
}

void table_section(std::ostringstream& os, const ReportTable& t) {
  os << "<section class=\"table\"><h2>" << esc(t.title) << "</h2>\n";
  if (!t.note.empty()) os << "<p class=\"note\">" << esc(t.note) << "</p>\n";
  os << "<table" << (t.id.empty() ? "" : " id=\"" + esc(t.id) + "\"") << "><tr>";
  for (const std::string& c : t.columns) os << "<th>" << esc(c) << "</th>";
  os << "</tr>\n";
  for (const std::vector<std::string>& row : t.rows) {
    os << "<tr class=\"row\">";
    for (const std::string& cell : row) os << "<td>" << esc(cell) << "</td>";
    os << "</tr>\n";
  }
  os << "</table></section>\n";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_html_report(const Report& r) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
     << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" << esc(r.title)
     << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n<h1>" << esc(r.title) << "</h1>\n"
     << "<table class=\"meta\">\n";
  auto meta = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) os << "<tr><td>" << esc(k) << "</td><td>" << esc(v) << "</td></tr>\n";
  };
  meta("command", r.command_line);
  meta("date", r.date);
  meta("device", r.device);
  for (const auto& [k, v] : r.summary) meta(k, v);
  os << "</table>\n";
  if (r.engine) engine_section(os, *r.engine);
  for (const ReportComparison& c : r.comparisons) comparison_section(os, c);
  if (!r.iterations.empty() || !r.iterations_title.empty()) iterations_section(os, r);
  for (const ReportTable& t : r.tables) table_section(os, t);
  os << "</body></html>\n";
  return os.str();
}

void write_html_report(const std::string& path, const Report& report) {
  write_file_atomically(path, render_html_report(report), "HTML report");
}

}  // namespace vkg::debug
