import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `dlcache-bench driver`: `dlcache driver` (the built binary next to this one) as other programs see it, over
/// JSON lines, against nginx on 127.0.0.1 serving 2,000 generated HTML-like documents (about 26 KB each, valid
/// UTF-8 with quotes, newlines and non-ASCII text) and one 100 MB file.
///
/// - driver_warm_cost_vs_file_reader: time for the driver to answer 6,000 request lines for the 2,000 cached
///   files (8 in flight) ÷ the same lines answered by a small Python standard-library program that reads each
///   file from disk and writes the same JSON (goal ≤ 1.2). Both times include process start.
/// - driver_cold_cost_vs_curl_parallel: the driver filling an empty cache with the 2,000 files (8 in flight)
///   ÷ `curl --parallel --parallel-max 8` fetching them to files (goal ≤ 1.5).
/// - driver_rss_mb_100m_body: the driver's peak RSS (VmHWM) after answering a miss and then a hit of the 100 MB
///   body (default options: answered with "bodyFile") (goal ≤ 64).
///
/// The load generator is the same for both sides of a ratio: it writes the first 8 lines, then one more line
/// each time an answer line arrives, and counts answers with `"status":200`. Each figure is the median of 3; the cold
/// samples alternate which side goes first, and every dirty page is written out before each (both sides create
/// 2,000 files; neither pays for the other's write-back).
enum DriverSuite {
    static let fileCount = 2_000
    static let warmLines = 6_000
    static let inFlight = 8

    static func run() async throws -> [BenchResult] {
        let dlcache = try dlcacheBinary()
        let origin = try BenchOrigin.nginx(bigPath: "/big") { www in
            let docs = www.appendingPathComponent("d")
            try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
            for i in 0..<fileCount { try document(i).write(to: docs.appendingPathComponent("\(i).html")) }
            try BenchOrigin.sparseFile(www.appendingPathComponent("big"), size: 100_000_000)
        }
        defer { origin.stop() }
        guard let www = origin.documentRoot else { throw BenchError(description: "no document root") }
        let urls = (0..<fileCount).map { origin.url("/d/\($0).html").absoluteString }
        let scratch = try Bench.temporaryDirectory("driver")
        defer { try? FileManager.default.removeItem(at: scratch) }

        // Cold: driver filling an empty cache vs curl --parallel.
        var coldDriver: [Double] = [], coldCurl: [Double] = []
        var warmCache: URL?
        // Same treatment for both sides: dirty pages written out before each sample (`Bench.settleFileSystem`),
        // nothing deleted between samples, the side that goes first alternating.
        for run in 0..<3 {
            let cacheDir = scratch.appendingPathComponent("cold-\(run)")
            let lines = urls.enumerated().map { requestLine(id: $0.offset, url: $0.element) }
            func runDriver() throws {
                Bench.settleFileSystem()
                let result = try load([dlcache.path, "driver", "--cache-dir", cacheDir.path], lines: lines)
                guard result.ok == fileCount else {
                    throw BenchError(description: "cold driver: \(result.ok) of \(fileCount) answers were 200")
                }
                coldDriver.append(result.seconds)
            }
            func runCurl() throws {
                coldCurl.append(try curlParallel(urls, into: scratch.appendingPathComponent("curl-\(run)")))
            }
            if run % 2 == 0 {
                try runDriver()
                try runCurl()
            } else {
                try runCurl()
                try runDriver()
            }
            warmCache = cacheDir
        }
        guard let warmCache else { throw BenchError(description: "no cache filled") }

        // Warm: 6,000 lines (each file three times) answered from the filled cache vs the Python file reader.
        let reader = scratch.appendingPathComponent("file_reader.py")
        try fileReaderProgram.write(to: reader, atomically: true, encoding: .utf8)
        let warmRequests = (0..<warmLines).map { requestLine(id: $0, url: urls[($0 * 7) % fileCount]) }
        var warmDriver: [Double] = [], warmPython: [Double] = []
        for _ in 0..<3 {
            let driver = try load([dlcache.path, "driver", "--cache-dir", warmCache.path], lines: warmRequests)
            guard driver.ok == warmLines else {
                throw BenchError(description: "warm driver: \(driver.ok) of \(warmLines) answers were 200")
            }
            warmDriver.append(driver.seconds)
            let python = try load(pythonCommand + [reader.path, www.path], lines: warmRequests)
            guard python.ok == warmLines else {
                throw BenchError(description: "file reader: \(python.ok) of \(warmLines) answers were 200")
            }
            warmPython.append(python.seconds)
        }

        let rss = try bigBodyRSS(dlcache, url: origin.url("/big").absoluteString,
                                 cacheDir: scratch.appendingPathComponent("big"))

        let warm = median(warmDriver), python = median(warmPython)
        let cold = median(coldDriver), curl = median(coldCurl)
        return [
            BenchResult(name: "driver_warm_cost_vs_file_reader", value: warm / python, baseline: 1.2, unit: "x",
                        detail: String(format: "driver %.2f s (%.0f req/s) vs Python file reader %.2f s (%.0f req/s): %d lines for %d cached files of ~26 KB, %d in flight, median of 3",
                                       warm, Double(warmLines) / warm, python, Double(warmLines) / python,
                                       warmLines, fileCount, inFlight)),
            BenchResult(name: "driver_cold_cost_vs_curl_parallel", value: cold / curl, baseline: 1.5, unit: "x",
                        detail: String(format: "driver filling an empty cache %.2f s (%.0f req/s) vs curl --parallel --parallel-max %d %.2f s: %d files from nginx, median of 3",
                                       cold, Double(fileCount) / cold, inFlight, curl, fileCount)),
            BenchResult(name: "driver_rss_mb_100m_body", value: rss.peak, baseline: 64, unit: "MB",
                        detail: String(format: "peak RSS of dlcache driver answering a miss then a hit of a 100 MB body (answers carried it as %@); %.1f s",
                                       rss.answer, rss.seconds)),
        ]
    }

