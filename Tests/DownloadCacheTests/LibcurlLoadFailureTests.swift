#if canImport(CCurl)
import CCurl
import Testing

/// libcurl is resolved by name at run time (see CCurl.h): a libcurl that cannot be loaded, or a library that is not
/// libcurl, is reported in words naming it with the loader's reason; nothing crashes.
struct LibcurlLoadFailureTests {
    private static func tryLoad(_ soname: String) -> (Int32, String) {
        var buffer = [CChar](repeating: 0, count: 512)
        let result = dlc_curl_try_load(soname, &buffer, buffer.count)
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return (result, String(decoding: bytes, as: UTF8.self))
    }

    @Test func aMissingLibcurlIsNamedWithTheLoadersReason() {
        let (result, message) = Self.tryLoad("libcurl-not-installed.so.4")
        #expect(result == -1)
        #expect(message.hasPrefix("cannot load libcurl-not-installed.so.4: "), "\(message)")
        #expect(message.contains("cannot open shared object file"), "\(message)")
    }

    @Test func aLibraryWithoutLibcurlsFunctionsIsRefused() {
        // zlib is in every process of this package and has none of libcurl's functions.
        let (result, message) = Self.tryLoad("libz.so.1")
        #expect(result == -1)
        #expect(message == "cannot use libz.so.1: it has no function curl_global_init (libcurl 7.68 or later is needed)")
    }

    @Test func theInstalledLibcurlLoads() {
        let (result, message) = Self.tryLoad("libcurl.so.4")
        #expect(result == 0)
        #expect(message.isEmpty)
        #expect(dlc_curl_load_error() == nil)
        #expect(dlc_curl_is_loaded() == 1)
    }
}
#endif
