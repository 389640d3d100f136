// Character-level text data: a documented tokenizer and the quotes Debian's `fortunes` package
// ships, cut into next-character training windows.
//
//   std::string text = weft::data::ReadFortunes();                // every quote, "%" lines dropped
//   weft::data::CharVocab vocab;                                  // 97 ids: '\n', ' '..'~', unknown
//   std::vector<int32_t> ids = vocab.Encode(text);
//   weft::data::ArrayData d = weft::data::NextCharWindows(ids, 128, /*begin=*/0, /*end=*/ids.size());
//   // d.x float32 [N, 128] (ids), d.y int32 [N, 128]: the id after each position
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/datasets.h"

namespace weft::data {

// Debian's `fortunes` (and fortunes-min): plain-text files of quotes separated by "%" lines.
inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

// The character tokenizer of the text models: id 0 is '\n', ids 1..95 the printable ASCII
// characters ' ' (32) to '~' (126), id 96 every other byte (tabs become ' ' first). Decode maps
// the unknown id to '?'. Stateless and thread-safe.
class CharVocab {
 public:
  static constexpr int kSize = 97;
  static constexpr int32_t kUnknown = 96;
  static int32_t Id(unsigned char c);
  static char Char(int32_t id);  // InvalidArgument outside [0, kSize)
  std::vector<int32_t> Encode(std::string_view text) const;
  std::string Decode(const std::vector<int32_t>& ids) const;
  int size() const { return kSize; }
};

// The quotes of every plain-text fortune file in `dir` (sorted by name; the .dat indexes, .u8
// links and sub-folders skipped), each followed by a blank line, the "%" separators dropped.
// NotFound naming the directory and the package when there are none.
std::string ReadFortunes(const std::string& dir = kFortunesDir);

// Non-overlapping windows of `context` ids from ids[begin, end): x[i] = ids[s .. s+context),
// y[i] = ids[s+1 .. s+context] (the next character at every position), s = begin + i * context.
// InvalidArgument when the range holds no full window.
ArrayData NextCharWindows(const std::vector<int32_t>& ids, int64_t context, size_t begin, size_t end);

}  // namespace weft::data
