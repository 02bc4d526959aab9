import Testing
@testable import CacheCLI

@Suite struct ArgumentParserTests {
    static let options: [OptionSpec] = [
        OptionSpec("output", short: "o", .value("file"), help: ""),
        OptionSpec("header", short: "H", .repeated("h"), help: ""),
        OptionSpec("fail", short: "f", help: ""),
        OptionSpec("verbose", short: "v", help: ""),
        OptionSpec("json", help: ""),
    ]
    static let positionals = [ArgumentSpec("url", help: ""), ArgumentSpec("extra", help: "", optional: true)]

    static func parse(_ args: [String]) throws(UsageError) -> ParsedArguments {
        try ArgumentParser.parse(args, options: options, positionals: positionals)
    }

    @Test("value options in every spelling", arguments: [
        ["--output", "a.txt", "u"], ["--output=a.txt", "u"], ["-o", "a.txt", "u"], ["-oa.txt", "u"], ["u", "-o", "a.txt"],
    ])
    func valueSpellings(_ args: [String]) throws {
        let parsed = try Self.parse(args)
        #expect(parsed.value("output") == "a.txt")
        #expect(parsed.positionals == ["u"])
    }

    @Test func repeatedHeadersKeepOrder() throws {
        let parsed = try Self.parse(["-H", "A: 1", "--header=B: 2", "-HC: 3", "u"])
        #expect(parsed.all("header") == ["A: 1", "B: 2", "C: 3"])
    }

    @Test func bundledShortFlags() throws {
        let parsed = try Self.parse(["-fv", "u"])
        #expect(parsed.flag("fail") && parsed.flag("verbose"))
        #expect(!parsed.flag("json"))
    }

    @Test func bundleEndingInValueOption() throws {
        let parsed = try Self.parse(["-fo", "out", "u"])
        #expect(parsed.flag("fail"))
        #expect(parsed.value("output") == "out")
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try Self.parse(["--json", "--", "-o", "--fail"])
        #expect(parsed.flag("json"))
        #expect(parsed.positionals == ["-o", "--fail"])
        #expect(parsed.value("output") == nil)
    }

    @Test func loneDashIsPositional() throws {
        #expect(try Self.parse(["-"]).positionals == ["-"])
    }

    @Test("bad command lines name the bad value", arguments: [
        (["--colour", "u"], "unknown option '--colour'"),
        (["-z", "u"], "unknown option '-z'"),
        (["u", "--output"], "missing value for option '--output'"),
        (["u", "-o"], "missing value for option '-o'"),
        (["--json=yes", "u"], "option '--json' takes no value (got '--json=yes')"),
        (["a", "b", "c"], "unexpected argument 'c'"),
        ([], "missing argument <url>"),
    ])
    func errors(_ args: [String], _ message: String) {
        #expect(throws: UsageError(message)) { try Self.parse(args) }
    }

    @Test func integerAndSecondsValidation() throws {
        let parsed = ParsedArguments(flags: [], values: ["n": ["0"], "t": ["-1"], "ok": ["2.5"]], positionals: [])
        #expect(throws: UsageError("invalid value '0' for '--n': expected an integer from 1 to 10")) {
            try parsed.integer("n", in: 1...10)
        }
        #expect(throws: UsageError("invalid value '-1' for '--t': expected a number of seconds from 0 to 10 (ten)")) {
            try parsed.seconds("t", maximum: 10, maximumLabel: "ten")
        }
        #expect(throws: UsageError("invalid value '2.5' for '--ok': expected a number of seconds from 0 to 2 (two)")) {
            try parsed.seconds("ok", maximum: 2, maximumLabel: "two")
        }
        #expect(try parsed.seconds("ok", maximum: 10, maximumLabel: "ten") == 2.5)
        #expect(try parsed.seconds("absent", maximum: 10, maximumLabel: "ten") == nil)
    }
}
