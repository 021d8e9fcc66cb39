#pragma once
/// @file
/// The wire form of a one-sided operation and the code that applies it to a
/// target's memory: shared by the backends that implement one-sided access
/// with messages (aggregator, progress_rank), so both do it the same way.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/comm/detail/remote_op.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/error.hpp"
#include "../scalar_code.hpp"
#include "../segment.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tessera::detail {

enum class remote_kind : std::uint8_t { get = 1, put, accumulate, fetch_add, flush, reply };

/// Fixed-size description of one operation; put/accumulate payload follows it.
struct remote_header {
  std::uint64_t request_id = 0;  ///< origin's key for the reply
  std::uint64_t offset = 0;      ///< region, in elements of the target's part
  std::uint64_t count = 0;
  std::uint64_t block_length = 0;
  std::uint64_t stride = 0;
  std::uint32_t segment = 0;
  std::int32_t target = 0;       ///< rank whose memory is addressed (in the segment's communicator)
  std::uint32_t element_size = 0;
  remote_kind kind = remote_kind::get;
  scalar_code scalar = scalar_code::opaque;
  std::uint16_t unused = 0;

  [[nodiscard]] strided_region region() const noexcept { return {offset, count, block_length, stride}; }
  [[nodiscard]] std::size_t payload_bytes() const noexcept { return count * block_length * element_size; }
};
static_assert(std::is_trivially_copyable_v<remote_header> && sizeof(remote_header) == 56);

/// Copy the region's blocks out of `base` into contiguous `out`.
inline void pack_region(const std::byte* base, const strided_region& r, std::size_t element_size, std::byte* out) {
  const std::size_t block = r.block_length * element_size;
  if (r.count == 1 || r.stride == r.block_length) {
    std::memcpy(out, base + r.offset * element_size, r.count * block);
    return;
  }
  for (std::size_t b = 0; b < r.count; ++b)
    std::memcpy(out + b * block, base + (r.offset + b * r.stride) * element_size, block);
}

/// Copy contiguous `in` into the region's blocks of `base`.
inline void unpack_region(std::byte* base, const strided_region& r, std::size_t element_size, const std::byte* in) {
  const std::size_t block = r.block_length * element_size;
  if (r.count == 1 || r.stride == r.block_length) {
    std::memcpy(base + r.offset * element_size, in, r.count * block);
    return;
  }
  for (std::size_t b = 0; b < r.count; ++b)
    std::memcpy(base + (r.offset + b * r.stride) * element_size, in + b * block, block);
}

template <class T>
void accumulate_typed(std::byte* base, const strided_region& r, const std::byte* in) {
  // Atomic, because on a node other processes may update the same shared memory.
  for (std::size_t b = 0; b < r.count; ++b)
    for (std::size_t i = 0; i < r.block_length; ++i) {
      T addend;
      std::memcpy(&addend, in + (b * r.block_length + i) * sizeof(T), sizeof(T));
      auto* where = reinterpret_cast<T*>(base) + r.offset + b * r.stride + i;
      std::atomic_ref<T>(*where).fetch_add(addend, std::memory_order_relaxed);
    }
}

/// Add contiguous `in` (elements of type `scalar`) into the region of `base`.
inline void accumulate_region(std::byte* base, const strided_region& r, scalar_code scalar, const std::byte* in) {
  switch (scalar) {
    case scalar_code::i32: return accumulate_typed<std::int32_t>(base, r, in);
    case scalar_code::i64: return accumulate_typed<std::int64_t>(base, r, in);
    case scalar_code::u32: return accumulate_typed<std::uint32_t>(base, r, in);
    case scalar_code::u64: return accumulate_typed<std::uint64_t>(base, r, in);
    case scalar_code::f32: return accumulate_typed<float>(base, r, in);
    case scalar_code::f64: return accumulate_typed<double>(base, r, in);
    case scalar_code::opaque: break;
  }
  TESSERA_THROW(internal, "accumulate on a segment whose element type has no sum");
}

/// Atomically add `value` to the 64-bit integer at `offset`; the old value.
inline std::int64_t fetch_add_at(std::byte* base, std::size_t offset, std::int64_t value) {
  return std::atomic_ref<std::int64_t>(reinterpret_cast<std::int64_t*>(base)[offset]).fetch_add(value);
}

/// Apply a put or an accumulate (the operations without an answer) to the target memory `base`.
inline void apply_write(const remote_header& h, std::byte* base, const std::byte* in) {
  if (h.kind == remote_kind::put) unpack_region(base, h.region(), h.element_size, in);
  else if (h.kind == remote_kind::accumulate) accumulate_region(base, h.region(), h.scalar, in);
}

/// Apply a get/put/accumulate/fetch_add to the target memory `base`.
/// `in` is the request's payload; what a get or fetch_add returns goes to `out`
/// (room for header.payload_bytes()).
inline void apply_remote(const remote_header& h, std::byte* base, const std::byte* in, std::byte* out) {
  switch (h.kind) {
    case remote_kind::get: return pack_region(base, h.region(), h.element_size, out);
    case remote_kind::put:
    case remote_kind::accumulate: return apply_write(h, base, in);
    case remote_kind::fetch_add: {
      std::int64_t value;
      std::memcpy(&value, in, sizeof value);
      const std::int64_t old = fetch_add_at(base, h.offset, value);
      std::memcpy(out, &old, sizeof old);
      return;
    }
    case remote_kind::flush:
    case remote_kind::reply: return;
  }
}

/// Bytes a reply to `h` carries (0 if the operation has no reply payload).
[[nodiscard]] inline std::size_t reply_bytes(const remote_header& h) noexcept {
  if (h.kind == remote_kind::get) return h.payload_bytes();
  if (h.kind == remote_kind::fetch_add) return sizeof(std::int64_t);
  return 0;
}
/// Bytes of payload a request for `h` carries after its header.
[[nodiscard]] inline std::size_t request_bytes(const remote_header& h) noexcept {
  if (h.kind == remote_kind::put || h.kind == remote_kind::accumulate) return h.payload_bytes();
  if (h.kind == remote_kind::fetch_add) return sizeof(std::int64_t);
  return 0;
}

/// Make the header of an operation on `s` at `target`.
inline remote_header make_header(remote_kind kind, const segment_state& s, int target, const strided_region& r,
                                 scalar_code scalar) {
  remote_header h;
  h.kind = kind;
  h.segment = s.id;
  h.target = target;
  h.offset = r.offset;
  h.count = r.count;
  h.block_length = r.block_length;
  h.stride = r.count <= 1 ? r.block_length : r.stride;
  h.element_size = static_cast<std::uint32_t>(s.element_size);
  h.scalar = scalar;
  return h;
}

}  // namespace tessera::detail
