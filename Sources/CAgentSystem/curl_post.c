#define _GNU_SOURCE
#include "agent_system.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libcurl, loaded with dlopen on the first https POST: linking it (directly or through
   FoundationNetworking) would make every agent-control start map and relocate libcurl and its
   TLS stack (about 15 ms and several MB per process) although most agents never post over
   https. The option numbers below are libcurl's stable ABI (curl/curl.h). */

typedef void CURL;
struct curl_slist;

enum {
    OPT_URL = 10002, OPT_ERRORBUFFER = 10010, OPT_POSTFIELDS = 10015, OPT_USERAGENT = 10018,
    OPT_HTTPHEADER = 10023, OPT_NOPROGRESS = 43, OPT_POST = 47, OPT_XFERINFODATA = 10057,
    OPT_NOSIGNAL = 99, OPT_TIMEOUT_MS = 155, OPT_WRITEFUNCTION = 20011,
    OPT_XFERINFOFUNCTION = 20219, OPT_POSTFIELDSIZE_LARGE = 30120,
    INFO_RESPONSE_CODE = 0x200002, GLOBAL_DEFAULT = 3, ERROR_SIZE = 256,
    E_ABORTED_BY_CALLBACK = 42,
    /* SMTP */
    OPT_READDATA = 10009, OPT_READFUNCTION = 20012, OPT_UPLOAD = 46, OPT_INFILESIZE_LARGE = 30115,
    OPT_USERNAME = 10173, OPT_PASSWORD = 10174, OPT_USE_SSL = 119, OPT_MAIL_FROM = 10186,
    OPT_MAIL_RCPT = 10187, OPT_CONNECTTIMEOUT_MS = 156, OPT_CAINFO = 10065, OPT_PROTOCOLS = 181,
    OPT_REDIR_PROTOCOLS = 182, PROTO_SMTP = 1 << 16, PROTO_SMTPS = 1 << 17,
};

