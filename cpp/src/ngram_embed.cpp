#include "spatialobs/ngram_embed.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "spatialobs/atoms.hpp"

namespace spatialobs {

namespace detail {

// Byte offsets where each code point of s starts, plus s.size() at the end.
std::vector<std::size_t> code_point_starts(const std::string& s) {
  std::vector<std::size_t> starts;
  starts.reserve(s.size() + 1);
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) throw std::invalid_argument("text is not valid UTF-8");
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) throw std::invalid_argument("text is not valid UTF-8");
    starts.push_back(i);
    i += len;
  }
  starts.push_back(s.size());
  return starts;
}

}  // namespace detail

void ngram_embed(const std::string& text, std::int32_t n, std::int32_t dim, float* out) {
  if (n < 1 || n > kMaxNgram) {
    throw std::invalid_argument("n-gram size must be between 1 and " + std::to_string(kMaxNgram) + ", got " +
                                std::to_string(n));
  }
  if (dim < 1 || dim > kMaxEmbedDim) {
    throw std::invalid_argument("embedding dim must be between 1 and " + std::to_string(kMaxEmbedDim) + ", got " +
                                std::to_string(dim));
  }
  std::vector<double> acc(static_cast<std::size_t>(dim), 0.0);
  if (!text.empty()) {
    const std::string padded = " " + text + " ";
    const std::vector<std::size_t> starts = detail::code_point_starts(padded);
    const std::size_t chars = starts.size() - 1;
    const std::size_t windows = chars >= static_cast<std::size_t>(n) ? chars - n + 1 : 1;
    for (std::size_t w = 0; w < windows; ++w) {
      const std::size_t end = w + n < chars ? starts[w + n] : padded.size();
      const std::uint64_t h = fnv1a64(padded.data() + starts[w], end - starts[w]);
      acc[h % static_cast<std::uint64_t>(dim)] += (h >> 63) ? -1.0 : 1.0;
    }
  }
  double sq = 0.0;
  for (double v : acc) sq += v * v;
  const double norm = std::sqrt(sq);
  for (std::size_t j = 0; j < acc.size(); ++j) out[j] = norm > 0 ? static_cast<float>(acc[j] / norm) : 0.0f;
}

}  // namespace spatialobs
