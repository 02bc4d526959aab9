#ifndef DOWNLOADCACHE_CHIREDIS_SHIM_H
#define DOWNLOADCACHE_CHIREDIS_SHIM_H
// Debian's libhiredis-dev (0.14): the synchronous client API only (no adapters, no SSL).
#include <hiredis/hiredis.h>
#endif
