// Text measurement from font metric tables (see spatialobs/text.hpp). The sums
// follow canvas.document.textmeasure term by term so that widths are
// bit-identical to it.
#include "spatialobs/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace spatialobs {

namespace text_detail {

constexpr std::uint8_t kKnown = 0x80;
constexpr std::uint32_t kBmp = 0x10000;
constexpr double kLayoutUnit = 64.0;

// textmeasure._is_space: the spaces a line hangs past its edge
inline bool is_hang_space(std::uint32_t c) { return c == 0x20 || c == 0x09 || c == 0x3000; }

inline bool is_cjk(std::uint32_t o) {
  return (0x2E80 <= o && o <= 0x9FFF) || (0xAC00 <= o && o <= 0xD7AF) || (0xF900 <= o && o <= 0xFAFF) ||
         (0x20000 <= o && o <= 0x3FFFF);
}

inline bool is_emoji(std::uint32_t o) { return o >= 0x1F000 || (0x2600 <= o && o <= 0x27BF); }

inline bool contains(const std::vector<std::uint32_t>& v, std::uint32_t c) {
  for (std::uint32_t x : v) {
    if (x == c) return true;
  }
  return false;
}

inline std::uint8_t ascii_flags(std::uint32_t c) {
  std::uint8_t f = kKnown;
  if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) f |= kTextAlnum;
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20)) f |= kTextSpace;
  return f;
}

// textmeasure._ceil_unit: up to the next 1/64 px (Python's math.ceil gives an
// int, so a -0.0 comes back as 0.0); false when Python's would overflow.
inline bool ceil_unit(double x, double& out) {
  const double v = x * kLayoutUnit - 1e-6;
  if (!std::isfinite(v)) return false;
  out = (std::ceil(v) + 0.0) / kLayoutUnit;
  return true;
}

std::vector<std::uint32_t> code_points(const char32_t* s) {
  std::vector<std::uint32_t> out;
  for (; *s; ++s) out.push_back(static_cast<std::uint32_t>(*s));
  return out;
}

}  // namespace text_detail

TextFont::TextFont(double upm, bool has_kern, bool compensated_sum)
    : upm_(upm),
      has_kern_(has_kern),
      compensated_(compensated_sum),
      bmp_adv_(text_detail::kBmp, std::numeric_limits<double>::quiet_NaN()),
      bmp_flags_(text_detail::kBmp, 0),
      ascii_kern_(128 * 128, std::numeric_limits<double>::quiet_NaN()) {
  for (std::uint32_t c = 0; c < 128; ++c) bmp_flags_[c] = text_detail::ascii_flags(c);
}

void TextFont::add_advances(std::uint32_t first, const double* widths, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t cp = first + static_cast<std::uint32_t>(i);
    const double a = widths[i] / upm_;
    if (cp < text_detail::kBmp) {
      bmp_adv_[cp] = a;
    } else {
      astral_adv_[cp] = a;
    }
  }
}

void TextFont::set_kerning(const std::vector<std::vector<std::uint32_t>>& left,
                           const std::vector<std::vector<std::uint32_t>>& right,
                           std::vector<std::vector<std::pair<std::int64_t, double>>> rows) {
  rows_of_.clear();
  classes_of_.clear();
  kern_cache_.clear();
  ascii_kern_.assign(128 * 128, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < rows.size() && r < left.size(); ++r) {
    for (std::uint32_t a : left[r]) rows_of_[a].push_back(static_cast<std::int32_t>(r));
  }
  for (std::size_t c = 0; c < right.size(); ++c) {
    for (std::uint32_t b : right[c]) classes_of_[b].push_back(static_cast<std::int64_t>(c));
  }
  for (auto& row : rows) {
    for (auto& e : row) e.second = e.second / upm_;
  }
  rows_ = std::move(rows);
}

void TextFont::set_char(std::uint32_t cp, double advance, std::uint8_t flags) {
  const std::uint8_t f = static_cast<std::uint8_t>((flags & (kTextAlnum | kTextSpace)) | text_detail::kKnown);
  if (cp < text_detail::kBmp) {
    bmp_adv_[cp] = advance;
    bmp_flags_[cp] = f;
  } else {
    astral_adv_[cp] = advance;
    astral_flags_[cp] = f;
  }
}

