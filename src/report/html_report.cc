#include "report/html_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/py_format.h"

namespace parity {

namespace {

// A JSON string; '<' is escaped so that the data can never close its <script> element.
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c == '<')
      out += "\\u003c";
    else if (c < 0x20)
      out += fmt::format("\\u{:04x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

// JSON has no NaN or infinities: they travel as strings that JavaScript's Number() reads.
std::string json_number(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return format_repr(v);
}

std::string metrics_text(const TensorErrorStats& s, CompareMetric metric) {
  return format_error_summary(s, metric);
}

std::string verdict(const TensorErrorStats& s) {
  if (!s.compared) return "SKIPPED";
  return s.passed ? "PASSED" : "FAILED";
}

std::vector<size_t> detail_order(const HtmlReportData& d);

// The outputs as JSON rows for the table the script builds; heatmaps only for `detailed`.
std::string outputs_json(const HtmlReportData& d, const std::vector<size_t>& detailed) {
  std::string out = "[";
  for (size_t i = 0; i < d.outputs.size(); ++i) {
    const TensorErrorStats& s = d.outputs[i];
    if (i) out += ",\n";
    out += fmt::format(
        "{{\"name\":{},\"dtype\":{},\"shape\":{},\"verdict\":{},\"ratio\":{},\"max_abs\":{},"
        "\"mean_abs\":{},\"max_rel\":{},\"mean_rel\":{},\"l2\":{},\"cosine\":{},\"psnr\":{},"
        "\"snr\":{},\"mismatches\":{},\"count\":{},\"note\":{}",
        json_string(s.name), json_string(dtype_name(s.dtype0)), json_string(shape_str(s.shape0)),
        json_string(verdict(s)), json_number(s.ratio), json_number(s.max_abs),
        json_number(s.mean_abs), json_number(s.max_rel), json_number(s.mean_rel), json_number(s.l2),
        json_number(s.cosine), json_number(s.psnr), json_number(s.snr), s.mismatches, s.count,
        json_string(s.note));
    const ErrorProfile& p = s.profile;
    const bool shown = std::binary_search(detailed.begin(), detailed.end(), i);
    if (shown && s.compared && s.count > 0) out += ",\"detail\":true";
    if (shown && p.heat_rows > 0 && !p.heat.empty()) {
      out += fmt::format(
          ",\"heat\":{{\"rows\":{},\"cols\":{},\"full_rows\":{},\"full_cols\":{},"
          "\"values\":[",
          p.heat_rows, p.heat_cols, p.rows, p.cols);
      for (size_t k = 0; k < p.heat.size(); ++k) {
        if (k) out += ',';
        out += json_number(static_cast<double>(p.heat[k]));
      }
      out += "]";
      if (!p.channel_heat.empty()) {
        out += ",\"channels\":[";
        for (size_t c = 0; c < p.channel_heat.size(); ++c) {
          out += c ? ",[" : "[";
          for (size_t k = 0; k < p.channel_heat[c].size(); ++k) {
            if (k) out += ',';
            out += json_number(static_cast<double>(p.channel_heat[c][k]));
          }
          out += "]";
        }
        out += "]";
      }
      out += "}";
    }
    out += "}";
  }
  return out + "]";
}

// A bar chart of one error histogram (bins by binary order of magnitude), trimmed to the bins
// in use.
// The bin a positive finite value falls in, and where in it (0 to 1, linear in log2).
double histogram_position(double v) {
  const double e = std::clamp(std::log2(v), static_cast<double>(ErrorProfile::kMinExponent),
                              static_cast<double>(ErrorProfile::kMaxExponent) + 0.999);
  return 1 + (e - ErrorProfile::kMinExponent);
}

// `tolerance` (> 0) is drawn as a line: elements right of it are beyond the tolerance.
std::string histogram_svg(const std::array<int64_t, ErrorProfile::kBins>& hist,
                          const std::string& title, double tolerance = 0) {
  int first = -1, last = -1;
  int64_t peak = 0;
  for (int i = 0; i < ErrorProfile::kBins; ++i)
    if (hist[static_cast<size_t>(i)] > 0) {
      if (first < 0) first = i;
      last = i;
      peak = std::max(peak, hist[static_cast<size_t>(i)]);
    }
  if (first < 0) return "";
  const bool marked = tolerance > 0 && std::isfinite(tolerance);
  if (marked) {  // the range always shows the tolerance
    const int bin = static_cast<int>(histogram_position(tolerance));
    first = std::min(first, bin);
    last = std::max(last, bin);
  }
  const int bins = last - first + 1;
  const double width = 420, height = 150, left = 50, bottom = 30;
  const double bar = (width - left - 10) / bins;
  std::string svg = fmt::format(
      "<svg class=\"hist\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">"
      "<text x=\"{}\" y=\"12\" class=\"t\">{}</text>",
      width, height + 10, width, height + 10, left, html_escape(title));
  auto label = [](int bin) -> std::string {
    if (bin == 0) return "0";
    if (bin == ErrorProfile::kBins - 1) return "nan/inf";
    return format_g(std::ldexp(1.0, bin - 1 + ErrorProfile::kMinExponent), 2);
  };
  const int step = std::max(1, bins / 6);
  for (int i = 0; i < bins; ++i) {
    const int64_t c = hist[static_cast<size_t>(first + i)];
    const double h = peak ? (height - bottom - 20) * static_cast<double>(c) / peak : 0;
    const double x = left + i * bar;
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"bar\">"
        "<title>[{}, next bin): {} element(s)</title></rect>",
        x, height - bottom - h, std::max(1.0, bar - 1), h, label(first + i), c);
    if (i % step == 0)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"ax\">{}</text>", x,
                         height - bottom + 14, label(first + i));
  }
  svg += fmt::format("<text x=\"2\" y=\"{}\" class=\"ax\">{}</text>", 30, peak);
  if (marked) {
    const double x = left + (histogram_position(tolerance) - first) * bar;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"16\" y2=\"{1}\" class=\"tol\"><title>"
        "tolerance {2}</title></line><text x=\"{3:.1f}\" y=\"26\" class=\"tollabel\">tol {2}"
        "</text>",
        x, height - bottom, format_g(tolerance, 3), std::min(x + 3, width - 60));
  }
  return svg + "</svg>";
}

