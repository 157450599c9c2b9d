// The vector instruction sets this package's C++ files were compiled
// with: CGO_CXXFLAGS builds ggml's C++ half (its matrix kernels among
// them) and is set apart from CGO_CFLAGS, so one can lack what the other
// has; llama_print_system_info reports the C half only.
#include "cxxfeatures.h"

extern "C" int agentrl_cxx_vector_features(void) {
    int f = 0;
#ifdef __AVX2__
    f |= AGENTRL_CXX_AVX2;
#endif
#ifdef __FMA__
    f |= AGENTRL_CXX_FMA;
#endif
#ifdef __F16C__
    f |= AGENTRL_CXX_F16C;
#endif
    return f;
}
