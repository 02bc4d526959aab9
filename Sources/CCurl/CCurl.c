// libcurl resolved on first use: see include/CCurl.h.
//
// The libcurl functions are defined here with hidden visibility: they satisfy this package's calls and those of
// a statically linked FoundationNetworking at link time, but are never exported, so a process that also loads
// libcurl itself (a dynamically linked FoundationNetworking, a host application) keeps calling libcurl
// directly and libcurl's own internal calls are never diverted here. dlopen of the same soname returns the copy
// already loaded, so every caller in a process shares one libcurl.
#define CURL_DISABLE_TYPECHECK 1
// The system headers <curl/curl.h> includes come first, so only libcurl's own declarations become hidden.
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#pragma GCC visibility push(hidden)
#include <curl/curl.h>
#pragma GCC visibility pop

#include "CCurl.h"

#define DLC_LIBCURL_SONAME "libcurl.so.4"

// One field per forwarded function; filled by dlsym, all or nothing.
struct dlc_curl_functions {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLcode (*easy_pause)(CURL *, int);
    const char *(*easy_strerror)(CURLcode);
    void (*free_)(void *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    const char *(*multi_strerror)(CURLMcode);
    CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
    CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_get)(CURLU *, CURLUPart, char **, unsigned int);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    char *(*version)(void);
    curl_version_info_data *(*version_info)(CURLversion);
};

// Opens `soname` and resolves every function into `table`; on failure writes why into `message` and returns
// NULL (nothing stays open). Returns the library handle on success.
static void *dlc_open(const char *soname, struct dlc_curl_functions *table, char *message, size_t size) {
    if (size > 0) message[0] = '\0';
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(message, size, "cannot load %s: %s", soname, why != NULL ? why : "unknown dlopen error");
        return NULL;
    }
    const char *missing = NULL;
#define DLC_RESOLVE(field, name) \
    if (missing == NULL && (*(void **)&table->field = dlsym(library, name)) == NULL) missing = name;
    DLC_RESOLVE(global_init, "curl_global_init")
    DLC_RESOLVE(easy_init, "curl_easy_init")
    DLC_RESOLVE(easy_cleanup, "curl_easy_cleanup")
    DLC_RESOLVE(easy_setopt, "curl_easy_setopt")
    DLC_RESOLVE(easy_getinfo, "curl_easy_getinfo")
    DLC_RESOLVE(easy_pause, "curl_easy_pause")
    DLC_RESOLVE(easy_strerror, "curl_easy_strerror")
    DLC_RESOLVE(free_, "curl_free")
    DLC_RESOLVE(multi_init, "curl_multi_init")
    DLC_RESOLVE(multi_cleanup, "curl_multi_cleanup")
    DLC_RESOLVE(multi_setopt, "curl_multi_setopt")
    DLC_RESOLVE(multi_add_handle, "curl_multi_add_handle")
    DLC_RESOLVE(multi_remove_handle, "curl_multi_remove_handle")
    DLC_RESOLVE(multi_perform, "curl_multi_perform")
    DLC_RESOLVE(multi_poll, "curl_multi_poll")
    DLC_RESOLVE(multi_wakeup, "curl_multi_wakeup")
    DLC_RESOLVE(multi_info_read, "curl_multi_info_read")
    DLC_RESOLVE(multi_strerror, "curl_multi_strerror")
    DLC_RESOLVE(multi_assign, "curl_multi_assign")
    DLC_RESOLVE(multi_socket_action, "curl_multi_socket_action")
    DLC_RESOLVE(slist_append, "curl_slist_append")
    DLC_RESOLVE(slist_free_all, "curl_slist_free_all")
    DLC_RESOLVE(url, "curl_url")
    DLC_RESOLVE(url_cleanup, "curl_url_cleanup")
    DLC_RESOLVE(url_get, "curl_url_get")
    DLC_RESOLVE(url_set, "curl_url_set")
    DLC_RESOLVE(version, "curl_version")
    DLC_RESOLVE(version_info, "curl_version_info")
