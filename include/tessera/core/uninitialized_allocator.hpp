#pragma once
/// @file
/// uninitialized_allocator: a std::allocator whose resize() leaves new elements of trivial types
/// unwritten, for byte buffers that are filled right after they grow (message frames): zeroing
/// them first cost as much as writing them.
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tessera {

template <class T>
struct uninitialized_allocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = uninitialized_allocator<U>;
  };

  uninitialized_allocator() = default;
  template <class U>
  uninitialized_allocator(const uninitialized_allocator<U>&) noexcept {}  // converting, as std::allocator's

  /// Default-initialise (no zeroing for trivial types) where std::allocator would value-initialise.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace tessera
