/*
 * shared_ring.c — the memory and fd plumbing behind a shared event ring (see
 * AgentCore's SharedRing): a memfd mapped twice back to back, and fds passed over the
 * worker's socket.
 */
#define _GNU_SOURCE
#include "agent_system.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int agent_ring_create(size_t header, size_t capacity) {
    int fd = memfd_create("agent-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    /* Sealed at its size: the worker holds the fd too, and a memfd shrunk under the
       supervisor's mapping would kill it with SIGBUS at its next write. */
    if (ftruncate(fd, (off_t)(header + capacity)) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

void *agent_ring_map(int fd, size_t header, size_t capacity) {
    size_t total = header + 2 * capacity;
    unsigned char *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return NULL;
    /* The header and the data, then the data again right after: a frame that runs past the
       end of the data reads and writes on into its start. */
    if (mmap(base, header + capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
        mmap(base + header + capacity, capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)header) == MAP_FAILED) {
        int saved = errno;
        munmap(base, total);
        errno = saved;
        return NULL;
    }
    return base;
}

void agent_ring_unmap(void *base, size_t header, size_t capacity) {
    if (base) munmap(base, header + 2 * capacity);
}

int agent_send_fds(int socket, const void *bytes, size_t length, const int *fds, int count) {
    char control[CMSG_SPACE(sizeof(int) * 4)];
    if (count < 1 || count > 4 || length == 0) {
        errno = EINVAL;
        return -1;
    }
    memset(control, 0, sizeof control);
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = length};
    struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                             .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count)};
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
    memcpy(CMSG_DATA(header), fds, sizeof(int) * (size_t)count);
    size_t sent = 0;
    while (sent < length) {
        ssize_t n = sendmsg(socket, &message, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        sent += (size_t)n;
        /* The fds went with the first bytes. */
        message.msg_control = NULL;
        message.msg_controllen = 0;
        iov.iov_base = (char *)bytes + sent;
        iov.iov_len = length - sent;
    }
    return 0;
}

ssize_t agent_receive_fds(int socket, void *bytes, size_t capacity, int *fds, int *count) {
    char control[CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = {.iov_base = bytes, .iov_len = capacity};
    struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n;
    do {
        n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return n;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int received = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < received; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(header) + sizeof(int) * (size_t)i, sizeof fd);
            if (*count < 4) fds[(*count)++] = fd;
            else close(fd);
        }
    }
    return n;
}

int agent_futex_wait_shared(const void *address, uint32_t expected, int64_t timeout_ns) {
    struct timespec limit, *timeout = NULL;
    if (timeout_ns >= 0) {
        limit.tv_sec = (time_t)(timeout_ns / 1000000000);
        limit.tv_nsec = (long)(timeout_ns % 1000000000);
        timeout = &limit;
    }
    long result = syscall(SYS_futex, address, FUTEX_WAIT, expected, timeout, NULL, 0);
    if (result == 0 || errno == EAGAIN) return 0;
    return -1;
}

void agent_futex_wake_shared(void *address) {
    syscall(SYS_futex, address, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
