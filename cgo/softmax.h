#ifndef AGENTRL_SOFTMAX_H
#define AGENTRL_SOFTMAX_H

// agentrl_max returns the largest of x[0..n), n > 0.
float agentrl_max(const float * x, int n);
// agentrl_softmax writes probs[i] = exp((logits[i] - max) * inv_t) and
// returns their sum; max must be the largest logit.
double agentrl_softmax(const float * logits, int n, float max, float inv_t, float * probs);
// agentrl_sum_exp returns the sum of exp(logits[i] - max).
double agentrl_sum_exp(const float * logits, int n, float max);

#endif
