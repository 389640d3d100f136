// The fortunes reader (data/fortunes.h) on files written here: quote splitting, the ids,
// labels, the every-fifth-quote test split, and the errors of missing and empty files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "data/fortunes.h"

using namespace weft;
using namespace weft::data;

namespace {

std::string Dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("weft_fortunes_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("ReadFortunes splits on '%' lines and drops empty quotes and trailing newlines") {
  const std::string dir = Dir();
  WriteFile(dir + "/a", "first\nquote\n%\n%\nsecond\n%\nthird, no final percent\n");
  const std::vector<std::string> q = FortuneQuotes(dir + "/a");
  REQUIRE(q.size() == 3);
  CHECK(q[0] == "first\nquote");
  CHECK(q[1] == "second");
  CHECK(q[2] == "third, no final percent");
  std::filesystem::remove_all(dir);
}

TEST_CASE("FortunesByFile: CharVocab ids padded with kFortunePad, file index labels, every fifth quote for testing") {
  const std::string dir = Dir();
  std::string six;
  for (int i = 1; i <= 6; ++i) six += "q" + std::to_string(i) + "\n%\n";
  WriteFile(dir + "/six", six);
  WriteFile(dir + "/one", "\xc3\xa9t\tlong quote\n%\n");
  const ArrayData train = FortunesByFile(dir, {"six", "one"}, 4, true);
  REQUIRE(train.x.shape() == TensorShape({6, 4}));  // q1-q4, q6 and the one quote of "one"
  const float* x = train.x.data<float>();
  // CharVocab: ' '..'~' are ids 1..95 (c - 31), other bytes id 96, tabs are spaces.
  CHECK(x[0] == 'q' - 31);
  CHECK(x[1] == '1' - 31);
  CHECK(x[2] == 97);  // kFortunePad after the quote
  CHECK(x[3] == 97);
  CHECK(x[4 * 4 + 1] == '6' - 31);
  CHECK(x[5 * 4 + 0] == 96);  // a byte outside printable ASCII
  CHECK(x[5 * 4 + 1] == 96);
  CHECK(x[5 * 4 + 2] == 't' - 31);
  CHECK(x[5 * 4 + 3] == ' ' - 31);
  const int32_t* y = train.y.data<int32_t>();
  CHECK(y[0] == 0);
  CHECK(y[5] == 1);
  const ArrayData test = FortunesByFile(dir, {"six", "one"}, 4, false);
  REQUIRE(test.x.shape() == TensorShape({1, 4}));
  CHECK(test.x.data<float>()[1] == '5' - 31);
  CHECK(test.y.data<int32_t>()[0] == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("fortunes: a missing file is NotFound and an empty one InvalidArgument, naming the file") {
  const std::string dir = Dir();
  WriteFile(dir + "/empty", "%\n%\n");
  try {
    FortuneQuotes(dir + "/absent");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kNotFound);
    CHECK(std::string(e.what()).find(dir + "/absent") != std::string::npos);
  }
  try {
    FortunesByFile(dir, {"empty"}, 8, true);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("holds no quote") != std::string::npos);
  }
  CHECK_THROWS_AS(FortunesByFile(dir, {"empty"}, 0, true), Error);
  std::filesystem::remove_all(dir);
}
