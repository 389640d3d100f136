// weft's one error type: a code plus a message that names what went wrong.
//
//   Status s = errors::InvalidArgument("MatMul 'dense/mm': inner dimensions differ: [2,3] vs [4,5]");
//   if (!s.ok()) std::cerr << s.ToString();       // "InvalidArgument: MatMul 'dense/mm': ..."
//   throw Error(s);                                // builder and Session APIs throw weft::Error
//
// Library code never aborts or exits. Synchronous APIs throw `Error`; asynchronous completions
// (kernels' `done`, rendezvous callbacks) carry a `Status`.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace weft {

enum class Code {
  kOk = 0,
  kCancelled,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kOutOfRange,
  kUnimplemented,
  kResourceExhausted,
  kUnavailable,
  kDeadlineExceeded,
  kAborted,
  kDataLoss,
  kInternal,
  // The peer did not prove the cluster's secret (TensorFlow's UNAUTHENTICATED).
  kUnauthenticated,
};

std::string_view CodeName(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status OK() { return {}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;
  // Returns a copy whose message is "<prefix>: <message>"; OK stays OK.
  Status WithContext(std::string_view prefix) const;

  bool operator==(const Status&) const = default;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Thrown by synchronous APIs; carries the Status.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status) : std::runtime_error(status.ToString()), status_(std::move(status)) {}
  const Status& status() const { return status_; }
  Code code() const { return status_.code(); }

 private:
  Status status_;
};

namespace errors {
#define WEFT_ERROR_FACTORY(NAME, CODE)                                    \
  template <typename... Args>                                             \
  Status NAME(fmt::format_string<Args...> f, Args&&... args) {            \
    return Status(Code::CODE, fmt::format(f, std::forward<Args>(args)...)); \
  }
WEFT_ERROR_FACTORY(Cancelled, kCancelled)
WEFT_ERROR_FACTORY(InvalidArgument, kInvalidArgument)
WEFT_ERROR_FACTORY(NotFound, kNotFound)
WEFT_ERROR_FACTORY(AlreadyExists, kAlreadyExists)
WEFT_ERROR_FACTORY(FailedPrecondition, kFailedPrecondition)
WEFT_ERROR_FACTORY(OutOfRange, kOutOfRange)
WEFT_ERROR_FACTORY(Unimplemented, kUnimplemented)
WEFT_ERROR_FACTORY(ResourceExhausted, kResourceExhausted)
WEFT_ERROR_FACTORY(Unavailable, kUnavailable)
WEFT_ERROR_FACTORY(DeadlineExceeded, kDeadlineExceeded)
WEFT_ERROR_FACTORY(Aborted, kAborted)
WEFT_ERROR_FACTORY(DataLoss, kDataLoss)
WEFT_ERROR_FACTORY(Internal, kInternal)
WEFT_ERROR_FACTORY(Unauthenticated, kUnauthenticated)
#undef WEFT_ERROR_FACTORY
}  // namespace errors

// Throws Error(InvalidArgument(...)) unless `cond` holds. For argument checks in kernels and
// shape functions; the executor adds the node name and op.
#define WEFT_REQUIRE(cond, ...)                                              \
  do {                                                                       \
    if (!(cond)) throw ::weft::Error(::weft::errors::InvalidArgument(__VA_ARGS__)); \
  } while (0)

// Throws if `status` is not OK.
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

}  // namespace weft
