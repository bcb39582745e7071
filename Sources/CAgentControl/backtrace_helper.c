#define _GNU_SOURCE
#include "agent_control.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The Swift runtime's backtracer (on by default on Linux) runs a helper, swift-backtrace, when
   the process crashes. Linked statically, the runtime finds the helper relative to the path
   dladdr gives for its own code: for the main program that is argv[0], which has no folder when
   agent-control is run through PATH (or re-run by `start`), so it would run ./swift-backtrace
   (or ./bin/swift-backtrace) from the working folder, and find none where the toolchain keeps
   it. This constructor runs before the runtime's initializers (priority 101) and names the
   toolchain's helper by an absolute path in SWIFT_BACKTRACE. The toolchain is the one
   agent-worker, beside this executable, loads its runtime from (its RUNPATH). Without a helper
   there, backtracing is turned off rather than searched for. A SWIFT_BACKTRACE that already
   names a helper is left as it is. */

/* The environment as the process started with it: the constructor points `environ` at an
   array of its own for the runtime's initializers to read, and the restore points it back at
   the untouched original. The Swift runtime finds the command line on Linux by walking back
   from `environ` to the argument vector before it on the stack (with `environ` moved,
   CommandLine.arguments came out empty), so the constructor also hands it the vector glibc
   gives constructors, through the runtime's own override. */
extern char **environ;
extern void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);
static char **original_environment = NULL;
static char **own_environment = NULL;

/* The DT_RUNPATH (or DT_RPATH) of the ELF file at `path`, into `out`; 0 if found. */
static int runpath_of(const char *path, char *out, size_t capacity) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat info;
    if (fstat(fd, &info) != 0 || info.st_size < (off_t)sizeof(Elf64_Ehdr)) { close(fd); return -1; }
    size_t size = (size_t)info.st_size;
    const unsigned char *file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (file == MAP_FAILED) return -1;
    int result = -1;
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)file;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64) goto done;
    if (header->e_phoff > size || header->e_phnum > (size - header->e_phoff) / sizeof(Elf64_Phdr)) goto done;
    const Elf64_Phdr *segments = (const Elf64_Phdr *)(file + header->e_phoff);
    const Elf64_Phdr *dynamic = NULL;
    for (int i = 0; i < header->e_phnum; i++) {
        if (segments[i].p_type == PT_DYNAMIC) dynamic = &segments[i];
    }
    if (dynamic == NULL || dynamic->p_offset > size || dynamic->p_filesz > size - dynamic->p_offset) goto done;
    const Elf64_Dyn *entries = (const Elf64_Dyn *)(file + dynamic->p_offset);
    size_t count = dynamic->p_filesz / sizeof(Elf64_Dyn);
    Elf64_Addr table = 0;
    Elf64_Xword name = (Elf64_Xword)-1;
    for (size_t i = 0; i < count && entries[i].d_tag != DT_NULL; i++) {
        if (entries[i].d_tag == DT_STRTAB) table = entries[i].d_un.d_ptr;
        if (entries[i].d_tag == DT_RUNPATH || (entries[i].d_tag == DT_RPATH && name == (Elf64_Xword)-1)) name = entries[i].d_un.d_val;
    }
    if (table == 0 || name == (Elf64_Xword)-1) goto done;
    /* The string table's address, as a file offset through the segment that loads it. */
    for (int i = 0; i < header->e_phnum; i++) {
        const Elf64_Phdr *load = &segments[i];
        if (load->p_type != PT_LOAD || table < load->p_vaddr || table - load->p_vaddr >= load->p_filesz) continue;
        Elf64_Off offset = load->p_offset + (table - load->p_vaddr);
        if (offset > size || name >= size - offset) break;
        const char *text = (const char *)file + offset + name;
        size_t length = strnlen(text, size - offset - name);
        if (length >= capacity || length == size - offset - name) break;
        memcpy(out, text, length);
        out[length] = 0;
        result = 0;
        break;
    }
done:
    munmap((void *)file, size);
    return result;
}

/* The toolchain's backtrace helper, from agent-worker's RUNPATH entry `<root>/lib/swift/linux`. */
static int find_helper(char *out, size_t capacity) {
    char self[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (length <= 0) return -1;
    self[length] = 0;
    char *slash = strrchr(self, '/');
    if (slash == NULL) return -1;
    *slash = 0;
    const char *given = getenv("AGENT_WORKER_PATH");
    char worker[PATH_MAX];
    if (given != NULL && given[0] == '/') {
        if (snprintf(worker, sizeof(worker), "%s", given) >= (int)sizeof(worker)) return -1;
    } else if (snprintf(worker, sizeof(worker), "%s/agent-worker", self) >= (int)sizeof(worker)) {
        return -1;
    }
    char runpath[4096];
    if (runpath_of(worker, runpath, sizeof(runpath)) != 0) return -1;
    static const char suffix[] = "/lib/swift/linux";
    static const char *const helpers[] = {"swift-backtrace-static", "swift-backtrace"};
    char *save = NULL;
    for (char *entry = strtok_r(runpath, ":", &save); entry != NULL; entry = strtok_r(NULL, ":", &save)) {
        size_t size = strlen(entry);
        if (entry[0] != '/' || size < sizeof(suffix) - 1 || strcmp(entry + size - (sizeof(suffix) - 1), suffix) != 0) continue;
        entry[size - (sizeof(suffix) - 1)] = 0;
        for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
            if (snprintf(out, capacity, "%s/libexec/swift/linux/%s", entry, helpers[i]) >= (int)capacity) continue;
            struct stat info;
            if (stat(out, &info) == 0 && S_ISREG(info.st_mode) && access(out, X_OK) == 0) return 0;
        }
    }
    return -1;
}

__attribute__((constructor(101))) static void agent_control_name_backtrace_helper(int argc, char **argv, char **envp) {
    (void)envp;
    const char *current = getenv("SWIFT_BACKTRACE");
    if (current != NULL && strstr(current, "swift-backtrace=") != NULL) return;
    char helper[PATH_MAX];
    char value[PATH_MAX + 4096];
    int written;
    if (find_helper(helper, sizeof(helper)) == 0) {
        written = current != NULL && current[0] != 0
            ? snprintf(value, sizeof(value), "SWIFT_BACKTRACE=%s,swift-backtrace=%s", current, helper)
            : snprintf(value, sizeof(value), "SWIFT_BACKTRACE=swift-backtrace=%s", helper);
    } else if (current == NULL) {
        written = snprintf(value, sizeof(value), "SWIFT_BACKTRACE=enable=no");
    } else {
        return; /* Asked for by name: the runtime searches as it would. */
    }
    if (written < 0 || written >= (int)sizeof(value)) return;
    size_t count = 0;
    while (environ != NULL && environ[count] != NULL) count++;
    char **copy = calloc(count + 2, sizeof(char *));
    char *entry = strdup(value);
    if (copy == NULL || entry == NULL) { free(copy); free(entry); return; }
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        if (strncmp(environ[i], "SWIFT_BACKTRACE=", 16) != 0) copy[used++] = environ[i];
    }
    copy[used++] = entry;
    copy[used] = NULL;
    _swift_stdlib_overrideUnsafeArgvArgc(argv, argc);
    original_environment = environ;
    own_environment = copy;
    environ = copy;
}

void agent_control_restore_environment(void) {
    if (own_environment == NULL) return;
    /* Only if nothing has changed it since: then the original is exactly what was given. */
    if (environ == own_environment) environ = original_environment;
    own_environment = NULL;
}
