// The host BLAS inspection (kernels/host_blas.hpp): the CPU flags and OpenBLAS core names it
// classifies, the advice it gives, and what it reads from the OpenBLAS this program has loaded.
// Registered twice (tests/CMakeLists.txt): as the suite runs, and with OPENBLAS_CORETYPE=Haswell
// in the environment, where the inspection must report the kernels OpenBLAS was told to use. The
// cases for a BLAS this program does not have (OpenBLAS or not, a CPU without AVX2) are skipped.
#include "test_support.hpp"

#include "tessera/kernels/host_blas.hpp"

#include <KokkosBlas3_gemm.hpp>

#include <cstdlib>
#include <string>

namespace host_blas_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

namespace {
using namespace tessera::kernels;

TEST_CASE("CPU flags name the widest vector instructions, whole words only") {
  CHECK(vector_isa_of_cpu_flags(": fpu sse2 avx avx2 fma avx512f avx512dq avx512bw avx512vl") == vector_isa::avx512);
  // AVX-512 without the extensions the SkylakeX kernels use (Knights Landing) counts as AVX2.
  CHECK(vector_isa_of_cpu_flags(": sse2 avx avx2 fma avx512f avx512cd avx512er") == vector_isa::avx2);
  CHECK(vector_isa_of_cpu_flags(": sse2 avx avx2") == vector_isa::avx);  // no FMA
  CHECK(vector_isa_of_cpu_flags(": sse2 avx") == vector_isa::avx);
  CHECK(vector_isa_of_cpu_flags(": sse2 sse3") == vector_isa::sse);
  CHECK(vector_isa_of_cpu_flags(": avx512fx avx2x fmax sse2") == vector_isa::sse);  // not whole words
  CHECK(vector_isa_of_cpu_flags("") == vector_isa::unknown);
}

TEST_CASE("OpenBLAS core names map to their kernels' instructions, in any case") {
  CHECK(openblas_core_vector_isa("Prescott") == vector_isa::sse);
  CHECK(openblas_core_vector_isa("NEHALEM") == vector_isa::sse);
  CHECK(openblas_core_vector_isa("Sandybridge") == vector_isa::avx);
  CHECK(openblas_core_vector_isa("Haswell") == vector_isa::avx2);
  CHECK(openblas_core_vector_isa("Zen") == vector_isa::avx2);
  CHECK(openblas_core_vector_isa("SkylakeX") == vector_isa::avx512);
  CHECK(openblas_core_vector_isa("cooperlake") == vector_isa::avx512);
  CHECK(openblas_core_vector_isa("neoversen1") == vector_isa::unknown);
  CHECK(openblas_core_vector_isa("") == vector_isa::unknown);
}

TEST_CASE("a core below AVX2 on a CPU that has it gets the coretype that uses the CPU") {
  CHECK(openblas_coretype_for("Prescott", vector_isa::avx512) == "SkylakeX");
  CHECK(openblas_coretype_for("Prescott", vector_isa::avx2) == "Haswell");
  CHECK(openblas_coretype_for("Sandybridge", vector_isa::avx2) == "Haswell");
  CHECK(openblas_coretype_for("Zen", vector_isa::avx512).empty());  // nearly as fast on a Zen 4
  CHECK(openblas_coretype_for("SkylakeX", vector_isa::avx512).empty());
  CHECK(openblas_coretype_for("Prescott", vector_isa::avx).empty());  // nothing better to choose
  CHECK(openblas_coretype_for("Prescott", vector_isa::unknown).empty());
  CHECK(openblas_coretype_for("neoversen1", vector_isa::avx512).empty());

  host_blas_info slow{.library = "OpenBLAS", .config = "OpenBLAS 0.3.21", .core = "Prescott",
                      .cpu = vector_isa::avx512, .suggested_coretype = "SkylakeX"};
  CHECK(slow.below_cpu());
  const std::string advice = host_blas_advice(slow, "the test");
  CHECK(advice.find("the test calls OpenBLAS (OpenBLAS 0.3.21)") != std::string::npos);
  CHECK(advice.find("Prescott kernels (sse)") != std::string::npos);
  CHECK(advice.find("OPENBLAS_CORETYPE=SkylakeX") != std::string::npos);
  host_blas_info fine = slow;
  fine.core = "SkylakeX";
  fine.suggested_coretype.clear();
  CHECK(host_blas_advice(fine, "the test").empty());
}

// One product through KokkosBlas::gemm, so that the program calls (and loads) the system BLAS.
void multiply_through_the_blas() {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", 2, 2), b("b", 2, 2), c("c", 2, 2);
  a(0, 0) = 1, a(0, 1) = 2, a(1, 0) = 3, a(1, 1) = 4;
  b(0, 0) = 5, b(0, 1) = 6, b(1, 0) = 7, b(1, 1) = 8;
  KokkosBlas::gemm("N", "N", 1.0, a, b, 0.0, c);
  CHECK(c(0, 0) == 19);
  CHECK(c(1, 1) == 50);
}

// Linked libraries are loaded before static initialisation, so the skips below see the BLAS.
bool openblas_in_process() { return !host_blas().library.empty(); }

// The second registration's OPENBLAS_CORETYPE, where this CPU can run those kernels.
const char* expected_core() {
  const char* expected = std::getenv("TESSERA_TEST_EXPECT_OPENBLAS_CORE");
  return expected != nullptr && host_cpu_vector_isa() >= openblas_core_vector_isa(expected) ? expected : nullptr;
}

TEST_CASE("the inspection reads the OpenBLAS this process runs" * doctest::skip(!openblas_in_process())) {
  multiply_through_the_blas();
  const host_blas_info info = host_blas();
  const vector_isa cpu = host_cpu_vector_isa();
  CHECK(info.cpu == cpu);
  CHECK(info.library == "OpenBLAS");
  CHECK_FALSE(info.core.empty());
  CHECK_FALSE(info.config.empty());
  CHECK(info.suggested_coretype == openblas_coretype_for(info.core, cpu));
  CHECK(info.below_cpu() == !host_blas_advice(info, "x").empty());
  // The advice, once per process at most.
  CHECK(host_blas_warning("test_host_blas") == info.below_cpu());
  CHECK_FALSE(host_blas_warning("test_host_blas"));
  MESSAGE("host BLAS: " << info.library << " " << info.core << " on a CPU with " << std::string(to_string(cpu)));
}

TEST_CASE("OpenBLAS told its kernels by OPENBLAS_CORETYPE is reported with them" *
          doctest::skip(!openblas_in_process() || expected_core() == nullptr)) {
  multiply_through_the_blas();
  const host_blas_info info = host_blas();
  CHECK(info.core == std::string(expected_core()));
  CHECK_FALSE(info.below_cpu());
}

TEST_CASE("a program without OpenBLAS gets an empty inspection" * doctest::skip(openblas_in_process())) {
  multiply_through_the_blas();
  const host_blas_info info = host_blas();
  CHECK(info.library.empty());
  CHECK(info.core.empty());
  CHECK_FALSE(info.below_cpu());
  CHECK(host_blas_advice(info, "x").empty());
}

}  // namespace

}  // namespace host_blas_tests
