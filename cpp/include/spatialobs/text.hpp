// Text measured from a table of font metrics: per-character advances, kerning
// pairs worked out from the font's class table, one line's width, and the
// browser's line layout (pre-wrap, break-word) with tldraw's or Excalidraw's
// break rule. The Python module canvas.document.textmeasure is the oracle twin:
// every sum runs in its order, so results are bit-identical to it.
//
// Characters are Unicode code points. A font knows the advances of its table;
// any other character (fallback fonts, combining marks, .notdef) and the
// Unicode properties of characters outside ASCII (alphanumeric, whitespace) are
// handed in by the caller (set_char) before text holding them is measured:
// unknown() lists the ones a text needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spatialobs {

// A character's Unicode properties as Python's str methods define them.
enum TextCharFlag : std::uint8_t {
  kTextAlnum = 1,  // str.isalnum()
  kTextSpace = 2,  // str.isspace()
};

// Where a line may break: tldraw's (the browser's CSS line breaking as
// textmeasure._break_before states it) or Excalidraw's wrapText tokens.
enum class TextBreakRule : int { kTldraw = 0, kExcalidraw = 1 };

// One laid-out line: code points [start, end) of the whole text and its width in pixels.
struct TextLine {
  std::size_t start;
  std::size_t end;
  double width;
};

// measure_html's numbers for one text.
struct TextMeasure {
  double natural;       // widest paragraph, rounded up to 1/64 px
  std::size_t paragraphs;
  bool wrapped;         // laid out at max_width (natural > max_width)
  std::size_t lines;    // laid-out lines (paragraphs when not wrapped)
  double widest;        // widest laid-out line, rounded up to 1/64 px (natural when not wrapped)
};

class TextFont {
 public:
  // upm: font units per em; has_kern: whether the kerning table has any pair;
  // compensated_sum: line_em sums as Python's sum() does from 3.12 on (Neumaier's
  // compensated summation; false: one addition after another, as before 3.12).
  TextFont(double upm, bool has_kern, bool compensated_sum = false);

  // Advances of the code points first, first + 1, ... in font units (later runs
  // replace earlier ones).
  void add_advances(std::uint32_t first, const double* widths, std::size_t n);
  // The kerning table: left classes (rows), right classes, and per row
  // [right class, value in font units, ...] as (class, value) pairs.
  void set_kerning(const std::vector<std::vector<std::uint32_t>>& left,
                   const std::vector<std::vector<std::uint32_t>>& right,
                   std::vector<std::vector<std::pair<std::int64_t, double>>> rows);
  // A character's advance (em) and flags (TextCharFlag bits), from the caller.
  void set_char(std::uint32_t cp, double advance, std::uint8_t flags);

  // The distinct code points of s the font cannot measure yet (appended to out).
  void unknown(const std::uint32_t* s, std::size_t n, std::vector<std::uint32_t>& out) const;
  bool has_kern() const { return has_kern_; }

  // Kerning of the pair (a, b) in em (0 for a pair the font does not kern).
  double kern(std::uint32_t a, std::uint32_t b);
  // Width in em of one line: the advances summed, then the kerning summed and added.
  double line_em(const std::uint32_t* s, std::size_t n);
  // The lines of s (paragraphs split at '\n') laid out at max_width (wrap false:
  // unwrapped), appended to out.
  void layout(const std::uint32_t* s, std::size_t n, double font_size, bool wrap, double max_width,
              bool break_words, TextBreakRule rule, double slack, bool split_unkerned, std::vector<TextLine>& out);
  // measure_html's numbers (wrap false: no max_width). natural and widest are
  // only rounded when finite.
  TextMeasure measure(const std::uint32_t* s, std::size_t n, double font_size, bool wrap, double max_width,
                      bool break_words);

  // Excalidraw's opening and closing brackets (no break after / before them beside CJK).
  static const std::vector<std::uint32_t>& excalidraw_opening();
  static const std::vector<std::uint32_t>& excalidraw_closing();

 private:
  double advance(std::uint32_t cp) const;
  std::uint8_t flags(std::uint32_t cp) const;
  bool may_break(const std::uint32_t* p, std::size_t i, TextBreakRule rule) const;
  double kern_lookup(std::uint32_t a, std::uint32_t b) const;

  double sum(const double* x, std::size_t n) const;

  double upm_;
  bool has_kern_;
  bool compensated_;
  std::vector<double> bmp_adv_;          // NaN: unknown
  std::vector<std::uint8_t> bmp_flags_;  // bit 0x80: properties known
  std::unordered_map<std::uint32_t, double> astral_adv_;
  std::unordered_map<std::uint32_t, std::uint8_t> astral_flags_;
  std::unordered_map<std::uint32_t, std::vector<std::int32_t>> rows_of_;
  std::unordered_map<std::uint32_t, std::vector<std::int64_t>> classes_of_;
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows_;  // values in em
  std::vector<double> ascii_kern_;  // pairs of ASCII characters, a * 128 + b; NaN: not looked up yet
  std::unordered_map<std::uint64_t, double> kern_cache_;
  // scratch of layout()
  std::vector<double> adv_, kerns_, pre_, piece_, terms_;
  std::vector<std::size_t> cuts_;
};

}  // namespace spatialobs
