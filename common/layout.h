// layout.h - one allocation carved into named views: a size table and a
// pointer walk (llm.c's fill_in_parameter_sizes and point_parameters).
//
// A layer lists its buffers once, as slots: where each view's pointer
// goes and how many floats it holds. The same table then gives the total
// (to report memory, or to check it before allocating) and carves one
// allocation into the views, in the table's order, with no gaps:
//
//   Slot s[] = {{&c->q, btc}, {&c->k, btc}, {&c->att, btt}};
//   c->mem = layout_alloc(s, 3);         // or layout_floats(s, 3)
//
// A slot of 0 floats leaves its view NULL: an absent bias, a buffer a
// layer shares with another instead of owning.
#ifndef COMMON_LAYOUT_H
#define COMMON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    float **view;   // the pointer to set
    size_t count;   // floats; 0: the view is set to NULL
} Slot;

// The number of slots in a table written as an array.
#define SLOTS(table) ((int)(sizeof(table) / sizeof((table)[0])))

// The floats of n slots, added up.
size_t layout_floats(const Slot *s, int n);

// Points every view at consecutive pieces of base, in order, and returns
// the end: base + layout_floats(s, n).
float *layout_point(const Slot *s, int n, float *base);

// One zero-filled, 64-byte aligned allocation of layout_floats(s, n)
// floats, pointed as above. Release it with free().
float *layout_alloc(const Slot *s, int n);

// Whether memory laid out for cB x cT tokens (views of cB*cT*X floats)
// holds a batch of B x T: a batch packs its tensors at the front of each
// view, rows T apart, so it fits when T <= cT and B*T <= cB*cT. More rows
// of shorter sequences fit too (16 x 4 in room for 4 x 16), and so do
// attention weights (B,NH,T,T), since B*T*T <= cB*cT*cT. A view of cB
// rows (one per sequence) does not follow this rule.
bool layout_fits(int B, int T, int cB, int cT);

#endif