double TextFont::advance(std::uint32_t cp) const {
  if (cp < text_detail::kBmp) return bmp_adv_[cp];
  auto it = astral_adv_.find(cp);
  return it == astral_adv_.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

std::uint8_t TextFont::flags(std::uint32_t cp) const {
  if (cp < text_detail::kBmp) return bmp_flags_[cp];
  auto it = astral_flags_.find(cp);
  return it == astral_flags_.end() ? 0 : it->second;
}

void TextFont::unknown(const std::uint32_t* s, std::size_t n, std::vector<std::uint32_t>& out) const {
  const std::size_t first = out.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t c = s[i];
    if (std::isnan(advance(c)) || !(flags(c) & text_detail::kKnown)) out.push_back(c);
  }
  if (out.size() - first > 1) {  // distinct code points (sorted: a text of many new characters stays linear-log)
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
  }
}

double TextFont::kern_lookup(std::uint32_t a, std::uint32_t b) const {
  // _Kerning.__missing__: the last row holding a, and in it the last entry whose class holds b
  auto cl = classes_of_.find(b);
  if (cl == classes_of_.end() || cl->second.empty()) return 0.0;
  auto ro = rows_of_.find(a);
  if (ro == rows_of_.end()) return 0.0;
  const std::vector<std::int64_t>& classes = cl->second;
  for (auto r = ro->second.rbegin(); r != ro->second.rend(); ++r) {
    const auto& row = rows_[static_cast<std::size_t>(*r)];
    for (auto e = row.rbegin(); e != row.rend(); ++e) {
      for (std::int64_t c : classes) {
        if (c == e->first) return e->second;
      }
    }
  }
  return 0.0;
}

double TextFont::kern(std::uint32_t a, std::uint32_t b) {
  if (a < 128 && b < 128) {
    double& v = ascii_kern_[a * 128 + b];
    if (std::isnan(v)) v = kern_lookup(a, b);
    return v;
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
  auto it = kern_cache_.find(key);
  if (it != kern_cache_.end()) return it->second;
  const double v = kern_lookup(a, b);
  kern_cache_.emplace(key, v);
  return v;
}

double TextFont::sum(const double* x, std::size_t n) const {
  // Python's sum() of floats from an int 0 start (n >= 1): the first term as is, then each
  // added in turn; from 3.12 on with Neumaier's compensation, added at the end when finite
  double f = 0.0 + x[0];
  if (!compensated_) {
    for (std::size_t i = 1; i < n; ++i) f += x[i];
    return f;
  }
  double c = 0.0;
  for (std::size_t i = 1; i < n; ++i) {
    const double t = f + x[i];
    if (std::fabs(f) >= std::fabs(x[i])) {
      c += (f - t) + x[i];
    } else {
      c += (x[i] - t) + f;
    }
    f = t;
  }
  if (c != 0.0 && std::isfinite(c)) f += c;
  return f;
}

double TextFont::line_em(const std::uint32_t* s, std::size_t n) {
  // _line_em: sum(advances), then + sum(kerning of each pair)
  if (n == 0) return 0.0;
  terms_.resize(n);
  for (std::size_t i = 0; i < n; ++i) terms_[i] = advance(s[i]);
  double w = sum(terms_.data(), n);
  if (has_kern_ && n > 1) {
    for (std::size_t i = 0; i + 1 < n; ++i) terms_[i] = kern(s[i], s[i + 1]);
    w += sum(terms_.data(), n - 1);
  }
  return w;
}

bool TextFont::may_break(const std::uint32_t* p, std::size_t i, TextBreakRule rule) const {
  using namespace text_detail;
  const std::uint32_t a = p[i - 1], b = p[i];
  if (rule == TextBreakRule::kTldraw) {
    if (is_hang_space(b)) return false;
    if (is_hang_space(a)) return true;
    if (a == '-' && i >= 2 && (flags(p[i - 2]) & kTextAlnum) && (flags(b) & kTextAlnum)) return true;
    return is_cjk(a) || is_cjk(b);
  }
  if (flags(b) & kTextSpace) return false;
  if ((flags(a) & kTextSpace) || a == '-') return true;
  if (is_cjk(b) && !contains(excalidraw_opening(), a)) return true;
  if (is_cjk(a) && b != '-' && !contains(excalidraw_closing(), b)) return true;
  return is_emoji(a) || is_emoji(b);
}

void TextFont::layout(const std::uint32_t* s, std::size_t n, double font_size, bool wrap, double max_width,
                      bool break_words, TextBreakRule rule, double slack, bool split_unkerned,
                      std::vector<TextLine>& out) {
  using text_detail::is_hang_space;
  std::size_t p0 = 0;
  while (true) {
    std::size_t p1 = p0;
    while (p1 < n && s[p1] != '\n') ++p1;
    const std::uint32_t* para = s + p0;
    const std::size_t m = p1 - p0;
    // _char_advances: each advance with the kerning to its right neighbour folded in
    adv_.resize(m);
    kerns_.assign(m, 0.0);
    for (std::size_t i = 0; i < m; ++i) adv_[i] = advance(para[i]);
    bool any_kern = false;
    if (has_kern_ && m > 1) {
      for (std::size_t i = 0; i + 1 < m; ++i) {
        const double k = kern(para[i], para[i + 1]);
        if (k != 0.0) {
          adv_[i] += k;
          kerns_[i] = k;
          any_kern = true;
        }
      }
    }
    pre_.resize(m + 1);
    pre_[0] = 0.0;
    double acc = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      acc += adv_[i] * font_size;
      pre_[i + 1] = acc;
    }
    const std::vector<double>* piece = &pre_;
    if (split_unkerned && any_kern) {
      piece_.resize(m + 1);
      piece_[0] = 0.0;
      acc = 0.0;
      for (std::size_t i = 0; i < m; ++i) {
        acc += (adv_[i] - kerns_[i]) * font_size;
        piece_[i + 1] = acc;
      }
      piece = &piece_;
    }
    const std::vector<double>& pre = pre_;
    auto span = [&pre](std::size_t a, std::size_t b) { return pre[b] - pre[a]; };
    auto visible = [&](std::size_t a, std::size_t b) {
      while (b > a && is_hang_space(para[b - 1])) --b;
      return span(a, b);
    };
    auto emit = [&](std::size_t a, std::size_t b, double w) { out.push_back(TextLine{p0 + a, p0 + b, w}); };
    if (!wrap || m == 0) {
      emit(0, m, visible(0, m));
    } else {
      const double limit = max_width + slack;
      cuts_.clear();
      for (std::size_t i = 1; i < m; ++i) {
        if (may_break(para, i, rule)) cuts_.push_back(i);
      }
      cuts_.push_back(m);
      std::size_t start = 0, seg_start = 0;
      for (std::size_t cut : cuts_) {
        std::size_t end_vis = cut;
        while (end_vis > seg_start && is_hang_space(para[end_vis - 1])) --end_vis;
        if (start < seg_start && span(start, end_vis) > limit) {
          emit(start, seg_start, visible(start, seg_start));
          start = seg_start;
        }
        if (break_words) {
          const std::vector<double>& pc = *piece;
          while (end_vis - start > 1 && end_vis > start && span(start, end_vis) > limit) {
            std::size_t j = start + 1;
            while (j < end_vis && pc[j + 1] - pc[start] <= limit) ++j;
            emit(start, j, span(start, j));
            start = j;
          }
        }
        seg_start = cut;
      }
      emit(start, m, visible(start, m));
    }
    if (p1 >= n) break;
    p0 = p1 + 1;
  }
}

