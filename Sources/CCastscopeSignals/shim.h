#ifndef CCASTSCOPE_SIGNALS_SHIM_H
#define CCASTSCOPE_SIGNALS_SHIM_H
// A SIGBUS handler for files read through mmap (tracev3 files; sd-journal maps journal files):
// a file cut short while it is read (a log rotated or truncated under castscope) makes the
// pages past its new end fault with SIGBUS, which killed the whole run. As journalctl does
// (systemd's sigbus_install), the faulting page is replaced by a page of zeros and the read
// goes on: the reader meets zeros (damage it reports), and castscope compares the file's size
// after reading (`MappedFile.shrank`). Any other SIGBUS keeps its default action.
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static inline void ccastscope_sigbus(int sig, siginfo_t *info, void *context) {
    (void)context;
    if (info->si_code == BUS_ADRERR && info->si_addr != NULL) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        void *at = (void *)((uintptr_t)info->si_addr & ~(page - 1));
        void *p = mmap(at, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p != MAP_FAILED) return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/// fork() for a signal handler: glibc's runs the atfork handlers and takes malloc's locks (a
/// signal during malloc could deadlock the child); _Fork (glibc 2.34) does neither.
#if defined(__GLIBC__)
extern pid_t _Fork(void);
static inline pid_t ccastscope_fork_in_handler(void) { return _Fork(); }
#else
static inline pid_t ccastscope_fork_in_handler(void) { return fork(); }
#endif

/// Installs the handler (idempotent); 0 on success.
static inline int ccastscope_install_sigbus(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ccastscope_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL);
}
#endif
