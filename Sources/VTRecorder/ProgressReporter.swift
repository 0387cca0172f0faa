import Foundation
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// A one-line status on standard error, redrawn at most twice a second — only when standard
/// error is a terminal, so logs and pipes never fill with carriage returns.
public final class ProgressReporter: @unchecked Sendable {
    // @unchecked Sendable: only the encoder thread calls it.
    private let frameRate: FrameRate
    private let started = ContinuousClock.now
    private var lastDraw = ContinuousClock.now
    private var drewSomething = false

    /// nil unless standard error is a terminal.
    public static func forTerminal(frameRate: FrameRate) -> ProgressReporter? {
        isatty(2) == 1 ? ProgressReporter(frameRate: frameRate) : nil
    }

    init(frameRate: FrameRate) {
        self.frameRate = frameRate
    }

    func frameWritten(count: Int, bytes: Int64, pts: MediaTime) {
        let now = ContinuousClock.now
        guard lastDraw.duration(to: now) >= .milliseconds(500) else { return }
        lastDraw = now
        let elapsed = started.duration(to: now)
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let media = Double(count) / frameRate.framesPerSecond
        let fps = wall > 0 ? Double(count) / wall : 0
        let rate = media > 0 ? Double(bytes) * 8 / media / 1e6 : 0
        let line = String(format: "\r\u{1B}[Kframe %d  %.1f s  %.1f fps  %.2f Mbit/s", count, media, fps, rate)
        writeRaw(line)
        drewSomething = true
    }

    func finish() {
        if drewSomething { writeRaw("\r\u{1B}[K") }
    }

    private func writeRaw(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { writeFully(2, $0) }
    }
}
