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

#endif
