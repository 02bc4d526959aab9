// dlcache: the command-line tool. All logic lives in the CacheCLI library so tests can drive it in process.
import CacheCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A closed pipe (`dlcache get URL | head`) must end the write quietly, not kill the process with SIGPIPE (141).
signal(SIGPIPE, SIG_IGN)
exit(CommandLineTool.main(arguments: CommandLine.arguments))
