import ArgumentParser
import Logging
import VTCore
import VTRecorder

#if canImport(Glibc)
import Glibc
#endif

@main
struct VTRecord: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "vtrecord",
        abstract: "Record a camera, a Y4M stream or a test pattern to an H.264 file.",
        usage: """
            vtrecord [--device <path> | --input <path> | --test-pattern] [<options>] [-o <path>]
              vtrecord devices [--json]
              vtrecord formats [--device <path>] [--json]
              vtrecord controls [--device <path>] [--json]
              vtrecord encoders [--va-device <path>] [--json]
              vtrecord inspect [--json] <file>
            """,
        discussion: """
            Frames go from the source through a bounded queue to the encoder (VA-API hardware \
            when a device can do the job, else libx264) and are \
            written as a raw H.264 elementary stream (Annex B) with SPS and PPS before every \
            keyframe, so every GOP plays on its own.

            EXIT STATUS:
              0    success, including a clean stop by SIGINT or SIGTERM
              1    unexpected failure
              2    bad usage, bad option value or unreadable input file
              3    capture device error (missing, busy, unsupported, unplugged)
              4    encoder error
              5    output error (cannot write, file exists, disk full, pipe closed)
              130  aborted by a second signal
            """,
        version: version,
        subcommands: [Devices.self, Formats.self, Controls.self, Encoders.self, Inspect.self]
    )

    @OptionGroup(title: "Input") var input: InputOptions
    @OptionGroup(title: "Output and stopping") var output: OutputOptions
    @OptionGroup(title: "Encoding") var encoder: EncoderOptions

    /// Parses, runs, and maps every failure to the documented exit codes: argument errors (which
    /// swift-argument-parser would end with 64) become 2.
    static func main() {
        SignalMonitor.ignoreWriteSignals()
        LoggingSystem.bootstrap { _ in DiagnosticsLogHandler(level: .info) }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as any ReportableError {
            writeToStandardError("vtrecord: error: \(error.description)")
            Glibc.exit(error.exitStatus.rawValue)
        } catch let error as ExitCode {
            Glibc.exit(error.rawValue == ExitCode.validationFailure.rawValue ? ExitStatus.usage.rawValue : error.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            let text = message(for: error)
            writeToStandardError("vtrecord: error: \(text)")
            writeToStandardError("See 'vtrecord --help' for the options.")
            Glibc.exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }
}
