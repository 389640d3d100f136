// Ops that exist only in the tests, to drive the executor through its paths: parallel
// branches that must meet, a failing kernel, an async kernel that completes from another
// thread (or only when the step is cancelled), and one that records the order it ran in.
#pragma once

#include <string>
#include <vector>

namespace weft::test {

// Registers TestWaitPair, TestFail, TestAsyncDelay, TestRecord (idempotent).
void RegisterTestOps();
// The labels TestRecord nodes ran with, in order; cleared by ClearRecord().
std::vector<std::string> RecordLog();
void ClearRecord();

}  // namespace weft::test
