import ArgumentParser
import Foundation
import VTCore
import VTH264
import VTRecorder

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe an H.264 elementary stream: NAL units, frames, GOPs, SPS and PPS."
    )

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("An Annex B .h264 file, or '-' for standard input.", valueName: "file"))
    var file: String

    func run() throws {
        let bytes = try readAll()
        let report = try StreamInspector.inspect(annexB: bytes)
        if json {
            try printJSON(report)
        } else {
            print(report.textDescription, terminator: report.textDescription.hasSuffix("\n") ? "" : "\n")
        }
    }

    private func readAll() throws -> [UInt8] {
        let handle: FileHandle
        if file == "-" {
            handle = FileHandle.standardInput
        } else if let opened = FileHandle(forReadingAtPath: file) {
            handle = opened
        } else {
            throw UsageError("cannot read \(file): \(SystemError(call: "open", errno: errno).reason)")
        }
        do {
            return Array(try handle.readToEnd() ?? Data())
        } catch {
            throw UsageError("cannot read \(file == "-" ? "standard input" : file): \(error.localizedDescription)")
        }
    }
}
