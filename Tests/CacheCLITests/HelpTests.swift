import Foundation
import Testing
@testable import CacheCLI
import DownloadCache

/// Golden help text, version, and top-level usage errors.
@Suite struct HelpTests {
    static let rootHelp = """
    OVERVIEW: A local, persistent HTTP cache (RFC 9111) for resources fetched by URL.
    
    USAGE: dlcache <subcommand>
    
    OPTIONS:
      --version               Show the version.
      -h, --help              Show help information.
    
    SUBCOMMANDS:
      get                     Fetch a URL through the cache and print its body.
      prefetch                Download a list of URLs into the cache (one per line).
      ls                      List the stored responses.
      info                    Explain a stored response: headers, age, freshness, pinning, storage and why.
      stats                   Show the cache's size and hit counters.
      rm                      Remove a URL's stored responses and its partial download.
      pin                     Pin a URL's stored responses so limits never evict them.
      unpin                   Unpin a URL's stored responses.
      purge                   Remove expired (stale, unpinned), session, or all entries, or trim to a size.
      verify                  Check every body's checksum and the index against the files.
      driver                  Answer JSON-lines requests from stdin through the cache (conformance driver).
      help                    Show help for dlcache or one of its subcommands.
    
      See 'dlcache help <subcommand>' for detailed help.
    """

