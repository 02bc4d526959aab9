import Testing
@testable import CacheCLI

@Suite struct FormattingTests {
    @Test("bytes", arguments: [(Int64(0), "0 B"), (999, "999 B"), (1000, "1.0 KB"), (1_234_567, "1.2 MB"),
                               (5_000_000_000, "5.0 GB")])
    func bytes(_ n: Int64, _ text: String) { #expect(Formatting.bytes(n) == text) }

    @Test("durations", arguments: [(0.4, "0s"), (59, "59s"), (61, "1m01s"), (3725, "1h02m"), (-1, "--"),
                                   (.infinity, "--")] as [(Double, String)])
    func durations(_ s: Double, _ text: String) { #expect(Formatting.duration(s) == text) }

    @Test func tableAlignsColumns() {
        #expect(Formatting.table([["A", "BB", "x"], ["CCC", "D", "y"]]) == "A    BB  x\nCCC  D   y\n")
    }

    @Test func jsonIsSortedAndKeepsSlashes() throws {
        let line = try JSONOutput.line(["b": 1, "a": "http://x/y", "c": JSONOutput.null] as [String: Any])
        #expect(line == #"{"a":"http://x/y","b":1,"c":null}"#)
    }

    /// Ages and lifetimes round down in `ls` and `info` as in `-v` and `--json` (3599.6 s is 59m59s, 3599s).
    @Test func agesAndLifetimesRoundDown() {
        #expect(Formatting.duration(3599.6, rounding: .down) == "59m59s")
        #expect(Formatting.duration(59.9, rounding: .down) == "59s")
        #expect(InfoCommand.seconds(3599.6) == "59m59s (3599s)")
        #expect(InfoCommand.seconds(600.7) == "10m00s (600s)")
    }
}
