import Foundation

/// Renders help in swift-argument-parser's layout: OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS.
package enum HelpFormatter {
    /// Width of the left column (names) before help text starts, in characters.
    static let column = 26

    /// The help page of one subcommand, e.g. `dlcache get --help`.
    package static func help(for command: any Command.Type, tool: String = CommandLineTool.name) -> String {
        var lines: [String] = ["OVERVIEW: \(command.abstract)"]
        if let discussion = command.discussion {
            lines += ["", wrap(discussion, width: 100)]
        }
        lines += ["", "USAGE: \(usage(for: command, tool: tool))"]
        if !command.arguments.isEmpty {
            lines += ["", "ARGUMENTS:"]
            for argument in command.arguments {
                lines.append(row("<\(argument.name)>", argument.help))
            }
        }
        lines += ["", "OPTIONS:"]
        for option in command.options + [CommonOptions.help] {
            lines.append(row(label(for: option), option.help))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The root help page (`dlcache --help`), listing `commands`.
    package static func rootHelp(commands: [any Command.Type], tool: String = CommandLineTool.name) -> String {
        var lines: [String] = [
            "OVERVIEW: \(CommandLineTool.overview)",
            "",
            "USAGE: \(tool) <subcommand>",
            "",
            "OPTIONS:",
            row("--version", "Show the version."),
            row("-h, --help", "Show help information."),
            "",
            "SUBCOMMANDS:",
        ]
        for command in commands {
            lines.append(row(command.name, command.abstract))
        }
        lines += ["", "  See '\(tool) help <subcommand>' for detailed help."]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The one-line usage of a command: `dlcache get <url> [--output <file>] ...`.
    package static func usage(for command: any Command.Type, tool: String = CommandLineTool.name) -> String {
        var parts = ["\(tool) \(command.name)"]
        for argument in command.arguments {
            parts.append(argument.isOptional ? "[<\(argument.name)>]" : "<\(argument.name)>")
        }
        if command.options.count > 4 {
            parts.append("[<options>]")
            return parts.joined(separator: " ")
        }
        for option in command.options {
            let name = option.short.map { "-\($0)" } ?? "--\(option.long)"
            switch option.kind {
            case .flag: parts.append("[\(name)]")
            case .value(let v): parts.append("[\(name) <\(v)>]")
            case .repeated(let v): parts.append("[\(name) <\(v)> ...]")
            }
        }
        return parts.joined(separator: " ")
    }

    /// Re-flows each paragraph of `text` to lines of at most `width` characters (words are never split).
    static func wrap(_ text: String, width: Int) -> String {
        text.components(separatedBy: "\n\n").map { paragraph in
            var lines: [String] = []
            var line = ""
            for word in paragraph.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                if !line.isEmpty && line.count + 1 + word.count > width {
                    lines.append(line)
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            if !line.isEmpty { lines.append(line) }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    /// `-o, --output <file>` for the OPTIONS list.
    static func label(for option: OptionSpec) -> String {
        var text = option.short.map { "-\($0), --\(option.long)" } ?? "--\(option.long)"
        switch option.kind {
        case .flag: break
        case .value(let v): text += " <\(v)>"
        case .repeated(let v): text += " <\(v)>"
        }
        return text
    }

    /// One two-column row, indented by two spaces; a long label puts the help on the next line.
    static func row(_ label: String, _ help: String) -> String {
        let left = "  " + label
        if left.count + 2 > column {
            return left + "\n" + String(repeating: " ", count: column) + help
        }
        return left + String(repeating: " ", count: column - left.count) + help
    }
}