TextMeasure TextFont::measure(const std::uint32_t* s, std::size_t n, double font_size, bool wrap, double max_width,
                              bool break_words) {
  TextMeasure r{0.0, 0, false, 0, 0.0};
  double widest_para = 0.0;
  std::size_t p0 = 0;
  while (true) {
    std::size_t p1 = p0;
    while (p1 < n && s[p1] != '\n') ++p1;
    const double w = line_em(s + p0, p1 - p0) * font_size;
    if (r.paragraphs == 0 || w > widest_para) widest_para = w;
    ++r.paragraphs;
    if (p1 >= n) break;
    p0 = p1 + 1;
  }
  r.lines = r.paragraphs;
  if (!text_detail::ceil_unit(widest_para, r.natural)) {
    r.natural = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  r.widest = r.natural;
  if (!wrap || r.natural <= max_width) return r;
  std::vector<TextLine> lines;
  layout(s, n, font_size, true, max_width, break_words, TextBreakRule::kTldraw, 1.0 / text_detail::kLayoutUnit,
         false, lines);
  double widest = 0.0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == 0 || lines[i].width > widest) widest = lines[i].width;
  }
  r.wrapped = true;
  r.lines = lines.size();
  if (!text_detail::ceil_unit(widest, r.widest)) r.natural = std::numeric_limits<double>::quiet_NaN();
  return r;
}

const std::vector<std::uint32_t>& TextFont::excalidraw_opening() {
  static const std::vector<std::uint32_t> v = text_detail::code_points(U"<([{（［｛〈《｟｢「『【〖〔〘〚＜〝");
  return v;
}

const std::vector<std::uint32_t>& TextFont::excalidraw_closing() {
  static const std::vector<std::uint32_t> v =
      text_detail::code_points(U">)]}.,:;!?…/）］｝〉》｠｣」』】〗〕〙〛＞。．，、〟‥？！：；・〜〞");
  return v;
}

}  // namespace spatialobs
