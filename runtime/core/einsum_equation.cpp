#include "runtime/core/einsum_equation.h"

#include <algorithm>
#include <map>

#include "runtime/core/error.h"

namespace vkg {
namespace {

// One term of the equation: its letters with the position of "..." among them (-1: none).
struct Term {
  std::string letters;
  int ellipsis_at = -1;
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Term parse_term(const std::string& text, const std::string& where, const std::string& equation) {
  Term t;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "...") == 0) {
      VKG_CHECK(t.ellipsis_at < 0, where << ": Einsum equation '" << equation << "' has two ellipses in one term");
      t.ellipsis_at = int(t.letters.size());
      i += 3;
      continue;
    }
    VKG_CHECK(is_letter(text[i]), where << ": Einsum equation '" << equation << "' has the invalid character '"
                                        << text[i] << "' (terms hold letters and '...')");
    t.letters += text[i++];
  }
  return t;
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

// The ellipsis rank of each operand (0 without one) and of the whole equation.
struct EllipsisRanks {
  std::vector<int64_t> per_operand;
  int64_t max = 0;
};

// Checks each term's letter count against its operand's rank.
EllipsisRanks ellipsis_ranks(const std::vector<Term>& terms, const std::vector<Shape>& shapes,
                             const std::string& where) {
  EllipsisRanks r;
  r.per_operand.assign(terms.size(), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    const int64_t rank = int64_t(shapes[k].size()), named = int64_t(terms[k].letters.size());
    if (terms[k].ellipsis_at < 0) {
      VKG_CHECK(rank == named, where << ": Einsum term " << k << " names " << named << " axes, but input " << k
                                     << " has shape " << shape_to_string(shapes[k]));
    } else {
      VKG_CHECK(rank >= named, where << ": Einsum term " << k << " names " << named << " axes, more than input " << k
                                     << " of shape " << shape_to_string(shapes[k]) << " has");
      r.per_operand[k] = rank - named;
      r.max = std::max(r.max, r.per_operand[k]);
    }
  }
  return r;
}

// The label of each letter and how often the inputs name it.
struct Letters {
  std::map<char, int32_t> label;
  std::map<char, int> count;
};

// Gives every axis of every operand its label (e.inputs), creating the labels (e.names, e.sizes;
// sizes unknown for letters yet): 0 .. max-1 are the ellipsis dimensions, then letters in
// first-seen order.
Letters label_input_axes(const std::vector<Term>& terms, const EllipsisRanks& ellipsis, EinsumEquation& e) {
  Letters letters;
  for (int64_t d = 0; d < ellipsis.max; ++d) {
    e.names.push_back("..." + std::to_string(d));
    e.sizes.push_back(1);
  }
  const auto label_of = [&](char c) {
    auto it = letters.label.find(c);
    if (it != letters.label.end()) return it->second;
    const int32_t l = int32_t(e.sizes.size());
    letters.label.emplace(c, l);
    e.names.push_back(std::string(1, c));
    e.sizes.push_back(-1);
    return l;
  };
  for (size_t k = 0; k < terms.size(); ++k) {
    std::vector<int32_t> axes;
    const Term& t = terms[k];
    const int64_t rank = ellipsis.per_operand[k];
    for (size_t i = 0; i <= t.letters.size(); ++i) {
      if (int(i) == t.ellipsis_at)
        for (int64_t d = 0; d < rank; ++d) axes.push_back(int32_t(ellipsis.max - rank + d));
      if (i < t.letters.size()) {
        axes.push_back(label_of(t.letters[i]));
        ++letters.count[t.letters[i]];
      }
    }
    e.inputs.push_back(std::move(axes));
  }
  return letters;
}

// Sizes: letters must agree exactly; ellipsis dimensions broadcast.
void infer_label_sizes(EinsumEquation& e, const std::vector<Shape>& shapes, int64_t max_ellipsis,
                       const std::string& where) {
  for (size_t k = 0; k < e.inputs.size(); ++k)
    for (size_t a = 0; a < e.inputs[k].size(); ++a) {
      const int32_t l = e.inputs[k][a];
      const int64_t dim = shapes[k][a];
      int64_t& size = e.sizes[size_t(l)];
      if (l < max_ellipsis) {
        VKG_CHECK(size == 1 || dim == 1 || size == dim,
                  where << ": Einsum ellipsis dimensions of sizes " << size << " and " << dim << " do not broadcast");
        if (dim != 1) size = dim;
      } else {
        VKG_CHECK(size < 0 || size == dim, where << ": Einsum label '" << e.names[size_t(l)] << "' has sizes " << size
                                                 << " and " << dim << " in the inputs");
        size = dim;
      }
    }
}

// The output labels the term after "->" names, each of an input and named once.
std::vector<int32_t> explicit_output_labels(const Term& out, const Letters& letters, size_t num_labels,
                                            int64_t max_ellipsis, const std::string& where,
                                            const std::string& equation) {
  std::vector<int32_t> output;
  std::vector<bool> used(num_labels, false);
  for (size_t i = 0; i <= out.letters.size(); ++i) {
    if (int(i) == out.ellipsis_at)
      for (int32_t d = 0; d < int32_t(max_ellipsis); ++d) output.push_back(d);
    if (i == out.letters.size()) break;
    const char c = out.letters[i];
    auto it = letters.label.find(c);
    VKG_CHECK(it != letters.label.end(),
              where << ": Einsum output label '" << c << "' of '" << equation << "' is in no input");
    VKG_CHECK(!used[size_t(it->second)],
              where << ": Einsum output label '" << c << "' of '" << equation << "' is repeated");
    used[size_t(it->second)] = true;
    output.push_back(it->second);
  }
  return output;
}

// Without "->": the ellipsis dimensions, then the letters named once, in ASCII order.
std::vector<int32_t> implicit_output_labels(const Letters& letters, int64_t max_ellipsis) {
  std::vector<int32_t> output;
  for (int32_t d = 0; d < int32_t(max_ellipsis); ++d) output.push_back(d);
  for (const auto& [c, n] : letters.count)  // std::map: ASCII order
    if (n == 1) output.push_back(letters.label.at(c));
  return output;
}

// Strides: the axes of one label add (a diagonal); a size-1 axis of a larger label broadcasts.
void set_label_strides(EinsumEquation& e, const std::vector<Shape>& shapes) {
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    std::vector<int64_t> strides(e.sizes.size(), 0);
    const std::vector<int64_t> axis_strides = contiguous_strides(shapes[k]);
    for (size_t a = 0; a < e.inputs[k].size(); ++a) {
      const int32_t l = e.inputs[k][a];
      if (shapes[k][a] == 1 && e.sizes[size_t(l)] != 1) continue;
      strides[size_t(l)] += axis_strides[a];
    }
    e.strides.push_back(std::move(strides));
  }
}

}  // namespace