// The error of every compared node along the model: log10(error/tolerance) per node, coloured
// by status, the local error as a ring, the threshold as a line, the first divergence marked.
std::string node_chart_svg(const LayerwiseResult& r, const std::vector<std::string>& links) {
  if (r.nodes.empty()) return "";
  // The y-axis spans the data (log10 of error/tolerance), the threshold always inside.
  double lo = 0, hi = 0;
  auto log_of = [](double ratio) {
    return ratio <= 0             ? -12.0
           : std::isfinite(ratio) ? std::clamp(std::log10(ratio), -12.0, 12.0)
                                  : 12.0;
  };
  for (const NodeResult& n : r.nodes) {
    lo = std::min({lo, log_of(n.ratio), n.local_ratio ? log_of(*n.local_ratio) : 0.0});
    hi = std::max({hi, log_of(n.ratio), n.local_ratio ? log_of(*n.local_ratio) : 0.0});
  }
  lo = std::floor(lo) - 1;
  hi = std::ceil(hi) + 1;
  // Node names under the axis: all of them up to kLabels, else every k-th.
  constexpr size_t kLabels = 80;
  const size_t label_step = (r.nodes.size() + kLabels - 1) / kLabels;
  const double width = 960, height = 400, left = 50, right = 20, top = 20, bottom = 160;
  auto y_of = [&](double ratio) {
    return top + (hi - log_of(ratio)) / (hi - lo) * (height - top - bottom);
  };
  const double span = std::max<double>(1, static_cast<double>(r.total_nodes - 1));
  auto x_of = [&](size_t index) { return left + index / span * (width - left - right); };
  std::string svg = fmt::format(
      "<svg id=\"node-chart\" viewBox=\"0 0 {} {}\" width=\"100%\" role=\"img\">", width, height);
  const int grid = std::max(1, static_cast<int>(std::ceil((hi - lo) / 6)));
  for (int e = static_cast<int>(hi); e >= static_cast<int>(lo); e -= grid)
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>"
        "<text x=\"4\" y=\"{:.1f}\" class=\"ax\">1e{}</text>",
        left, width - right, y_of(std::pow(10.0, e)), y_of(std::pow(10.0, e)),
        y_of(std::pow(10.0, e)) + 4, e);
  svg += fmt::format(
      "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"threshold\">"
      "<title>threshold: error/tolerance = 1</title></line>",
      left, width - right, y_of(1), y_of(1));
  if (r.first_divergence) {
    const NodeResult& n = r.nodes[*r.first_divergence];
    const double x = x_of(n.index);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"first\"/>"
        "<text x=\"{3:.1f}\" y=\"{4}\" class=\"firstlabel\">first divergence: {5}"
        "</text>",
        x, top, height - bottom, std::min(x + 4, width - 220), top + 10, html_escape(n.name));
  }
  for (size_t k = 0; k < r.nodes.size(); ++k) {
    const NodeResult& n = r.nodes[k];
    const double x = x_of(n.index);
    svg += fmt::format("<a href=\"{}\" class=\"node-link\">", links[k]);
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" class=\"{}\"><title>{} ({}) "
        "node {}: error/tolerance {}</title></circle>",
        x, y_of(n.ratio), node_status_name(n.status), html_escape(n.name), html_escape(n.op_type),
        n.index + 1, format_g(n.ratio, 3));
    if (n.local_ratio)
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" class=\"local\"><title>{} "
          "local error/tolerance {}</title></circle>",
          x, y_of(*n.local_ratio), html_escape(n.name), format_g(*n.local_ratio, 3));
    svg += "</a>";
    if (k % label_step == 0)
      svg += fmt::format(
          "<a href=\"{0}\"><text class=\"nodename\" transform=\"translate({1:.1f},{2:.1f}) "
          "rotate(-60)\" text-anchor=\"end\">{3}</text></a>",
          links[k], x + 3, height - bottom + 12, html_escape(n.name));
  }
  return svg + "</svg>";
}

