#pragma once
// A backend written outside the library: it wraps another backend (mpi_rma by default), forwards
// every operation to it and logs each one-sided operation and bulk exchange of this process. It
// states the backend concept (tessera::communication_backend) and nothing else, so every operation
// runs on it; the log shows what an algorithm does on the wire, operation by operation, where the
// library's counters show totals per scope.
#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace custom {

// One logged operation of this process.
struct trace_event {
  std::string_view what;  // "get", "put", "accumulate", "fetch_add", "allocate", "exchange", ...
  int target;             // the rank, or -1 for collectives
  std::size_t bytes;
};

// The log of this process (every tracing context appends to it).
inline std::vector<trace_event>& trace_log() {
  static std::vector<trace_event> log;
  return log;
}

// [tracing]
template <tessera::communication_backend Inner = tessera::mpi_rma>
struct tracing {
  static constexpr std::string_view name() noexcept { return "tracing"; }
  // Completion is the inner backend's: so is the passive-target promise.
  static constexpr bool passive_target = tessera::is_passive_target<Inner>;

  struct options {
    typename Inner::options inner{};
  };

  class context {
   public:
    context(const tessera::communicator& comm, options o) : inner_(comm, o.inner) {}

    [[nodiscard]] const tessera::communicator& comm() const { return inner_.comm(); }

    template <class T>
    tessera::segment<T> allocate(std::size_t n) {
      note("allocate", -1, n * sizeof(T));
      return inner_.template allocate<T>(n);
    }
    template <class T>
    tessera::segment<T> expose(std::span<T> memory) {
      note("expose", -1, memory.size_bytes());
      return inner_.expose(memory);
    }

    template <class T>
    tessera::request get_nb(const tessera::segment<T>& s, int rank, std::size_t offset, std::span<T> into) {
      note("get", rank, into.size_bytes());
      return inner_.get_nb(s, rank, offset, into);
    }
    template <class T>
    tessera::request put_nb(const tessera::segment<T>& s, int rank, std::size_t offset, std::span<const T> from) {
      note("put", rank, from.size_bytes());
      return inner_.put_nb(s, rank, offset, from);
    }
    template <class T>
    tessera::request get_strided_nb(const tessera::segment<T>& s, int rank, const tessera::strided_region& region,
                                    std::span<T> into, std::size_t local_stride = 0) {
      note("get_strided", rank, region.elements() * sizeof(T));
      return inner_.get_strided_nb(s, rank, region, into, local_stride);
    }
    template <class T>
    tessera::request put_strided_nb(const tessera::segment<T>& s, int rank, const tessera::strided_region& region,
                                    std::span<const T> from, std::size_t local_stride = 0) {
      note("put_strided", rank, region.elements() * sizeof(T));
      return inner_.put_strided_nb(s, rank, region, from, local_stride);
    }
    template <class T>
    tessera::request accumulate_nb(const tessera::segment<T>& s, int rank, std::size_t offset, std::span<const T> from) {
      note("accumulate", rank, from.size_bytes());
      return inner_.accumulate_nb(s, rank, offset, from);
    }
    tessera::request fetch_add_nb(const tessera::segment<std::int64_t>& s, int rank, std::size_t offset,
                                  std::int64_t value, std::int64_t& old) {
      note("fetch_add", rank, sizeof(std::int64_t));
      return inner_.fetch_add_nb(s, rank, offset, value, old);
    }

    // The blocking forms: the non-blocking ones, completed.
    template <class T>
    void get(const tessera::segment<T>& s, int rank, std::size_t offset, std::span<T> into) {
      get_nb(s, rank, offset, into).wait();
    }
    template <class T>
    void put(const tessera::segment<T>& s, int rank, std::size_t offset, std::span<const T> from) {
      put_nb(s, rank, offset, from).wait();
    }
    template <class T>
    void get_strided(const tessera::segment<T>& s, int rank, const tessera::strided_region& region, std::span<T> into) {
      get_strided_nb(s, rank, region, into).wait();
    }
    template <class T>
    void put_strided(const tessera::segment<T>& s, int rank, const tessera::strided_region& region,
                     std::span<const T> from) {
      put_strided_nb(s, rank, region, from).wait();
    }
    template <class T>
    void accumulate(const tessera::segment<T>& s, int rank, std::size_t offset, std::span<const T> from) {
      accumulate_nb(s, rank, offset, from).wait();
    }
    std::int64_t fetch_add(const tessera::segment<std::int64_t>& s, int rank, std::size_t offset, std::int64_t value) {
      std::int64_t old = 0;
      fetch_add_nb(s, rank, offset, value, old).wait();
      return old;
    }

    void flush(int rank) { inner_.flush(rank); }
    void flush_all() { inner_.flush_all(); }
    void barrier() {
      note("barrier", -1, 0);
      inner_.barrier();
    }
    tessera::conveyor& messages() { return inner_.messages(); }

   private:
    static void note(std::string_view what, int target, std::size_t bytes) { trace_log().push_back({what, target, bytes}); }
    typename Inner::context inner_;
  };

  template <class T>
  tessera::buckets<T> exchange(const tessera::communicator& comm, const tessera::buckets<T>& outgoing) const {
    trace_log().push_back({"exchange", -1, outgoing.data.size() * sizeof(T)});
    return Inner{}.exchange(comm, outgoing);
  }
};
// [tracing]

static_assert(tessera::communication_backend<tracing<>>);

}  // namespace custom