#undef DLC_RESOLVE
    if (missing != NULL) {
        snprintf(message, size, "cannot use %s: it has no function %s (libcurl 7.68 or later is needed)",
                 soname, missing);
        dlclose(library);
        return NULL;
    }
    return library;
}

static struct dlc_curl_functions dlc_functions;
static pthread_once_t dlc_once = PTHREAD_ONCE_INIT;
static int dlc_loaded = 0;           // written once inside dlc_once, read after pthread_once returns
static char dlc_error[512];          // likewise
static volatile int dlc_attempted = 0;

static void dlc_load_once(void) {
    dlc_loaded = dlc_open(DLC_LIBCURL_SONAME, &dlc_functions, dlc_error, sizeof dlc_error) != NULL;
    __atomic_store_n(&dlc_attempted, 1, __ATOMIC_RELEASE);
}

static inline int dlc_ready(void) {
    pthread_once(&dlc_once, dlc_load_once);
    return dlc_loaded;
}

const char *dlc_curl_load_error(void) { return dlc_ready() ? NULL : dlc_error; }

int dlc_curl_is_loaded(void) { return __atomic_load_n(&dlc_attempted, __ATOMIC_ACQUIRE) && dlc_loaded; }

int dlc_curl_try_load(const char *soname, char *message, size_t size) {
    struct dlc_curl_functions table;
    void *library = dlc_open(soname, &table, message, size);
    if (library == NULL) return -1;
    dlclose(library);
    return 0;
}

#define DLC_F dlc_functions

// Each definition is parenthesised: <curl/curl.h> defines function-like macros of some of these names.
CURLcode (curl_global_init)(long flags) { return dlc_ready() ? DLC_F.global_init(flags) : CURLE_FAILED_INIT; }
CURL *(curl_easy_init)(void) { return dlc_ready() ? DLC_F.easy_init() : NULL; }
void (curl_easy_cleanup)(CURL *handle) { if (dlc_ready()) DLC_F.easy_cleanup(handle); }

// The one variadic argument is read as the type the option number announces (libcurl's CURLOPTTYPE_* ranges,
// the same for CURLMOPT_*), exactly as libcurl itself reads it.
CURLcode (curl_easy_setopt)(CURL *handle, CURLoption option, ...) {
    if (!dlc_ready()) return CURLE_FAILED_INIT;
    va_list arguments;
    va_start(arguments, option);
    CURLcode result;
    if (option < CURLOPTTYPE_OBJECTPOINT) {
        result = DLC_F.easy_setopt(handle, option, va_arg(arguments, long));
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
        result = DLC_F.easy_setopt(handle, option, va_arg(arguments, void *));
    } else if (option < CURLOPTTYPE_OFF_T) {
        result = DLC_F.easy_setopt(handle, option, va_arg(arguments, void (*)(void)));
    } else if (option < CURLOPTTYPE_BLOB) {
        result = DLC_F.easy_setopt(handle, option, va_arg(arguments, curl_off_t));
    } else {
        result = DLC_F.easy_setopt(handle, option, va_arg(arguments, void *));
    }
    va_end(arguments);
    return result;
}

// Every CURLINFO takes one pointer.
CURLcode (curl_easy_getinfo)(CURL *handle, CURLINFO info, ...) {
    if (!dlc_ready()) return CURLE_FAILED_INIT;
    va_list arguments;
    va_start(arguments, info);
    CURLcode result = DLC_F.easy_getinfo(handle, info, va_arg(arguments, void *));
    va_end(arguments);
    return result;
}

CURLcode (curl_easy_pause)(CURL *handle, int bitmask) {
    return dlc_ready() ? DLC_F.easy_pause(handle, bitmask) : CURLE_FAILED_INIT;
}
const char *(curl_easy_strerror)(CURLcode code) {
    return dlc_ready() ? DLC_F.easy_strerror(code) : dlc_error;
}
void (curl_free)(void *pointer) { if (dlc_ready()) DLC_F.free_(pointer); }