std::string tensor_names(const LayerwiseResult& r, const std::vector<size_t>& indices,
                         CompareMetric metric) {
  std::string out = "<ul>";
  for (size_t i : indices)
    out += fmt::format("<li><code>{}</code> <b class=\"{}\">{}</b> {}</li>",
                       html_escape(r.tensors[i].name), r.tensors[i].passed ? "ok" : "bad",
                       verdict(r.tensors[i]), html_escape(metrics_text(r.tensors[i], metric)));
  return out + (indices.empty() ? "<li>none compared</li>" : "") + "</ul>";
}

// Where a node's point and name link to: the detail of its first output when it has one,
// else that output's row of the verdict table.
std::vector<std::string> node_links(const HtmlReportData& d, const std::vector<size_t>& detailed) {
  const LayerwiseResult& r = *d.layerwise;
  std::vector<std::string> links;
  for (const NodeResult& n : r.nodes) {
    const std::string& name = r.tensors[n.outputs.front()].name;
    size_t at = d.outputs.size();
    for (size_t i = 0; i < d.outputs.size() && at == d.outputs.size(); ++i)
      if (d.outputs[i].name == name) at = i;
    const bool has_detail = std::binary_search(detailed.begin(), detailed.end(), at) &&
                            d.outputs[at].compared && d.outputs[at].count > 0;
    links.push_back(fmt::format("#{}-{}", has_detail ? "detail" : "row", at));
  }
  return links;
}

