// Fixture for Scripts/check-portability.py --self-test: nothing here may be reported.
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(CCurl)
import CCurl
#endif

// Names in comments and strings are not uses: st_mtim, CLOCK_REALTIME_COARSE, Glibc.open
let text = "st_mtimespec and F_FULLFSYNC"

#if canImport(Glibc)
let modified = info.st_mtim.tv_sec
let clock = CLOCK_REALTIME_COARSE
#elseif canImport(Darwin)
let modified = info.st_mtimespec.tv_sec
let clock = CLOCK_REALTIME
#endif

#if os(Linux)
let flags = MSG_NOSIGNAL
#else
let flags: Int32 = 0
#endif

#if canImport(Darwin)
let sync = F_FULLFSYNC
#else
let sync: Int32 = 0
#endif
