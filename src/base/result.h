#pragma once
// Errors as values (in the spirit of leveldb::Status): every fallible function
// returns Result<T> or Status, and the surface decides how to show the error.

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace bk {

// What went wrong, coarse enough to choose an exit code and a JSON error type.
enum class ErrorKind {
  kInvalid,      // bad input from the user or a file: fix the input (exit 2)
  kUsage,        // a command line the option grammar refuses (exit 2; always on stderr)
  kConflict,     // the calendar has no room for the request (exit 2)
  kNoSlot,       // a read-only search found nothing legal (exit 3)
  kNotFound,     // no such reservation / operation / file (exit 2)
  kPermission,   // not yours, or not an administrator (exit 2)
  kPolicy,       // configuration does not match the ledger's bound policy (exit 2; daemons 78)
  kCorrupt,      // data file unreadable or not ours (exit 2)
  kIo,           // the operating system refused (exit 2)
  kBusy,         // another instance holds the lock (exit 75)
  kUnavailable,  // a service we need is not running (exit 2)
  kInternal,     // a bug: should never happen (exit 2)
};

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
};

template <class T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

inline std::unexpected<Error> Fail(ErrorKind kind, std::string message) {
  return std::unexpected(Error{kind, std::move(message)});
}
inline std::unexpected<Error> Invalid(std::string message) {
  return Fail(ErrorKind::kInvalid, std::move(message));
}
// A command line the option grammar refuses, as argparse's usage errors:
// these go to stderr even when --json asked for a document.
inline std::unexpected<Error> UsageError(std::string message) {
  return Fail(ErrorKind::kUsage, std::move(message));
}
inline Status Ok() { return {}; }

// Stable machine name of a kind, used in JSON error documents.
std::string_view ErrorKindName(ErrorKind kind);
// Exit status of an ordinary CLI command failing with this kind.
int ExitCode(ErrorKind kind);

}  // namespace bk

// Propagates an error from an expression returning Result/Status.
#define BK_TRY(expr)                                                                                   \
  do {                                                                                                 \
    if (auto bk_try_result_ = (expr); !bk_try_result_) return std::unexpected(bk_try_result_.error()); \
  } while (0)

// Assigns the value of a Result expression or returns its error.
#define BK_ASSIGN_OR_RETURN(lhs, expr) BK_ASSIGN_OR_RETURN_IMPL_(BK_CONCAT_(bk_r_, __LINE__), lhs, expr)
#define BK_CONCAT_INNER_(a, b) a##b
#define BK_CONCAT_(a, b) BK_CONCAT_INNER_(a, b)
#define BK_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp) return std::unexpected(tmp.error());  \
  lhs = std::move(*tmp)
