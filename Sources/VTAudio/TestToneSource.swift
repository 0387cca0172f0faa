import Foundation
import VTCore

/// The test sound (`--audio test`): silence with a 1 kHz beep of 100 ms starting exactly when
/// the test pattern flashes (`FlashSchedule`), once a second.
///
/// It is not live: sample n is made for time n ÷ rate of the recording's timeline, so the
/// beeps sit where the flashes are whatever the machine does, and a recording's sync can be
/// checked by anyone. It keeps at most `lead` seconds ahead of the picture written
/// (`pictureReached`), so a recording of a file or an unpaced pattern does not make its whole
/// sound up front.
public final class TestToneSource: AudioSource, @unchecked Sendable {
    public let format: AudioSourceFormat
    public var statistics: AudioCaptureStatistics { AudioCaptureStatistics() }

    /// Samples per chunk.
    static let chunkFrames = 1024
    /// How far ahead of the picture the sound may be made, in seconds.
    static let lead = 0.5

    private let schedule: FlashSchedule
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var picture = 0.0
    private var stopped = false
    // Only the audio thread touches these.
    private var nextSample = 0
    private var nextBeep = 0

    public init(sampleRate: Int, channels: Int, frameRate: FrameRate) {
        format = AudioSourceFormat(sampleRate: sampleRate, channels: channels, sampleFormat: .float32,
                                   isLive: false, name: "test")
        schedule = FlashSchedule(frameRate: frameRate)
    }

    public func nextChunk() -> AudioChunk? {
        let start = nextSample
        let rate = format.sampleRate
        condition.lock()
        while !stopped && Double(start) / Double(rate) > picture + Self.lead { condition.wait() }
        let isStopped = stopped
        condition.unlock()
        guard !isStopped else { return nil }

        let frames = Self.chunkFrames
        var data = [UInt8](repeating: 0, count: frames * format.bytesPerFrame)
        let beepLength = Int((FlashSchedule.beepDuration * Double(rate)).rounded())
        // Every beep that sounds in this chunk.
        var second = nextBeep
        while true {
            let beepStart = beepSample(second)
            if beepStart >= start + frames { break }
            let beepEnd = beepStart + beepLength
            if beepEnd <= start {
                second += 1
                nextBeep = second
                continue
            }
            data.withUnsafeMutableBytes { raw in
                let samples = raw.bindMemory(to: Float.self)
                for n in max(beepStart, start)..<min(beepEnd, start + frames) {
                    let phase = 2 * Double.pi * FlashSchedule.beepFrequency * Double(n - beepStart) / Double(rate)
                    let value = Float(0.5 * sin(phase))
                    for channel in 0..<format.channels { samples[(n - start) * format.channels + channel] = value }
                }
            }
            if beepEnd > start + frames { break }
            second += 1
        }
        nextSample += frames
        return AudioChunk(data: data, frames: frames, time: nil)
    }

    /// The sample the beep of second `k` starts at.
    private func beepSample(_ k: Int) -> Int {
        let time = schedule.flashTime(second: k)
        return Int((Int128(time.value) * Int128(format.sampleRate) + Int128(time.timescale) / 2) / Int128(time.timescale))
    }

    public func pictureReached(_ seconds: Double) {
        condition.lock()
        if seconds > picture {
            picture = seconds
            condition.broadcast()
        }
        condition.unlock()
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
