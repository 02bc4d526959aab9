// Placeholder entry point; replaced by the real CLI.
/// The dlcache command-line tool's logic.
public enum CommandLineTool {
    /// Runs the tool with `arguments` (argv, including the program name) and returns the exit code.
    public static func main(arguments: [String]) -> Int32 {
        print("dlcache: not yet built")
        return 1
    }
}
