#include "data/fortunes.h"

#include <fstream>
#include <sstream>

namespace weft::data {

std::vector<std::string> FortuneQuotes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) {
    throw Error(errors::NotFound("fortune file '{}' cannot be read (is Debian's `fortunes` package installed?)", path));
  }
  std::vector<std::string> quotes;
  std::string quote, line;
  auto flush = [&] {
    while (!quote.empty() && (quote.back() == '\n' || quote.back() == '\r')) quote.pop_back();
    if (!quote.empty()) quotes.push_back(quote);
    quote.clear();
  };
  while (std::getline(in, line)) {
    if (line == "%") {
      flush();
    } else {
      quote += line;
      quote += '\n';
    }
  }
  flush();
  WEFT_REQUIRE(!quotes.empty(), "fortune file '{}' holds no quote", path);
  return quotes;
}

ArrayData FortunesByFile(const std::string& dir, const std::vector<std::string>& files, int64_t length, bool train) {
  WEFT_REQUIRE(length > 0, "FortunesByFile: length must be positive, got {}", length);
  WEFT_REQUIRE(!files.empty(), "FortunesByFile: needs at least one file of {}", dir);
  std::vector<std::pair<const std::string*, int32_t>> picked;
  std::vector<std::vector<std::string>> all;
  all.reserve(files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    all.push_back(FortuneQuotes(dir + "/" + files[f]));
    for (size_t q = 0; q < all.back().size(); ++q) {
      if (((q + 1) % 5 == 0) != train) picked.emplace_back(&all.back()[q], static_cast<int32_t>(f));
    }
  }
  const int64_t n = static_cast<int64_t>(picked.size());
  ArrayData d{Tensor(DType::kFloat32, TensorShape({n, length})), Tensor(DType::kInt32, TensorShape({n}))};
  float* x = d.x.data<float>();
  int32_t* y = d.y.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    const std::string& q = *picked[i].first;
    for (int64_t c = 0; c < length; ++c) {
      x[i * length + c] = static_cast<float>(c < static_cast<int64_t>(q.size()) ? CharVocab::Id(static_cast<unsigned char>(q[c])) : kFortunePad);
    }
    y[i] = picked[i].second;
  }
  return d;
}

}  // namespace weft::data
