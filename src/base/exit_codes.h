#pragma once
// The exit statuses of bk and its daemons, named once. They follow the
// conventions scripts and service managers already know: sysexits.h for a
// busy lock, a refused caller and a configuration that no longer fits
// (75, 77, 78: systemd units list 75 and 78 as not worth a restart), and
// timeout(1) for a command stopped at its deadline (124).

namespace bk::exit_code {

inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;         // a managed job failed, or a check found problems
inline constexpr int kUsage = 2;          // bad input, refused request, any ordinary error
inline constexpr int kNoSlot = 3;         // a search found nothing; `bk w --once`: work still waiting
inline constexpr int kBusy = 75;          // EX_TEMPFAIL: another instance holds the lock
inline constexpr int kNotOwner = 77;      // EX_NOPERM: a daemon started by the wrong account
inline constexpr int kPolicyDrift = 78;   // EX_CONFIG: the configuration no longer matches the ledger
inline constexpr int kTimedOut = 124;     // as timeout(1): stopped at the booking's end, or cancelled
inline constexpr int kInterrupted = 130;  // 128 + SIGINT

}  // namespace bk::exit_code
