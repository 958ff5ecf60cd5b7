// The built-in dense text embedder: hashed character n-grams (the "hashing
// trick"), deterministic and model-free.
//
// The text is padded with one space on each side and cut into windows of n
// Unicode code points (a padded text shorter than n is one window). Each
// window's UTF-8 bytes are hashed with FNV-1a 64 (see atoms.hpp); the hash
// picks bucket h % dim and a sign, +1 when bit 63 is clear, else -1. The
// bucket sums are divided by their Euclidean norm, so inner product is cosine
// similarity; an empty text gives the zero vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace spatialobs {

constexpr std::int32_t kMaxNgram = 16;
constexpr std::int32_t kMaxEmbedDim = 1 << 16;

// Writes dim float32 values to out. text must be valid UTF-8 (a malformed
// sequence throws std::invalid_argument); 1 <= n <= kMaxNgram,
// 1 <= dim <= kMaxEmbedDim.
void ngram_embed(const std::string& text, std::int32_t n, std::int32_t dim, float* out);

}  // namespace spatialobs