static struct {
    int (*global_init)(long);
    CURL *(*easy_init)(void);
    int (*easy_setopt)(CURL *, int, ...);
    int (*easy_perform)(CURL *);
    int (*easy_getinfo)(CURL *, int, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(int);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;
static int curl_loaded = 0;
static char curl_problem[512];
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void load_curl(void) {
    /* AGENT_LIBCURL names another build (e.g. libcurl-gnutls.so.4) or a path. */
    const char *name = getenv("AGENT_LIBCURL");
    if (name == NULL || name[0] == 0) name = "libcurl.so.4";
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == NULL) {
        snprintf(curl_problem, sizeof(curl_problem), "%s", dlerror());
        return;
    }
#define SYMBOL(field, symbol) \
    if ((*(void **)&curl.field = dlsym(library, symbol)) == NULL) { \
        snprintf(curl_problem, sizeof(curl_problem), "%s lacks %s", name, symbol); \
        return; \
    }
    SYMBOL(global_init, "curl_global_init")
    SYMBOL(easy_init, "curl_easy_init")
    SYMBOL(easy_setopt, "curl_easy_setopt")
    SYMBOL(easy_perform, "curl_easy_perform")
    SYMBOL(easy_getinfo, "curl_easy_getinfo")
    SYMBOL(easy_cleanup, "curl_easy_cleanup")
    SYMBOL(easy_strerror, "curl_easy_strerror")
    SYMBOL(slist_append, "curl_slist_append")
    SYMBOL(slist_free_all, "curl_slist_free_all")
#undef SYMBOL
    if (curl.global_init(GLOBAL_DEFAULT) != 0) {
        snprintf(curl_problem, sizeof(curl_problem), "curl_global_init failed");
        return;
    }
    curl_loaded = 1;
}

const char *agent_curl_problem(void) {
    pthread_once(&curl_once, load_curl);
    return curl_loaded ? NULL : curl_problem;
}

static size_t discard_body(char *data, size_t size, size_t count, void *context) {
    (void)data; (void)context;
    return size * count;
}

struct progress_context {
    agent_abort_check check;
    void *context;
};

static int check_progress(void *data, int64_t download_total, int64_t downloaded, int64_t upload_total, int64_t uploaded) {
    (void)download_total; (void)downloaded; (void)upload_total; (void)uploaded;
    struct progress_context *progress = data;
    return progress->check != NULL && progress->check(progress->context) ? 1 : 0;
}

/* A fresh easy handle; NULL with `*failure` (-1: libcurl cannot be loaded, 1: init failed) and
   the reason in `error` otherwise. Shared by the https and SMTP senders. */
static CURL *new_handle(char *error, size_t capacity, int *failure) {
    if (agent_curl_problem() != NULL) {
        snprintf(error, capacity, "%s", curl_problem);
        *failure = -1;
        return NULL;
    }
    CURL *handle = curl.easy_init();
    if (handle == NULL) {
        snprintf(error, capacity, "curl_easy_init failed");
        *failure = 1;
    }
    return handle;
}

int agent_curl_post(const char *url, const char *const *headers, int header_count, const void *body, size_t length,
                    long timeout_ms, agent_abort_check check, void *context, long *status, char *error, size_t capacity) {
    int failure = 0;
    CURL *handle = new_handle(error, capacity, &failure);
    if (handle == NULL) return failure;
    struct curl_slist *list = NULL;
    for (int i = 0; i < header_count; i++) list = curl.slist_append(list, headers[i]);
    char message[ERROR_SIZE];
    message[0] = 0;
    struct progress_context progress = {.check = check, .context = context};
    curl.easy_setopt(handle, OPT_NOSIGNAL, 1L);
    curl.easy_setopt(handle, OPT_URL, url);
    curl.easy_setopt(handle, OPT_POST, 1L);
    curl.easy_setopt(handle, OPT_POSTFIELDS, body);
    curl.easy_setopt(handle, OPT_POSTFIELDSIZE_LARGE, (int64_t)length);
    curl.easy_setopt(handle, OPT_HTTPHEADER, list);
    curl.easy_setopt(handle, OPT_USERAGENT, "AgentRuntime");
    curl.easy_setopt(handle, OPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(handle, OPT_ERRORBUFFER, message);
    curl.easy_setopt(handle, OPT_WRITEFUNCTION, discard_body);
    curl.easy_setopt(handle, OPT_NOPROGRESS, 0L);
    curl.easy_setopt(handle, OPT_XFERINFOFUNCTION, check_progress);
    curl.easy_setopt(handle, OPT_XFERINFODATA, &progress);
    int code = curl.easy_perform(handle);
    int result = 0;
    if (code == 0) {
        curl.easy_getinfo(handle, INFO_RESPONSE_CODE, status);
    } else if (code == E_ABORTED_BY_CALLBACK) {
        result = 2;
    } else {
        snprintf(error, capacity, "%s", message[0] ? message : curl.easy_strerror(code));
        result = code == 28 ? 3 : 1;
    }
    curl.easy_cleanup(handle);
    curl.slist_free_all(list);
    return result;
}

struct upload {
    const char *data;
    size_t length;
    size_t offset;
};

static size_t read_upload(char *buffer, size_t size, size_t count, void *context) {
    struct upload *upload = context;
    size_t room = size * count, left = upload->length - upload->offset;
    size_t n = left < room ? left : room;
    memcpy(buffer, upload->data + upload->offset, n);
    upload->offset += n;
    return n;
}

int agent_curl_smtp_send(const char *url, const char *username, const char *password, const char *from,
                         const char *const *recipients, int recipient_count, const void *message, size_t length,
                         int tls, const char *ca_file, long connect_timeout_ms, long timeout_ms,
                         agent_abort_check check, void *context, long *reply, char *error, size_t capacity) {
    int failure = 0;
    CURL *handle = new_handle(error, capacity, &failure);
    if (handle == NULL) return failure;
    struct curl_slist *list = NULL;
    for (int i = 0; i < recipient_count; i++) list = curl.slist_append(list, recipients[i]);
    char text[ERROR_SIZE];
    text[0] = 0;
    struct progress_context progress = {.check = check, .context = context};
    struct upload upload = {.data = message, .length = length, .offset = 0};
    curl.easy_setopt(handle, OPT_NOSIGNAL, 1L);
    /* A settings mistake must not turn a notification into a file read or an HTTP request. */
    curl.easy_setopt(handle, OPT_PROTOCOLS, (long)(PROTO_SMTP | PROTO_SMTPS));
    curl.easy_setopt(handle, OPT_REDIR_PROTOCOLS, (long)(PROTO_SMTP | PROTO_SMTPS));
    curl.easy_setopt(handle, OPT_URL, url);
    curl.easy_setopt(handle, OPT_USE_SSL, (long)tls);
    if (ca_file != NULL) curl.easy_setopt(handle, OPT_CAINFO, ca_file);
    if (username != NULL) curl.easy_setopt(handle, OPT_USERNAME, username);
    if (password != NULL) curl.easy_setopt(handle, OPT_PASSWORD, password);
    curl.easy_setopt(handle, OPT_MAIL_FROM, from);
    curl.easy_setopt(handle, OPT_MAIL_RCPT, list);
    curl.easy_setopt(handle, OPT_UPLOAD, 1L);
    curl.easy_setopt(handle, OPT_INFILESIZE_LARGE, (int64_t)length);
    curl.easy_setopt(handle, OPT_READFUNCTION, read_upload);
    curl.easy_setopt(handle, OPT_READDATA, &upload);
    curl.easy_setopt(handle, OPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    curl.easy_setopt(handle, OPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(handle, OPT_ERRORBUFFER, text);
    curl.easy_setopt(handle, OPT_NOPROGRESS, 0L);
    curl.easy_setopt(handle, OPT_XFERINFOFUNCTION, check_progress);
    curl.easy_setopt(handle, OPT_XFERINFODATA, &progress);
    int code = curl.easy_perform(handle);
    int result = 0;
    if (code == 0) {
        curl.easy_getinfo(handle, INFO_RESPONSE_CODE, reply);
    } else if (code == E_ABORTED_BY_CALLBACK) {
        result = 2;
    } else {
        long last = 0;
        curl.easy_getinfo(handle, INFO_RESPONSE_CODE, &last);
        const char *why = text[0] ? text : curl.easy_strerror(code);
        if (last > 0) snprintf(error, capacity, "%s (last reply %ld)", why, last);
        else snprintf(error, capacity, "%s", why);
        result = code == 28 ? 3 : 1;
    }
    curl.easy_cleanup(handle);
    curl.slist_free_all(list);
    return result;
}
