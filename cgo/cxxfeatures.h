#ifndef AGENTRL_CXXFEATURES_H
#define AGENTRL_CXXFEATURES_H

#define AGENTRL_CXX_AVX2 1
#define AGENTRL_CXX_FMA 2
#define AGENTRL_CXX_F16C 4

#ifdef __cplusplus
extern "C" {
#endif
int agentrl_cxx_vector_features(void);
#ifdef __cplusplus
}
#endif

#endif
