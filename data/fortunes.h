// Text data from Debian's `fortunes` package: plain-text files of quotes under
// /usr/share/games/fortunes, each quote ended by a line holding "%".
//
//   std::vector<std::string> quotes = ReadFortunes(std::string(kFortunesDir) + "/computers");
//   ArrayData train = FortunesByFile(kFortunesDir, {"computers", "politics"}, /*length=*/128, true);
//   // train.x float32 [N, 128] byte codes (0 pads), train.y int32 [N]: the file's index
//
// Errors name the file: a missing or unreadable file is NotFound, one with no quote is
// InvalidArgument.
#pragma once

#include <string>
#include <vector>

#include "data/datasets.h"

namespace weft::data {

inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

// The quotes of one fortune file, in file order, each without its "%" line and final newline;
// empty quotes are skipped.
std::vector<std::string> ReadFortunes(const std::string& path);

// A labelled text set: which of `files` (names in `dir`) a quote came from. x float32 [N, length]
// holds each quote's first `length` bytes as codes 1..255 (0 pads a shorter quote: byte 0 never
// occurs in text), y int32 [N] the file's index in `files`. Every fifth quote of each file (the
// 5th, 10th, ...) is the test split (train false), the others the training split; quotes stay in
// file order, files in the given order (shuffle in the pipeline).
ArrayData FortunesByFile(const std::string& dir, const std::vector<std::string>& files, int64_t length, bool train);

}  // namespace weft::data
