#include "sys/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace bk::sys {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1 || length != 32) {
    std::abort();  // only fails when libcrypto itself is broken
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size_t{2} * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0x0f];
  }
  return out;
}

}  // namespace bk::sys
