/* core_shm: POSIX shared-memory segments for one node-local group.
 *
 * The leader creates a segment with an unguessable name and mode 0600 and
 * reserves its pages up front (so a full /dev/shm fails here, not later with
 * SIGBUS); the others attach by name; the leader unlinks the name as soon as
 * everyone has it mapped, so a crash afterwards leaves nothing in /dev/shm.
 * Names are "/shoal-<creator pid>-<random>": a segment whose creator died
 * before unlinking is reaped by the next creation on the machine. */
#ifndef SHOAL_CORE_SHM_H
#define SHOAL_CORE_SHM_H

#include <stdbool.h>
#include <stddef.h>

#define CORE_SHM_NAME_MAX 64

typedef struct core_segment {
    void *base;
    size_t size;
    char name[CORE_SHM_NAME_MAX];
    bool linked; /* the name still exists in /dev/shm (creator side) */
} core_segment;

/* 0 on success, else an errno value (ENOSPC for a full /dev/shm). */
int core_segment_create(core_segment *seg, size_t size);
int core_segment_attach(core_segment *seg, const char *name, size_t size);
/* Maps a segment (still linked) at addr instead, over whatever addr held
 * (MAP_FIXED), and drops the first mapping: how memory that must stay where
 * it is (a program's global data) becomes shareable. 0 or an errno value. */
int core_segment_move_to(core_segment *seg, void *addr);
/* Removes the name; mappings stay valid. Idempotent. */
void core_segment_unlink(core_segment *seg);
/* Unmaps (and unlinks if still linked). */
void core_segment_release(core_segment *seg);
/* Unlinks segments left by creators that died before unlinking. */
void core_segment_reap_stale(void);

#endif
