import Foundation
import CZlib
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `--compressed`: decodes a gzip or deflate content coding (RFC 9110 §8.4.1) on output with zlib; the cache
/// keeps the representation as received.
final class ContentDecoder {
    /// The codings this decoder undoes, as `Accept-Encoding` asks for them.
    static let acceptEncoding = "gzip, deflate"

    private var stream = z_stream()
    private var ended = false
    private let coding: String

    /// A decoder for the response's `Content-Encoding`, or nil when it has none or one this tool cannot undo
    /// (several codings, br, zstd ...: the bytes are then written as received).
    init?(contentEncoding: String?) {
        guard let value = contentEncoding?.trimmingCharacters(in: .whitespaces).lowercased(),
              ["gzip", "x-gzip", "deflate"].contains(value) else { return nil }
        coding = value
        // 15 + 32: zlib detects a gzip or a zlib header itself (HTTP's "deflate" is the zlib format).
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
    }

    deinit {
        inflateEnd(&stream)
    }

    /// The decoded bytes of the next piece of the encoded body.
    /// - Throws: ``CommandFailure`` when the bytes are not valid for the coding (or follow its end).
    func decode(_ input: Data) throws(CommandFailure) -> Data {
        if input.isEmpty { return Data() }
        guard !ended else { throw failure("data after the end of the \(coding) stream") }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var bytes = [UInt8](input)
        var status = Z_OK
        let count = bytes.count
        bytes.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    let produced = outBuffer.count - Int(stream.avail_out)
                    if produced > 0, let base = outBuffer.baseAddress { output.append(base, count: produced) }
                }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
            stream.next_in = nil
        }
        switch status {
        case Z_STREAM_END:
            ended = true
            if stream.avail_in > 0 { throw failure("data after the end of the \(coding) stream") }
        case Z_OK, Z_BUF_ERROR: break
        default: throw failure("invalid \(coding) data (zlib error \(status))")
        }
        return output
    }

    /// Checks that the whole stream arrived.
    /// - Throws: ``CommandFailure`` when the encoded body ended before its coding's end.
    func finish() throws(CommandFailure) {
        guard ended else { throw failure("the \(coding) stream is truncated") }
    }

    private func failure(_ what: String) -> CommandFailure {
        CommandFailure("cannot decode the body (--compressed): \(what)")
    }
}
