#include "mutator.h"

#include <algorithm>
#include <cstring>

namespace weft::fuzz {
namespace {

// Values that break length and count arithmetic when written into a field.
constexpr uint64_t kInteresting[] = {0,
                                     1,
                                     2,
                                     0x7F,
                                     0x80,
                                     0xFF,
                                     0x7FFF,
                                     0x8000,
                                     0xFFFF,
                                     0x7FFFFFFF,
                                     0x80000000,
                                     0xFFFFFFFF,
                                     0x100000000ull,
                                     1ull << 40,
                                     1ull << 61,
                                     1ull << 62,
                                     0x7FFFFFFFFFFFFFFFull,
                                     0x8000000000000000ull,
                                     0xFFFFFFFFFFFFFFFFull};

void Overwrite(std::string& s, size_t pos, uint64_t v, size_t width) {
  if (pos + width > s.size()) return;
  std::memcpy(s.data() + pos, &v, width);  // little-endian, as weft's formats are
}

uint64_t Load(const std::string& s, size_t pos, size_t width) {
  uint64_t v = 0;
  if (pos + width <= s.size()) std::memcpy(&v, s.data() + pos, width);
  return v;
}

size_t Width(Rng& rng) { return size_t{1} << rng.Below(4); }  // 1, 2, 4 or 8 bytes

// A field position: aligned to its width half the time (formats lay fields out at any offset, but
// the wire header's are aligned).
size_t FieldPos(const std::string& s, size_t width, Rng& rng) {
  const size_t pos = rng.Below(s.size() - width + 1);
  return rng.OneIn(2) ? pos - pos % width : pos;
}

void MutateOnce(std::string& s, const std::vector<std::string>& corpus, Rng& rng) {
  if (s.empty()) {
    s.assign(1 + rng.Below(16), static_cast<char>(rng.Next()));
    return;
  }
  switch (rng.Below(10)) {
    case 0: {  // flip 1 to 8 bits
      for (uint64_t n = 1 + rng.Below(8); n > 0; --n) s[rng.Below(s.size())] ^= static_cast<char>(1 << rng.Below(8));
      break;
    }
    case 1: {  // set a byte to a boundary value
      static constexpr unsigned char kBytes[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, '"', '\\', '{', '[', ':', ',', '/', ';'};
      s[rng.Below(s.size())] = static_cast<char>(kBytes[rng.Below(std::size(kBytes))]);
      break;
    }
    case 2:  // truncate
      s.resize(rng.Below(s.size()));
      break;
    case 3: {  // delete a range
      const size_t pos = rng.Below(s.size());
      s.erase(pos, 1 + rng.Below(std::min<size_t>(s.size() - pos, 64)));
      break;
    }
    case 4: {  // duplicate a range in place (repeats records, list items, JSON members)
      const size_t pos = rng.Below(s.size());
      const size_t len = 1 + rng.Below(std::min<size_t>(s.size() - pos, 128));
      s.insert(pos, s.substr(pos, len));
      break;
    }
    case 5: {  // insert random bytes
      std::string junk(1 + rng.Below(16), '\0');
      for (char& c : junk) c = static_cast<char>(rng.Next());
      s.insert(rng.Below(s.size() + 1), junk);
      break;
    }
    case 6:
    case 7: {  // overwrite a field with an interesting value, or the input's own size +-1
      const size_t width = Width(rng);
      if (s.size() < width) break;
      uint64_t v = kInteresting[rng.Below(std::size(kInteresting))];
      if (rng.OneIn(4)) v = s.size() + rng.Below(3) - 1;
      Overwrite(s, FieldPos(s, width, rng), v, width);
      break;
    }
    case 8: {  // add or subtract a little from a field (lengths and counts off by a few)
      const size_t width = Width(rng);
      if (s.size() < width) break;
      const size_t pos = FieldPos(s, width, rng);
      const uint64_t delta = 1 + rng.Below(16);
      Overwrite(s, pos, rng.OneIn(2) ? Load(s, pos, width) + delta : Load(s, pos, width) - delta, width);
      break;
    }
    case 9: {  // splice: a prefix of this input and a suffix of another
      const std::string& other = corpus[rng.Below(corpus.size())];
      const size_t cut = rng.Below(s.size() + 1);
      const size_t from = other.empty() ? 0 : rng.Below(other.size());
      s = s.substr(0, cut) + other.substr(from);
      break;
    }
  }
}

}  // namespace

uint64_t MixSeed(uint64_t run_seed, std::string_view target, uint64_t index) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a over the target's name
  for (char c : target) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  Rng r(run_seed ^ h);
  r.Next();
  return r.Next() ^ (index * 0x9E3779B97F4A7C15ull);
}

std::string Mutate(const std::string& base, const std::vector<std::string>& corpus, Rng& rng) {
  std::string s = base;
  for (uint64_t n = 1 + rng.Below(4); n > 0; --n) MutateOnce(s, corpus, rng);
  return s;
}

}  // namespace weft::fuzz
