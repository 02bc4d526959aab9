import Foundation

/// `-s/--silent`, `-S/--show-error` and `--no-progress-meter`: what `get` prints on stderr, as curl decides it.
///
/// | given                | progress bar | warnings, storage log lines | the `Error:` line of a failure |
/// |----------------------|--------------|-----------------------------|--------------------------------|
/// | (nothing)            | on a terminal| yes                         | yes                            |
/// | `--no-progress-meter`| no           | yes                         | yes                            |
/// | `-s`                 | no           | no (yes with `-v`)          | no (the exit code still says)  |
/// | `-sS`                | no           | no (yes with `-v`)          | yes                            |
///
/// Usage errors (exit 64) are printed whatever is given; `--json` still prints its error object on stdout.
struct MessageOptions: Sendable, Equatable {
    /// The options, in help order.
    static let options: [OptionSpec] = [
        OptionSpec("silent", short: "s", help: "Silent: no progress bar, warnings or error messages (the exit code still tells); -v lines still show."),
        OptionSpec("show-error", short: "S", help: "With -s, still print the error message of a failure."),
        OptionSpec("no-progress-meter", help: "No progress bar; messages and errors as usual."),
    ]

    /// Whether a progress bar may be drawn (it still needs stderr to be a terminal).
    var progress: Bool
    /// Whether warnings and storage log lines reach stderr.
    var messages: Bool
    /// Whether the `Error:` line of a failure reaches stderr.
    var errors: Bool

    /// The choice the command line makes.
    init(_ parsed: ParsedArguments) {
        let silent = parsed.flag("silent")
        progress = !silent && !parsed.flag("no-progress-meter")
        messages = !silent || parsed.flag("verbose")
        errors = !silent || parsed.flag("show-error")
    }

    /// `context` with stderr dropped when ``messages`` is false (a failure's `Error:` line is printed by
    /// ``CommandLineTool`` from the outer context and obeys ``errors`` through ``CommandFailure/quiet``).
    func applied(to context: CommandContext) -> CommandContext {
        guard !messages else { return context }
        var quiet = context
        quiet.environment.console.writeErr = { _ in }
        return quiet
    }
}
