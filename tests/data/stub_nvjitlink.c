/* A fake libnvJitLink for fault-injection tests, compiled by the tests
 * with `cc -shared`. Macros pick the fault:
 *   STUB_MAJOR=N        nvJitLinkVersion reports N.0 (default 13)
 *   STUB_NO_COMPLETE    nvJitLinkComplete is not exported
 *   STUB_FAIL_ADD_AT=N  the Nth nvJitLinkAddData (from 1) fails with
 *                       NVJITLINK_ERROR_INVALID_INPUT and an error log
 *   STUB_COMPLETE_FAULT=1|2|3|4  nvJitLinkComplete dereferences NULL,
 *                       aborts, never returns, or touches memory without
 *                       end (4 GiB, then waits), as nvJitLink does on some
 *                       corrupt contents and on decompression bombs
 *   STUB_INFO_LOG_BYTES=N  the info log is N bytes of 'a'
 * stub_live_handles() reports handles created and not destroyed, so a
 * test can prove that every error path destroys its handle. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef STUB_MAJOR
#define STUB_MAJOR 13
#endif

typedef struct { int adds; const char *error_log; } stub_handle;
static int live_handles = 0;

int stub_live_handles(void) { return live_handles; }

int nvJitLinkVersion(unsigned *major, unsigned *minor) { *major = STUB_MAJOR; *minor = 0; return 0; }

int nvJitLinkCreate(stub_handle **handle, uint32_t n, const char **options) {
    (void)n; (void)options;
    *handle = calloc(1, sizeof(stub_handle));
    (*handle)->error_log = "";
    live_handles++;
    return 0;
}

int nvJitLinkDestroy(stub_handle **handle) {
    if (*handle) { free(*handle); *handle = NULL; live_handles--; }
    return 0;
}

int nvJitLinkAddData(stub_handle *h, int type, const void *data, size_t size, const char *name) {
    (void)type; (void)data; (void)size; (void)name;
    h->adds++;
#ifdef STUB_FAIL_ADD_AT
    if (h->adds == STUB_FAIL_ADD_AT) { h->error_log = "stub: input rejected mid-link"; return 3; }
#endif
    return 0;
}

#ifndef STUB_NO_COMPLETE
#ifdef STUB_COMPLETE_FAULT
#include <unistd.h>
#endif
int nvJitLinkComplete(stub_handle *h) {
    (void)h;
#if STUB_COMPLETE_FAULT == 1
    *(volatile int *)0 = 1;
#elif STUB_COMPLETE_FAULT == 2
    abort();
#elif STUB_COMPLETE_FAULT == 3
    for (;;) pause();
#elif STUB_COMPLETE_FAULT == 4
    for (int i = 0; i < 64; i++) {
        char *block = malloc(64 << 20);
        if (block) memset(block, 1, 64 << 20);
        usleep(10000);
    }
    for (;;) pause();
#endif
    return 0;
}
#endif

static const unsigned char cubin[4] = {0x7f, 'E', 'L', 'F'};
int nvJitLinkGetLinkedCubinSize(stub_handle *h, size_t *size) { (void)h; *size = sizeof cubin; return 0; }
int nvJitLinkGetLinkedCubin(stub_handle *h, void *out) { (void)h; memcpy(out, cubin, sizeof cubin); return 0; }
int nvJitLinkGetErrorLogSize(stub_handle *h, size_t *size) { *size = strlen(h->error_log) + 1; return 0; }
int nvJitLinkGetErrorLog(stub_handle *h, char *out) { strcpy(out, h->error_log); return 0; }
#ifndef STUB_INFO_LOG_BYTES
#define STUB_INFO_LOG_BYTES 0
#endif
int nvJitLinkGetInfoLogSize(stub_handle *h, size_t *size) { (void)h; *size = (size_t)(STUB_INFO_LOG_BYTES) + 1; return 0; }
int nvJitLinkGetInfoLog(stub_handle *h, char *out) {
    (void)h;
    memset(out, 'a', (size_t)(STUB_INFO_LOG_BYTES));
    out[STUB_INFO_LOG_BYTES] = 0;
    return 0;
}
