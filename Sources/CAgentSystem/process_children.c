#define _GNU_SOURCE
#include "agent_system.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Appends the pids in one children file ("12 34 56 ") to out; returns the new count. */
static int read_children_file(int fd, int32_t *out, int count, int capacity) {
    char buffer[4096];
    int64_t number = -1;
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; i++) {
            char c = buffer[i];
            if (c >= '0' && c <= '9') {
                number = (number < 0 ? 0 : number) * 10 + (c - '0');
                if (number > INT32_MAX) number = INT32_MAX;
            } else if (number >= 0) {
                if (count < capacity) out[count++] = (int32_t)number;
                number = -1;
            }
        }
    }
    if (number >= 0 && count < capacity) out[count++] = (int32_t)number;
    return count;
}

int agent_process_children(pid_t pid, int32_t *out, int capacity, int *budget) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks) return 0;
    int count = 0;
    for (struct dirent *entry; count < capacity && *budget > 0 && (entry = readdir(tasks));) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        char file[128];
        snprintf(file, sizeof file, "/proc/%d/task/%s/children", (int)pid, entry->d_name);
        *budget -= 1;
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        count = read_children_file(fd, out, count, capacity);
        close(fd);
    }
    closedir(tasks);
    return count;
}
