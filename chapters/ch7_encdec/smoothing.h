// smoothing.h - the loss of the translation model: cross-entropy against
// a label-smoothed target, over the target positions that are not padding;
// and the padding masks of a batch of sentences of different lengths.
//
// The loss. For a row of logits z (V classes) whose target is y, the
// smoothed target distribution q gives 1 - eps + eps/V to y and eps/V to
// every other class, the padding class included, and the row's loss is
// the cross-entropy -sum_j q_j log p_j with p = softmax(z):
//
//   loss_row = (1 - eps) * (lse - z_y) + eps * (lse - mean_j z_j)
//            = (lse - z_y) + eps * (z_y - mean_j z_j)
//
// where lse = log sum_j exp(z_j). The second line is how it is computed:
// chapter 5's cross-entropy of the row plus eps times how far the
// target's logit stands above the row's mean. The loss is the mean of
// loss_row over the rows whose target is not pad; rows whose target is
// pad add nothing and get a zero gradient. The gradient of one row's
// loss is softmax(z) - q.
//
// This is exactly PyTorch's
//   F.cross_entropy(logits, target, ignore_index=pad, label_smoothing=eps)
// (reduction 'mean'), checked in tests/reference/gen_ch7_loss.py. Note
// what PyTorch does with the padding class: ignore_index only drops the
// rows whose target is pad. In the rows that count, the pad class is a
// class like any other and gets its eps/V of the smoothed mass, so the
// model is (gently) taught to give padding some probability too. One
// difference: when no row counts, PyTorch's mean is 0/0 = nan; here the
// loss is 0 with n_valid = 0, as chapter 5's cross-entropy does.
//
// The Annotated Transformer's LabelSmoothing is written another way: a
// KL-divergence KL(q' || p) summed over the tokens, with a target q' that
// gives 1 - eps to y, eps/(V-2) to each of the V-2 classes that are
// neither y nor pad, 0 to the pad column, and all zeros to a row whose
// target is pad. Since KL(q' || p) = -sum_j q'_j log p_j - H(q'), where
// the entropy H(q') = -(1-eps) log(1-eps) - eps log(eps/(V-2)) does not
// depend on the logits, the two losses differ in three plain ways:
//   1. the smoothing mass: eps/(V-2) on every class but y and pad, and
//      nothing on pad, there; eps/V on every class, pad and y included,
//      here. The gradients differ by q - q', which is small but not zero.
//   2. sum against mean: the KL is summed over the tokens (that program
//      divides by the number of tokens afterwards, in its training
//      step); here the mean over the real tokens is taken at once.
//   3. the constant: KL = cross-entropy - H(q'), so the KL form reads
//      0 at a perfect fit to q' and the cross-entropy form reads H(q),
//      not 0. The gradients are the same; only the printed number moves.
// With eps = 0 both are the plain cross-entropy (summed or averaged).
//
// Beside the smoothed loss, the forward pass returns the plain NLL, the
// mean of -log p_y over the same rows: the number to compare between
// models and whose exp() is the perplexity. A smoothed loss never reaches
// 0, so it is a poor measure of fit.
#ifndef CH7_SMOOTHING_H
#define CH7_SMOOTHING_H

#include <stdio.h>

//> smooth-api
typedef struct {
    float loss;    // the label-smoothed cross-entropy (mean)
    float nll;     // the plain -log p_y (mean): exp(nll) is the perplexity
    int n_valid;   // rows whose target is not pad
} SmoothedLoss;

// Label-smoothed cross-entropy, the mean over the rows whose target is
// not pad (0 with n_valid 0 when there are none); returns out->loss.
// Targets must be pad or in [0, V); pad may be any int (-1 works); eps is
// in [0, 1], and eps = 0 gives chapter 5's cross-entropy. out may be NULL.
float smoothed_xent_forward(const float *logits,  // (N, V)
                            const int *targets,   // (N,)
                            int N, int V, int pad, float eps,
                            SmoothedLoss *out);

// dlogits = scale * (softmax(logits) - q) row by row, q the smoothed
// target above, and 0 on rows whose target is pad. For the mean loss,
// scale = 1 / n_valid. dlogits is overwritten (not accumulated) and may
// be logits itself; nothing else is stored.
void smoothed_xent_backward(float *dlogits,        // (N, V)
                            const float *logits,   // (N, V)
                            const int *targets,    // (N,)
                            int N, int V, int pad, float eps, float scale);
//< smooth-api

//> mask-api
// mask[b, t] = 1 where tokens[b, t] is a real token, 0 where it is pad.
// Returns the number of real tokens.
int pad_mask(int *mask,           // (B, T)
             const int *tokens,   // (B, T)
             int B, int T, int pad);

// For teaching: prints the two masks of one sentence pair as grids of
// '1' (may attend) and '.' (may not), a row per query, a column per key.
//   decoder self-attention (Tq x Tq): key j <= query i, and tgt[j] real
//   cross-attention       (Tq x Tk): key src[k] real
// Query rows at pad positions are printed (and computed by the model)
// like the others: their outputs are never used, as their loss is
// ignored.
void print_attention_masks(FILE *f,
                           const int *tgt, int Tq,   // (Tq,) decoder input
                           const int *src, int Tk,   // (Tk,) encoder input
                           int pad);
//< mask-api

#endif
