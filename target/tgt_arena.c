/* Bump allocator: a list of chunks, big requests get a chunk of their own. */
#include "target/tgt_arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE 16384

struct chunk {
	struct chunk *next;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

struct tgt_arena {
	struct chunk *head;
};

struct tgt_arena *tgt_arena_new(void)
{
	return calloc(1, sizeof(struct tgt_arena));
}

void *tgt_arena_alloc(struct tgt_arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);
	struct chunk *c = a->head;

	if (size > SIZE_MAX - align)
		return NULL;
	size = (size + align - 1) & ~(align - 1);
	if (!c || c->size - c->used < size) {
		size_t csize = size > CHUNK_SIZE ? size : CHUNK_SIZE;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = csize;
		/* a one-off big chunk goes behind the current one so its free space stays usable */
		if (a->head && csize > CHUNK_SIZE) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

void *tgt_arena_calloc(struct tgt_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return tgt_arena_alloc(a, n && size ? n * size : 1);
}

char *tgt_arena_strdup(struct tgt_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = tgt_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

void tgt_arena_free(struct tgt_arena *a)
{
	if (!a)
		return;
	for (struct chunk *c = a->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(a);
}
