import CacheSystem
import Foundation
import Synchronization

/// The dlcache command-line tool's logic: finds the subcommand, parses its options, runs it, maps errors to exit codes.
///
/// Exit codes: 0 success, curl's numbers for the failures curl has (6 DNS, 7 connect, 28 timeout, 35/60 TLS,
/// 47 redirects, 22 `--fail`, 23 output write; see ``FailureKind``), 1 any other failure, 64 bad usage
/// (BSD `EX_USAGE`), like swift-argument-parser tools.
public enum CommandLineTool {
    /// The tool's name as shown in help and errors.
    package static let name = "dlcache"
    /// The version printed by `--version`.
    package static let version = "0.1.0"
    /// The one-line OVERVIEW of the root help page.
    package static let overview = "A local, persistent HTTP cache (RFC 9111) for resources fetched by URL."
    /// Exit code for success.
    package static let exitSuccess: Int32 = 0
    /// Exit code for a failure (network, storage, nothing cached).
    package static let exitFailure: Int32 = 1
    /// Exit code for bad usage (sysexits' EX_USAGE).
    package static let exitUsage: Int32 = 64

    /// The subcommands in the order help lists them.
    ///
    /// `driver` (the JSON-lines conformance driver, DriverCommand.swift) is maintained by the driver's owner.
    package static var commands: [any Command.Type] {
        [
            GetCommand.self, PrefetchCommand.self, ListCommand.self, InfoCommand.self, StatsCommand.self,
            RemoveCommand.self, PinCommand.self, UnpinCommand.self, PurgeCommand.self, VerifyCommand.self,
            DriverCommand.self, HelpCommand.self,
        ]
    }

    /// Seconds a command cancelled by SIGINT or SIGTERM has to finish (close its caches, keep its partial) before
    /// the process exits anyway with 128 + the signal number: 10.
    public static let signalGraceSeconds = 10