Shape EinsumEquation::output_shape() const {
  Shape s;
  for (int32_t l : output) s.push_back(sizes[size_t(l)]);
  return s;
}

int64_t EinsumEquation::summed_count() const {
  int64_t n = 1;
  for (int32_t l : summed) n *= sizes[size_t(l)];
  return n;
}

EinsumEquation parse_einsum(const std::string& equation, const std::vector<Shape>& shapes, const std::string& where) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  const bool explicit_output = arrow != std::string::npos;
  std::vector<Term> terms;
  for (const std::string& text : split_on(lhs, ',')) terms.push_back(parse_term(text, where, equation));
  VKG_CHECK(terms.size() == shapes.size(), where << ": Einsum equation '" << equation << "' names " << terms.size()
                                                 << " operand(s), but the node has " << shapes.size() << " input(s)");
  const EllipsisRanks ellipsis = ellipsis_ranks(terms, shapes, where);

  EinsumEquation e;
  const Letters letters = label_input_axes(terms, ellipsis, e);
  infer_label_sizes(e, shapes, ellipsis.max, where);
  if (explicit_output) {
    const Term out = parse_term(eq.substr(arrow + 2), where, equation);
    e.output = explicit_output_labels(out, letters, e.sizes.size(), ellipsis.max, where, equation);
  } else {
    e.output = implicit_output_labels(letters, ellipsis.max);
  }
  for (int32_t l = 0; l < int32_t(e.sizes.size()); ++l)
    if (std::find(e.output.begin(), e.output.end(), l) == e.output.end()) e.summed.push_back(l);
  set_label_strides(e, shapes);
  return e;
}

