#pragma once
/// @file
/// How a plan recognises the sparsity structure it was made for: by the arrays that hold it
/// (address and length: free to compare at every apply) and, when those differ, by a hash of
/// their contents (one pass, only then). Values may change under a plan; structure may not.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/structure_fingerprint.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace tessera::detail {

template <std::size_t N>
class structure_fingerprint {
 public:
  structure_fingerprint() = default;

  /// The identity and content hash of the structure arrays `views` (on any memory space).
  template <class... Views>
    requires(sizeof...(Views) == N)
  explicit structure_fingerprint(const Views&... views)
      : arrays_{identity(views)...}, hash_(content_hash(views...)) {}

  /// Whether `views` hold the structure this fingerprint was taken of. The same arrays are
  /// trusted without reading them; other arrays are hashed (and remembered when they match,
  /// so the next apply with them is free again).
  template <class... Views>
    requires(sizeof...(Views) == N)
  [[nodiscard]] bool matches(const Views&... views) {
    const std::array<array_identity, N> now{identity(views)...};
    if (now == arrays_) return true;
    for (std::size_t i = 0; i < N; ++i)
      if (now[i].length != arrays_[i].length) return false;
    if (content_hash(views...) != hash_) return false;
    arrays_ = now;
    return true;
  }

 private:
  struct array_identity {
    const void* data = nullptr;
    std::size_t length = 0;
    bool operator==(const array_identity&) const = default;
  };

  template <class View>
  static array_identity identity(const View& v) {
    return {static_cast<const void*>(v.data()), v.span()};
  }

  // FNV-1a over 64-bit words, mixing in each array's length so that moving an element from one
  // array to the next changes the hash.
  template <class... Views>
  static std::uint64_t content_hash(const Views&... views) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](std::uint64_t word) {
      h ^= word;
      h *= 0x100000001b3ull;
    };
    auto add = [&](const auto& v) {
      const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
      mix(static_cast<std::uint64_t>(host.span()));
      for (std::size_t i = 0; i < host.span(); ++i) mix(static_cast<std::uint64_t>(host.data()[i]));
    };
    (add(views), ...);
    return h;
  }

  std::array<array_identity, N> arrays_{};
  std::uint64_t hash_ = 0;
};

}  // namespace tessera::detail
