#pragma once
/// @file
/// The requirements of a communication backend.
///
/// Foundation level: a backend moves per-destination buckets of records
/// (a personalised all-to-all) and counts what it sends in the communicator's
/// comm_stats. The one-sided and aggregated operations of the full backend
/// concept (docs/design.md) extend this one; algorithms that need only
/// `exchange` keep working on every backend.

#include "../../comm/buckets.hpp"
#include "../../comm/communicator.hpp"

#include <concepts>
#include <cstddef>
#include <string_view>

namespace tessera {

template <class B>
concept communication_backend = std::default_initializable<B> &&
    requires(const B& backend, const communicator& comm, const buckets<std::byte>& outgoing) {
      { B::name() } -> std::convertible_to<std::string_view>;
      { backend.exchange(comm, outgoing) } -> std::same_as<buckets<std::byte>>;
    };

}  // namespace tessera