namespace {

// The single stride of `labels` (row-major order) in operand k: the innermost label's
// stride when each outer stride is the inner one times the inner size; 0 for no labels.
std::optional<int64_t> collapsed_stride(const EinsumEquation& e, size_t k, const std::vector<int32_t>& labels) {
  if (labels.empty()) return 0;
  for (size_t j = 0; j + 1 < labels.size(); ++j) {
    const size_t outer = size_t(labels[j]), inner = size_t(labels[j + 1]);
    if (e.strides[k][outer] != e.strides[k][inner] * e.sizes[inner]) return std::nullopt;
  }
  return e.strides[k][size_t(labels.back())];
}

int64_t product_of_sizes(const EinsumEquation& e, const std::vector<int32_t>& labels) {
  int64_t n = 1;
  for (int32_t l : labels) n *= e.sizes[size_t(l)];
  return n;
}

}  // namespace

std::optional<EinsumGemm> einsum_as_gemm(const EinsumEquation& e, std::string& why_not) {
  if (e.inputs.size() != 2) {
    why_not = "the equation has " + std::to_string(e.inputs.size()) + " operand(s), not 2";
    return std::nullopt;
  }
  const auto in = [&](size_t k, int32_t l) { return e.strides[k][size_t(l)] != 0; };
  // The summed labels must be in both operands.
  std::vector<int32_t> summed;
  for (int32_t l : e.summed) {
    if (e.sizes[size_t(l)] == 1) continue;
    if (!in(0, l) || !in(1, l)) {
      why_not = "summed label '" + e.names[size_t(l)] + "' is in one operand only";
      return std::nullopt;
    }
    summed.push_back(l);
  }
  std::vector<int32_t> out;
  for (int32_t l : e.output)
    if (e.sizes[size_t(l)] != 1) out.push_back(l);
  // From the end: N labels (of one operand alone), then M labels (of the other alone).
  const auto only = [&](int32_t l) { return in(0, l) == in(1, l) ? -1 : (in(0, l) ? 0 : 1); };
  size_t end = out.size();
  const int owner_n = end > 0 ? only(out[end - 1]) : -1;
  EinsumGemm g;
  if (owner_n == 0) std::swap(g.a, g.b);
  std::vector<int32_t> n_labels, m_labels;
  // The longest run of labels of `owner` alone before `end` whose strides collapse.
  const auto take_run = [&](int owner, std::vector<int32_t>& labels) {
    if (owner < 0) return;
    size_t begin = end;
    while (begin > 0 && only(out[begin - 1]) == owner) --begin;
    while (begin < end) {
      labels.assign(out.begin() + std::ptrdiff_t(begin), out.begin() + std::ptrdiff_t(end));
      if (collapsed_stride(e, size_t(owner), labels)) break;
      ++begin;
    }
    if (begin == end) labels.clear();
    end = begin;
  };
  take_run(owner_n, n_labels);
  if (!n_labels.empty() && end > 0) take_run(only(out[end - 1]) == 1 - owner_n ? 1 - owner_n : -1, m_labels);
  const std::vector<int32_t> batch(out.begin(), out.begin() + std::ptrdiff_t(end));
  // The summed labels in A's stride order must collapse in both operands.
  std::sort(summed.begin(), summed.end(),
            [&](int32_t x, int32_t y) { return e.strides[g.a][size_t(x)] > e.strides[g.a][size_t(y)]; });
  const auto a_k = collapsed_stride(e, g.a, summed), b_k = collapsed_stride(e, g.b, summed);
  if (!a_k || !b_k) {
    why_not = "the summed labels do not form one stride in both operands";
    return std::nullopt;
  }
  g.M = product_of_sizes(e, m_labels);
  g.N = product_of_sizes(e, n_labels);
  g.K = product_of_sizes(e, summed);
  g.a_sm = *collapsed_stride(e, g.a, m_labels);
  g.b_sn = *collapsed_stride(e, g.b, n_labels);
  g.a_sk = *a_k;
  g.b_sk = *b_k;
  // Batch offsets, row-major over the batch labels.
  const int64_t batches = product_of_sizes(e, batch);
  std::vector<int64_t> index(batch.size(), 0);
  int64_t a_off = 0, b_off = 0;
  for (int64_t i = 0; i < batches; ++i) {
    g.a_offsets.push_back(a_off);
    g.b_offsets.push_back(b_off);
    for (size_t j = batch.size(); j-- > 0;) {
      const size_t l = size_t(batch[j]);
      a_off += e.strides[g.a][l];
      b_off += e.strides[g.b][l];
      if (++index[j] < e.sizes[l]) break;
      a_off -= index[j] * e.strides[g.a][l];
      b_off -= index[j] * e.strides[g.b][l];
      index[j] = 0;
    }
  }
  return g;
}

}  // namespace vkg
