import Foundation

/// A bad command line: the message names the bad value; the tool prints it on stderr and exits 64.
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line saying what is wrong, e.g. `unknown option '--colour'`.
    package var message: String
    /// Creates a usage error with its one-line message.
    package init(_ message: String) { self.message = message }
    /// The message.
    package var description: String { message }
}

/// A command that ran but failed (network, storage, nothing cached): printed on stderr, exit code from its
/// ``FailureKind`` (curl's numbers for the failures curl has, else 1).
package struct CommandFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line saying which failure happened.
    package var message: String
    /// Which failure it is; decides the exit code and the `kind` of a `--json` error object.
    package var kind: FailureKind
    /// The URL the failure is about, or nil when it is about no URL (a file, the store).
    package var url: URL?
    /// Whether the `Error:` line is left off stderr (`get -s` without `-S`); the exit code and a `--json`
    /// error object are unchanged.
    package var quiet = false
    /// Creates a failure with its one-line message, its kind (default: ``FailureKind/failed``, exit 1) and URL.
    package init(_ message: String, kind: FailureKind = .failed, url: URL? = nil) {
        self.message = message
        self.kind = kind
        self.url = url
    }
    /// The message.
    package var description: String { message }
}

/// One option a command accepts: `-s, --long`, with or without a value.
package struct OptionSpec: Sendable, Equatable {
    /// What an option takes.
    package enum Kind: Sendable, Equatable {
        /// A switch without a value (`--pin`).
        case flag
        /// One value (`--namespace NAME`); the last occurrence wins.
        case value(String)
        /// A value that may be given several times (`-H 'Name: value'`); all are kept in order.
        case repeated(String)
    }
    /// The long name without dashes (`namespace`); it is also the key in ``ParsedArguments``.
    package var long: String
    /// The one-letter short name without its dash, or nil when there is none.
    package var short: Character?
    /// Whether and how the option takes a value.
    package var kind: Kind
    /// One line of help text.
    package var help: String

    /// Creates an option description.
    package init(_ long: String, short: Character? = nil, _ kind: Kind = .flag, help: String) {
        self.long = long
        self.short = short
        self.kind = kind
        self.help = help
    }

    /// Whether the option expects a value.
    var takesValue: Bool { kind != .flag }
}

/// One positional argument a command accepts.
package struct ArgumentSpec: Sendable, Equatable {
    /// The name shown in help, without angle brackets (`url`).
    package var name: String
    /// One line of help text.
    package var help: String
    /// Whether the argument may be left out.
    package var isOptional: Bool
    /// Creates a positional argument description.
    package init(_ name: String, help: String, optional: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
    }
}