CURLM *(curl_multi_init)(void) { return dlc_ready() ? DLC_F.multi_init() : NULL; }
CURLMcode (curl_multi_cleanup)(CURLM *multi) { return dlc_ready() ? DLC_F.multi_cleanup(multi) : CURLM_INTERNAL_ERROR; }

CURLMcode (curl_multi_setopt)(CURLM *multi, CURLMoption option, ...) {
    if (!dlc_ready()) return CURLM_INTERNAL_ERROR;
    va_list arguments;
    va_start(arguments, option);
    CURLMcode result;
    if (option < CURLOPTTYPE_OBJECTPOINT) {
        result = DLC_F.multi_setopt(multi, option, va_arg(arguments, long));
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
        result = DLC_F.multi_setopt(multi, option, va_arg(arguments, void *));
    } else if (option < CURLOPTTYPE_OFF_T) {
        result = DLC_F.multi_setopt(multi, option, va_arg(arguments, void (*)(void)));
    } else {
        result = DLC_F.multi_setopt(multi, option, va_arg(arguments, curl_off_t));
    }
    va_end(arguments);
    return result;
}

CURLMcode (curl_multi_add_handle)(CURLM *multi, CURL *handle) {
    return dlc_ready() ? DLC_F.multi_add_handle(multi, handle) : CURLM_INTERNAL_ERROR;
}
CURLMcode (curl_multi_remove_handle)(CURLM *multi, CURL *handle) {
    return dlc_ready() ? DLC_F.multi_remove_handle(multi, handle) : CURLM_INTERNAL_ERROR;
}
CURLMcode (curl_multi_perform)(CURLM *multi, int *running) {
    return dlc_ready() ? DLC_F.multi_perform(multi, running) : CURLM_INTERNAL_ERROR;
}
CURLMcode (curl_multi_poll)(CURLM *multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms,
                            int *numfds) {
    return dlc_ready() ? DLC_F.multi_poll(multi, extra_fds, extra_nfds, timeout_ms, numfds) : CURLM_INTERNAL_ERROR;
}
CURLMcode (curl_multi_wakeup)(CURLM *multi) { return dlc_ready() ? DLC_F.multi_wakeup(multi) : CURLM_INTERNAL_ERROR; }
CURLMsg *(curl_multi_info_read)(CURLM *multi, int *left) { return dlc_ready() ? DLC_F.multi_info_read(multi, left) : NULL; }
const char *(curl_multi_strerror)(CURLMcode code) { return dlc_ready() ? DLC_F.multi_strerror(code) : dlc_error; }
CURLMcode (curl_multi_assign)(CURLM *multi, curl_socket_t socket, void *pointer) {
    return dlc_ready() ? DLC_F.multi_assign(multi, socket, pointer) : CURLM_INTERNAL_ERROR;
}
CURLMcode (curl_multi_socket_action)(CURLM *multi, curl_socket_t socket, int events, int *running) {
    return dlc_ready() ? DLC_F.multi_socket_action(multi, socket, events, running) : CURLM_INTERNAL_ERROR;
}

struct curl_slist *(curl_slist_append)(struct curl_slist *list, const char *data) {
    return dlc_ready() ? DLC_F.slist_append(list, data) : NULL;
}
void (curl_slist_free_all)(struct curl_slist *list) { if (dlc_ready()) DLC_F.slist_free_all(list); }

