#pragma once
// systemd readiness (sd_notify) without libsystemd: one datagram to $NOTIFY_SOCKET.

#include <string>

namespace bk::server {

// Sends e.g. "READY=1" when NOTIFY_SOCKET is set; silently does nothing otherwise.
void Notify(const std::string& state);

}  // namespace bk::server
