import Foundation

// dlcache-bench <suite> [--json]: runs one benchmark suite and prints ratios measured side by side.
let usage = "usage: dlcache-bench <store|client|modelcache|driver|fleet|cli|large> [--json]"
let arguments = Array(CommandLine.arguments.dropFirst())
let json = arguments.contains("--json")
let suiteNames = arguments.filter { !$0.hasPrefix("-") }

// Hidden mode for CacheStore's crash tests: loops writing entries until killed (see StoreSuite.swift).
if arguments.first == "store-child-writer" { StoreChildWriter.main(Array(arguments.dropFirst())) }

guard suiteNames.count == 1, let suite = suiteNames.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}

do {
    let results: [BenchResult]
    switch suite {
    case "store": results = try await StoreSuite.run()
    case "client": results = try await ClientSuite.run()
    case "modelcache": results = try await ModelCacheSuite.run()
    case "driver": results = try await DriverSuite.run()
    case "fleet": results = try await FleetSuite.run()
    case "cli": results = try await CLISuite.run()
    case "large": results = try await LargeSuite.run()
    default:
        FileHandle.standardError.write(Data("dlcache-bench: unknown suite '\(suite)'\n\(usage)\n".utf8))
        exit(64)
    }
    BenchReport.print(suite: suite, results: results, json: json)
} catch {
    FileHandle.standardError.write(Data("dlcache-bench: \(suite) failed: \(error)\n".utf8))
    exit(1)
}
