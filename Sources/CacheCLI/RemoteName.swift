import Foundation

/// `-O/--remote-name`: the output file named after the URL's last path segment, in the current directory, as
/// curl names it (the segment as written in the URL, percent-escapes kept, the query left out).
///
/// The name comes from whoever wrote the URL, so it is checked as untrusted input: an empty segment (a URL
/// ending in `/`), `.` and `..`, and a segment holding `/`, `\`, a control byte or a NUL are refused, and the
/// file is later opened without following a symbolic link (``BodySink/init(file:refusingLinks:)``).
enum RemoteName {
    /// The option.
    static let spec = OptionSpec("remote-name", short: "O",
        help: "Write the body to a file in the current directory named after the URL's last path segment (as curl; never '.', '..', empty, or through a symbolic link).")

    /// The file name `-O` uses for `url`.
    /// - Throws: ``UsageError`` saying why the URL's last segment cannot be a file name.
    static func fileName(for url: URL) throws(UsageError) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        let name = String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        guard !name.isEmpty else {
            throw UsageError("'-O/--remote-name': the URL '\(TerminalText.escaped(url.absoluteString))' has no file name "
                             + "(its path ends in '/'); give '-o FILE'")
        }
        guard name != ".", name != ".." else {
            throw UsageError("'-O/--remote-name': the URL's last path segment '\(name)' is not a file name; give '-o FILE'")
        }
        guard !name.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F }) else {
            throw UsageError("'-O/--remote-name': the URL's last path segment '\(TerminalText.escaped(name))' holds a "
                             + "character a file name must not; give '-o FILE'")
        }
        return name
    }
}
