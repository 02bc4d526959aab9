#!/bin/sh
# The linker of the `dlcache` executable on Linux (Package.swift passes it to clang with --ld-path): the system's
# gold linker (or ld) with --as-needed first, so a shared library none of whose symbols the executable uses gets
# no DT_NEEDED entry and is not loaded at start. That is libcurl: `import FoundationNetworking` asks for -lcurl,
# but CCurl defines every libcurl function the executable calls and loads libcurl.so.4 on the first request.
#
# No run path relative to the executable: SwiftPM links every Linux executable with `-rpath=$ORIGIN`, which makes
# the loader look for libsqlite3.so.0, libz.so.1, ... and the dlopen'ed libcurl.so.4 in the binary's own directory
# first. dlcache links the Swift runtime statically and needs only system libraries, so a library planted beside a
# copied binary (a download folder, a shared bin/) must never be loaded: every run path naming $ORIGIN is dropped
# (`-rpath=X`, `--rpath=X`, `-rpath X`, `-R X`), other run paths are kept.
names_origin() {
    case "$1" in
        *'$ORIGIN'* | *'${ORIGIN}'*) return 0 ;;
    esac
    return 1
}

count=$#
skip_next=no
while [ "$count" -gt 0 ]; do
    arg=$1
    shift
    count=$((count - 1))
    if [ "$skip_next" = yes ]; then
        skip_next=no
        continue
    fi
    case "$arg" in
        -rpath=* | --rpath=* | -R=*)
            if names_origin "${arg#*=}"; then continue; fi ;;
        -rpath | --rpath | -R)
            if [ "$count" -gt 0 ] && names_origin "$1"; then skip_next=yes; continue; fi ;;
    esac
    set -- "$@" "$arg"
done

if command -v ld.gold >/dev/null 2>&1; then
    exec ld.gold --as-needed "$@"
fi
exec ld --as-needed "$@"
