// exercise.h - the body of every exercise stub.
//
//   int ex_get_batch(...) {
//       EXERCISE_TODO("1.2");
//   }
//
// The stub compiles and links; when a test calls it, that test (and only
// that exercise's tests) fails with "exercise 1.2 not implemented
// (ex_get_batch)". Replace the macro with your code.
#ifndef COMMON_EXERCISE_H
#define COMMON_EXERCISE_H

#ifdef __cplusplus
// (the GPU exercises of chapter 8 are CUDA C++)
extern "C" [[noreturn]] void exercise_not_implemented(const char *id,
                                                      const char *func);
#else
_Noreturn void exercise_not_implemented(const char *id, const char *func);
#endif

#define EXERCISE_TODO(id) exercise_not_implemented(id, __func__)

#endif