    static let getHelp = """
    OVERVIEW: Fetch a URL through the cache and print its body.
    
    The body goes to stdout (or -o FILE). With --json one JSON object describing the response goes to
    stdout instead and the body goes to -o FILE or is discarded. Policies: use-protocol, reload,
    return-cache-else-load, return-cache-dont-load, reload-revalidating,
    ask-server-if-modified-when-stale, ask-server-if-modified, only-load-if-not-cached, dont-load.
    
    --expires-in replaces the server's freshness lifetime (max-age, s-maxage, Expires, heuristics), but
    a response marked 'no-cache' still has to be revalidated with the origin on every use unless
    --ignore-cache-control is given too. The lifetime is stored with the entry: later runs without
    --expires-in keep it, and a 304 revalidation starts it again; --policy reload stores the server's
    again.
    
    --session stores a session entry, which the next process that opens the cache drops: for the CLI it
    means "this process only": the entry is written, then dropped by the next dlcache run. Session
    storage is meant for programs that keep one cache open (the library's RequestOptions.storage =
    .session), or to fetch something without leaving it behind.
    
    curl habits: a binary body (a NUL byte in its first bytes) is not written to a terminal unless '-o
    -' asks for it (exit 23); -s hides the progress bar, warnings and the error line (-sS keeps the
    error), -w prints facts after the body; an interrupted download is always resumed by the next get,
    so '-C -' changes nothing; --retry retries only what is transient and never once bytes went to
    stdout.
    
    Exit codes (curl's where curl has one): 0 success; 1 other failure (not cached, storage, invalid
    response); 6 host name not resolved; 7 cannot connect; 18 body truncated; 22 HTTP status >= 400 with
    --fail; 23 cannot write the output; 28 timed out or stalled; 35 TLS handshake failed; 47 too many
    redirects; 60 certificate not trusted; 63 body over the transfer limit; 64 bad usage. With --json a
    failure prints one object on stdout: {"error": {"kind", "message", "url", "exitCode"}}.
    
    USAGE: dlcache get <url> [<options>]
    
    ARGUMENTS:
      <url>                   The http:// or https:// URL to fetch.
    
    OPTIONS:
      --cache-dir <dir>       Cache root (default: $DLCACHE_DIR, else $XDG_CACHE_HOME/dlcache, else ~/.cache/dlcache).
      --namespace <name>      Namespace (one store per name) inside the cache root (default: default).
      --redis <url>           Shared tier on Redis: redis://[user:password@]host:port/db or unix:///path.sock (default: $DLCACHE_REDIS); a failing Redis never fails a download.
      -o, --output <file>     Write the body to this file ('-' for stdout, the default).
      -O, --remote-name       Write the body to a file in the current directory named after the URL's last path segment (as curl; never '.', '..', empty, or through a symbolic link).
      -C, --continue-at <offset>
                              Accepted as '-C -' for curl's command lines: every get resumes an interrupted download by itself (Range + If-Range from the kept partial).
      --policy <name>         Cache policy (default: use-protocol, RFC 9111).
      --expires-in <seconds>  Keep the response fresh this long (at most 100 years), replacing the server's lifetime (below).
      --sliding               Each hit renews the --expires-in lifetime (sliding expiry).
      --fallback-to-cache     Serve the stored response if the origin cannot be reached or answers 5xx.
      --no-stale-when-disconnected
                              Report an unreachable origin instead of serving a stale copy (RFC 9111 4.2.4, on by default).
      --targeted-field <name>
                              Obey this field over Cache-Control (RFC 9213), repeatable; 'none': none (default: none, get is a private cache).
      --ignore-cache-control  Ignore the server's Cache-Control, Pragma and Expires.
      --session               Store as a session entry: for the CLI, this process only (below).
      --no-store              Do not write the response to the cache.
      --no-read               Do not read from the cache (always ask the origin).
      --pin                   Pin the stored entry (never evicted by limits).
      -H, --header <name: value>
                              Add a request header (repeatable).
      -r, --range <range>     Ask for bytes only, like curl's -r: '0-499', '500-', '-500' (sends Range: bytes=<range>); one range is cut from a stored response (206, or 416), several go to the origin uncached.
      -X, --request <method>  Request method (default: GET).
      -L, --location          Follow redirects (the default; accepted for curl's command lines).
      --no-follow             Return a 3xx response itself instead of following its Location.
      --max-redirs <n>        Follow at most this many redirects (default 10; exit 47 beyond).
      --compressed            Ask for gzip/deflate and decode it on output; the cache keeps it as received.
      -I, --head              Send HEAD and print the response's header block (a fresh stored GET answers it).
      -i, --include           Print the response's header block before the body.
      -D, --dump-header <file>
                              Write the response's header block to this file ('-' for stdout).
      --max-time <seconds>    Give up on the origin after this many seconds (> 0, at most 1 day).
      --stall-timeout <seconds>
                              Fail as timed out when fewer than 1 KiB arrive in this many seconds (default: 30; 0: never).
      --max-disk <size>       Most bytes of bodies on disk, complete and partial, > 0: 65536, 512K, 10MB, 1.5G (K/M/G = 1024-based, also as KiB/MiB/GiB; default 1G); over it the least recently used unpinned ones are evicted.
      --max-entry <size>      Largest body stored, > 0, same units, at most max-disk (default: max-disk/8); a larger one, or one that does not fit beside the pinned entries, is delivered with a warning, not stored, and nothing is evicted (an interrupted download of it is still kept, within max-disk, to resume); prefetch lists it as failed and stops downloading it once it is known to be larger.
      --max-filesize <size>   Largest body fetched, > 0, same units (like curl's): one announced larger fails at once, any other once it grows past it; nothing stored: get exits 63, prefetch lists the URL as failed, the driver answers an error line (default: no limit; a body of unknown length still stops at 4 GiB).
      --cacert <file>         Trust the CA certificates in this PEM file instead of the system's (default: $CURL_CA_BUNDLE, else $SSL_CERT_FILE).
      --capath <dir>          Trust the CA certificates in this directory (OpenSSL hashed names; default: $SSL_CERT_DIR).
      -k, --insecure          Do not verify the origin's TLS certificate (warns on stderr; nothing is stored).
      -f, --fail              Exit 22 on HTTP status >= 400 and print no body (like curl).
      --retry <n>             Try again up to N times after a timeout, a failed connection or an HTTP 408/429/500/502/503/504 (waits 1 s, doubling; Retry-After honoured; at most 60 s).
      --retry-delay <seconds>
                              With --retry, wait this long between tries instead of doubling (Retry-After still wins).
      --limit-rate <speed>    At most SPEED body bytes per second, received and written (K/M/G = 1024-based as curl: 200K, 1.5M; 0: no limit); a cached body is written at that pace too.
      -w, --write-out <format>
                              Print FORMAT on stdout after the body: %{http_code} %{size_download} %{time_total} %{url_effective} %{content_type} %{num_redirects} %{exitcode} %{errormsg} %{cache_status} (HIT/MISS/REVALIDATED/STALE), \\n.
      -s, --silent            Silent: no progress bar, warnings or error messages (the exit code still tells); -v lines still show.
      -S, --show-error        With -s, still print the error message of a failure.
      --no-progress-meter     No progress bar; messages and errors as usual.
      -v, --verbose           Print a summary line, the decision's reason and any storage warnings on stderr.
      --json                  Print one JSON value on stdout instead of text.
      -h, --help              Show help information.
    """
    static let statsHelp = """
    OVERVIEW: Show the cache's size and hit counters.
    
    USAGE: dlcache stats [<options>]
    
    OPTIONS:
      --cache-dir <dir>       Cache root (default: $DLCACHE_DIR, else $XDG_CACHE_HOME/dlcache, else ~/.cache/dlcache).
      --namespace <name>      Namespace (one store per name) inside the cache root (default: default).
      --max-disk <size>       Report against this limit of bytes on disk (same units as get's; default 1G); stats removes nothing.
      --max-entry <size>      Report this per-entry limit (default: max-disk/8); stats removes nothing.
      --redis <url>           Also report whether this shared tier (Redis) answers now (default: $DLCACHE_REDIS).
      --json                  Print one JSON value on stdout instead of text.
      -h, --help              Show help information.
    """

