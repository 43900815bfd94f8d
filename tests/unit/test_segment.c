/* Segment lifecycle: create, attach from another process, unlink while
 * mapped, release; a full /dev/shm; stale segments of dead creators. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "unit.h"

static bool name_exists(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

int main(void)
{
    core_segment seg;
    CHECK(core_segment_create(&seg, 1 << 20) == 0, "create");
    CHECK(seg.base && seg.size == 1 << 20, "mapped");
    CHECK(name_exists(seg.name), "%s not in /dev/shm after create", seg.name);
    struct stat st;
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", seg.name);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o, not 0600", st.st_mode & 0777);
    CHECK(strncmp(seg.name, "/shoal-", 7) == 0 && strlen(seg.name) > 20, "name %s", seg.name);

    /* Another process attaches by name and writes; the creator sees it. */
    pid_t child = fork();
    if (child == 0) {
        core_segment other;
        if (core_segment_attach(&other, seg.name, 1 << 20))
            _exit(1);
        strcpy((char *)other.base + 4096, "from the child");
        core_segment_release(&other);
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child attach");
    CHECK(strcmp((char *)seg.base + 4096, "from the child") == 0, "shared write not visible");

    /* Unlinked while mapped: the name is gone, the memory is not. */
    core_segment_unlink(&seg);
    CHECK(!name_exists(seg.name), "name survives unlink");
    CHECK(strcmp((char *)seg.base + 4096, "from the child") == 0, "memory lost with the name");
    core_segment attach_late;
    CHECK(core_segment_attach(&attach_late, seg.name, 1 << 20) == ENOENT, "attach after unlink must fail");
    core_segment_release(&seg);
    CHECK(seg.base == NULL, "release");

    /* Attaching with a larger size than the segment has is refused. */
    CHECK(core_segment_create(&seg, 8192) == 0, "small create");
    core_segment big;
    CHECK(core_segment_attach(&big, seg.name, 1 << 20) == EINVAL, "oversized attach accepted");
    core_segment_release(&seg);
    CHECK(!name_exists(seg.name), "release leaves the name behind");

    /* More than /dev/shm can hold: a clear error now, nothing left behind. */
    size_t huge = (size_t)1 << 44; /* 16 TiB */
    int err = core_segment_create(&seg, huge);
    CHECK(err == ENOSPC || err == EFBIG || err == ENOMEM, "oversized create gave %d (%s)", err, strerror(err));
    DIR *d = opendir("/dev/shm");
    int ours = 0;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "shoal-%d-", (int)getpid());
    for (struct dirent *e; d && (e = readdir(d));)
        ours += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    CHECK(ours == 0, "%d segments of this process left after a failed create", ours);

    /* A segment whose creator died before unlinking is reaped; one whose
     * creator lives is not. */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char stale[128], live[128];
    snprintf(stale, sizeof stale, "/dev/shm/shoal-%d-00000000deadbeef", (int)dead);
    snprintf(live, sizeof live, "/dev/shm/shoal-%d-00000000feedface", (int)getpid());
    int fd1 = open(stale, O_CREAT | O_RDWR, 0600), fd2 = open(live, O_CREAT | O_RDWR, 0600);
    close(fd1);
    close(fd2);
    struct timespec old[2] = {{.tv_sec = time(NULL) - 3600}, {.tv_sec = time(NULL) - 3600}};
    utimensat(AT_FDCWD, stale, old, 0);
    utimensat(AT_FDCWD, live, old, 0);
    core_segment_reap_stale();
    CHECK(access(stale, F_OK) != 0, "stale segment of a dead creator not reaped");
    CHECK(access(live, F_OK) == 0, "segment of a live creator reaped");
    unlink(live);
    unlink(stale);

    return unit_done("test_segment");
}
