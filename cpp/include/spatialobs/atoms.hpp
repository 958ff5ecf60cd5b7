// Location-aware atoms of a screen (DESIGN §7): each element's center is
// quantized on a grid x grid lattice over the screen, and hashed together with
// its role (cell-control atom) or its normalized text (cell-text atom).
//
// The hash is FNV-1a 64 (offset basis 0xcbf29ce484222325, prime
// 0x100000001b3) over the UTF-8 bytes of "<kind>:<col>:<row>:<value>", with
// kind 'c' or 't' and col/row in decimal. It depends on nothing but those
// bytes, so atoms are identical on every platform, compiler and run, and can
// be persisted. The prefix has a fixed shape, so a ':' inside the value
// cannot make two different atoms share a string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spatialobs {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr std::int32_t kMaxGrid = 65535;

// FNV-1a 64 of n bytes, continuing from h.
inline std::uint64_t fnv1a64(const char* data, std::size_t n, std::uint64_t h = kFnvOffset) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= kFnvPrime;
  }
  return h;
}

// The atom hash of one (kind, cell, value); see the file comment.
std::uint64_t atom_hash(char kind, std::int32_t col, std::int32_t row, const std::string& value);

// Grid cell of each box center: col = floor(((x0 + x1) * 0.5) * grid / width)
// clamped to [0, grid - 1], the same for rows with y and height. The
// expression is evaluated in that order in double precision, so a Python
// oracle that writes it the same way gets the same cells. Validates the boxes,
// width, height > 0 (finite) and 1 <= grid <= kMaxGrid.
void grid_cells(const double* boxes, std::size_t n, double width, double height, std::int32_t grid,
                std::int32_t* cols, std::int32_t* rows);

// Sorted unique cell-control atoms (one per element, from roles[i]) and
// cell-text atoms (one per element whose texts[i] is non-empty). roles and
// texts must hold n strings each, already normalized by the caller.
void screen_atoms(const double* boxes, std::size_t n, double width, double height, std::int32_t grid,
                  const std::vector<std::string>& roles, const std::vector<std::string>& texts,
                  std::vector<std::uint64_t>& control, std::vector<std::uint64_t>& text);

// Throws std::invalid_argument unless a[0..n) is strictly increasing (a
// sorted set without repeats). `what` names the array in the message.
void check_atom_set(const std::uint64_t* a, std::size_t n, const char* what);

}  // namespace spatialobs
