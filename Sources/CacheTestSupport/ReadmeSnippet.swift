import Foundation

/// Reads a README example block out of a test file, so tests can check that README.md shows it verbatim.
public enum ReadmeSnippet {
    /// The repository's README.md (three folders above `sourceFile`, i.e. `Tests/<Target>/<File>.swift`) and the
    /// text of `sourceFile` between a `// BEGIN README` line and the next `// END README` line (nil when either
    /// marker is missing).
    /// - Throws: the error of reading either file.
    public static func load(from sourceFile: String) throws -> (readme: String, snippet: String?) {
        let thisFile = URL(fileURLWithPath: sourceFile)
        let root = thisFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: thisFile, encoding: .utf8)
        guard let begin = source.range(of: "// BEGIN README\n"),
              let end = source.range(of: "// END README\n", range: begin.upperBound..<source.endIndex) else {
            return (readme, nil)
        }
        return (readme, String(source[begin.upperBound..<end.lowerBound]))
    }
}
