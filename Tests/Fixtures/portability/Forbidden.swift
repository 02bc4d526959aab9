// Fixture for Scripts/check-portability.py --self-test: every line marked `expect` must be reported.
import Foundation
import Glibc // expect: import Glibc
import Darwin // expect: import Darwin
import FoundationNetworking // expect: import FoundationNetworking
import CCurl // expect: import CCurl

func linuxOnly() {
    _ = Glibc.open("/x", 0) // expect: Glibc.
    _ = Musl.open("/x", 0) // expect: Musl.
    _ = info.st_mtim // expect: st_mtim
    _ = info.st_ctim // expect: st_ctim
    _ = info.st_atim // expect: st_atim
    clock_gettime(CLOCK_REALTIME_COARSE, &spec) // expect: CLOCK_*_COARSE
    _ = O_TMPFILE // expect: O_TMPFILE
    _ = O_PATH // expect: O_PATH
    _ = MSG_NOSIGNAL // expect: MSG_NOSIGNAL
    _ = SOCK_CLOEXEC // expect: SOCK_CLOEXEC
    _ = epoll_create1(0) // expect: epoll
    _ = inotify_init() // expect: inotify
    _ = sendfile(1, 2, nil, 3) // expect: sendfile
    _ = fallocate(1, 0, 0, 8) // expect: fallocate
    _ = memfd_create("x", 0) // expect: memfd
    _ = statx(0, "x", 0, 0, nil) // expect: statx
    _ = renameat2(0, "a", 0, "b", 0) // expect: renameat2
    _ = syncfs(1) // expect: syncfs
    _ = SO_REUSEPORT // expect: SO_REUSEPORT
}

func darwinOnly() {
    _ = Darwin.close(1) // expect: Darwin.
    _ = info.st_mtimespec // expect: st_mtimespec
    _ = info.st_ctimespec // expect: st_ctimespec
    _ = info.st_atimespec // expect: st_atimespec
    _ = fcntl(1, F_FULLFSYNC) // expect: F_FULLFSYNC
    _ = SO_NOSIGPIPE // expect: SO_NOSIGPIPE
    _ = kqueue() // expect: kqueue
    _ = clock_gettime_nsec_np(CLOCK_REALTIME) // expect: clock_gettime_nsec_np
    _ = clock_gettime(CLOCK_UPTIME_RAW, &spec) // expect: CLOCK_UPTIME_RAW
    _ = mach_absolute_time() // expect: mach_absolute_time
}

// A branch for one platform only is not enough.
#if canImport(Glibc)
let onlyLinux = CLOCK_MONOTONIC_COARSE // expect: CLOCK_*_COARSE
#endif
#if canImport(Darwin)
let onlyDarwin = F_FULLFSYNC // expect: F_FULLFSYNC
#endif
// The Linux name in the Darwin branch is still wrong.
#if canImport(Glibc)
let fine = 1
#elseif canImport(Darwin)
let wrongBranch = st_mtim // expect: st_mtim
#endif
