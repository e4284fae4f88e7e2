#pragma once
// Canonical request fingerprints: SHA-256 of the
// request as JSON with sorted keys and no spaces. An identical retry under the
// same operation ID matches; a different request does not.

#include <string>

#include "engine/time_grid.h"
#include "service/types.h"

namespace bk::service {

std::string CreateSignature(const CreateRequest& r, engine::Mode mode, int share_units);
std::string EditSignature(const EditRequest& r, const std::string& reservation_id);
std::string RenewSignature(const RenewRequest& r, const std::string& reservation_id);
std::string CancelSignature(const std::string& reservation_id);
std::string TransferSignature(const std::string& reservation_id, uint32_t to_uid);

}  // namespace bk::service
