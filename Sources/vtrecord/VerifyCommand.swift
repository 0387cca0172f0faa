import ArgumentParser
import Foundation
import VTCore
import VTDecoding
import VTOutput
import VTReading
import VTRecorder

/// `vtrecord verify FILE…`: decodes every frame and says whether each file is whole.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Decode every frame of recordings and report what is damaged: frames the decoder refuses or conceals, a start without a keyframe, times that go back or repeat, an MP4 left unfinalized, a file cut short.",
        discussion: """
            Exit status 0 when every file is clean, 6 when any is damaged, 2 when any cannot be \
            read as H.264 video at all (each such file gets one error line; the others are still \
            verified).
            """
    )

    @Flag(name: .long, help: "Print the reports as JSON.")
    var json = false

    @OptionGroup var decoding: DecoderOptions

    @Argument(help: ArgumentHelp("Raw .h264 (Annex B), MP4, Matroska or MPEG-TS files.", valueName: "file"))
    var files: [String]

    struct Document: Encodable {
        var clean: Bool
        var files: [Entry]
    }

    /// A report, or why the file could not be read.
    enum Entry: Encodable {
        case report(VerificationReport)
        case unreadable(file: String, error: String)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .report(let report): try report.encode(to: encoder)
            case let .unreadable(file, error):
                var container = encoder.container(keyedBy: UnreadableKeys.self)
                try container.encode(file, forKey: .file)
                try container.encode(error, forKey: .error)
            }
        }

        enum UnreadableKeys: String, CodingKey { case file, error }
    }

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file to verify") }
    }

    func run() throws {
        var entries: [Entry] = []
        let showProgress = !json && isatty(STDERR_FILENO) == 1
        var said = Set<String>()
        for file in files {
            let decoders = decoding.chooser()
            let progress: ((Double) -> Void)? = showProgress ? { fraction in
                Self.drawProgress(String(format: "\r\u{1B}[Kverifying %@: %3.0f%%", file, fraction * 100))
            } : nil
            do {
                let report: VerificationReport
                do {
                    report = try RecordingVerifier.verify(path: file, decoders: decoders, progress: progress)
                } catch where decoders.fallBack(after: error) {
                    // The hardware decoder failed under auto: the file is verified again in software.
                    report = try RecordingVerifier.verify(path: file, decoders: decoders, progress: progress)
                }
                if showProgress { Self.drawProgress("\r\u{1B}[K") }
                DecoderOptions.noteFallback(decoders, file: file, said: &said)
                entries.append(.report(report))
                if !json { print(Self.text(report), terminator: "") }
            } catch let error as ReadError {
                if showProgress { Self.drawProgress("\r\u{1B}[K") }
                writeToStandardError("vtrecord: error: \(error.description)")
                entries.append(.unreadable(file: file, error: error.reason))
            }
        }
        let reports = entries.compactMap { if case .report(let report) = $0 { report } else { nil } }
        let unreadable = entries.count - reports.count
        let clean = unreadable == 0 && reports.allSatisfy(\.isClean)
        if json { try printJSON(Document(clean: clean, files: entries)) }
        if unreadable > 0 { throw ExitCode(ExitStatus.usage.rawValue) }
        if !clean { throw ExitCode(ExitStatus.damaged.rawValue) }
    }

    /// A progress line on a terminal; one that cannot be shown is not worth stopping for.
    static func drawProgress(_ text: String) {
        try? writeFully(2, Array(text.utf8), descriptor: .inherited)
    }

    /// The report as a few lines: a verdict with the file's facts, then each problem.
    static func text(_ report: VerificationReport) -> String {
        var line = "\(report.file): \(report.isClean ? "clean" : "DAMAGED") — \(report.container), "
            + "\(report.width)x\(report.height), \(report.frames) frames (\(report.decodedFrames) decoded), "
            + "\(report.keyframes) keyframes"
        if !report.gopLengths.isEmpty { line += ", GOPs of " + gopSummary(report.gopLengths) }
        if let duration = report.duration { line += String(format: ", %.3f s", duration) }
        if report.decoder != "software" { line += ", decoded with \(report.decoder)" }
        var text = line + "\n"
        let shown = 20
        for problem in report.problems.prefix(shown) {
            var place: [String] = []
            if let unit = problem.unit { place.append("frame \(unit)") }
            if let offset = problem.offset { place.append("byte \(offset)") }
            if let time = problem.time { place.append(String(format: "%.3f s", time)) }
            text += "  \(problem.kind.rawValue)" + (place.isEmpty ? "" : " at " + place.joined(separator: ", "))
                + ": \(problem.detail)\n"
        }
        if report.problems.count > shown {
            text += "  … and \(report.problems.count - shown) more (--json lists them all)\n"
        }
        return text
    }

    /// "30 frames", or "30 frames (×9) and 15 (×1)" when they differ.
    static func gopSummary(_ lengths: [Int]) -> String {
        var counts: [Int: Int] = [:]
        for length in lengths { counts[length, default: 0] += 1 }
        if counts.count == 1 { return "\(lengths[0]) frames" }
        let ordered = counts.sorted { ($0.value, $0.key) > ($1.value, $1.key) }
        let parts = ordered.prefix(4).map { "\($0.key) (×\($0.value))" }
        return parts.joined(separator: ", ") + (ordered.count > 4 ? ", …" : "") + " frames"
    }
}
