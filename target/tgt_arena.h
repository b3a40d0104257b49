/* A bump allocator for one loaded configuration: everything the model points to is freed at
 * once by tgt_config_free(), so the semantic pass never has to unwind half-built objects. */
#ifndef UTGT_TGT_ARENA_H
#define UTGT_TGT_ARENA_H

#include <stddef.h>

struct tgt_arena;

struct tgt_arena *tgt_arena_new(void);
/* Zeroed memory, suitably aligned for any object; NULL when out of memory. */
void *tgt_arena_alloc(struct tgt_arena *a, size_t size);
void *tgt_arena_calloc(struct tgt_arena *a, size_t n, size_t size);
char *tgt_arena_strdup(struct tgt_arena *a, const char *s);
void tgt_arena_free(struct tgt_arena *a);

#endif