    /// The Python interpreter itself (`/usr/bin/python3`), not a version-manager shim that would add its own
    /// start-up time to the baseline; `python3` on the PATH otherwise.
    static var pythonCommand: [String] {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? ["/usr/bin/python3"] : ["/usr/bin/env", "python3"]
    }

    /// The `dlcache` executable built next to this benchmark (same configuration), or `$DLCACHE_BINARY`.
    static func dlcacheBinary() throws -> URL {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["DLCACHE_BINARY"], !explicit.isEmpty {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        if let argv0 = CommandLine.arguments.first {
            let own = URL(fileURLWithPath: argv0).resolvingSymlinksInPath()
            candidates.append(own.deletingLastPathComponent().appendingPathComponent("dlcache"))
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw BenchError(description: "dlcache binary not found next to dlcache-bench (swift build --product dlcache)")
        }
        return found
    }

    /// An HTML-like document of about 26 KB: tags, attributes in quotes, newlines, tabs and non-ASCII text.
    static func document(_ i: Int) -> Data {
        var text = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Document \(i)</title></head>\n<body>\n"
        var paragraph = 0
        while text.utf8.count < 26_000 {
            text += "<p class=\"para p\(paragraph)\">Paragraph \(paragraph) of document \(i): the café's \"naïve\" résumé — "
            text += "SELECT * FROM t WHERE a = 'x' AND b <> \"y\";\tλ → ∑ 中文 😀. <a href=\"/d/\((i + paragraph) % 2000).html\">next</a></p>\n"
            paragraph += 1
        }
        text += "</body></html>\n"
        return Data(text.utf8)
    }

    /// One request line for `url`.
    static func requestLine(id: Int, url: String) -> [UInt8] {
        Array(#"{"id":\#(id),"method":"GET","url":"\#(url)","headers":[]}"#.utf8) + [0x0A]
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// Runs `command` as a JSON-lines server: writes `inFlight` lines, then one more per answer line read, until
    /// every line is answered; closes stdin and waits for the exit.
    /// - Returns: seconds from launch to exit, and how many answers contained `"status":200`.
    static func load(_ command: [String], lines: [[UInt8]]) throws -> (seconds: Double, ok: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        let input = stdin.fileHandleForWriting.fileDescriptor
        let output = stdout.fileHandleForReading.fileDescriptor
        func send(_ line: [UInt8]) {
            line.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var offset = 0
                while offset < raw.count {
                    let n = write(input, base + offset, raw.count - offset)
                    if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
                }
            }
        }
        var next = 0
        while next < min(inFlight, lines.count) { send(lines[next]); next += 1 }
        var answered = 0, ok = 0
        let marker = Array(#""status":200"#.utf8)
        var pending: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while answered < lines.count {
            let n = read(output, buffer.baseAddress, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            var start = 0
            for i in 0..<n where chunk[i] == 0x0A {
                pending.append(contentsOf: chunk[start..<i])
                if contains(pending, marker) { ok += 1 }
                pending.removeAll(keepingCapacity: true)
                answered += 1
                start = i + 1
                if next < lines.count { send(lines[next]); next += 1 }
            }
            pending.append(contentsOf: chunk[start..<n])
        }
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return (Bench.seconds(clock.now - start), ok)
    }

    /// Whether `haystack` contains `needle` (answers put `status` near the end: search from there).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, let first = needle.first else { return needle.isEmpty }
        var i = haystack.count - needle.count
        while i >= 0 {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i -= 1
        }
        return false
    }

    /// Seconds for `curl --parallel --parallel-max 8` to fetch every URL to a file (dirty pages written out first).
    static func curlParallel(_ urls: [String], into directory: URL) throws -> Double {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = ""
        for (i, url) in urls.enumerated() { config += "url = \"\(url)\"\noutput = \"\(directory.path)/\(i).html\"\n" }
        let configURL = directory.appendingPathComponent("curl.config")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "--parallel", "--parallel-max", "\(inFlight)", "-s", "-f", "-K", configURL.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        Bench.settleFileSystem()
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        process.waitUntilExit()
        let seconds = Bench.seconds(clock.now - start)
        guard process.terminationStatus == 0 else { throw BenchError(description: "curl --parallel failed") }
        return seconds
    }

    /// The driver's peak RSS in MB after a miss and a hit of the 100 MB body.
    static func bigBodyRSS(_ dlcache: URL, url: String, cacheDir: URL) throws -> (peak: Double, answer: String, seconds: Double) {
        let process = Process()
        process.executableURL = dlcache
        process.arguments = ["driver", "--cache-dir", cacheDir.path]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        let handle = stdout.fileHandleForReading
        var answers: [String] = []
        var pending = Data()
        for id in 0..<2 {
            stdin.fileHandleForWriting.write(Data(requestLine(id: id, url: url)))
            while !pending.contains(0x0A) {
                let chunk = handle.availableData
                guard !chunk.isEmpty else { throw BenchError(description: "driver closed its output") }
                pending.append(chunk)
            }
            if let newline = pending.firstIndex(of: 0x0A) {
                answers.append(String(decoding: pending[..<newline], as: UTF8.self))
                pending = Data(pending[pending.index(after: newline)...])
            }
        }
        let peak = peakRSS(pid: process.processIdentifier)
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        let seconds = Bench.seconds(clock.now - start)
        guard answers.allSatisfy({ $0.contains(#""status":200"#) }) else {
            throw BenchError(description: "100 MB body: \(answers.map { $0.prefix(200) })")
        }
        let how = answers.allSatisfy { $0.contains(#""bodyFile":"#) } ? "bodyFile" : "inline body"
        return (peak, how, seconds)
    }

    /// VmHWM of process `pid` in MB, or 0 where unavailable.
    static func peakRSS(pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            if let kb = line.split(separator: " ").compactMap({ Double($0) }).first { return kb / 1024 }
        }
        return 0
    }

    /// The baseline: reads request lines, answers each with the file the URL's path names under the document
    /// root given as argument 1, as the same JSON the driver writes (headers from the file's stat).
    static let fileReaderProgram = #"""
    import base64, json, os, sys, email.utils
    from urllib.parse import urlsplit, unquote

    root = sys.argv[1]
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            path = os.path.join(root, unquote(urlsplit(request["url"]).path).lstrip("/"))
            with open(path, "rb") as f:
                data = f.read()
                st = os.fstat(f.fileno())
            headers = [["Server", "file_reader"], ["Date", email.utils.formatdate(usegmt=True)],
                       ["Content-Type", "text/html"], ["Content-Length", str(len(data))],
                       ["Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True)],
                       ["ETag", '"%x-%x"' % (int(st.st_mtime), st.st_size)], ["Cache-Control", "max-age=3600"],
                       ["Accept-Ranges", "bytes"], ["Age", "0"]]
            answer = {"headers": headers, "id": request["id"], "status": 200, "statusText": "OK"}
            try:
                answer["body"] = data.decode("utf-8")
            except UnicodeDecodeError:
                answer["body"] = data.decode("utf-8", "replace")
                answer["bodyBase64"] = base64.b64encode(data).decode("ascii")
        except Exception as error:
            answer = {"error": str(error), "id": None}
        out.write(json.dumps(answer, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
        out.flush()
    """#
}
