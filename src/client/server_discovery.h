#pragma once
// Servers running on this host, found by their command lines, so a refusal
// from the private ledger can point at the server the user probably meant.
// Reading /proc is harmless and needs no privilege; a host that hides other
// users' processes (hidepid) simply shows none.

#include <string>
#include <vector>

namespace bk::client {

// The config paths of `bk server serve --config PATH` processes visible in
// `proc_root`, absolute, without duplicates, in PID order.
std::vector<std::string> RunningServerConfigs(const std::string& proc_root = "/proc");

// The tail a private ledger adds to "not found": which ledger was looked in
// and how to reach a server instead, naming a running one if there is.
std::string PrivateLedgerHint(const std::string& data_dir, const std::vector<std::string>& servers);

}  // namespace bk::client