    /// Runs the tool synchronously with `arguments` (argv, including the program name) and returns the exit code.
    ///
    /// Blocks the calling thread until the asynchronous work finishes and every opened cache is closed (background
    /// revalidations awaited, the store's clean-shutdown bookkeeping done) so `exit` leaves a clean cache;
    /// `main.swift` calls this.
    ///
    /// SIGINT and SIGTERM cancel the running command instead of killing the process: a download stops, keeps
    /// what it received as a partial entry (resumed by the next `get`), the caches are closed cleanly, and the
    /// exit code is 128 + the signal number (130 for Ctrl-C), as a shell reports a process killed by it. A second
    /// signal exits at once with that code (`_exit`, no clean close: what a download kept is recovered as after
    /// SIGKILL, to its last checkpoint), and so does the process when the cancelled command has not finished
    /// ``signalGraceSeconds`` after the first (a thread blocked in the kernel, e.g. opening `-o FIFO` that no
    /// process reads, never sees the cancellation). A signal that was ignored when the process started (a shell's
    /// background job ignores SIGINT) stays ignored.
    public static func main(arguments: [String]) -> Int32 {
        let box = Mutex<Int32>(exitFailure)
        let done = DispatchSemaphore(value: 0)
        let args = arguments
        let task = Task.detached {
            let code = await run(arguments: args, environment: .process)
            await OpenedCaches.closeAll()
            box.withLock { $0 = code }
            done.signal()
        }
        let interruption = Mutex<Int32>(0)
        // A signal ignored when the process started stays ignored, as curl leaves it: a shell starts a script's
        // background job (`dlcache get URL &`) with SIGINT ignored, so a Ctrl-C meant for the script spares it.
        let handled = [SIGINT, SIGTERM].filter { cs_signal_is_ignored($0) == 0 }
        let sources = handled.map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let first = interruption.withLock { (caught: inout Int32) -> Bool in
                    defer { if caught == 0 { caught = number } }
                    return caught == 0
                }
                if first {
                    task.cancel()
                    // `_exit`: the clean-up path is what is stuck; no atexit handler or stdio flush may block again.
                    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(signalGraceSeconds)) {
                        _exit(128 + number)
                    }
                } else {
                    // `_exit`, as a kill: `exit`'s handler would close the caches under the clean-up still running
                    // on other threads (a download keeping its partial would find its store closed); left open, the
                    // next opener recovers them as after SIGKILL (partials kept to their last checkpoint).
                    _exit(128 + number)
                }
            }
            source.resume()
            return source
        }
        done.wait()
        for source in sources { source.cancel() }
        let caught = interruption.withLock { $0 }
        return caught != 0 ? 128 + caught : box.withLock { $0 }
    }

    /// Runs the tool with `arguments` (argv, including the program name) in `environment`; returns the exit code.
    /// A run that succeeded but could not write all of its standard output (the reader went away: `EPIPE`; a
    /// full disk) exits 23 with one error line, as curl does.
    package static func run(arguments: [String], environment: CommandEnvironment) async -> Int32 {
        let code = await dispatch(arguments: arguments, environment: environment)
        let lost = environment.console.stdoutFailure()
        guard code == exitSuccess, lost != 0 else { return code }
        environment.console.err("Error: cannot write to standard output: \(ErrorText.systemMessage(lost))")
        return FailureKind.write.exitCode
    }

    private static func dispatch(arguments: [String], environment: CommandEnvironment) async -> Int32 {
        let console = environment.console
        let args = Array(arguments.dropFirst())
        guard let first = args.first else {
            console.err(HelpFormatter.rootHelp(commands: commands), terminator: "")
            return exitUsage
        }
        switch first {
        case "-h", "--help":
            console.out(HelpFormatter.rootHelp(commands: commands), terminator: "")
            return exitSuccess
        case "--version":
            console.out("\(name) \(version)")
            return exitSuccess
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            console.err(first.hasPrefix("-") ? "Error: unknown option '\(first)' (see '\(name) --help')"
                                             : unknownSubcommand(first))
            return exitUsage
        }
        return await run(command, arguments: Array(args.dropFirst()), environment: environment)
    }

    /// The one-line error for a subcommand that does not exist, listing the ones that do.
    static func unknownSubcommand(_ given: String) -> String {
        "Error: unknown subcommand '\(given)'; subcommands: \(commands.map { $0.name }.joined(separator: ", ")) "
            + "(see '\(name) --help')"
    }

    /// Parses `arguments` for `command` and runs it, mapping thrown errors to exit codes and stderr lines.
    static func run(_ command: any Command.Type, arguments: [String],
                    environment: CommandEnvironment) async -> Int32 {
        let console = environment.console
        let specs = command.options + [CommonOptions.help]
        let parsed: ParsedArguments
        do {
            // `--help` wins even when the rest of the line is wrong, like swift-argument-parser.
            if let end = arguments.firstIndex(of: "--") ?? Optional(arguments.count),
               arguments[..<end].contains(where: { $0 == "-h" || $0 == "--help" }) {
                console.out(HelpFormatter.help(for: command), terminator: "")
                return exitSuccess
            }
            parsed = try ArgumentParser.parse(arguments, options: specs, positionals: command.arguments)
        } catch {
            console.err("Error: \(error.message) (see '\(name) \(command.name) --help')")
            let end = arguments.firstIndex(of: "--") ?? arguments.count
            if specs.contains(CommonOptions.json), arguments[..<end].contains("--json") {
                reportJSON(CommandFailure(error.message, kind: .usage), console: console)
            }
            return exitUsage
        }
        let failure: CommandFailure
        do {
            return try await command.run(parsed, context: CommandContext(environment: environment))
        } catch let error as UsageError {
            console.err("Error: \(error.message) (see '\(name) \(command.name) --help')")
            failure = CommandFailure(error.message, kind: .usage)
        } catch let error as CommandFailure {
            failure = CommandFailure(ErrorText.oneLine(error.message), kind: error.kind, url: error.url)
            if !error.quiet { console.err("Error: \(failure.message)") }
        } catch {
            failure = CommandFailure(ErrorText.describe(error))
            console.err("Error: \(failure.message)")
        }
        if parsed.flag("json") { reportJSON(failure, console: console) }
        return failure.kind.exitCode
    }

    /// Prints `{"error": {"kind", "message", "url", "exitCode"}}` on stdout for a `--json` run that failed.
    static func reportJSON(_ failure: CommandFailure, console: Console) {
        let object: [String: Any] = ["error": [
            "kind": failure.kind.rawValue,
            "message": failure.message,
            "url": JSONOutput.orNull(failure.url?.absoluteString),
            "exitCode": Int(failure.kind.exitCode),
        ] as [String: Any]]
        if let line = try? JSONOutput.line(object) { console.out(line) }
    }
}

/// `dlcache help [<subcommand>]`: prints the root help or one subcommand's help.
package enum HelpCommand: Command {
    /// `help`.
    package static let name = "help"
    /// One line for the SUBCOMMANDS list.
    package static let abstract = "Show help for dlcache or one of its subcommands."
    /// One optional positional: the subcommand.
    package static var arguments: [ArgumentSpec] { [ArgumentSpec("subcommand", help: "The subcommand to explain.", optional: true)] }
    /// No options.
    package static var options: [OptionSpec] { [] }

    /// Prints the requested help page on stdout; for an unknown subcommand prints one error line listing the
    /// subcommands on stderr and returns 64.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        guard let which = parsed.positionals.first else {
            context.console.out(HelpFormatter.rootHelp(commands: CommandLineTool.commands), terminator: "")
            return 0
        }
        guard let command = CommandLineTool.commands.first(where: { $0.name == which }) else {
            context.console.err(CommandLineTool.unknownSubcommand(which))
            return CommandLineTool.exitUsage
        }
        context.console.out(HelpFormatter.help(for: command), terminator: "")
        return 0
    }
}
