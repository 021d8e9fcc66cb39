// A program that includes one of tessera's detail/ headers directly is refused with a sentence that
// says so: those headers may change in any release (test_detail_header_refused).
#include <tessera/ops/detail/operand_checks.hpp>

int main() { return 0; }
