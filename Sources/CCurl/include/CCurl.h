// libcurl (Debian's libcurl4-openssl-dev headers; libcurl.so.4 at run time) for the Linux transport.
//
// The types and constants come from <curl/curl.h>. The functions are not linked: CCurl.c defines every libcurl
// function this package and the static FoundationNetworking call, and resolves them in libcurl.so.4 on the first
// call (dlopen + dlsym, once per process, thread-safe). A process that never makes a request never loads
// libcurl and the ~30 libraries it pulls in (TLS, Kerberos, LDAP, SSH, ...).
//
// curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt are variadic C functions, which Swift cannot call:
// the typed inline wrappers below forward to them.
#ifndef DLCACHE_CCURL_H
#define DLCACHE_CCURL_H

#include <curl/curl.h>
#include <stddef.h>

/// NULL once libcurl is loaded and every function was found (loading it now when no call did yet); otherwise
/// why not, in words that name the library (`libcurl.so.4`) and give dlerror()'s text. Every forwarded function
/// fails while libcurl is not loaded (CURLE_FAILED_INIT, CURLM_INTERNAL_ERROR, CURLUE_OUT_OF_MEMORY or NULL).
const char *dlc_curl_load_error(void);

/// 1 when this process has loaded libcurl (a function was called), 0 when not yet; never loads it.
int dlc_curl_is_loaded(void);

/// Tries to load the libcurl named `soname` the way the first call does, into a table of its own that nothing
/// uses (the process-wide one is not touched); closes it again. Returns 0 and leaves `message` empty when it
/// loads and has every function, else -1 with the reason in `message` (NUL-terminated, cut to `size`).
int dlc_curl_try_load(const char *soname, char *message, size_t size);

typedef size_t (*dlc_write_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*dlc_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                                     curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode dlc_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode dlc_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode dlc_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode dlc_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode dlc_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode dlc_easy_setopt_write_callback(CURL *handle, CURLoption option, dlc_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode dlc_easy_setopt_xferinfo_callback(CURL *handle, dlc_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode dlc_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode dlc_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode dlc_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode dlc_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode dlc_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// Sets `handle`'s CURLOPT_SOCKOPTFUNCTION and CURLOPT_PREREQFUNCTION so that a plain-HTTP/1 connection is checked
/// just before a request is sent on it: one that already holds bytes nobody asked for (sent past the end of an
/// earlier response, RFC 9112 §6.3, or while it was idle) is shut down instead of being read as this request's
/// response; libcurl then retries the request on a fresh connection.
CURLcode dlc_easy_check_connection_before_request(CURL *handle);

#endif