/// The result of parsing one command line against a command's options and arguments.
package struct ParsedArguments: Sendable, Equatable {
    /// Long names of the flags that were given.
    package var flags: Set<String> = []
    /// Values of value options by long name, in the order given.
    package var values: [String: [String]] = [:]
    /// Positional arguments in order (everything after `--` included).
    package var positionals: [String] = []

    /// Whether flag `long` was given.
    package func flag(_ long: String) -> Bool { flags.contains(long) }
    /// The last value of option `long`, or nil when it was not given.
    package func value(_ long: String) -> String? { values[long]?.last }
    /// All values of option `long` in order (empty when not given).
    package func all(_ long: String) -> [String] { values[long] ?? [] }

    /// The value of `long` as an integer in `range`, or nil when absent.
    /// - Throws: ``UsageError`` naming the option and the bad value.
    package func integer(_ long: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(long) else { return nil }
        guard Self.isDecimal(text, fraction: false), let n = Int(text), range.contains(n) else {
            throw UsageError("invalid value '\(text)' for '--\(long)': expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    /// The value of `long` as a number of seconds from 0 (or just above 0 when `allowZero` is false) to
    /// `maximum`, or nil when absent. NaN, infinities and values above `maximum` are rejected here, at parse time,
    /// so no later `Double` → `Int` conversion (ages, timeouts, libcurl options) can trap.
    /// - Parameters:
    ///   - maximum: the largest accepted value, in seconds.
    ///   - maximumLabel: how help and errors name the maximum, e.g. `100 years`.
    ///   - allowZero: whether `0` is accepted.
    /// - Throws: ``UsageError`` naming the option, the bad value and the accepted range.
    package func seconds(_ long: String, maximum: TimeInterval, maximumLabel: String,
                        allowZero: Bool = true) throws(UsageError) -> TimeInterval? {
        guard let text = value(long) else { return nil }
        let limit = "\(Formatting.wholeSeconds(maximum)) (\(maximumLabel))"
        let expected = allowZero ? "expected a number of seconds from 0 to \(limit)"
                                 : "expected a number of seconds > 0 and <= \(limit)"
        guard Self.isDecimal(text, fraction: true), let n = Double(text), n.isFinite,
              allowZero ? n >= 0 : n > 0, n <= maximum else {
            throw UsageError("invalid value '\(text)' for '--\(long)': \(expected)")
        }
        return n
    }

    /// Whether `text` is a plain decimal number: ASCII digits, with (when `fraction`) an optional `.` and more
    /// digits. Signs, exponents, hexadecimal (`0x10`), `inf` and `nan`, which `Double(_:)` would accept, are not.
    static func isDecimal(_ text: String, fraction: Bool) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 1 || (fraction && parts.count == 2) else { return false }
        return parts.allSatisfy { part in !part.isEmpty && part.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
    }
}

/// The upper bounds of the tool's number-of-seconds options.
package enum SecondsLimit {
    /// `--expires-in`: at most 100 years (365-day years), in seconds.
    package static let expiresIn: TimeInterval = 100 * 365 * 86_400
    /// `--max-time`: at most one day, in seconds.
    package static let maxTime: TimeInterval = 86_400
}

/// A small getopt-style parser: long and short options, `--opt=value` and `--opt value`, `-oVALUE`,
/// bundled short flags (`-fv`), repeatable options, and `--` to end options. A lone `-` is a positional.
package enum ArgumentParser {
    /// Parses `arguments` (without the program and subcommand names).
    /// - Throws: ``UsageError`` for an unknown option, a missing or unexpected value, or too many/too few positionals.
    package static func parse(_ arguments: [String], options: [OptionSpec],
                             positionals: [ArgumentSpec]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let arg = arguments[index]
            index += 1
            if optionsEnded || arg == "-" || !arg.hasPrefix("-") {
                result.positionals.append(arg)
            } else if arg == "--" {
                optionsEnded = true
            } else if arg.hasPrefix("--") {
                try parseLong(arg, arguments, &index, options, &result)
            } else {
                try parseShort(arg, arguments, &index, options, &result)
            }
        }
        try checkPositionals(result.positionals, positionals)
        return result
    }

    private static func parseLong(_ arg: String, _ arguments: [String], _ index: inout Int,
                                  _ options: [OptionSpec], _ result: inout ParsedArguments) throws(UsageError) {
        let body = arg.dropFirst(2)
        let name: String
        var inline: String?
        if let eq = body.firstIndex(of: "=") {
            name = String(body[..<eq])
            inline = String(body[body.index(after: eq)...])
        } else {
            name = String(body)
        }
        guard let spec = options.first(where: { $0.long == name }) else {
            throw UsageError("unknown option '--\(name)'")
        }
        if !spec.takesValue {
            if inline != nil { throw UsageError("option '--\(name)' takes no value (got '\(arg)')") }
            result.flags.insert(spec.long)
            return
        }
        if let inline {
            result.values[spec.long, default: []].append(inline)
            return
        }
        guard index < arguments.count else { throw UsageError("missing value for option '--\(name)'") }
        result.values[spec.long, default: []].append(arguments[index])
        index += 1
    }

    private static func parseShort(_ arg: String, _ arguments: [String], _ index: inout Int,
                                   _ options: [OptionSpec], _ result: inout ParsedArguments) throws(UsageError) {
        var rest = Substring(arg.dropFirst())
        while let letter = rest.first {
            rest = rest.dropFirst()
            guard let spec = options.first(where: { $0.short == letter }) else {
                throw UsageError("unknown option '-\(letter)'")
            }
            if !spec.takesValue {
                result.flags.insert(spec.long)
                continue
            }
            if !rest.isEmpty {
                result.values[spec.long, default: []].append(String(rest))
            } else {
                guard index < arguments.count else { throw UsageError("missing value for option '-\(letter)'") }
                result.values[spec.long, default: []].append(arguments[index])
                index += 1
            }
            return
        }
    }

    private static func checkPositionals(_ given: [String], _ specs: [ArgumentSpec]) throws(UsageError) {
        if given.count > specs.count {
            throw UsageError("unexpected argument '\(given[specs.count])'")
        }
        if given.count < specs.count, let missing = specs[given.count...].first(where: { !$0.isOptional }) {
            throw UsageError("missing argument <\(missing.name)>")
        }
    }
}
