#include "data/text.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/status.h"

namespace weft::data {

int32_t CharVocab::Id(unsigned char c) {
  if (c == '\n') return 0;
  if (c == '\t') c = ' ';
  if (c >= 32 && c <= 126) return static_cast<int32_t>(c) - 31;
  return kUnknown;
}

char CharVocab::Char(int32_t id) {
  WEFT_REQUIRE(id >= 0 && id < kSize, "CharVocab: id {} is out of range [0, {})", id, kSize);
  if (id == 0) return '\n';
  if (id == kUnknown) return '?';
  return static_cast<char>(id + 31);
}

std::vector<int32_t> CharVocab::Encode(std::string_view text) const {
  std::vector<int32_t> ids(text.size());
  std::transform(text.begin(), text.end(), ids.begin(), [](char c) { return Id(static_cast<unsigned char>(c)); });
  return ids;
}

std::string CharVocab::Decode(const std::vector<int32_t>& ids) const {
  std::string out(ids.size(), ' ');
  std::transform(ids.begin(), ids.end(), out.begin(), Char);
  return out;
}

std::string ReadFortunes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (!it->is_regular_file() || p.has_extension()) continue;  // .dat indexes, .u8 links
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const fs::path& p : files) {
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) text += line == "%" ? "\n" : line + "\n";
  }
  if (text.empty()) {
    throw Error(errors::NotFound("no fortune files in {} (Debian's package `fortunes` installs them: apt-get "
                                 "install fortunes)", dir));
  }
  return text;
}

ArrayData NextCharWindows(const std::vector<int32_t>& ids, int64_t context, size_t begin, size_t end) {
  end = std::min(end, ids.size());
  WEFT_REQUIRE(context > 0 && begin < end && end - begin > static_cast<size_t>(context),
               "NextCharWindows: ids [{}, {}) hold no window of {} characters plus the next one", begin, end, context);
  const int64_t n = static_cast<int64_t>((end - begin - 1) / static_cast<size_t>(context));
  ArrayData d{Tensor(DType::kFloat32, TensorShape({n, context})), Tensor(DType::kInt32, TensorShape({n, context}))};
  float* x = d.x.data<float>();
  int32_t* y = d.y.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    const size_t s = begin + static_cast<size_t>(i * context);
    for (int64_t t = 0; t < context; ++t) {
      x[i * context + t] = static_cast<float>(ids[s + t]);
      y[i * context + t] = ids[s + t + 1];
    }
  }
  return d;
}

}  // namespace weft::data
