#!/bin/sh
# The linker of the `dlcache` executable on Linux (Package.swift passes it to clang with --ld-path): the system's
# gold linker (or ld) with --as-needed first, so a shared library none of whose symbols the executable uses gets
# no DT_NEEDED entry and is not loaded at start. That is libcurl: `import FoundationNetworking` asks for -lcurl,
# but CCurl defines every libcurl function the executable calls and loads libcurl.so.4 on the first request.
if command -v ld.gold >/dev/null 2>&1; then
    exec ld.gold --as-needed "$@"
fi
exec ld --as-needed "$@"