std::string layerwise_section(const HtmlReportData& d, const std::vector<size_t>& detailed) {
  const LayerwiseResult& r = *d.layerwise;
  const std::vector<std::string> links = node_links(d, detailed);
  std::string s =
      "<section id=\"layerwise\"><details open><summary><h2>Where the backends diverge</h2>"
      "</summary>";
  s += fmt::format("<p>{} of {} nodes compared, {} tensor(s), {} batch(es).</p>", r.nodes.size(),
                   r.total_nodes, r.tensors.size(), r.batches);
  if (r.first_divergence) {
    const NodeResult& n = r.nodes[*r.first_divergence];
    s += fmt::format(
        "<div class=\"callout\" id=\"first-divergence\"><h3>First divergence: <code "
        "id=\"first-divergence-node\">{}</code> ({})</h3><p>Node {} of {}: the first node, in "
        "topological order, whose own error fails: its outputs fail and its local error does "
        "(without one: all its compared inputs pass). A node that only rounds an inherited "
        "difference past the tolerance is never named.</p>",
        html_escape(n.name), html_escape(n.op_type), n.index + 1, r.total_nodes);
    if (!r.path.empty()) {
      std::vector<std::string> parts;
      for (const auto& p : r.path) parts.push_back("<code>" + html_escape(p) + "</code>");
      s += fmt::format("<p>Path from the input: {}</p>", fmt::join(parts, " &rarr; "));
    }
    s += "<h4>Inputs</h4>" + tensor_names(r, n.inputs, d.metric);
    s += "<h4>Outputs</h4>" + tensor_names(r, n.outputs, d.metric) + "</div>";
  } else {
    s += "<p id=\"first-divergence\">No divergence: every node whose outputs fail has a failing "
         "input, or nothing fails.</p>";
  }
  s += "<h3>Error of every node along the model</h3><p>Click a point or a name for the "
       "tensor's details.</p><p class=\"legend\"><span class=\"dot "
       "passed\"></span> passed <span class=\"dot diverges\"></span> diverges (adds error) "
       "<span class=\"dot inherited\"></span> inherited <span class=\"ring\"></span> local "
       "error; the line is the threshold (error/tolerance = 1).</p>";
  s += node_chart_svg(r, links);
  if (!r.top_local.empty()) {
    s += "<h3>Largest local errors</h3><p>Each node re-run on the reference with the other "
         "backend's inputs: what the node itself adds.</p><table id=\"local-errors\"><tr><th>#"
         "</th><th>node</th><th>op</th><th>local error/tol</th><th>total error/tol</th>"
         "<th>status</th></tr>";
    for (size_t k = 0; k < r.top_local.size() && k < 20; ++k) {
      const NodeResult& n = r.nodes[r.top_local[k]];
      s += fmt::format(
          "<tr class=\"{}\"><td>{}</td><td><a href=\"{}\"><code>{}</code></a></td><td>{}</td>"
          "<td>{}</td><td>{}</td><td>{}</td></tr>",
          k == 0 ? "top" : "", k + 1, links[r.top_local[k]], html_escape(n.name),
          html_escape(n.op_type), format_g(*n.local_ratio, 3), format_g(n.ratio, 3),
          node_status_name(n.status));
    }
    s += "</table>";
  }
  return s + "</details></section>";
}

// Failing outputs first, then the last ones (a model's real outputs come last in mark-all runs).
std::vector<size_t> detail_order(const HtmlReportData& d) {
  std::vector<size_t> order;
  for (size_t i = 0; i < d.outputs.size(); ++i)
    if (d.outputs[i].compared && !d.outputs[i].passed) order.push_back(i);
  if (order.size() > d.max_details / 2) order.resize(d.max_details / 2);
  for (size_t i = d.outputs.size(); i-- > 0 && order.size() < d.max_details;)
    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  std::sort(order.begin(), order.end());
  return order;
}

