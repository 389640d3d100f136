// One-file checkpoints of named tensors, written atomically and checked with CRC-32C on load.
//
//   using namespace weft::train;
//   SaveCheckpoint("/tmp/run/ckpt-100.weft", {{"dense/w", w}, {"dense/b", b}});
//   std::map<std::string, Tensor> t = LoadCheckpoint("/tmp/run/ckpt-100.weft");
//   RestoreInto(t, {{"dense/w", &w}, {"dense/b", &b}}, "/tmp/run/ckpt-100.weft");
//
//   // A Session's variables, and the directory convention used by training loops:
//   SaveVariables(CheckpointPath("/tmp/run", step), session_vars, {"dense/w", "dense/b"});
//   std::string latest = LatestCheckpoint("/tmp/run");   // "" when there is none
//   if (!latest.empty()) RestoreVariables(latest, session_vars, {"dense/w", "dense/b"});
//   PruneCheckpoints("/tmp/run", /*keep=*/3);
//
// File format, version 1 (all integers little-endian; see docs/checkpoint-format.md):
//
//   header:  char[8] "WEFTCKPT" | u32 version | u64 num_tensors | u32 crc32c(the 20 bytes before)
//   record:  u32 name_len | name bytes | u8 dtype | u32 rank | i64 dims[rank] | u64 byte_len
//            | u32 meta_crc = crc32c(the record so far)
//            | byte_len bytes of data, row-major, little-endian
//            | u32 crc32c(metadata and data) = Crc32c(data, byte_len, meta_crc)
//   (num_tensors records, then end of file)
//
//   dtype codes: 1 float32, 2 float64, 3 int32, 4 int64, 5 uint8, 6 bool, 7 float16, 8 bfloat16.
//
// Errors: every message names the file. Load reports DataLoss, naming the header or the tensor
// (its index and name), for a wrong magic, a bad CRC, a truncated file, trailing bytes or an
// impossible length or dtype; a checkpoint from a newer format version is FailedPrecondition giving
// both versions. Lengths are checked against the bytes left in the file before anything is allocated.
// Thread-safety: the functions are reentrant; concurrent saves to one path are safe (each writes
// its own temporary file; the last rename wins).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace weft {
class VarStore;
}

namespace weft::train {

inline constexpr uint32_t kCheckpointVersion = 1;

// Writes `tensors` to `path + ".tmp-<pid>-<random>"`, fsyncs it, renames it over `path` and fsyncs
// the directory, so `path` holds either the old or the new checkpoint, never a partial one. On any
// error the temporary file is removed and Error is thrown naming the path: NotFound (the directory
// does not exist), ResourceExhausted (disk full, file too large), FailedPrecondition (permission),
// Unavailable (other I/O errors); InvalidArgument for duplicate or empty names, uninitialized or
// device tensors.
void SaveCheckpoint(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

// Reads and verifies a whole checkpoint (see the errors above). NotFound if `path` cannot be opened.
std::map<std::string, Tensor> LoadCheckpoint(const std::string& path);

// Copies loaded[name] into *target for every (name, target) in `expected`. A missing name is NotFound;
// a target that is already initialized must have the checkpoint's dtype and shape (else
// InvalidArgument naming the tensor, both dtypes and shapes); an uninitialized target takes whatever
// the checkpoint holds. Each target receives its own copy. All entries are checked before any is
// written, so on error no target changes. `source` (e.g. the file) is named in messages.
void RestoreInto(const std::map<std::string, Tensor>& loaded,
                 const std::vector<std::pair<std::string, Tensor*>>& expected,
                 const std::string& source = "checkpoint");

// Saves the values of the named variables (empty `names`: every variable in `vars`). A variable that
// does not exist is NotFound, one that was never assigned is FailedPrecondition, both naming it.
// Variables in device memory (a GPU's) are copied to the host first (Tensor::ToHost).
void SaveVariables(const std::string& path, VarStore& vars, const std::vector<std::string>& names);

// Loads `path` and assigns the named variables (empty `names`: every tensor in the file), creating
// them in `vars` if needed, with the same checks as RestoreInto (an initialized variable keeps its
// dtype and shape). Each variable gets a fresh buffer; other holders of its old value are unaffected.
void RestoreVariables(const std::string& path, VarStore& vars, const std::vector<std::string>& names);

// Training-loop convention: `dir`/ckpt-<step>.weft.
std::string CheckpointPath(const std::string& dir, int64_t step);
// The complete checkpoints in `dir` as (step, path), ascending by step. Temporary files of saves in
// progress (or of crashed ones) are not listed. A missing `dir` gives an empty list.
std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& dir);
// The path of the highest-step checkpoint in `dir`, or "" when there is none.
std::string LatestCheckpoint(const std::string& dir);
// Deletes all but the `keep` (>= 0) highest-step checkpoints in `dir`.
void PruneCheckpoints(const std::string& dir, int keep);

// How old an unfinished temporary must be before RemoveStaleTemporaries may remove it.
inline constexpr std::chrono::minutes kStaleTemporaryAge{10};
// Removes the stale temporaries of checkpoint saves in `dir` and returns how many. The rule: only
// files named as SaveCheckpoint names its temporaries ("<file>.tmp-<pid>-<8 hex digits>") whose
// <file> is `file` (empty: any checkpoint name "ckpt-<step>.weft"), that are regular files, were
// last written at least kStaleTemporaryAge ago (a save on another machine sharing the directory
// writes to its temporary until it renames it) and whose pid is not a live process here. Nothing
// else is ever removed; errors are ignored (a read-only directory keeps its files). Run by
// SaveCheckpoint (for the file it writes), LatestCheckpoint and PruneCheckpoints.
int RemoveStaleTemporaries(const std::string& dir, const std::string& file = "");

}  // namespace weft::train
