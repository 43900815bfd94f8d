#include "core_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core_log.h"
#include "core_sys.h"

#define NAME_PREFIX "shoal-"

static int map_fd(core_segment *seg, int fd, size_t size)
{
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
        return errno;
    seg->base = base;
    seg->size = size;
    return 0;
}

int core_segment_create(core_segment *seg, size_t size)
{
    memset(seg, 0, sizeof *seg);
    core_segment_reap_stale();
    uint64_t nonce;
    if (!core_random_bytes(&nonce, sizeof nonce))
        return EIO;
    snprintf(seg->name, sizeof seg->name, "/" NAME_PREFIX "%d-%016" PRIx64, (int)getpid(), nonce);

    int fd = shm_open(seg->name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    seg->linked = true;
    /* Reserve every page now: ENOSPC here instead of SIGBUS on first touch. */
    int err = posix_fallocate(fd, 0, (off_t)size);
    if (err == 0)
        err = map_fd(seg, fd, size);
    close(fd);
    if (err) {
        core_segment_unlink(seg);
        seg->base = NULL;
    }
    return err;
}

int core_segment_attach(core_segment *seg, const char *name, size_t size)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "%s", name);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = errno;
    else if ((size_t)st.st_size < size)
        err = EINVAL;
    else
        err = map_fd(seg, fd, size);
    close(fd);
    return err;
}

int core_segment_move_to(core_segment *seg, void *addr)
{
    int fd = shm_open(seg->name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    void *moved = mmap(addr, seg->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    int err = moved == MAP_FAILED ? errno : 0;
    close(fd);
    if (err)
        return err;
    munmap(seg->base, seg->size);
    seg->base = moved;
    return 0;
}

void core_segment_unlink(core_segment *seg)
{
    if (seg->linked) {
        shm_unlink(seg->name);
        seg->linked = false;
    }
}

void core_segment_release(core_segment *seg)
{
    core_segment_unlink(seg);
    if (seg->base)
        munmap(seg->base, seg->size);
    seg->base = NULL;
    seg->size = 0;
}

void core_segment_reap_stale(void)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(dir));) {
        if (strncmp(e->d_name, NAME_PREFIX, strlen(NAME_PREFIX)) != 0)
            continue;
        int pid = atoi(e->d_name + strlen(NAME_PREFIX));
        char path[300];
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        struct stat st;
        /* Only our own, only old ones (a live job unlinks within moments),
         * only when the creator is gone. */
        if (stat(path, &st) != 0 || st.st_uid != geteuid() || now - st.st_mtime < 10)
            continue;
        if (pid > 0 && !core_pid_alive(pid)) {
            char name[300];
            snprintf(name, sizeof name, "/%s", e->d_name);
            if (shm_unlink(name) == 0)
                core_log_debug(1, "removed stale segment %s left by dead process %d", name, pid);
        }
    }
    closedir(dir);
}