    @Test("root help", arguments: [["--help"], ["-h"], ["help"]])
    func rootHelpGolden(_ args: [String]) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(args)
        #expect(run.code == 0)
        #expect(run.out == Self.rootHelp + "\n")
        #expect(run.err.isEmpty)
    }

    @Test func noArgumentsPrintsHelpOnStderrAndExits64() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run([])
        #expect(run.code == 64)
        #expect(run.err == Self.rootHelp + "\n")
    }

    @Test("get help", arguments: [["get", "--help"], ["get", "-h"], ["help", "get"], ["get", "--bogus", "--help"]])
    func getHelpGolden(_ args: [String]) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(args)
        #expect(run.code == 0)
        #expect(run.out == Self.getHelp + "\n")
    }

    @Test func statsHelpGolden() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["stats", "--help"])
        #expect(run.out == Self.statsHelp + "\n")
    }

    @Test func everySubcommandHasHelpInTheUsualLayout() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for command in CommandLineTool.commands {
            let run = await cli.run(["help", command.name])
            #expect(run.code == 0)
            #expect(run.out.hasPrefix("OVERVIEW: \(command.abstract)\n"))
            #expect(run.out.contains("\nUSAGE: dlcache \(command.name)"))
            #expect(run.out.contains("\nOPTIONS:\n"))
            #expect(run.out.contains("  -h, --help              Show help information.\n"))
            #expect(run.out.contains("\nARGUMENTS:\n") == !command.arguments.isEmpty)
        }
    }

    @Test func version() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["--version"])
        #expect(run.code == 0)
        #expect(run.out == "dlcache \(CommandLineTool.version)\n")
    }

    @Test("top-level usage errors", arguments: [
        (["fetch"], "Error: unknown subcommand 'fetch'; subcommands: get, prefetch, ls, info, stats, rm, pin, unpin, purge, verify, driver, help (see 'dlcache --help')"),
        (["--verbose"], "Error: unknown option '--verbose' (see 'dlcache --help')"),
        (["help", "fetch"], "Error: unknown subcommand 'fetch'; subcommands: get, prefetch, ls, info, stats, rm, pin, unpin, purge, verify, driver, help (see 'dlcache --help')"),
        (["ls", "extra"], "Error: unexpected argument 'extra' (see 'dlcache ls --help')"),
        (["info"], "Error: missing argument <url> (see 'dlcache info --help')"),
        (["purge"], "Error: purge needs exactly one of --expired, --session, --all, --max-disk (see 'dlcache purge --help')"),
        (["purge", "--all", "--expired"], "Error: purge needs exactly one of --expired, --session, --all, --max-disk (see 'dlcache purge --help')"),
        (["prefetch", "--concurrency", "0"], "Error: invalid value '0' for '--concurrency': expected an integer from 1 to 1000 (see 'dlcache prefetch --help')"),
        (["verify", "--repair=yes"], "Error: option '--repair' takes no value (got '--repair=yes') (see 'dlcache verify --help')"),
    ])
    func usageErrors(_ args: [String], _ line: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(args)
        #expect(run.code == 64)
        #expect(run.err == line + "\n")
        #expect(run.out.isEmpty)
    }

    @Test("every policy name maps to a policy", arguments: PolicyName.table.map(\.name))
    func policyNames(_ name: String) throws {
        let policy = try PolicyName.policy(named: name)
        #expect(PolicyName.table.first { $0.name == name }?.policy == policy)
    }

    /// An unknown subcommand, alone or after `help`, is a usage error that lists the subcommands.
    @Test func unknownSubcommandListsTheSubcommands() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let names = CommandLineTool.commands.map { $0.name }.joined(separator: ", ")
        for args in [["help", "bogus"], ["bogus"]] {
            let run = await cli.run(args)
            #expect(run.code == 64)
            #expect(run.err == "Error: unknown subcommand 'bogus'; subcommands: \(names) (see 'dlcache --help')\n")
            #expect(run.out.isEmpty)
        }
    }

    /// The client's User-Agent carries the version `--version` prints.
    @Test func userAgentCarriesTheToolVersion() {
        #expect(CurlTransport.defaultUserAgent == "dlcache/\(CommandLineTool.version)")
    }
}
