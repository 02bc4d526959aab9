import Foundation

/// One `dlcache` subcommand: its name, help text, accepted options and arguments, and what it does.
///
/// Implementations are stateless enums; ``CommandLineTool`` parses the command line against
/// ``options`` and ``arguments`` and then calls ``run(_:context:)``.
package protocol Command {
    /// The subcommand's name as typed (`get`).
    static var name: String { get }
    /// One line shown after OVERVIEW and in the SUBCOMMANDS list.
    static var abstract: String { get }
    /// Extra paragraphs shown under OVERVIEW, or nil.
    static var discussion: String? { get }
    /// Positional arguments, in order.
    static var arguments: [ArgumentSpec] { get }
    /// Options (without `-h, --help`, which every command gets).
    static var options: [OptionSpec] { get }
    /// Runs the command and returns its exit code (0 success).
    /// - Throws: ``UsageError`` (exit 64) for a bad value found after parsing, ``CommandFailure`` (exit 1).
    static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32
}

extension Command {
    /// No extra paragraphs by default.
    package static var discussion: String? { nil }
}

/// What a running command gets: its environment and the helpers every command shares.
package struct CommandContext: Sendable {
    /// Console, environment variables, working directory and clock.
    package var environment: CommandEnvironment
    /// The console (shortcut for `environment.console`).
    package var console: Console { environment.console }

    /// Creates a context for one run.
    package init(environment: CommandEnvironment) {
        self.environment = environment
    }
}

/// Options several commands share, so their spelling and help text stay identical.
package enum CommonOptions {
    /// `--cache-dir DIR`: the cache root.
    package static let cacheDir = OptionSpec("cache-dir", .value("dir"),
        help: "Cache root (default: $DLCACHE_DIR, else $XDG_CACHE_HOME/dlcache, else ~/.cache/dlcache).")
    /// `--namespace NAME`: the store inside the root.
    package static let namespace = OptionSpec("namespace", .value("name"),
        help: "Namespace (one store per name) inside the cache root (default: default).")
    /// `--json`: machine-readable output.
    package static let json = OptionSpec("json", help: "Print one JSON value on stdout instead of text.")
    /// The cache-location options (`--cache-dir`, `--namespace`); commands with JSON output add ``json`` themselves.
    package static let location: [OptionSpec] = [cacheDir, namespace]
    /// `-h, --help`, accepted by every command.
    package static let help = OptionSpec("help", short: "h", help: "Show help information.")
}
