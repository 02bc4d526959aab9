import CacheCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(CommandLineTool.main(arguments: CommandLine.arguments))
