// safetensors.h - reading and writing safetensors files, the checkpoint
// format of the project (and of Hugging Face and PyTorch users).
//
// A file is three parts:
//
//   8 bytes   N, the header's size: an unsigned 64-bit little-endian integer
//   N bytes   the header: a UTF-8 JSON object
//   the rest  the data section: every tensor's bytes, little-endian, C order
//
// The header maps each tensor name to its dtype, shape and byte range in
// the data section (data_offsets [begin, end), relative to the section's
// start), plus an optional "__metadata__" object of string -> string:
//
//   {"__metadata__":{"format":"pt"},
//    "wte":{"dtype":"F32","shape":[65,64],"data_offsets":[0,16640]}}
//
// The reader trusts nothing: st_load checks every offset, size, dtype and
// shape before returning, and the ranges must tile the data section
// exactly (no overlaps, no unused bytes), as the reference implementation
// requires. Unknown fields inside a tensor's entry are ignored, as there.
// Only little-endian machines are supported (both functions refuse to run
// on a big-endian one rather than return swapped numbers).
#ifndef COMMON_SAFETENSORS_H
#define COMMON_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define ST_MAX_DIMS 8

// Bytes per element of a dtype name ("F32" -> 4); 0 if unknown. Known:
// BOOL U8 I8 (1), I16 U16 F16 BF16 (2), I32 U32 F32 (4), I64 U64 F64 (8).
size_t st_dtype_size(const char *dtype);

typedef struct {
    char *name;
    char dtype[8];        // "F32", "I64", ...
    size_t elem_size;     // bytes per element of dtype
    int ndim;             // 0 for a scalar
    int64_t shape[ST_MAX_DIMS];
    size_t numel;         // product of shape (1 for a scalar)
    size_t begin, end;    // the bytes data[begin, end) of the data section
} StTensor;

typedef struct {
    char *path;             // for messages
    uint8_t *buf;           // the whole file (st_load_header: up to the
                            // header's end)
    size_t size;            // the file's bytes
    const uint8_t *data;    // the data section, inside buf (or NULL)
    size_t data_size;
    StTensor *tensors;      // in data order (sorted by begin)
    int n_tensors;
    char **meta_keys;       // __metadata__, in the header's order
    char **meta_values;
    int n_meta;
} StFile;

// Reads the whole file at path into f and validates all of it. Returns 0,
// or -1 with a one-line message naming the file (and the tensor) and f
// left empty; st_free is safe either way.
int st_load(StFile *f, const char *path, Error *err);
// The same checks on n bytes already in memory (copied: bytes may go
// after the call); name stands for the path in messages.
int st_load_bytes(StFile *f, const void *bytes, size_t n, const char *name,
                  Error *err);
void st_free(StFile *f);

// Reads only the 8-byte size and the JSON header of the file at path, not
// its data section, with every check st_load makes of them: the entries,
// and their offsets tiling the data section that the file's size leaves.
// f then names the tensors and the metadata, f->size is the whole file's
// size, and f->data is NULL: st_bytes must not be used on it, and
// st_copy_f32 reads from the file. For what a program must know before
// it reads the data, or cannot hold whole beside its own (a plan of
// its memory: mem.h), at the cost of the header alone. Returns 0, or -1
// with st_load's message (a file cut short within its data section fails
// here too: its tensors' offsets go beyond it) and f left empty.
int st_load_header(StFile *f, const char *path, Error *err);

// The tensor called name, or NULL.
const StTensor *st_find(const StFile *f, const char *name);
// The metadata value of key, or NULL.
const char *st_meta(const StFile *f, const char *key);
// A tensor's bytes (they may be unaligned: copy them, as st_copy_f32 does).
const void *st_bytes(const StFile *f, const StTensor *t);

// Copies tensor name, which must be F32 with exactly n elements, into out.
// -1 with a message when it is missing or differs. From f's data, or,
// when st_load_header read f (no data), from the file at f->path, which
// must still have the size it had then: only that tensor's bytes are
// read, so a file larger than the memory left beside it still loads.
int st_copy_f32(const StFile *f, const char *name, float *out, size_t n,
                Error *err);

// n bytes of tensor t of f, from byte `from` of its data, read from the
// file at f->path with pread, whether st_load or st_load_header read f;
// the file must still have the size it had then. For a tensor read in
// parts, or into place, from a file that is never held whole. -1 with a
// message when the range is not within t or the file cannot be read.
int st_read_range(const StFile *f, const StTensor *t, size_t from,
                  size_t n, void *out, Error *err);

// One tensor to write: float32 values in C order.
typedef struct {
    const char *name;
    const float *data;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
} StWriteTensor;

// Writes the n tensors (in this order, packed one after another) and the
// metadata pairs to path, atomically: the bytes go to a temporary file in
// the same folder, which is flushed to disk and then renamed over path. On
// failure -1 with a message, no temporary file left behind, and whatever
// was at path untouched. Names must be unique, non-empty UTF-8 and not
// "__metadata__"; metadata keys unique UTF-8, values UTF-8.
int st_save(const char *path, const StWriteTensor *t, int n,
            const char *const *meta_keys, const char *const *meta_values,
            int n_meta, Error *err);

// Writes the n byte ranges parts[i] (sizes[i] bytes each), one after
// another, to path the way st_save writes a checkpoint: into a temporary
// file PATH.tmp.XXXXXX in the same folder, flushed to disk, then renamed
// over path, so that a reader, or a crash, sees the old file or the new
// one, never half of one. On failure -1 with a message and no temporary
// file left behind. For the other files a run keeps on disk.
int write_file_atomically(const char *path, const void *const *parts,
                          const size_t *sizes, int n, Error *err);

// What write_file_atomically checks before it writes, without writing:
// path is no folder or device, and a temporary file can be made beside
// it. A program calls it for each file it will write after its work
// (--save), so that a path that cannot be written fails at once rather
// than after the work. (A disk that fills up in between still fails the
// write itself.) Returns 0, or -1 with write_file_atomically's message.
int write_file_check(const char *path, Error *err);

#endif
