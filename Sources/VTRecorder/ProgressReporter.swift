import Foundation
import VTCore
import VTOutput

#if canImport(Glibc)
import Glibc
#endif

/// A one-line status on standard error, redrawn at most twice a second — only when standard
/// error is a terminal, so logs and pipes never fill with carriage returns.
/// Used by the encoder thread only.
public final class ProgressReporter {
    private let frameRate: FrameRate
    private let started = ContinuousClock.now
    private var lastDraw = ContinuousClock.now
    private var drewSomething = false

    /// What parts of the recording made outside the pipeline show (retention's deletions);
    /// asked on the encoder thread each time the line is drawn.
    private let notes: () -> [String]

    /// nil unless standard error is a terminal.
    public static func forTerminal(frameRate: FrameRate, notes: @escaping () -> [String] = { [] }) -> ProgressReporter? {
        isatty(2) == 1 ? ProgressReporter(frameRate: frameRate, notes: notes) : nil
    }

    init(frameRate: FrameRate, notes: @escaping () -> [String] = { [] }) {
        self.frameRate = frameRate
        self.notes = notes
    }

    /// What the line shows beside the frames written.
    struct Counters {
        var captured = 0
        var droppedQueue = 0
        var droppedDriver = 0
        var bad = 0
        var duplicated = 0
        /// `--audio`: gaps filled, overruns, and whether the device is gone now.
        var soundGaps = 0
        var soundOverruns = 0
        var soundGone = false
        /// `--realtime adaptive`: the encoder's speed now.
        var speed: String?
        /// The outputs beside the recording.
        var outputs: [OutputBranch.Report] = []
        /// What other outputs say of themselves (event clips).
        var notes: [String] = []
    }

    /// Redraws the line if half a second has passed; `counters` is only asked for then.
    func frameWritten(count: Int, bytes: Int64, counters: () -> Counters) {
        let now = ContinuousClock.now
        guard lastDraw.duration(to: now) >= .milliseconds(500) else { return }
        lastDraw = now
        let c = counters()
        let elapsed = started.duration(to: now)
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let media = Double(count) / frameRate.framesPerSecond
        let rate = media > 0 ? Double(bytes) * 8 / media / 1e6 : 0
        var line = String(format: "\r\u{1B}[K%.1f s  frame %d  capture %.1f fps  encode %.1f fps  %.2f Mbit/s  %@",
                          wall, count, wall > 0 ? Double(c.captured) / wall : 0, wall > 0 ? Double(count) / wall : 0,
                          rate, formatByteSize(bytes))
        if let speed = c.speed { line += "  speed \(speed)" }
        let drops = [("queue", c.droppedQueue), ("driver", c.droppedDriver), ("bad", c.bad)]
            .filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }
        if !drops.isEmpty { line += "  dropped: " + drops.joined(separator: ", ") }
        if c.duplicated > 0 { line += "  repeated \(c.duplicated)" }
        if c.soundGone {
            line += "  sound: device gone"
        } else if c.soundGaps > 0 || c.soundOverruns > 0 {
            line += "  sound: \(c.soundGaps) gaps, \(c.soundOverruns) overruns"
        }
        if !c.outputs.isEmpty { line += "  outputs: " + c.outputs.map(Self.brief).joined(separator: ", ") }
        for note in c.notes + notes() { line += "  " + note }
        writeRaw(line)
        drewSomething = true
    }

    /// "srt up", "rtmp down", "b.mkv up, 2 GOPs dropped".
    static func brief(_ output: OutputBranch.Report) -> String {
        let scheme = output.name.range(of: "://").map { String(output.name[..<$0.lowerBound]) }
        var text = (scheme ?? URL(fileURLWithPath: output.name).lastPathComponent) + " "
        switch output.state {
        case .connected: text += "up"
        case .connecting: text += "connecting"
        case .down, .failed: text += "down"
        case .finished: text += "done"
        }
        if output.gopsDropped > 0 { text += " -\(output.gopsDropped) GOPs" }
        return text
    }

    func finish() {
        if drewSomething { writeRaw("\r\u{1B}[K") }
    }

    private func writeRaw(_ text: String) {
        // A progress line that cannot be shown is not worth stopping a recording for.
        try? writeFully(2, Array(text.utf8), descriptor: .inherited)
    }
}
