import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The installed nginx serving a document root on a free port of 127.0.0.1, over HTTPS with HTTP/2 offered by
/// ALPN (a test CA made with the openssl command; trust `caFile`), logging every request as
/// `<connection serial> <protocol> <status> <uri>` to ``accessLog()``. Every file is served with
/// `Cache-Control: max-age=600`. nginx runs as one process (`master_process off`) under a shell that kills it
/// when its standard input closes, so ``stop()`` — or the end of the test process, however it ends — stops it.
public final class NginxServer: Sendable {
    /// The directory holding the config, the CA and certificate, the logs and `www/` (removed by ``stop()``).
    public let directory: URL
    /// The TCP port on 127.0.0.1 nginx listens on.
    public let port: Int
    private let process: ChildProcess

    /// The nginx binary, or nil when nginx is not installed (`Scripts/bootstrap.sh` installs it).
    public static var binary: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The CA certificate that signed the server's certificate (PEM).
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }

    /// The document root.
    public var documentRoot: URL { directory.appendingPathComponent("www", isDirectory: true) }

    /// `https://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// Makes the CA and certificate, writes the document root with `populate`, starts nginx and waits (at most
    /// 5 s) until it accepts connections.
    /// - Throws: ``NginxError`` when nginx is not installed, openssl fails or nginx does not start.
    public init(populate: (URL) throws -> Void) throws {
        guard let binary = Self.binary else { throw NginxError("nginx is not installed (Scripts/bootstrap.sh installs it)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("www"), withIntermediateDirectories: true)
        do {
            try Self.makeCertificates(in: directory)
            try populate(directory.appendingPathComponent("www"))
            var started: (ChildProcess, Int)?
            for _ in 0..<3 where started == nil {   // another program may take the free port first
                let port = try LoopbackPort.free()
                let config = directory.appendingPathComponent("nginx.conf")
                try Self.config(directory: directory, port: port).write(to: config, atomically: true, encoding: .utf8)
                try? FileManager.default.removeItem(at: directory.appendingPathComponent("nginx.pid"))
                // nginx in the background of a shell that kills it once its standard input reaches end of file.
                // SIGKILL: a child spawned from a thread of this process may inherit a mask that blocks SIGTERM,
                // and nginx without a master process never unblocks it.
                let watcher = #"trap 'kill -9 $n 2>/dev/null; exit 0' TERM; "$0" "$@" & n=$!; read _; kill -9 $n 2>/dev/null; wait $n"#
                let process = try ChildProcess(["/bin/sh", "-c", watcher, binary, "-p", directory.path, "-c", config.path],
                                               stdout: .discard, stderr: .discard)
                for _ in 0..<500 where started == nil {   // ≤ 5 s
                    // The pid file says it is our nginx that listens, not another program on the port.
                    if FileManager.default.fileExists(atPath: directory.appendingPathComponent("nginx.pid").path),
                       LoopbackPort.accepts(port) {
                        started = (process, port)
                    }
                    if process.wait(timeout: .zero) != nil { break }
                    usleep(10_000)
                }
                if started == nil { _ = process.stop() }
            }
            guard let started else {
                let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                throw NginxError("nginx did not start: \(log)")
            }
            (process, port) = started
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The lines of the access log so far.
    public func accessLog() -> [String] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Stops nginx (its shell's standard input closed, then the shell itself killed after 5 s) and removes
    /// ``directory``.
    public func stop() {
        _ = process.stop(grace: .seconds(5))
        try? FileManager.default.removeItem(at: directory)
    }

    /// The lines of the access log once it has at least `count` of them, or after `timeout` seconds (nginx writes
    /// a request's line once its response is sent, which a client may see before that).
    public func accessLog(atLeast count: Int, timeout: TimeInterval = 10) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines = accessLog()
        while lines.count < count, Date() < deadline {
            usleep(10_000)
            lines = accessLog()
        }
        return lines
    }

    private static func config(directory: URL, port: Int) -> String {
        let root = directory.path
        return """
        master_process off;
        daemon off;
        pid \(root)/nginx.pid;
        error_log \(root)/error.log warn;
        events { worker_connections 256; }
        http {
            log_format connections '$connection $server_protocol $status $uri';
            access_log \(root)/access.log connections;
            client_body_temp_path \(root)/body;
            proxy_temp_path \(root)/proxy;
            fastcgi_temp_path \(root)/fastcgi;
            uwsgi_temp_path \(root)/uwsgi;
            scgi_temp_path \(root)/scgi;
            server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(root)/server.pem;
                ssl_certificate_key \(root)/server.key;
                root \(root)/www;
                location / { add_header Cache-Control "max-age=600"; }
            }
        }
        """
    }

    /// A CA (`ca.pem`) and a certificate for 127.0.0.1 and localhost signed by it (`server.pem`, `server.key`).
    private static func makeCertificates(in directory: URL) throws {
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2",
                     "-subj", "/CN=dlcache nginx test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        try openssl(["req"] + ec + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                     "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("server.ext")])
    }

    private static func openssl(_ arguments: [String]) throws {
        let outcome = try ChildProcess.runBlocking(["/usr/bin/env", "openssl"] + arguments, timeout: .seconds(60))
        guard outcome.status == 0 else {
            throw NginxError("openssl \(arguments.first ?? "") failed: \(outcome.errorOutput)")
        }
    }
}

/// nginx or openssl could not be set up.
public struct NginxError: Error, CustomStringConvertible {
    /// What failed, in words (nginx's error log when it did not start).
    public var description: String
    init(_ description: String) { self.description = description }
}
