#include "core/status.h"

namespace weft {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kCancelled: return "Cancelled";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kFailedPrecondition: return "FailedPrecondition";
    case Code::kOutOfRange: return "OutOfRange";
    case Code::kUnimplemented: return "Unimplemented";
    case Code::kResourceExhausted: return "ResourceExhausted";
    case Code::kUnavailable: return "Unavailable";
    case Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Code::kAborted: return "Aborted";
    case Code::kDataLoss: return "DataLoss";
    case Code::kInternal: return "Internal";
    case Code::kUnauthenticated: return "Unauthenticated";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return fmt::format("{}: {}", CodeName(code_), message_);
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", prefix, message_));
}

}  // namespace weft