CURLU *(curl_url)(void) { return dlc_ready() ? DLC_F.url() : NULL; }
void (curl_url_cleanup)(CURLU *url) { if (dlc_ready()) DLC_F.url_cleanup(url); }
CURLUcode (curl_url_get)(CURLU *url, CURLUPart what, char **part, unsigned int flags) {
    return dlc_ready() ? DLC_F.url_get(url, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
CURLUcode (curl_url_set)(CURLU *url, CURLUPart what, const char *part, unsigned int flags) {
    return dlc_ready() ? DLC_F.url_set(url, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
char *(curl_version)(void) { return dlc_ready() ? DLC_F.version() : (char *)dlc_error; }
curl_version_info_data *(curl_version_info)(CURLversion age) { return dlc_ready() ? DLC_F.version_info(age) : NULL; }

// ---- Connections left with bytes nobody asked for (RFC 9112 §6.3) ----
//
// libcurl 7.88 reads a body of known length exactly and puts the connection back in its pool; bytes an origin
// sent past the end stay in the socket, and a later request reusing the connection would take them as its own
// response (its check before reuse only looks for a closed peer). So just before a request is sent on a
// connection (CURLOPT_PREREQFUNCTION: the connection is this transfer's alone then), a connection that already
// holds bytes is shut down: libcurl finds it dead, closes it, never reuses it, and retries the request on a fresh
// connection (its own retry of a reused connection that failed before any byte was received).
//
// The callback is told the connection's addresses and ports, not its socket: every socket libcurl opens is
// recorded (CURLOPT_SOCKOPTFUNCTION; a socket that cannot be recorded is refused) and its endpoints learned once
// connected; a socket is acted on only after its local and peer address and port were read again from the socket
// itself, so a recorded number that now names another file is never touched.

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <unistd.h>

// Whether socket `s` holds at least one unread byte (never blocks; a closed or failed socket holds none).
static int dlc_has_unread_input(curl_socket_t s) {
    char byte;
    ssize_t n;
    do { n = recv(s, &byte, 1, MSG_PEEK | MSG_DONTWAIT); } while (n < 0 && errno == EINTR);
    return n > 0;
}

// The local and peer addresses of TCP socket `s` as text and ports; ports 0 when not known (not a connected IP
// socket). The text is what libcurl gives its callbacks (inet_ntop).
typedef struct { char local_ip[INET6_ADDRSTRLEN]; char peer_ip[INET6_ADDRSTRLEN]; int local; int peer; } dlc_endpoints;

static void dlc_address(const struct sockaddr_storage *address, char *ip, int *port) {
    ip[0] = 0;
    *port = 0;
    if (address->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        if (inet_ntop(AF_INET, &v4->sin_addr, ip, INET6_ADDRSTRLEN) != NULL) *port = ntohs(v4->sin_port);
    } else if (address->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        if (inet_ntop(AF_INET6, &v6->sin6_addr, ip, INET6_ADDRSTRLEN) != NULL) *port = ntohs(v6->sin6_port);
    }
}

static void dlc_endpoints_of(curl_socket_t s, dlc_endpoints *e) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    memset(e, 0, sizeof *e);
    if (getsockname(s, (struct sockaddr *)&address, &length) == 0) dlc_address(&address, e->local_ip, &e->local);
    length = sizeof address;
    if (getpeername(s, (struct sockaddr *)&address, &length) == 0) dlc_address(&address, e->peer_ip, &e->peer);
    if (e->local == 0 || e->peer == 0) e->local = e->peer = 0;
}

static int dlc_same(const dlc_endpoints *e, const char *local_ip, int local, const char *peer_ip, int peer) {
    return e->local == local && e->peer == peer && local != 0 && peer != 0
        && strcmp(e->local_ip, local_ip) == 0 && strcmp(e->peer_ip, peer_ip) == 0;
}

// Sockets libcurl opened, by number (grown as needed): 0 unused, 1 recorded (endpoints not read yet), 2 known.
typedef struct { unsigned char state; dlc_endpoints endpoints; } dlc_socket_slot;
static dlc_socket_slot *dlc_sockets = NULL;
static int dlc_sockets_capacity = 0;
static int dlc_sockets_high = 0;  // one past the highest recorded number
static pthread_mutex_t dlc_sockets_lock = PTHREAD_MUTEX_INITIALIZER;

// CURLOPT_SOCKOPTFUNCTION: a new socket, before it connects.
static int dlc_record_socket(void *clientp, curl_socket_t s, curlsocktype purpose) {
    (void)clientp;
    if (purpose != CURLSOCKTYPE_IPCXN || s < 0) return CURL_SOCKOPT_OK;
    pthread_mutex_lock(&dlc_sockets_lock);
    if (s >= dlc_sockets_capacity) {
        int capacity = dlc_sockets_capacity ? dlc_sockets_capacity : 256;
        while (capacity <= s && capacity < (1 << 24)) capacity *= 2;
        dlc_socket_slot *grown = capacity > s ? realloc(dlc_sockets, (size_t)capacity * sizeof *grown) : NULL;
        if (grown == NULL) {
            pthread_mutex_unlock(&dlc_sockets_lock);
            // Unrecorded, a socket's connection could never be checked: refuse it (the transfer fails).
            return CURL_SOCKOPT_ERROR;
        }
        memset(grown + dlc_sockets_capacity, 0, (size_t)(capacity - dlc_sockets_capacity) * sizeof *grown);
        dlc_sockets = grown;
        dlc_sockets_capacity = capacity;
    }
    dlc_sockets[s].state = 1;
    memset(&dlc_sockets[s].endpoints, 0, sizeof dlc_sockets[s].endpoints);
    if (s + 1 > dlc_sockets_high) dlc_sockets_high = s + 1;
    pthread_mutex_unlock(&dlc_sockets_lock);
    return CURL_SOCKOPT_OK;
}

// CURLOPT_CLOSESOCKETFUNCTION: libcurl closes one of its sockets; its slot is forgotten first, so a socket made
// next under the same number is recorded afresh and the table holds only open sockets.
static int dlc_close_socket(void *clientp, curl_socket_t s) {
    (void)clientp;
    pthread_mutex_lock(&dlc_sockets_lock);
    if (s >= 0 && s < dlc_sockets_capacity) dlc_sockets[s].state = 0;
    while (dlc_sockets_high > 0 && dlc_sockets[dlc_sockets_high - 1].state == 0) dlc_sockets_high--;
    pthread_mutex_unlock(&dlc_sockets_lock);
    return close(s);
}

// The recorded socket of the connection between these endpoints, or CURL_SOCKET_BAD.
static curl_socket_t dlc_find_socket(const char *local_ip, int local, const char *peer_ip, int peer) {
    curl_socket_t found = CURL_SOCKET_BAD;
    pthread_mutex_lock(&dlc_sockets_lock);
    for (int pass = 0; pass < 2 && found == CURL_SOCKET_BAD; pass++) {
        for (int s = 0; s < dlc_sockets_high; s++) {
            dlc_socket_slot *slot = &dlc_sockets[s];
            if (pass == 1 && slot->state == 1) {
                errno = 0;
                dlc_endpoints now;
                dlc_endpoints_of(s, &now);
                if (now.local != 0) {
                    slot->state = 2;
                    slot->endpoints = now;
                } else if (errno == EBADF || errno == ENOTSOCK) {
                    slot->state = 0;  // closed since, or another kind of file now: forgotten
                }                     // (a socket not connected yet keeps its slot)
            }
            if (slot->state != 2 || !dlc_same(&slot->endpoints, local_ip, local, peer_ip, peer)) continue;
            dlc_endpoints now;
            dlc_endpoints_of(s, &now);
            if (dlc_same(&now, local_ip, local, peer_ip, peer)) {
                found = s;
                break;
            }
            slot->state = 1;  // the number names another socket (or file) now
        }
    }
    pthread_mutex_unlock(&dlc_sockets_lock);
    return found;
}

// CURLOPT_PREREQFUNCTION: the connection is set up (new or reused); the request is not sent yet.
static int dlc_prereq_check(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)clientp;
    if (primary_ip == NULL || local_ip == NULL) return CURL_PREREQFUNC_OK;
    curl_socket_t s = dlc_find_socket(local_ip, local_port, primary_ip, primary_port);
    if (s != CURL_SOCKET_BAD && dlc_has_unread_input(s)) shutdown(s, SHUT_RDWR);
    return CURL_PREREQFUNC_OK;
}

CURLcode dlc_easy_check_connection_before_request(CURL *handle) {
    CURLcode result = curl_easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, dlc_record_socket);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, dlc_close_socket);
    if (result != CURLE_OK) return result;
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, dlc_prereq_check);
}
