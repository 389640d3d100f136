// A labelled text set from Debian's `fortunes` package (data/text.h reads its files as one
// corpus): which file a quote came from, each quote as CharVocab ids.
//
//   std::vector<std::string> q = FortuneQuotes(std::string(kFortunesDir) + "/computers");
//   ArrayData train = FortunesByFile(kFortunesDir, {"computers", "politics"}, /*length=*/128, true);
//   // train.x float32 [N, 128] ids (kFortunePad after a quote's end), train.y int32 [N]: the file
//
// Errors name the file: a missing or unreadable file is NotFound, one with no quote is
// InvalidArgument.
#pragma once

#include <string>
#include <vector>

#include "data/text.h"

namespace weft::data {

// The id after a quote's last character: one past CharVocab's ids (an Embedding over these
// inputs has input_dim CharVocab::kSize + 1).
inline constexpr int32_t kFortunePad = CharVocab::kSize;

// The quotes of one fortune file, in file order, each without its "%" line and final newline;
// empty quotes are skipped.
std::vector<std::string> FortuneQuotes(const std::string& path);

// Which of `files` (names in `dir`) a quote came from: x float32 [N, length] holds each quote's
// first `length` characters as CharVocab ids (kFortunePad after its end), y int32 [N] the file's
// index in `files`. Every fifth quote of each file (the 5th, 10th, ...) is the test split (train
// false), the others the training split; quotes in file order, files in the given order (shuffle
// in the pipeline).
ArrayData FortunesByFile(const std::string& dir, const std::vector<std::string>& files, int64_t length, bool train);

}  // namespace weft::data