std::string details_section(const HtmlReportData& d, const std::vector<size_t>& detailed) {
  std::string s = "<section id=\"details\"><details open><summary><h2>Error detail</h2></summary>";
  const bool simple = d.metric == CompareMetric::kSimple;
  for (size_t i : detailed) {
    const TensorErrorStats& t = d.outputs[i];
    if (!t.compared || t.count == 0) continue;
    s += fmt::format(
        "<details class=\"detail\" id=\"detail-{}\" open><summary><h3><code>{}</code> <b "
        "class=\"{}\">{}</b></h3></summary><p>{}</p><div class=\"charts\">{}{}",
        i, html_escape(t.name), t.passed ? "ok" : "bad", verdict(t),
        html_escape(metrics_text(t, d.metric)),
        histogram_svg(t.profile.abs_hist, "Absolute error", simple ? d.atol.get(t.name, 1e-5) : 0),
        histogram_svg(t.profile.rel_hist, "Relative error", simple ? d.rtol.get(t.name, 1e-5) : 0));
    if (t.profile.heat_rows > 0)
      s += fmt::format(
          "<figure><canvas class=\"heat\" data-index=\"{}\"></canvas><div class=\"heat-legend\">"
          "<span class=\"lo\"></span><span class=\"ramp\"></span><span class=\"hi\"></span>"
          "</div><figcaption>Largest |error| per cell of the last two dims ({} &times; {}, "
          "shown as {} &times; {}), over every leading index; grey: no error, black: NaN or "
          "inf</figcaption></figure>",
          i, t.profile.rows, t.profile.cols, t.profile.heat_rows, t.profile.heat_cols);
    s += "</div></details>";
  }
  return s + "</details></section>";
}

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
code{font-family:ui-monospace,monospace;background:#f3f3f3;padding:0 3px;border-radius:3px}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff;font-weight:600}
.badge.ok,.verdict.ok{background:#2e7d32}.badge.bad,.verdict.bad{background:#c62828}
.verdict{color:#fff;text-align:center;font-weight:600}.verdict.skip{background:#777}
b.ok{color:#2e7d32}b.bad{color:#c62828}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border:1px solid #ddd;padding:3px 6px}
th{background:#fafafa;text-align:left}td.num{text-align:right;font-family:ui-monospace,monospace}
.callout{border-left:5px solid #c62828;background:#fff5f5;padding:4px 16px;margin:12px 0}
tr.top{background:#fff5f5}
svg text{font-size:10px;fill:#444}svg .t{font-size:12px;font-weight:600}
.bar{fill:#5c6bc0}.grid{stroke:#eee}.threshold{stroke:#c62828;stroke-dasharray:4 3}
.first{stroke:#c62828;stroke-width:2;stroke-dasharray:2 2}.firstlabel{fill:#c62828;font-weight:600}
circle.passed{fill:#2e7d32}circle.diverges{fill:#c62828}circle.inherited{fill:#ef6c00}
circle.local{fill:none;stroke:#222;stroke-width:1}
.legend .dot{display:inline-block;width:10px;height:10px;border-radius:5px;margin-left:10px}
.dot.passed{background:#2e7d32}.dot.diverges{background:#c62828}.dot.inherited{background:#ef6c00}
.ring{display:inline-block;width:10px;height:10px;border-radius:6px;border:1px solid #222;margin-left:10px}
.charts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
canvas.heat{border:1px solid #ccc;image-rendering:pixelated}figure{margin:0}
figcaption{font-size:11px;color:#555;max-width:300px}
#filter{margin:6px 0;padding:3px 6px;width:260px}
summary{cursor:pointer}summary h2,summary h3{display:inline}
.tol{stroke:#c62828;stroke-width:1.5}.tollabel{fill:#c62828}
.nodename{font-size:9px;fill:#333}a:hover .nodename{fill:#1565c0;text-decoration:underline}
.heat-legend{display:flex;align-items:center;gap:4px;font-size:11px;margin-top:2px}
.heat-legend .ramp{display:inline-block;width:120px;height:10px;border:1px solid #ccc;
background:linear-gradient(to right,hsl(240,85%,75%),hsl(120,85%,60%),hsl(0,85%,45%))}
:target{outline:3px solid #1565c0}
)";

// Builds the outputs table and draws the heatmaps from the embedded data; marks the page as
// rendered (or with the error) so that a headless browser can tell.
constexpr const char* kScript = R"(
(function(){
try {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var num = function(v){ return typeof v === 'string' ? Number(v) : v; };
  var fmt = function(v){ v = num(v); if (!isFinite(v)) return String(v);
    return (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3)) ? v.toExponential(3) : String(+v.toPrecision(5)); };
  var body = document.getElementById('outputs-body');
  data.outputs.forEach(function(o, index){
    var tr = document.createElement('tr');
    tr.id = 'row-' + index;
    var name = document.createElement('td');
    if (o.detail) { var a = document.createElement('a'); a.href = '#detail-' + index; a.textContent = o.name; name.appendChild(a); }
    else name.textContent = o.name;
    tr.appendChild(name);
    [o.dtype, o.shape].forEach(function(c){ var td = document.createElement('td'); td.textContent = c; tr.appendChild(td); });
    var v = document.createElement('td');
    v.className = 'verdict ' + (o.verdict === 'PASSED' ? 'ok' : o.verdict === 'FAILED' ? 'bad' : 'skip');
    v.setAttribute('data-output', o.name); v.textContent = o.verdict; tr.appendChild(v);
    var metrics = data.metric === 'distance' ? [o.l2, o.cosine] : data.metric === 'quality' ? [o.psnr, o.snr]
        : [o.max_abs, o.mean_abs, o.max_rel, o.mean_rel];
    metrics.concat([o.ratio]).forEach(function(m){ var td = document.createElement('td'); td.className = 'num';
      td.textContent = fmt(m); tr.appendChild(td); });
    var note = document.createElement('td'); note.textContent = o.note; tr.appendChild(note);
    body.appendChild(tr);
  });
  var filter = document.getElementById('filter');
  filter.addEventListener('input', function(){ var q = filter.value.toLowerCase();
    Array.prototype.forEach.call(body.rows, function(r){ r.style.display = r.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none'; }); });
  var draw = function(c, h, values){
    var scale = Math.max(4, Math.floor(256 / Math.max(h.rows, h.cols)));
    c.width = h.cols * scale; c.height = h.rows * scale;
    var vals = values.map(num), pos = vals.filter(function(v){ return v > 0 && isFinite(v); });
    var lo = pos.length ? Math.log10(Math.min.apply(null, pos)) : 0, hi = pos.length ? Math.log10(Math.max.apply(null, pos)) : 1;
    if (hi - lo < 1e-9) lo = hi - 1;
    var ctx = c.getContext('2d');
    for (var i = 0; i < vals.length; i++) {
      var v = vals[i], t = v > 0 ? (isFinite(v) ? (Math.log10(v) - lo) / (hi - lo) : 1) : 0;
      ctx.fillStyle = v === 0 ? '#f4f4f4' : !isFinite(v) ? '#000' : 'hsl(' + Math.round(240 - 240 * t) + ',85%,' + Math.round(75 - 30 * t) + '%)';
      ctx.fillRect((i % h.cols) * scale, Math.floor(i / h.cols) * scale, scale, scale);
    }
    c.title = 'max |error| from ' + fmt(Math.pow(10, lo)) + ' (blue) to ' + fmt(Math.pow(10, hi)) + ' (red); black: NaN/inf';
    var legend = c.parentNode.querySelector('.heat-legend');
    if (legend) { legend.querySelector('.lo').textContent = fmt(Math.pow(10, lo));
      legend.querySelector('.hi').textContent = fmt(Math.pow(10, hi)); }
  };
  Array.prototype.forEach.call(document.querySelectorAll('canvas.heat'), function(c){
    var h = data.outputs[+c.getAttribute('data-index')].heat; if (!h) return;
    draw(c, h, h.values);
    if (!h.channels) return;
    var select = document.createElement('select'); select.className = 'channel';
    var all = document.createElement('option'); all.value = ''; all.textContent = 'every channel (max)'; select.appendChild(all);
    h.channels.forEach(function(ch, k){ var o = document.createElement('option'); o.value = k; o.textContent = 'channel ' + k; select.appendChild(o); });
    select.addEventListener('change', function(){ draw(c, h, select.value === '' ? h.values : h.channels[+select.value]); });
    c.parentNode.insertBefore(select, c);
  });
  document.body.setAttribute('data-rendered', 'ok');
} catch (e) { document.body.setAttribute('data-rendered', 'error: ' + e); }
})();
)";

}  // namespace

std::string render_html_report(const HtmlReportData& d) {
  std::string metric_headers;
  switch (d.metric) {
    case CompareMetric::kSimple:
      metric_headers = "<th>max abs</th><th>mean abs</th><th>max rel</th><th>mean rel</th>";
      break;
    case CompareMetric::kDistance:
      metric_headers = "<th>L2</th><th>cosine</th>";
      break;
    case CompareMetric::kQuality:
      metric_headers = "<th>PSNR dB</th><th>SNR dB</th>";
      break;
  }
  size_t failed = 0;
  for (const auto& o : d.outputs) failed += o.compared && !o.passed ? 1 : 0;
  std::string page = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>"
      "<style>{1}</style></head>\n<body data-rendered=\"no\"><h1>{0}</h1>"
      "<p><span class=\"badge {2}\" id=\"overall\">{3}</span> <code>{4}</code> vs. <code>{5}"
      "</code> | compared with <b>{6}</b> | {7} of {8} output(s) failed</p>",
      html_escape(d.title), kStyle, d.passed ? "ok" : "bad", d.passed ? "PASSED" : "FAILED",
      html_escape(d.runner0), html_escape(d.runner1), compare_metric_name(d.metric), failed,
      d.outputs.size());
  if (!d.command.empty()) page += "<p>Command: <code>" + html_escape(d.command) + "</code></p>";
  const std::vector<size_t> detailed = detail_order(d);
  if (d.layerwise) page += layerwise_section(d, detailed);
  page += fmt::format(
      "<section id=\"outputs\"><details open><summary><h2>Verdict per output</h2></summary>"
      "<input id=\"filter\" placeholder=\"filter by name\"><table><thead><tr><th>output</th>"
      "<th>dtype</th><th>shape</th><th>verdict</th>{}<th>error/tol</th><th>note</th></tr>"
      "</thead><tbody id=\"outputs-body\"></tbody></table></details></section>",
      metric_headers);
  page += details_section(d, detailed);
  page += fmt::format(
      "<script type=\"application/json\" id=\"report-data\">{{\"metric\":{},\"outputs\":{}}}"
      "</script>\n<script>{}</script></body></html>\n",
      json_string(compare_metric_name(d.metric)), outputs_json(d, detailed), kScript);
  return page;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
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

}  // namespace parity
